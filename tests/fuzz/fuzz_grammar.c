/*
 * tests/fuzz/fuzz_grammar.c — libFuzzer target for llm/grammar*.c: the input
 * is a grammar (or, when its first byte is 'J', a JSON schema converted to
 * one), a NUL byte, then a text matched against it byte by byte.
 *
 * Checks: a refused grammar or schema says why in one line; an accepted one
 * frees all it took; the matcher's state never passes its bounds (stacks,
 * words used); a text the matcher accepts as a whole is accepted again by
 * gram_accepts.
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
