/*
 * kernel/lib.c — the freestanding C library subset platform.h promises
 * (ISO C11 §7.24 semantics). Word-at-a-time where both sides allow it; this
 * file is built with -fno-tree-loop-distribute-patterns so the compiler does
 * not turn these loops back into calls to themselves.
 */
#include "platform.h"

typedef uint64_t __attribute__((may_alias)) word_t;

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if ((((uintptr_t)dp | (uintptr_t)sp) & 7) == 0) {
		for (; n >= 8; n -= 8, dp += 8, sp += 8)
			*(word_t *)dp = *(const word_t *)sp;
	}
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if (dp == sp || n == 0)
		return d;
	if (dp < sp || dp >= sp + n)
		return memcpy(d, s, n);
	/* Overlap with the destination above the source: copy backwards. */
	dp += n;
	sp += n;
	if ((((uintptr_t)dp | (uintptr_t)sp) & 7) == 0) {
		for (; n >= 8; n -= 8) {
			dp -= 8;
			sp -= 8;
			*(word_t *)dp = *(const word_t *)sp;
		}
	}
	while (n--)
		*--dp = *--sp;
	return d;
}

void *memset(void *d, int c, size_t n)
{
	unsigned char *dp = d;
	word_t w = (unsigned char)c * 0x0101010101010101ull;

	for (; n && ((uintptr_t)dp & 7); n--)
		*dp++ = (unsigned char)c;
	for (; n >= 8; n -= 8, dp += 8)
		*(word_t *)dp = w;
	while (n--)
		*dp++ = (unsigned char)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

int strcmp(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n && *a && *a == *b; n--, a++, b++)
		;
	return n ? (unsigned char)*a - (unsigned char)*b : 0;
}
