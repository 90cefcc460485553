/*
 * tests/fuzz/fuzz_grammar.c — libFuzzer target for llm/grammar*.c: the input
 * is a grammar (or, when its first byte is 'J', a JSON schema converted to
 * one), a NUL byte, then a text matched against it byte by byte.
 *
 * Checks: a refused grammar or schema says why in one line; an accepted one
 * frees all it took; the matcher's state never passes its bounds (stacks,
 * words used); a text the matcher accepts as a whole is accepted again by
 * gram_accepts.
 *
 * Lazy mode (first byte 'L'): up to four trigger words, one a line, then a
 * NUL, then text in pieces split at \x01: each piece is searched for the
 * trigger it completes (gram_trig_find) and, if none, pushed; the answer
 * must be the one a search of the whole text so far gives (written here,
 * with no window of kept bytes).
 */
#include <stdlib.h>
#include <string.h>

#include "../../llm/grammar.h"

static struct gram_state st[2], chk[2];
static char conv[GRAM_SCHEMA_OUT];

static void one_line(const char *err)
{
	if (!err[0] || strchr(err, '\n'))
		abort();
}

static char whole[1 << 16];

/* The first trigger ending in p[0..n) after whole[0..seen): the longest of
 * those ending first; -1 if none. */
static int slow_find(const struct gram_trig *t, size_t seen, const char *p, size_t n, size_t *rest)
{
	memcpy(whole + seen, p, n);
	for (size_t e = 1; e <= n; e++) {
		int best = -1;
		for (uint32_t k = 0; k < t->n; k++) {
			size_t len = t->len[k], end = seen + e;
			if (len > end || (t->at_start[k] && end != len) ||
			    memcmp(whole + end - len, t->word[k], len) != 0)
				continue;
			if (best < 0 || len > t->len[best])
				best = (int)k;
		}
		if (best >= 0) {
			*rest = e;
			return best;
		}
	}
	return -1;
}

static int lazy(const char *words, size_t wlen, const char *subject, size_t slen)
{
	char buf[GRAM_MAX_TRIGGERS][GRAM_MAX_TRIGGER + 2], err[160] = "";
	const char *w[GRAM_MAX_TRIGGERS];
	struct gram_trig t;
	uint32_t n = 0;
	size_t seen = 0;

	for (size_t i = 0; i < wlen && n < GRAM_MAX_TRIGGERS; n++) {
		size_t j = i;
		while (j < wlen && words[j] != '\n')
			j++;
		size_t len = j - i < GRAM_MAX_TRIGGER + 1 ? j - i : GRAM_MAX_TRIGGER + 1;
		memcpy(buf[n], words + i, len);
		buf[n][len] = 0;
		w[n] = buf[n];
		i = j + 1;
	}
	if (gram_trig_init(&t, w, n, err, sizeof err)) {
		one_line(err);
		return 0;
	}
	if (slen > sizeof whole)
		slen = sizeof whole;
	for (size_t i = 0; i <= slen;) {
		const char *end = memchr(subject + i, 1, slen - i);
		size_t len = end ? (size_t)(end - subject) - i : slen - i, r1 = 0, r2 = 0;
		int a = gram_trig_find(&t, subject + i, len, &r1);
		int b = slow_find(&t, seen, subject + i, len, &r2);
		if (a != b || r1 != r2 || t.n_hist >= GRAM_MAX_TRIGGER || t.seen != seen)
			abort();
		if (a >= 0)
			return 0; /* the grammar takes over */
		gram_trig_push(&t, subject + i, len);
		seen += len;
		i += len + 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t glen = nul ? (size_t)(nul - data) : size;
	const char *text = (const char *)data, *subject = nul ? (const char *)nul + 1 : "";
	size_t slen = nul ? size - glen - 1 : 0;
	struct llm_mem m;
	struct gram g;
	char err[256] = "";
	int r;

	if (glen && text[0] == 'L')
		return lazy(text + 1, glen - 1, subject, slen);
	llm_mem_init(&m, 64u << 20);
	if (glen && text[0] == 'J') {
		if ((r = gram_schema(text + 1, glen - 1, conv, sizeof conv, &m, err, sizeof err))) {
			one_line(err);
			if (m.used)
				abort();
			return 0;
		}
		text = conv;
		glen = strlen(conv);
		err[0] = 0;
	}
	if ((r = gram_parse(&g, &m, text, glen, err, sizeof err))) {
		one_line(err);
		if (m.used)
			abort();
		return 0;
	}
	uint32_t k = 0;
	bool alive = gram_start(&g, &st[0]) == 0;
	for (size_t i = 0; alive && i < slen; i++, k ^= 1) {
		alive = gram_byte(&g, &st[k], (uint8_t)subject[i], &st[k ^ 1]);
		if (st[k ^ 1].n_stacks > GRAM_MAX_STACKS || st[k ^ 1].used > GRAM_STATE_WORDS)
			abort();
	}
	if (alive && gram_complete(&st[k]) && !gram_accepts(&g, subject, slen, chk))
		abort();
	gram_free(&g);
	if (m.used)
		abort();
	return 0;
}
