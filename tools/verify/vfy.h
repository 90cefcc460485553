/*
 * tools/verify/vfy.h — what every evidence check reports: the checks that
 * passed, one line each, and the one reason the first failed check gave.
 *
 * The verification library (DER, PEM, X.509, SEV-SNP reports, TDX quotes)
 * is portable C11 over BearSSL: no allocation, no I/O, caller-owned
 * contexts. A caller gives it bytes and a struct vfy_log; each module
 * appends "ok" lines as it goes and stops at the first failure, which sets
 * log->err and returns a negative LLMK_E* code:
 *   -LLMK_EFORMAT   malformed input (a length, a tag, a reserved field)
 *   -LLMK_ENOTSUP   well formed but outside what we verify (a version, an
 *                   algorithm)
 *   -LLMK_EAUTH     a signature, a binding or an expected value failed
 *   -LLMK_EINVAL    a caller error (bad argument)
 */
#ifndef TOOLS_VERIFY_VFY_H
#define TOOLS_VERIFY_VFY_H

#include <stddef.h>
#include <stdint.h>

#include "../../kernel/platform.h"

#define VFY_MAX_LINES 48
#define VFY_LINE 192

struct vfy_log {
	char err[320];                     /* "" until a check fails */
	int n;                             /* lines[0..n) passed */
	char line[VFY_MAX_LINES][VFY_LINE];
};

void vfy_log_init(struct vfy_log *log);

/* Record the first failure (later ones keep the first reason); returns -code. */
int vfy_fail(struct vfy_log *log, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record a passed check ("signature: ECDSA P-384 over 0x000..0x29F"). */
void vfy_ok(struct vfy_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Lower-case hex of b[0..n) into out (2n+1 bytes); returns out. */
char *vfy_hex(const uint8_t *b, size_t n, char *out);

/* Parse exactly 2n hex digits into out[0..n); 0 or -LLMK_EINVAL. */
int vfy_parse_hex(const char *s, uint8_t *out, size_t n);

/* Load little-endian integers. */
static inline uint16_t vfy_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t vfy_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t vfy_le64(const uint8_t *p)
{
	return (uint64_t)vfy_le32(p) | (uint64_t)vfy_le32(p + 4) << 32;
}

/* 1 if b[0..n) is all zero. */
int vfy_is_zero(const uint8_t *b, size_t n);

#endif
