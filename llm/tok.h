/*
 * llm/tok.h — tokenizers built from GGUF metadata alone.
 *
 * Two vocabulary types (GGUF key tokenizer.ggml.model):
 *   "llama" — SentencePiece-style: pieces merged by score, whitespace as
 *             U+2581, byte fallback to <0xXX>, space prefix, BOS.
 *   "gpt2"  — byte-level BPE: a pre-tokenizer (tokenizer.ggml.pre) splits the
 *             text into words, bytes become GPT-2's printable code points,
 *             merges apply by rank (tokenizer.ggml.merges).
 * Both produce the ids llama.cpp's llama_tokenize produces for the same
 * vocabulary, flags included (checked against llama.cpp's own vocabulary
 * test files, tests/unit/test_tok.c).
 *
 * Keys read: tokenizer.ggml.{model, pre, tokens, scores, token_type, merges,
 * bos_token_id, eos_token_id, eot_token_id, eom_token_id, unknown_token_id,
 * padding_token_id, add_bos_token, add_eos_token, add_space_prefix,
 * remove_extra_whitespaces}, general.name.
 *
 * A struct tok is not changed after tok_init. All its memory comes from the
 * llm_mem given to tok_init, and tok_encode borrows scratch memory from that
 * llm_mem for the duration of a call (so calls must not race on it).
 */
#ifndef LLM_TOK_H
#define LLM_TOK_H

#include "gguf.h"
#include "mem.h"

#define TOK_NULL (-1) /* "no such token" (llama.cpp's LLAMA_TOKEN_NULL) */

enum tok_kind {
	TOK_SPM = 1, /* tokenizer.ggml.model = "llama" */
	TOK_BPE = 2, /* tokenizer.ggml.model = "gpt2" */
};

/* Pre-tokenizers (tokenizer.ggml.pre); names accepted are listed in tok.c. */
enum tok_pre {
	TOK_PRE_DEFAULT = 0,
	TOK_PRE_GPT2,
	TOK_PRE_LLAMA3,
	TOK_PRE_QWEN2,
	TOK_PRE_FALCON,
	TOK_PRE_STARCODER,
	TOK_PRE_DEEPSEEK_LLM,
	TOK_PRE_DEEPSEEK_CODER,
	TOK_PRE_TEKKEN,
	TOK_PRE_COUNT
};

/* Token attributes (bits), as llama.cpp derives them from token_type. */
enum {
	TOK_ATTR_UNKNOWN = 1u << 0,
	TOK_ATTR_UNUSED = 1u << 1,
	TOK_ATTR_NORMAL = 1u << 2,
	TOK_ATTR_CONTROL = 1u << 3,
	TOK_ATTR_USER_DEFINED = 1u << 4,
	TOK_ATTR_BYTE = 1u << 5,
	TOK_ATTR_LSTRIP = 1u << 6, /* special-text match eats whitespace on its left */
	TOK_ATTR_RSTRIP = 1u << 7, /* ... and on its right */
	TOK_ATTR_EOG = 1u << 8,    /* ends generation (EOS, EOT, <|im_end|>, ...) */
};

struct tok_token {
	const char *text; /* NUL-terminated, len bytes */
	uint32_t len;
	uint32_t attr;
	float score;
};

struct tok_merge {
	const char *line; /* "left right" as in tokenizer.ggml.merges */
	uint32_t len;     /* bytes of line */
	uint32_t split;   /* index of the separating space */
};

struct tok {
	enum tok_kind kind;
	enum tok_pre pre;
	uint32_t n_vocab;
	struct tok_token *tokens;

	int32_t bos, eos, eot, eom, unk, pad, nl; /* ids or TOK_NULL */
	bool add_bos, add_eos;
	bool add_space_prefix; /* SPM: prepend ' ' to text after BOS/special tokens */
	bool ignore_merges;    /* BPE (llama3): a word that is a token is not merged */
	bool clean_spaces;     /* decode: " ," -> "," etc. (clean_up_tokenization_spaces) */

	/* token text -> id: open addressing, TOK_NULL marks a free slot */
	int32_t *tok_hash;
	uint32_t tok_hash_mask;

	/* BPE merges: (left, right) -> rank, open addressing over merge indices */
	struct tok_merge *merges;
	uint32_t n_merges;
	int32_t *merge_hash;
	uint32_t merge_hash_mask;

	/* control, user-defined and unknown tokens, longest text first */
	int32_t *special;
	uint32_t n_special;
	/* the same (as indices into special[]) grouped by their first two bytes:
	 * group k = b0 << 8 | b1 is special_by2[special_at2[k] .. special_at2[k+1]) */
	uint32_t *special_by2;
	uint32_t *special_at2; /* 65537 entries */

	int32_t byte_tok[256];   /* token id for a raw byte (<0xXX> / GPT-2 char); TOK_NULL if none */
	char byte_cp[256][3];    /* BPE: UTF-8 of GPT-2's code point for byte b */
	uint8_t byte_cp_len[256];

	char model[16];
	char pre_name[32];
	struct llm_mem *mem;
	struct llm_arena arena;
};

/*
 * Build t from g's metadata. Everything t keeps is copied into its own arena
 * (g may be closed afterwards). On error returns -LLMK_E* with one line in
 * err, e.g. "tok: unknown pre-tokenizer 'foo' (tokenizer.ggml.pre)".
 */
int tok_init(struct tok *t, const struct gguf_file *g, struct llm_mem *mem,
	     char *err, size_t errlen);
void tok_free(struct tok *t);

/*
 * Tokenize len bytes of text. add_special adds BOS/EOS as the vocabulary's
 * add_bos/add_eos say; parse_special turns text equal to a control token's
 * text into that token (user-defined tokens are always matched, as in
 * llama.cpp). Writes up to cap ids to out and the total count to *n_out;
 * returns 0, or -LLMK_ERANGE if cap was too small (*n_out then says how many
 * are needed), or -LLMK_ENOMEM / -LLMK_EBUDGET for scratch memory.
 */
int tok_encode(const struct tok *t, const char *text, size_t len, bool add_special,
	       bool parse_special, int32_t *out, size_t cap, size_t *n_out);

/* A byte range of a text: [off, off + len). */
struct tok_span {
	size_t off, len;
};
/*
 * tok_encode with special-token text parsed except inside the spans
 * plain[0..n_plain): a chat template's markers become their tokens while
 * the messages between them stay text, so a message holding
 * "<|im_end|>\n<|im_start|>system" cannot close its turn and open another.
 * A control or unknown token's text counts only where it lies wholly
 * outside every span; the text around is encoded as one, so the ids are
 * tok_encode's (parse_special) wherever no span holds such text.
 */
int tok_encode_spans(const struct tok *t, const char *text, size_t len, bool add_special,
		     const struct tok_span *plain, size_t n_plain, int32_t *out, size_t cap,
		     size_t *n_out);

/* tok_piece flags */
enum {
	TOK_PIECE_SPECIAL = 1u << 0, /* render control/unknown tokens' text (else nothing) */
	TOK_PIECE_LSTRIP = 1u << 1,  /* drop one leading space (first piece of an SPM text) */
};
/*
 * The bytes token id stands for (for streaming output; may be part of a
 * UTF-8 sequence). Returns the byte count written to buf (no NUL), 0 for a
 * token that renders as nothing, -LLMK_ERANGE if cap is too small,
 * -LLMK_EINVAL for an id outside the vocabulary.
 */
int tok_piece(const struct tok *t, int32_t id, unsigned flags, char *buf, size_t cap);

/*
 * Text of a token sequence, as llama.cpp's llama_detokenize: the SPM space
 * prefix is removed from the first piece, remove_special drops a leading BOS /
 * trailing EOS the vocabulary adds, unparse_special renders control tokens.
 * Writes at most cap bytes plus a NUL when it fits; *n_out is the text's
 * length. Returns 0, -LLMK_ERANGE if cap <= length, -LLMK_EINVAL for a bad id.
 */
int tok_decode(const struct tok *t, const int32_t *ids, size_t n, bool remove_special,
	       bool unparse_special, char *buf, size_t cap, size_t *n_out);

/* Id of the token whose text is exactly s[0..len), or TOK_NULL. */
int32_t tok_find(const struct tok *t, const char *s, size_t len);
/* True for ids that end generation (EOS, EOT, EOM, <|im_end|>-like tokens). */
bool tok_is_eog(const struct tok *t, int32_t id);
const char *tok_pre_name(enum tok_pre pre);

#endif
