/*
 * llm/grammar.h — GBNF grammars: parse, match, constrain sampling.
 *
 * The format is llama.cpp's (grammars/README.md): rules `name ::= ...`,
 * alternation `|`, groups `( )`, literals "..." with \x \u \U \t \n \r
 * escapes, character classes [a-z] and [^...], `.` for any character,
 * repetition `* + ?` and `{m}`, `{m,}`, `{m,n}`, `#` comments. The start
 * rule is `root`.
 *
 *   gram_parse(&g, mem, text, err, errlen)    text -> rules (one error line
 *                                              with line:column on failure)
 *   gram_match_init(&m, &g, mem)               a matcher's state: the start
 *   gram_match_byte(&m, src, c, dst)           one byte of output
 *   gram_free(&g)
 *
 * The compiled form: every rule is a run of elements, its alternatives
 * separated by GRAM_ALT and closed by GRAM_END; a term is one element, a
 * character set (GRAM_SET, ranges in g->rng) or a reference (GRAM_RULE).
 * Groups and repetitions become generated rules, so a repeated term is
 * always one element.
 *
 * The matcher is a pushdown automaton: a state is a set of stacks of
 * element positions, each stack's top a GRAM_SET still to match (an empty
 * stack: the grammar is complete). Every bound is fixed and checked: the
 * elements, rules and ranges a grammar may compile to, the stacks a state
 * may hold and their depth; what passes a bound is an error (parse) or a
 * refused byte (match), never more memory or time.
 */
#ifndef LLM_GRAMMAR_H
#define LLM_GRAMMAR_H

#include "mem.h"

#define GRAM_MAX_ELEMS 65536u
#define GRAM_MAX_RANGES 65536u  /* lo/hi pairs of all the character sets */
#define GRAM_MAX_RULES 8192u
#define GRAM_MAX_NESTING 64u    /* ( ) groups inside each other while parsing */
#define GRAM_MAX_REPEAT 2000u   /* m of {m,n}; an n above it: no bound (llama.cpp's) */
#define GRAM_MAX_WEIGHT (1u << 20) /* elements a rule would unroll to, nested repeats multiplied */
#define GRAM_STATE_WORDS 2048u  /* a state's stacks, with their lengths */
#define GRAM_MAX_STACKS 128u
#define GRAM_MAX_DEPTH 128u     /* elements a stack holds */
#define GRAM_MAX_TEXT (1u << 20) /* bytes of grammar text */

enum gram_op { GRAM_END, GRAM_ALT, GRAM_RULE, GRAM_SET };

struct gram_elem {
	uint8_t op;     /* enum gram_op */
	uint8_t neg;    /* GRAM_SET: matches what none of its ranges holds */
	uint16_t n;     /* GRAM_SET: ranges */
	uint32_t a;     /* GRAM_SET: first range in rng; GRAM_RULE: the rule */
};

struct gram {
	struct gram_elem *el;
	uint32_t n_el;
	uint32_t *rng;        /* lo, hi pairs (inclusive code points) */
	uint32_t n_rng;
	uint32_t *rule_at;    /* element where each rule starts */
	uint32_t n_rules;
	uint32_t root;
	void *block;          /* all of the above */
	size_t block_bytes;
	struct llm_mem *mem;
};

/* Parse text[0..len) into g (all of g's memory from mem, one allocation).
 * -LLMK_EFORMAT with "line L, column C: what" in err for a bad grammar
 * (also: an undefined rule, no root, left recursion, a language with no
 * finite string); -LLMK_ERANGE for one that passes a bound. */
int gram_parse(struct gram *g, struct llm_mem *mem, const char *text, size_t len, char *err,
	       size_t errlen);
void gram_free(struct gram *g);

/* A JSON schema (schema[0..len)) as GBNF text into out[0..cap), NUL
 * terminated (llm/grammar_schema.c says what it supports). -LLMK_EFORMAT
 * (not JSON), -LLMK_ENOTSUP (a keyword it does not draw), -LLMK_ENOENT (a
 * $ref it cannot resolve), -LLMK_ERANGE (a bound), with one line in err. */
#define GRAM_SCHEMA_OUT (256u << 10)
int gram_schema(const char *schema, size_t len, char *out, size_t cap, struct llm_mem *mem,
		char *err, size_t errlen);

/* A matcher state: stacks as [len, pos...] runs in w[0..used). part_* is a
 * UTF-8 sequence begun but not finished. */
struct gram_state {
	uint32_t n_stacks, used;
	uint32_t part_val;
	uint8_t part_left, part_len;
	uint32_t w[GRAM_STATE_WORDS];
};

/* The start state into st; -LLMK_ERANGE if it passes the bounds. */
int gram_start(const struct gram *g, struct gram_state *st);
/* dst = src after one byte; false if the grammar refuses it (dst then
 * holds no stack). src and dst must differ. */
bool gram_byte(const struct gram *g, const struct gram_state *src, uint8_t c,
	       struct gram_state *dst);
/* Whether the text may end here (an empty stack, no UTF-8 sequence open). */
bool gram_complete(const struct gram_state *st);
/* Whether nothing but the end may follow (every stack empty). */
bool gram_done(const struct gram_state *st);
/* Whether s[0..n) is a whole string of the language (tests, tools):
 * tmp is two states of scratch. */
bool gram_accepts(const struct gram *g, const char *s, size_t n, struct gram_state tmp[2]);

/*
 * Constraining generation (llm/grammar_gen.c). Per vocabulary: the token
 * pieces in a trie (shared prefixes matched once). Per grammar state: the
 * tokens it allows, as a bit mask, in a small cache keyed by the state.
 * The sampled token is checked first; only when it is refused are the
 * logits masked (from the cache, or one walk of the trie) and the sampler
 * run again.
 */
struct tok;
#define GRAM_CACHE 32u

/*
 * Lazy grammars (llm/grammar_trig.c): generation is free until the text
 * generated holds one of a few trigger strings; the grammar then applies
 * from the trigger's first byte on, the trigger and the rest of the token
 * that completed it its first text. The first trigger to complete wins (of
 * two ending at one byte, the longer); a word written "^word" counts only
 * at the very start of the text. gram_trig_* is the string side alone:
 *   gram_trig_find(t, p, n, &rest)  the trigger p[0..n) (the next piece)
 *                                    completes, -1 if none; the grammar's
 *                                    text is then word + p[rest..n)
 *   gram_trig_push(t, p, n)          p[0..n) generated, no trigger in it
 */
#define GRAM_MAX_TRIGGERS 4u
#define GRAM_MAX_TRIGGER 64u    /* bytes of one trigger word */

struct gram_trig {
	uint32_t n;
	uint8_t len[GRAM_MAX_TRIGGERS];
	bool at_start[GRAM_MAX_TRIGGERS];
	char word[GRAM_MAX_TRIGGERS][GRAM_MAX_TRIGGER];
	char hist[GRAM_MAX_TRIGGER]; /* the last bytes pushed (a trigger's length - 1 at most) */
	uint32_t n_hist;
	uint64_t seen;               /* bytes pushed */
};

/* words[0..n) (NUL terminated) into t: -LLMK_EINVAL with one line in err
 * for none, too many, an empty one or one over GRAM_MAX_TRIGGER bytes. */
int gram_trig_init(struct gram_trig *t, const char *const *words, uint32_t n, char *err,
		   size_t errlen);
int gram_trig_find(const struct gram_trig *t, const char *p, size_t n, size_t *rest);
void gram_trig_push(struct gram_trig *t, const char *p, size_t n);

struct gram_trie_node {
	uint32_t child, next; /* first child, next sibling (0: none) */
	int32_t id;           /* the token ending here, or -1 */
	uint8_t byte;
};

struct gram_gen {
	const struct gram *g;
	const struct tok *tok;
	uint32_t n_vocab;
	struct gram_state *cur, *tmp; /* the state after the text so far; scratch */
	struct gram_state *walk;      /* GRAM_MAX_PIECE + 1 states for the trie walk */
	struct gram_trie_node *node;
	uint32_t n_node;
	uint32_t *eog;                /* n_vocab bits: end-of-generation tokens */
	uint64_t key[GRAM_CACHE];     /* 0: empty */
	uint32_t *mask;               /* GRAM_CACHE masks of n_vocab bits */
	uint32_t next_slot;
	uint32_t n_masked, n_hits;    /* steps that needed a mask; served by the cache */
	bool waiting;                 /* lazy, no trigger yet: tokens are free */
	struct gram_trig trig;
	void *block;
	size_t block_bytes;
	struct llm_mem *mem;
};
#define GRAM_MAX_PIECE 64u

/* Build the vocabulary's trie and the start state (memory from mem). */
int gram_gen_init(struct gram_gen *x, const struct gram *g, const struct tok *tok,
		  uint32_t n_vocab, struct llm_mem *mem);
void gram_gen_free(struct gram_gen *x);
/* Whether token id may come next. */
bool gram_gen_allows(struct gram_gen *x, int32_t id);
/* Set the logits of every token the state refuses to -inf. */
void gram_gen_mask(struct gram_gen *x, float *logits);
/* Advance by token id (one gram_gen_allows said yes to). */
void gram_gen_accept(struct gram_gen *x, int32_t id);
/* Make x (just initialized) lazy: free until one of words[0..n) appears
 * (gram_trig_init's errors). While it waits every token is allowed, the
 * ones that complete a trigger only when the grammar accepts the trigger
 * and the rest of their text; the end of generation is allowed. */
int gram_gen_lazy(struct gram_gen *x, const char *const *words, uint32_t n, char *err,
		  size_t errlen);
/* Whether nothing but the end may follow (never while a lazy one waits). */
bool gram_gen_done(const struct gram_gen *x);

#endif
