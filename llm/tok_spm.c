/*
 * llm/tok_spm.c — SentencePiece-style encoding (tokenizer.ggml.model "llama").
 *
 * As llama.cpp's llm_tokenizer_spm_session (src/llama-vocab.cpp): spaces
 * become U+2581, the text starts as one symbol per UTF-8 character, and the
 * adjacent pair whose concatenation is the vocabulary token with the highest
 * score is merged first (ties: leftmost), until no pair forms a token. A
 * symbol left that is not a token is emitted as its bytes (<0xXX>).
 */
#include "tok_int.h"

struct spm_sym {
	int32_t prev, next;
	uint32_t off, len; /* bytes of the escaped text; len 0 once merged away */
};

struct spm_ctx {
	const struct tok *t;
	const char *text;
	struct spm_sym *sym;
	struct tok_heap heap;
};

static void try_pair(struct spm_ctx *c, int32_t left, int32_t right)
{
	const struct spm_sym *l, *r;
	int32_t id;

	if (left < 0 || right < 0)
		return;
	l = &c->sym[left];
	r = &c->sym[right];
	id = tok_find(c->t, c->text + l->off, (size_t)l->len + r->len);
	if (id == TOK_NULL)
		return;
	/* the highest score first: the heap takes the lowest prio */
	tok_heap_push(&c->heap, (struct tok_pair){left, right, -(double)c->t->tokens[id].score,
						  l->len + r->len});
}

static void emit_symbol(const struct spm_ctx *c, const struct spm_sym *s, struct tok_out *o)
{
	int32_t id = tok_find(c->t, c->text + s->off, s->len);

	if (id != TOK_NULL) {
		tok_emit(o, id);
		return;
	}
	/* byte fallback; llama.cpp has no answer for a byte without a token
	 * (it throws), we fall back to <unk> */
	for (uint32_t i = 0; i < s->len; i++) {
		int32_t b = c->t->byte_tok[(uint8_t)c->text[s->off + i]];
		if (b == TOK_NULL)
			b = c->t->unk;
		if (b != TOK_NULL)
			tok_emit(o, b);
	}
}

/* Copy of text with every ' ' replaced by U+2581 (llama_escape_whitespace). */
static char *escape(const char *text, size_t n, struct llm_arena *a, size_t *out_n)
{
	size_t spaces = 0, j = 0;
	char *s;

	for (size_t i = 0; i < n; i++)
		spaces += text[i] == ' ';
	if (!(s = llm_arena_alloc(a, n + 2 * spaces + 1, 1)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (text[i] == ' ') {
			memcpy(s + j, "\xe2\x96\x81", 3);
			j += 3;
		} else {
			s[j++] = text[i];
		}
	}
	*out_n = j;
	return s;
}

int tok_spm_encode(const struct tok *t, const char *text, size_t n, struct llm_arena *a,
		   struct tok_out *o)
{
	struct spm_ctx c = {t, NULL, NULL, {NULL, 0}};
	size_t len, n_sym = 0;

	if (n == 0)
		return 0;
	if (!(c.text = escape(text, n, a, &len)))
		return -LLMK_ENOMEM;
	c.sym = llm_arena_alloc(a, len * sizeof *c.sym, 8);
	/* n-1 initial pairs, at most 2 more per merge (n-1 merges) */
	c.heap.v = llm_arena_alloc(a, 3 * len * sizeof *c.heap.v, 8);
	if (!c.sym || !c.heap.v)
		return -LLMK_ENOMEM;
	for (size_t off = 0; off < len;) {
		size_t k = uni_utf8_len((uint8_t)c.text[off]);
		if (k > len - off)
			k = len - off;
		c.sym[n_sym] = (struct spm_sym){(int32_t)n_sym - 1, -1, (uint32_t)off, (uint32_t)k};
		off += k;
		if (off < len)
			c.sym[n_sym].next = (int32_t)n_sym + 1;
		n_sym++;
	}
	for (size_t i = 1; i < n_sym; i++)
		try_pair(&c, (int32_t)i - 1, (int32_t)i);
	while (c.heap.n) {
		struct tok_pair p = tok_heap_pop(&c.heap);
		struct spm_sym *l = &c.sym[p.left], *r = &c.sym[p.right];

		if (l->len == 0 || r->len == 0 || l->len + r->len != p.size)
			continue;
		l->len += r->len;
		r->len = 0;
		l->next = r->next;
		if (r->next >= 0)
			c.sym[r->next].prev = p.left;
		try_pair(&c, l->prev, p.left);
		try_pair(&c, p.left, l->next);
	}
	for (int32_t i = 0; i != -1; i = c.sym[i].next)
		emit_symbol(&c, &c.sym[i], o);
	return 0;
}
