/*
 * llm/grammar_trig.c — the trigger words of a lazy grammar (grammar.h).
 *
 * The text generated so far is not kept: only its last bytes (one less
 * than the longest trigger, so a trigger split over tokens is still seen
 * whole) and its length (for "^word", a trigger only at the text's start).
 * A trigger is searched for where it ends: each byte of the next piece is
 * a possible end, checked against every word over the kept bytes and the
 * piece; the first end found wins, so a piece holding two triggers starts
 * the grammar at the earlier one.
 */
#include "grammar.h"

int gram_trig_init(struct gram_trig *t, const char *const *words, uint32_t n, char *err,
		   size_t errlen)
{
	memset(t, 0, sizeof *t);
	if (!n || n > GRAM_MAX_TRIGGERS) {
		plat_snprintf(err, errlen, "a lazy grammar takes 1 to %u trigger words (%u given)",
			      GRAM_MAX_TRIGGERS, n);
		return -LLMK_EINVAL;
	}
	for (uint32_t k = 0; k < n; k++) {
		const char *w = words[k];
		size_t len;
		bool start = w && w[0] == '^';
		if (start)
			w++;
		len = w ? strlen(w) : 0;
		if (!len || len >= GRAM_MAX_TRIGGER) {
			plat_snprintf(err, errlen, "a trigger word is 1 to %u bytes (one is %zu)",
				      GRAM_MAX_TRIGGER - 1, len);
			return -LLMK_EINVAL;
		}
		memcpy(t->word[k], w, len);
		t->len[k] = (uint8_t)len;
		t->at_start[k] = start;
	}
	t->n = n;
	return 0;
}

/* The byte at v of the kept bytes followed by p. */
static uint8_t at(const struct gram_trig *t, const char *p, size_t v)
{
	return (uint8_t)(v < t->n_hist ? t->hist[v] : p[v - t->n_hist]);
}

int gram_trig_find(const struct gram_trig *t, const char *p, size_t n, size_t *rest)
{
	for (size_t e = 1; e <= n; e++) {
		size_t end = t->n_hist + e; /* the trigger would end here in hist + p */
		int best = -1;
		for (uint32_t k = 0; k < t->n; k++) {
			size_t len = t->len[k], i;
			if (len > end || (best >= 0 && len <= t->len[best]))
				continue;
			/* its start in the whole text: seen - n_hist + end - len */
			if (t->at_start[k] && t->seen + e != len)
				continue;
			for (i = 0; i < len && at(t, p, end - len + i) == (uint8_t)t->word[k][i]; i++)
				;
			if (i == len)
				best = (int)k;
		}
		if (best >= 0) {
			*rest = e;
			return best;
		}
	}
	return -1;
}

void gram_trig_push(struct gram_trig *t, const char *p, size_t n)
{
	uint32_t keep = 0;

	for (uint32_t k = 0; k < t->n; k++)
		if (t->len[k] > keep + 1u)
			keep = t->len[k] - 1u;
	t->seen += n;
	if (n >= keep) {
		memcpy(t->hist, p + n - keep, keep);
		t->n_hist = keep;
		return;
	}
	if (t->n_hist + n > keep) {
		uint32_t drop = t->n_hist + (uint32_t)n - keep;
		memmove(t->hist, t->hist + drop, t->n_hist - drop);
		t->n_hist -= drop;
	}
	memcpy(t->hist + t->n_hist, p, n);
	t->n_hist += (uint32_t)n;
}
