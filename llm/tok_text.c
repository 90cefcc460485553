/*
 * llm/tok_text.c — text to ids and back (llm/tok.h).
 *
 * Follows llama.cpp's llama_vocab::impl::tokenize / token_to_piece /
 * detokenize (src/llama-vocab.cpp): special-token text is cut out of the
 * input first (tokenizer_st_partition), then each plain run is encoded by the
 * SPM or BPE encoder.
 */
#include "tok_int.h"
#include "codec.h"

/* A piece of the input: plain text [off, off+len) or one special token. */
struct frag {
	int32_t id; /* TOK_NULL for text */
	uint32_t off, len;
};

static bool c_isspace(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static const char *find(const char *hay, size_t n, const char *needle, size_t m)
{
	if (m == 0 || m > n)
		return NULL;
	for (size_t i = 0; i + m <= n; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
			return hay + i;
	return NULL;
}

/* Byte ranges where control and unknown tokens are not matched (tok_encode_spans). */
struct guard {
	const struct tok_span *span;
	size_t n;
};

/* A match of tk at [at, at + tk->len) that a guarded span overlaps. */
static bool guarded(const struct guard *g, const struct tok_token *tk, size_t at)
{
	if (!(tk->attr & (TOK_ATTR_CONTROL | TOK_ATTR_UNKNOWN)))
		return false;
	for (size_t i = 0; i < g->n; i++)
		if (at < g->span[i].off + g->span[i].len && g->span[i].off < at + tk->len)
			return true;
	return false;
}

/* Cut every occurrence of token id out of the text fragments in[]; returns the new count. */
static size_t cut_token(const struct tok *t, const char *text, int32_t id, const struct frag *in,
			size_t n_in, struct frag *out, const struct guard *g)
{
	const struct tok_token *tk = &t->tokens[id];
	size_t n = 0;

	for (size_t f = 0; f < n_in; f++) {
		size_t cur, end, from;
		const char *m;

		if (in[f].id != TOK_NULL) {
			out[n++] = in[f];
			continue;
		}
		cur = from = in[f].off;
		end = cur + in[f].len;
		while (from < end && (m = find(text + from, end - from, tk->text, tk->len))) {
			size_t at = (size_t)(m - text), left = at - cur;

			if (guarded(g, tk, at)) {
				from = at + 1; /* text here: look further on */
				continue;
			}
			if (tk->attr & TOK_ATTR_LSTRIP)
				while (left > 0 && c_isspace(text[cur + left - 1]))
					left--;
			if (left > 0)
				out[n++] = (struct frag){TOK_NULL, (uint32_t)cur, (uint32_t)left};
			out[n++] = (struct frag){id, 0, 0};
			cur = at + tk->len;
			if (tk->attr & TOK_ATTR_RSTRIP)
				while (cur < end && c_isspace(text[cur]))
					cur++;
			from = cur;
		}
		if (cur < end)
			out[n++] = (struct frag){TOK_NULL, (uint32_t)cur, (uint32_t)(end - cur)};
	}
	return n;
}

static bool wanted(const struct tok *t, int32_t id, bool parse_special)
{
	return parse_special || !(t->tokens[id].attr & (TOK_ATTR_CONTROL | TOK_ATTR_UNKNOWN));
}

/*
 * How often each special token occurs in the whole text (overlaps counted):
 * an upper bound on its matches in any fragment, 0 = skip it. One pass over
 * the text with the tokens grouped by their first two bytes, instead of one
 * search per token (a vocabulary may have thousands of them).
 */
static uint32_t count_specials(const struct tok *t, const char *text, size_t len,
			       bool parse_special, uint32_t *cnt)
{
	uint32_t total = 0;

	for (size_t i = 0; i + 1 < len; i++) {
		uint32_t k = (uint8_t)text[i] << 8 | (uint8_t)text[i + 1];
		for (uint32_t j = t->special_at2[k]; j < t->special_at2[k + 1]; j++) {
			uint32_t s = t->special_by2[j];
			const struct tok_token *tk = &t->tokens[t->special[s]];
			if (tk->len <= len - i && memcmp(text + i, tk->text, tk->len) == 0 &&
			    wanted(t, t->special[s], parse_special)) {
				cnt[s]++;
				total++;
			}
		}
	}
	for (uint32_t s = 0; s < t->n_special; s++) {
		const struct tok_token *tk = &t->tokens[t->special[s]];
		if (tk->len != 1 || !wanted(t, t->special[s], parse_special))
			continue;
		for (size_t i = 0; i < len; i++)
			cnt[s] += text[i] == tk->text[0];
		total += cnt[s];
	}
	return total;
}

/*
 * tokenizer_st_partition: control and unknown tokens only when parse_special,
 * user-defined ones always, longest first. Each match adds at most two
 * fragments.
 */
static int partition(const struct tok *t, const char *text, size_t len, bool parse_special,
		     const struct guard *guard, struct llm_arena *a, struct frag **frags,
		     size_t *n_frags)
{
	uint32_t *cnt = llm_arena_alloc(a, ((size_t)t->n_special + 1) * sizeof *cnt, 4);
	struct frag *f, *g, *sw;
	size_t n = 0, max;

	if (!cnt)
		return -LLMK_ENOMEM;
	max = 2 * (size_t)count_specials(t, text, len, parse_special, cnt) + 1;
	f = llm_arena_alloc(a, max * sizeof *f, 8);
	g = llm_arena_alloc(a, max * sizeof *g, 8);
	if (!f || !g)
		return -LLMK_ENOMEM;
	if (len)
		f[n++] = (struct frag){TOK_NULL, 0, (uint32_t)len};
	for (uint32_t s = 0; s < t->n_special && n; s++) {
		if (!cnt[s])
			continue;
		n = cut_token(t, text, t->special[s], f, n, g, guard);
		sw = f;
		f = g;
		g = sw;
	}
	*frags = f;
	*n_frags = n;
	return 0;
}

static int encode(const struct tok *t, const char *text, size_t len, bool add_special,
		  bool parse_special, const struct guard *guard, int32_t *out, size_t cap,
		  size_t *n_out)
{
	struct tok_out o = {out, cap, 0};
	struct llm_arena a;
	struct frag *f;
	size_t n_frags;
	bool prev_special = true; /* SPM: a space prefix goes before the first text */
	int rc;

	*n_out = 0;
	if (len >= UINT32_MAX / 4)
		return -LLMK_ERANGE;
	llm_arena_init(&a, t->mem);
	a.chunk_size = 64 << 10;
	if ((rc = partition(t, text, len, parse_special, guard, &a, &f, &n_frags)))
		goto done;
	if (add_special && t->add_bos)
		tok_emit(&o, t->bos);
	for (size_t i = 0; i < n_frags && !rc; i++) {
		if (f[i].id != TOK_NULL) {
			tok_emit(&o, f[i].id);
			prev_special = true;
			continue;
		}
		if (t->kind == TOK_BPE) {
			rc = tok_bpe_encode(t, text + f[i].off, f[i].len, &a, &o);
			continue;
		}
		/* SPM: " " before text that follows BOS or a special token */
		if (t->add_space_prefix && prev_special) {
			char *s = llm_arena_alloc(&a, (size_t)f[i].len + 1, 1);
			if (!s) {
				rc = -LLMK_ENOMEM;
				break;
			}
			s[0] = ' ';
			memcpy(s + 1, text + f[i].off, f[i].len);
			rc = tok_spm_encode(t, s, (size_t)f[i].len + 1, &a, &o);
		} else {
			rc = tok_spm_encode(t, text + f[i].off, f[i].len, &a, &o);
		}
		prev_special = false;
	}
	if (!rc && add_special && t->add_eos)
		tok_emit(&o, t->eos);
done:
	llm_arena_free(&a);
	*n_out = o.n;
	if (!rc && o.n > cap)
		rc = -LLMK_ERANGE;
	return rc;
}

int tok_encode(const struct tok *t, const char *text, size_t len, bool add_special,
	       bool parse_special, int32_t *out, size_t cap, size_t *n_out)
{
	struct guard none = {NULL, 0};

	return encode(t, text, len, add_special, parse_special, &none, out, cap, n_out);
}

int tok_encode_spans(const struct tok *t, const char *text, size_t len, bool add_special,
		     const struct tok_span *plain, size_t n_plain, int32_t *out, size_t cap,
		     size_t *n_out)
{
	struct guard g = {plain, n_plain};

	return encode(t, text, len, add_special, true, &g, out, cap, n_out);
}

/* Bounded writer: counts what does not fit. */
struct wbuf {
	char *p;
	size_t cap, n;
};

static void put(struct wbuf *w, const void *s, size_t n)
{
	if (w->n <= w->cap && n <= w->cap - w->n)
		memcpy(w->p + w->n, s, n);
	w->n += n;
}

/* <0xXX> -> the byte (llama.cpp's token_to_byte reads text[3..4]) */
static void put_byte_token(struct wbuf *w, const struct tok_token *tk)
{
	int hi = tk->len >= 5 ? hex_digit(tk->text[3]) : -1;
	int lo = tk->len >= 5 ? hex_digit(tk->text[4]) : -1;
	char b = (char)((hi < 0 ? 0 : hi) << 4 | (lo < 0 ? 0 : lo));

	put(w, &b, 1);
}

/* SPM: U+2581 stands for a space. */
static void put_unescaped(struct wbuf *w, const struct tok_token *tk)
{
	for (uint32_t i = 0; i < tk->len; i++) {
		if (i + 2 < tk->len && memcmp(tk->text + i, "\xe2\x96\x81", 3) == 0) {
			put(w, " ", 1);
			i += 2;
		} else {
			put(w, tk->text + i, 1);
		}
	}
}

/* BPE: each code point of the text is one byte via GPT-2's map (llama_decode_text). */
static void put_gpt2_decoded(struct wbuf *w, const struct tok_token *tk)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t off = 0; off < tk->len;) {
		uint32_t cp = uni_utf8_decode(tk->text, tk->len, &off);
		int b = uni_cp_to_byte(cp);
		char c = (char)b, u[4];
		size_t un;

		if (b >= 0) {
			put(w, &c, 1);
			continue;
		}
		/* llama.cpp's marker for a code point outside the map, verbatim */
		put(w, "[UNK_BYTE_0x", 12);
		un = uni_utf8_encode(cp, u);
		for (size_t i = 0; i < un; i++) {
			char h[2] = {hex[(uint8_t)u[i] >> 4], hex[(uint8_t)u[i] & 15]};
			put(w, h, 2);
		}
		put(w, tk->text, tk->len);
		put(w, "]", 1);
	}
}

static void render(const struct tok *t, int32_t id, unsigned flags, struct wbuf *w)
{
	const struct tok_token *tk = &t->tokens[id];
	const uint32_t special = TOK_ATTR_UNKNOWN | TOK_ATTR_CONTROL;

	if (!(flags & TOK_PIECE_SPECIAL) && (tk->attr & special))
		return;
	if (tk->attr & (special | TOK_ATTR_USER_DEFINED))
		put(w, tk->text, tk->len);
	else if ((tk->attr & TOK_ATTR_NORMAL) && t->kind == TOK_SPM)
		put_unescaped(w, tk);
	else if (tk->attr & TOK_ATTR_NORMAL)
		put_gpt2_decoded(w, tk);
	else if (tk->attr & TOK_ATTR_BYTE)
		put_byte_token(w, tk);
}

int tok_piece(const struct tok *t, int32_t id, unsigned flags, char *buf, size_t cap)
{
	struct wbuf w = {buf, cap, 0};
	size_t skip = 0;

	if (id < 0 || (uint32_t)id >= t->n_vocab)
		return -LLMK_EINVAL;
	render(t, id, flags, &w);
	if ((flags & TOK_PIECE_LSTRIP) && w.n > 0 && w.n <= cap && buf[0] == ' ')
		skip = 1;
	if (w.n > cap)
		return -LLMK_ERANGE;
	if (skip)
		memmove(buf, buf + 1, w.n - 1);
	return (int)(w.n - skip);
}

/* clean_up_tokenization_spaces, the three passes of llama_vocab::impl::detokenize */
static size_t clean_spaces(char *s, size_t n)
{
	size_t m = n ? 1 : 0;

	for (size_t i = 1; i < n; i++) { /* " ?" " !" " ." " ," */
		char x = s[i];
		if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ','))
			m--;
		s[m++] = x;
	}
	n = m;
	m = n ? 1 : 0;
	for (size_t i = 1; i < n; i++) { /* " ' " -> "'" */
		char x = s[i];
		if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') {
			m--;
			s[++i] = 0;
		}
		s[m++] = x;
	}
	n = m;
	m = n ? 1 : 0;
	for (size_t i = 1; i < n; i++) { /* " 's" " 'm" " 're" " 've" */
		char x = s[i];
		if (s[i - 1] == ' ' && x == '\'' && i + 1 < n) {
			char x1 = s[i + 1];
			if (x1 == 's' || x1 == 'm')
				m--;
			else if (i + 2 < n && ((x1 == 'r' && s[i + 2] == 'e') || (x1 == 'v' && s[i + 2] == 'e')))
				m--;
		}
		s[m++] = x;
	}
	return m;
}

int tok_decode(const struct tok *t, const int32_t *ids, size_t n, bool remove_special,
	       bool unparse_special, char *buf, size_t cap, size_t *n_out)
{
	struct wbuf w = {buf, cap, 0};
	bool strip = t->add_space_prefix;
	unsigned flags = unparse_special ? TOK_PIECE_SPECIAL : 0;

	*n_out = 0;
	if (remove_special && t->add_bos && n > 0 && ids[0] == t->bos) {
		strip = false;
		ids++;
		n--;
	}
	if (remove_special && t->add_eos && n > 0 && ids[n - 1] == t->eos)
		n--;
	for (size_t i = 0; i < n; i++) {
		size_t at = w.n;

		if (ids[i] < 0 || (uint32_t)ids[i] >= t->n_vocab)
			return -LLMK_EINVAL;
		render(t, ids[i], flags, &w);
		/* the SPM space prefix: one leading space of the first piece */
		if (strip && w.n > at && w.n <= cap && buf[at] == ' ') {
			memmove(buf + at, buf + at + 1, w.n - at - 1);
			w.n--;
		}
		strip = false;
	}
	if (w.n >= cap) {
		*n_out = w.n;
		return -LLMK_ERANGE;
	}
	if (t->clean_spaces)
		w.n = clean_spaces(buf, w.n);
	buf[w.n] = 0;
	*n_out = w.n;
	return 0;
}
