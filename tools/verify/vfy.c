/* tools/verify/vfy.c — the check log and small byte helpers (vfy.h). */
#include "vfy.h"

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
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
	return out;
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int vfy_parse_hex(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -LLMK_EINVAL;
	for (size_t i = 0; i < n; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -LLMK_EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int vfy_is_zero(const uint8_t *b, size_t n)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= b[i];
	return acc == 0;
}
