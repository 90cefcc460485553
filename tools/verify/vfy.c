/* tools/verify/vfy.c — the check log and small byte helpers (vfy.h). */
#include "vfy.h"
#include "../../llm/codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void vfy_log_init(struct vfy_log *log)
{
	log->err[0] = 0;
	log->n = 0;
}

int vfy_fail(struct vfy_log *log, int code, const char *fmt, ...)
{
	if (!log->err[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(log->err, sizeof log->err, fmt, ap);
		va_end(ap);
		if (!log->err[0])
			snprintf(log->err, sizeof log->err, "verification failed");
	}
	return -code;
}

void vfy_ok(struct vfy_log *log, const char *fmt, ...)
{
	va_list ap;
	if (log->n >= VFY_MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(log->line[log->n], VFY_LINE, fmt, ap);
	va_end(ap);
	log->n++;
}

char *vfy_hex(const uint8_t *b, size_t n, char *out)
{
	hex_encode(b, n, out);
	return out;
}

int vfy_parse_hex(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n || hex_decode(s, 2 * n, out, n, NULL) < 0)
		return -LLMK_EINVAL;
	return 0;
}

int vfy_is_zero(const uint8_t *b, size_t n)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= b[i];
	return acc == 0;
}
