/*
 * llm/grammar_gen.c — a grammar constraining generation (grammar.h).
 *
 * Checking every vocabulary piece against the state at every step would
 * cost the vocabulary times the piece length in matcher steps per token;
 * instead:
 *   - the sampled token is checked first (one piece, a few bytes); most
 *     steps of a model that follows the grammar end there;
 *   - when it is refused, the allowed set is found by one walk of a trie of
 *     the pieces (built once per run from the vocabulary), a prefix shared by
 *     many tokens matched once, a refused prefix pruning its subtree;
 *   - the set is kept as a bit mask in a cache keyed by a hash of the state
 *     (stacks and open UTF-8 sequence), so a state met again (inside a JSON
 *     string, between values) costs one lookup.
 * End-of-generation tokens are allowed exactly when the grammar may end.
 */
#include "grammar.h"
#include "tok.h"

static bool bit(const uint32_t *m, uint32_t i)
{
	return m[i >> 5] >> (i & 31) & 1;
}

static void set_bit(uint32_t *m, uint32_t i)
{
	m[i >> 5] |= 1u << (i & 31);
}

/* The child of node under byte c, made if absent (*n counts the nodes). */
static uint32_t child(struct gram_trie_node *t, uint32_t *n, uint32_t node, uint8_t c)
{
	uint32_t k;

	for (k = t[node].child; k; k = t[k].next)
		if (t[k].byte == c)
			return k;
	k = (*n)++;
	t[k].byte = c;
	t[k].id = -1;
	t[k].child = 0;
	t[k].next = t[node].child;
	t[node].child = k;
	return k;
}

static int piece(const struct gram_gen *x, int32_t id, char *buf)
{
	return tok_piece(x->tok, id, 0, buf, GRAM_MAX_PIECE);
}

int gram_gen_init(struct gram_gen *x, const struct gram *g, const struct tok *tok,
		  uint32_t n_vocab, struct llm_mem *mem)
{
	char buf[GRAM_MAX_PIECE];
	size_t nodes = 1, words = (n_vocab + 31) / 32, bytes;
	uint8_t *q;
	int r;

	memset(x, 0, sizeof *x);
	x->g = g;
	x->tok = tok;
	x->n_vocab = n_vocab;
	for (uint32_t id = 0; id < n_vocab; id++) {
		int n = piece(x, (int32_t)id, buf);
		if (n > 0)
			nodes += (size_t)n;
	}
	bytes = (GRAM_MAX_PIECE + 3) * sizeof(struct gram_state) +
		nodes * sizeof(struct gram_trie_node) + (GRAM_CACHE + 1) * words * 4;
	if (!(x->block = llm_mem_alloc(mem, bytes, &r)))
		return r;
	x->mem = mem;
	x->block_bytes = bytes;
	q = x->block;
	x->cur = (struct gram_state *)q, q += sizeof(struct gram_state);
	x->tmp = (struct gram_state *)q, q += sizeof(struct gram_state);
	x->walk = (struct gram_state *)q, q += (GRAM_MAX_PIECE + 1) * sizeof(struct gram_state);
	x->node = (struct gram_trie_node *)q, q += nodes * sizeof(struct gram_trie_node);
	x->eog = (uint32_t *)q, q += words * 4;
	x->mask = (uint32_t *)q;
	x->node[0].id = -1;
	x->n_node = 1;
	for (uint32_t id = 0; id < n_vocab; id++) {
		int n = piece(x, (int32_t)id, buf);
		uint32_t at = 0;
		if (tok_is_eog(tok, (int32_t)id))
			set_bit(x->eog, id);
		if (n <= 0 || tok_is_eog(tok, (int32_t)id))
			continue;
		for (int i = 0; i < n; i++)
			at = child(x->node, &x->n_node, at, (uint8_t)buf[i]);
		x->node[at].id = (int32_t)id;
	}
	if ((r = gram_start(g, x->cur))) {
		gram_gen_free(x);
		return r;
	}
	return 0;
}

void gram_gen_free(struct gram_gen *x)
{
	if (x->block)
		llm_mem_free(x->mem, x->block, x->block_bytes);
	memset(x, 0, sizeof *x);
}

/* The state after id's piece into out (two scratch states); false if refused. */
static bool walk(struct gram_gen *x, int32_t id, struct gram_state **out)
{
	char buf[GRAM_MAX_PIECE];
	const struct gram_state *s = x->cur;
	int n;

	if (id < 0 || (uint32_t)id >= x->n_vocab)
		return false;
	n = piece(x, id, buf);
	if (n <= 0)
		return false;
	for (int i = 0; i < n; i++) {
		struct gram_state *d = &x->walk[i & 1];
		if (!gram_byte(x->g, s, (uint8_t)buf[i], d))
			return false;
		s = d;
	}
	*out = (struct gram_state *)s;
	return true;
}

/*
 * While a lazy grammar waits: whether id may come next, and when its piece
 * completes a trigger (*fired) the state after the trigger and the rest of
 * the piece, from the start state (x->cur while waiting), into *out.
 */
static bool wait_walk(struct gram_gen *x, int32_t id, struct gram_state **out, bool *fired)
{
	char buf[256];
	const struct gram_state *s = x->cur;
	size_t rest;
	int n, k;

	*fired = false;
	if (id < 0 || (uint32_t)id >= x->n_vocab)
		return false;
	n = tok_piece(x->tok, id, 0, buf, sizeof buf);
	if (n <= 0 || (k = gram_trig_find(&x->trig, buf, (size_t)n, &rest)) < 0)
		return true; /* no trigger: free */
	*fired = true;
	for (size_t i = 0; i < x->trig.len[k] + ((size_t)n - rest); i++) {
		uint8_t c = (uint8_t)(i < x->trig.len[k] ? x->trig.word[k][i]
							  : buf[rest + i - x->trig.len[k]]);
		struct gram_state *d = &x->walk[i & 1];
		if (!gram_byte(x->g, s, c, d))
			return false;
		s = d;
	}
	*out = (struct gram_state *)s;
	return true;
}

bool gram_gen_allows(struct gram_gen *x, int32_t id)
{
	struct gram_state *s;
	bool fired;

	if (id >= 0 && (uint32_t)id < x->n_vocab && bit(x->eog, (uint32_t)id))
		return x->waiting || gram_complete(x->cur);
	if (x->waiting)
		return wait_walk(x, id, &s, &fired);
	return walk(x, id, &s);
}

int gram_gen_lazy(struct gram_gen *x, const char *const *words, uint32_t n, char *err,
		  size_t errlen)
{
	int r = gram_trig_init(&x->trig, words, n, err, errlen);

	x->waiting = r == 0;
	return r;
}

bool gram_gen_done(const struct gram_gen *x)
{
	return !x->waiting && gram_done(x->cur);
}

void gram_gen_accept(struct gram_gen *x, int32_t id)
{
	struct gram_state *s;
	bool fired;

	if (x->waiting) {
		char buf[256];
		int n;
		if (!wait_walk(x, id, &s, &fired))
			return;
		if (!fired) {
			n = tok_piece(x->tok, id, 0, buf, sizeof buf);
			if (n > 0)
				gram_trig_push(&x->trig, buf, (size_t)n);
			return;
		}
		x->waiting = false;
	} else if (!walk(x, id, &s)) {
		return;
	}
	{
		x->cur->n_stacks = s->n_stacks;
		x->cur->used = s->used;
		x->cur->part_val = s->part_val;
		x->cur->part_left = s->part_left;
		x->cur->part_len = s->part_len;
		memcpy(x->cur->w, s->w, s->used * sizeof *s->w);
	}
}

/* FNV-1a over the state's words; never 0 (an empty slot). */
static uint64_t key(const struct gram_state *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t head[3] = {s->n_stacks, s->part_val, (uint32_t)s->part_left << 8 | s->part_len};

	for (uint32_t i = 0; i < 3 + s->used; i++) {
		uint32_t v = i < 3 ? head[i] : s->w[i - 3];
		for (int b = 0; b < 4; b++)
			h = (h ^ (v >> (8 * b) & 0xff)) * 0x100000001b3ull;
	}
	return h | 1;
}

/* Every token whose piece the state allows, into m: depth first over the
 * trie, walk[d] the state after the first d bytes. */
static void fill(struct gram_gen *x, uint32_t *m)
{
	uint32_t at[GRAM_MAX_PIECE + 1], d = 0;

	memset(m, 0, (x->n_vocab + 31) / 32 * 4);
	x->walk[0] = *x->cur;
	at[0] = x->node[0].child;
	for (;;) {
		uint32_t k = at[d];
		if (!k) {
			if (!d--)
				break;
			at[d] = x->node[at[d]].next;
			continue;
		}
		if (d < GRAM_MAX_PIECE &&
		    gram_byte(x->g, &x->walk[d], x->node[k].byte, &x->walk[d + 1])) {
			if (x->node[k].id >= 0)
				set_bit(m, (uint32_t)x->node[k].id);
			if (x->node[k].child && d + 1 < GRAM_MAX_PIECE) {
				at[++d] = x->node[k].child;
				continue;
			}
		}
		at[d] = x->node[k].next;
	}
	if (gram_complete(x->cur))
		for (uint32_t i = 0; i < (x->n_vocab + 31) / 32; i++)
			m[i] |= x->eog[i];
}

void gram_gen_mask(struct gram_gen *x, float *logits)
{
	size_t words = (x->n_vocab + 31) / 32;
	uint64_t k = key(x->cur);
	uint32_t *m = NULL;

	x->n_masked++;
	if (x->waiting) {
		/* the tokens allowed depend on the bytes kept, not the state: no
		 * cache (a rare step: the one a trigger's bad continuation drew) */
		uint32_t slot = x->next_slot++ % GRAM_CACHE;
		m = x->mask + slot * words;
		x->key[slot] = 0;
		memset(m, 0, words * 4);
		for (uint32_t id = 0; id < x->n_vocab; id++)
			if (gram_gen_allows(x, (int32_t)id))
				set_bit(m, id);
		k = 0;
	}
	for (uint32_t i = 0; k && i < GRAM_CACHE; i++)
		if (x->key[i] == k) {
			m = x->mask + i * words;
			x->n_hits++;
			break;
		}
	if (!m) {
		uint32_t slot = x->next_slot++ % GRAM_CACHE;
		m = x->mask + slot * words;
		fill(x, m);
		x->key[slot] = k;
	}
	for (uint32_t id = 0; id < x->n_vocab; id++)
		if (!bit(m, id))
			logits[id] = -__builtin_inff();
}
