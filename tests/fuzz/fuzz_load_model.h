/*
 * tests/fuzz/fuzz_load_model.h — a GGUF model held as a table of metadata
 * and tensors that edits change and a writer turns back into a file; the
 * model half of fuzz_load (tests/fuzz/fuzz_load.c).
 *
 *   flm_from_gguf(&seed, bytes)     a valid file (tools/writer's) into a table
 *   flm_copy(&m, &seed, &arena)     a working copy; seed stays untouched
 *   flm_apply(&m, script, n)        the edit script: ops that change m
 *   flm_write(&m, &out)             m as GGUF bytes (layout redone from m)
 *
 * The edit script is the fuzz input after its 3-byte header: a list of ops,
 * each an op byte then its argument bytes (missing bytes read as 0), so
 * every byte string is a valid script and libFuzzer's byte mutations become
 * edits to the model's structure.
 */
#ifndef TESTS_FUZZ_LOAD_MODEL_H
#define TESTS_FUZZ_LOAD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- a per-input arena: everything an input allocates, freed at once ---- */
struct fl_arena {
	struct fl_chunk *head;
};
void *fl_alloc(struct fl_arena *a, size_t n);
void fl_arena_free(struct fl_arena *a);

struct fl_str {
	const char *s;
	uint64_t len;
};

/* Numbers are packed little-endian values of the element type's size;
 * strings are struct fl_str. Nested arrays are not produced (the GGUF parser
 * fuzzer covers them). */
struct fl_arr {
	uint32_t type;
	uint64_t n;
	const void *data;
};

struct fl_kv {
	struct fl_str key;
	uint32_t type; /* enum gguf_vtype */
	union {
		uint64_t u; /* every integer type and bool, as its bits */
		double f;   /* FLOAT32, FLOAT64 */
		struct fl_str s;
		struct fl_arr a;
	} v;
};

struct fl_tensor {
	struct fl_str name;
	uint32_t n_dims;        /* may exceed 4: the writer then writes that many dims */
	uint64_t ne[6];
	uint32_t type;
	const uint8_t *src;     /* bytes the data repeats (the seed's, or generated) */
	uint64_t src_len;
	bool off_abs;           /* offset is off (relative to the data section)... */
	uint64_t off;           /* ...else the laid-out offset plus off (wrapping) */
	bool fill;              /* overwrite 4-byte words with fill_bits */
	uint32_t fill_bits;
	uint8_t fill_mode;      /* 0 every word, 1 the first, 2 every 7th */
};

#define FLM_MAX_KV 96
#define FLM_MAX_T 64

struct fl_model {
	uint32_t version;
	struct fl_kv kv[FLM_MAX_KV];
	uint32_t n_kv;
	struct fl_tensor t[FLM_MAX_T];
	uint32_t n_t;
	char arch[16];          /* the seed's architecture: the keys' prefix */
	uint32_t dim, head_dim, q_dim, kv_dim, vocab; /* the seed's shape, for new tensors */
	bool weights_touched;   /* an op changed what some weight's bytes mean */
	struct fl_arena *arena;
	bool trace;             /* print each op to stderr */
};

/* The file a model becomes: bytes (capped at FLM_FILE_CAP; later bytes are
 * dropped, so a huge layout is a short file). */
#define FLM_FILE_CAP (8u << 20)
struct fl_out {
	uint8_t *buf;
	uint64_t len;           /* bytes held (<= FLM_FILE_CAP) */
	uint64_t pos;           /* logical position */
};

/* Parse a valid GGUF (bytes must outlive m) into m; 0 or -1. */
int flm_from_gguf(struct fl_model *m, const uint8_t *bytes, uint64_t n, struct fl_arena *a);
void flm_copy(struct fl_model *dst, const struct fl_model *src, struct fl_arena *a);
void flm_apply(struct fl_model *m, const uint8_t *script, size_t n);
void flm_write(const struct fl_model *m, struct fl_out *o);

/* The ops, for the seed corpus (fuzz_load.c writes one seed per class).
 * Argument bytes after the op byte, in order: */
enum flm_op {
	FLM_KEY_SET,    /* key, value...: a key the engine reads (added if absent) */
	FLM_KV_SET,     /* kv, value...: the kv's own kind of value */
	FLM_KV_TYPE,    /* kv, vtype: convert the value to another GGUF type (an
			   array's elements when vtype >= 0x80) */
	FLM_KV_DROP,    /* kv */
	FLM_KV_DUP,     /* kv */
	FLM_ARR_LEN,    /* kv, count...: grow (repeating) or cut an array */
	FLM_ARR_ELEM,   /* kv, index..., value...: one element */
	FLM_TOK_N,      /* count...: tokens, scores and token_type together */
	FLM_T_DIM,      /* t, d, count... */
	FLM_T_NDIMS,    /* t, n */
	FLM_T_TYPE,     /* t, type */
	FLM_T_OFF,      /* t, offset... */
	FLM_T_DROP,     /* t */
	FLM_T_DUP,      /* t */
	FLM_T_NAME,     /* t, name */
	FLM_T_ADD,      /* name, shape, type, float... */
	FLM_T_FILL,     /* t, float..., mode */
	FLM_VOCAB,      /* count...: token_embd and output rows and vocab_size */
	FLM_VERSION,    /* version */
	FLM_T_SWAP,     /* t, t */
	FLM_OP_COUNT
};

/* The engine's keys FLM_KEY_SET picks from (its first argument byte, modulo
 * the count); "%s" is the architecture. */
enum flm_key {
	FK_CTX, FK_EMBD, FK_BLOCKS, FK_FF, FK_HEADS, FK_HEADS_KV, FK_KEY_LEN, FK_VALUE_LEN,
	FK_ROPE_DIM, FK_VOCAB_SIZE, FK_ALIGN, FK_BOS, FK_EOS, FK_UNK, FK_PAD, FK_EOT, FK_EOM,
	FK_FILE_TYPE, FK_EPS, FK_ROPE_BASE, FK_ROPE_FACTOR, FK_ROPE_LINEAR, FK_ARCH, FK_NAME,
	FK_ROPE_TYPE, FK_TOK_MODEL, FK_TOK_PRE, FK_TEMPLATE, FK_ADD_BOS, FK_ADD_EOS,
	FK_ADD_SPACE, FK_COUNT
};

/* Value classes: the byte that picks one, then any bytes it reads. */
enum flm_int_class {
	FI_0, FI_1, FI_2, FI_3, FI_4, FI_PLUS1, FI_MINUS1, FI_TWICE, FI_HALF, FI_U32MAX,
	FI_I32MAX, FI_2P31, FI_2P16, FI_2P24, FI_2P24P1, FI_2P32, FI_2P61, FI_2P62, FI_2P63,
	FI_U64MAX, FI_255, FI_256, FI_257, FI_300, FI_512, FI_NEG1, FI_NEG_BIG, FI_U16,
	FI_U32, FI_U64, FI_7, FI_64, FI_COUNT
};
enum flm_float_class {
	FF_NAN, FF_INF, FF_NINF, FF_DENORM, FF_NEG1, FF_0, FF_NEG0, FF_MAX, FF_MIN, FF_1EM30,
	FF_1E30, FF_TWICE, FF_HALF, FF_1, FF_0_5, FF_1EM5, FF_1E4, FF_NEG_SMALL, FF_BITS,
	FF_DENORM_MIN, FF_4, FF_1E6, FF_COUNT
};

#endif
