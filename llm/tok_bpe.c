/*
 * llm/tok_bpe.c — byte-level BPE encoding (tokenizer.ggml.model "gpt2").
 *
 * As llama.cpp's llm_tokenizer_bpe_session (src/llama-vocab.cpp): the
 * pre-tokenizer splits the text into words (tok_pre.c), each word's UTF-8
 * bytes are spelled with GPT-2's byte-to-unicode characters, the word starts
 * as one symbol per character, and the adjacent pair with the lowest merge
 * rank is merged first (ties: leftmost), until no pair is a merge.
 */
#include "tok_int.h"

struct bpe_sym {
	int32_t prev, next;
	uint32_t off, len; /* bytes of the encoded word; 0 once merged away */
};

struct bpe_ctx {
	const struct tok *t;
	char *word; /* the encoded word */
	struct bpe_sym *sym;
	struct tok_heap heap;
};

static void try_pair(struct bpe_ctx *c, int32_t left, int32_t right)
{
	const struct bpe_sym *l, *r;
	int32_t rank;

	if (left < 0 || right < 0)
		return;
	l = &c->sym[left];
	r = &c->sym[right];
	rank = tok_merge_rank(c->t, c->word + l->off, l->len, c->word + r->off, r->len);
	if (rank >= 0)
		tok_heap_push(&c->heap, (struct tok_pair){left, right, rank, l->len + r->len});
}

static void emit_symbol(const struct bpe_ctx *c, const struct bpe_sym *s, struct tok_out *o)
{
	int32_t id = tok_find(c->t, c->word + s->off, s->len);

	if (id != TOK_NULL) {
		tok_emit(o, id);
		return;
	}
	/* llama.cpp looks each byte of the encoded text up as a one-byte token
	 * and drops the bytes that are none */
	for (uint32_t i = 0; i < s->len; i++) {
		id = tok_find(c->t, c->word + s->off + i, 1);
		if (id != TOK_NULL)
			tok_emit(o, id);
	}
}

/* Merge one encoded word of len bytes and emit its tokens. */
static void merge_word(struct bpe_ctx *c, size_t len, struct tok_out *o)
{
	size_t n_sym = 0;
	int32_t id;

	if (c->t->ignore_merges && (id = tok_find(c->t, c->word, len)) != TOK_NULL) {
		tok_emit(o, id);
		return;
	}
	for (size_t off = 0; off < len;) {
		size_t k = uni_utf8_len((uint8_t)c->word[off]);
		if (k > len - off)
			k = len - off;
		c->sym[n_sym] = (struct bpe_sym){(int32_t)n_sym - 1, -1, (uint32_t)off, (uint32_t)k};
		off += k;
		if (off < len)
			c->sym[n_sym].next = (int32_t)n_sym + 1;
		n_sym++;
	}
	c->heap.n = 0;
	for (size_t i = 1; i < n_sym; i++)
		try_pair(c, (int32_t)i - 1, (int32_t)i);
	while (c->heap.n) {
		struct tok_pair p = tok_heap_pop(&c->heap);
		struct bpe_sym *l = &c->sym[p.left], *r = &c->sym[p.right];

		if (l->len == 0 || r->len == 0 || l->len + r->len != p.size)
			continue;
		l->len += r->len;
		r->len = 0;
		l->next = r->next;
		if (r->next >= 0)
			c->sym[r->next].prev = p.left;
		try_pair(c, l->prev, p.left);
		try_pair(c, p.left, l->next);
	}
	for (int32_t i = 0; i != -1; i = c->sym[i].next)
		emit_symbol(c, &c->sym[i], o);
}

/* UTF-8 of the word's code points, each byte spelled as GPT-2's character. */
static size_t encode_word(const struct tok *t, const uint32_t *cp, size_t n, char *out)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		char u[4];
		size_t k = uni_utf8_encode(cp[i], u);
		for (size_t j = 0; j < k; j++) {
			uint8_t b = (uint8_t)u[j];
			memcpy(out + len, t->byte_cp[b], t->byte_cp_len[b]);
			len += t->byte_cp_len[b];
		}
	}
	return len;
}

int tok_bpe_encode(const struct tok *t, const char *text, size_t n, struct llm_arena *a,
		   struct tok_out *o)
{
	struct bpe_ctx c = {t, NULL, NULL, {NULL, 0}};
	uint32_t *cp, *len, *tmp, *words;
	uint8_t *cls;
	size_t n_cp = 0, n_words, max_word = 0, start = 0;

	if (n == 0)
		return 0;
	cp = llm_arena_alloc(a, n * sizeof *cp, 4);
	cls = llm_arena_alloc(a, n, 1);
	len = llm_arena_alloc(a, n * sizeof *len, 4);
	tmp = llm_arena_alloc(a, n * sizeof *tmp, 4);
	if (!cp || !cls || !len || !tmp)
		return -LLMK_ENOMEM;
	for (size_t off = 0; off < n; n_cp++) {
		cp[n_cp] = uni_utf8_decode(text, n, &off);
		cls[n_cp] = uni_class(cp[n_cp]);
	}
	n_words = tok_pre_split(t->pre, cp, cls, n_cp, len, tmp, &words);
	for (size_t w = 0; w < n_words; w++)
		if (words[w] > max_word)
			max_word = words[w];
	/* a code point is at most 4 UTF-8 bytes, each at most 2 bytes encoded */
	c.word = llm_arena_alloc(a, 8 * max_word, 1);
	c.sym = llm_arena_alloc(a, 4 * max_word * sizeof *c.sym, 8);
	c.heap.v = llm_arena_alloc(a, 12 * max_word * sizeof *c.heap.v, 8);
	if (!c.word || !c.sym || !c.heap.v)
		return -LLMK_ENOMEM;
	for (size_t w = 0; w < n_words; w++) {
		size_t k = encode_word(t, cp + start, words[w], c.word);
		merge_word(&c, k, o);
		start += words[w];
	}
	return 0;
}
