/*
 * tools/tok_split.c — print a BPE pre-tokenizer's word split, for
 * tools/tok_prefuzz.py (checks llm/tok_pre.c against the regexes).
 *
 *   build/host/tok_split PRE < lines
 *
 * PRE is an enum tok_pre number; each input line is a hex-encoded string;
 * each output line holds the word lengths in code points.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../llm/tok_int.h"

#define MAXN 65536

int main(int argc, char **argv)
{
	static char line[2 * MAXN + 2], s[MAXN];
	static uint32_t cp[MAXN], len[MAXN], tmp[MAXN];
	static uint8_t cls[MAXN];
	int pre = argc > 1 ? atoi(argv[1]) : 0;

	if (pre < 0 || pre >= TOK_PRE_COUNT) {
		fprintf(stderr, "tok_split: pre-tokenizer %d out of range 0..%d\n", pre, TOK_PRE_COUNT - 1);
		return 2;
	}
	while (fgets(line, sizeof line, stdin)) {
		size_t n = 0, nc = 0, nw;
		uint32_t *w;

		for (size_t i = 0; line[i] && line[i + 1] && line[i] != '\n' && n < MAXN; i += 2) {
			unsigned v;
			if (sscanf(line + i, "%2x", &v) != 1)
				break;
			s[n++] = (char)v;
		}
		for (size_t off = 0; off < n; nc++) {
			cp[nc] = uni_utf8_decode(s, n, &off);
			cls[nc] = uni_class(cp[nc]);
		}
		nw = tok_pre_split((enum tok_pre)pre, cp, cls, nc, len, tmp, &w);
		for (size_t i = 0; i < nw; i++)
			printf(i ? " %u" : "%u", w[i]);
		printf("\n");
	}
	return 0;
}
