/*
 * llm/gguf.h — GGUF v2/v3 reader.
 *
 * Format: ggml docs/gguf.md. Little-endian: magic "GGUF", u32 version, u64
 * tensor count, u64 metadata count, metadata key/values, tensor infos, padding
 * to general.alignment (default 32), tensor data. Every count, length, offset,
 * dimension and type is checked against the file before use.
 */
#ifndef LLM_GGUF_H
#define LLM_GGUF_H

#include "mem.h"
#include "reader.h"

/* gguf.md "gguf_metadata_value_type" */
enum gguf_vtype {
	GGUF_VT_UINT8 = 0, GGUF_VT_INT8 = 1, GGUF_VT_UINT16 = 2, GGUF_VT_INT16 = 3,
	GGUF_VT_UINT32 = 4, GGUF_VT_INT32 = 5, GGUF_VT_FLOAT32 = 6, GGUF_VT_BOOL = 7,
	GGUF_VT_STRING = 8, GGUF_VT_ARRAY = 9, GGUF_VT_UINT64 = 10, GGUF_VT_INT64 = 11,
	GGUF_VT_FLOAT64 = 12,
	GGUF_VT_COUNT
};

struct gguf_str {
	uint64_t len;
	const char *s; /* NUL-terminated copy in the file's arena (may hold inner NULs) */
};

struct gguf_array {
	uint32_t type;  /* element type; nested arrays are GGUF_VT_ARRAY */
	uint64_t n;
	/* Elements: for numbers and bools, n packed little-endian values of the
	 * type's size; for strings, n struct gguf_str; for arrays, n struct gguf_array. */
	const void *data;
};

struct gguf_value {
	uint32_t type;
	union {
		uint64_t u;  /* UINT8..UINT64 */
		int64_t i;   /* INT8..INT64 */
		double f;    /* FLOAT32, FLOAT64 */
		bool b;
		struct gguf_str str;
		struct gguf_array arr;
	} v;
};

struct gguf_kv {
	struct gguf_str key;
	struct gguf_value val;
};

#define GGUF_MAX_DIMS 4
struct gguf_tensor {
	const char *name;
	uint32_t n_dims;
	uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] is the row length (contiguous); unused dims are 1 */
	uint32_t type;              /* enum ggml_type (llm/quant_blocks.h) */
	uint64_t offset;            /* absolute byte offset in the file */
	uint64_t size;              /* bytes */
	uint64_t n_elems;
};

struct gguf_file {
	uint32_t version;
	uint64_t n_kv;
	struct gguf_kv *kv;
	uint64_t n_tensors;
	struct gguf_tensor *tensors;
	uint32_t alignment;
	uint64_t data_offset; /* start of the tensor data section */
	uint64_t extent;      /* true end of the file's contents: end of the last tensor's
	                         data (or of the header if none); never the disk capacity */
	struct llm_arena arena;
};

/*
 * Parse the header, metadata and tensor table from r. Allocations come from
 * mem (into g->arena). On error returns -LLMK_E* with one line in err naming
 * the field and the value, e.g.
 *   "gguf: tensor 'blk.3.ffn_up.weight' extends past end of file (offset 0x1f3a000 + 45088768 > 30408704)"
 * and frees everything it allocated.
 */
int gguf_open(struct gguf_file *g, const struct llm_reader *r, struct llm_mem *mem,
	      char *err, size_t errlen);
void gguf_close(struct gguf_file *g);

const struct gguf_kv *gguf_find(const struct gguf_file *g, const char *key);
const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *g, const char *name);
/* Typed getters: 0, -LLMK_ENOENT if absent, -LLMK_EFORMAT if the type does not
 * convert (ints of any width convert if in range; float32/64 both, a float64
 * beyond the float range as +-infinity). */
int gguf_get_u64(const struct gguf_file *g, const char *key, uint64_t *out);
int gguf_get_u32(const struct gguf_file *g, const char *key, uint32_t *out);
int gguf_get_i64(const struct gguf_file *g, const char *key, int64_t *out);
int gguf_get_f32(const struct gguf_file *g, const char *key, float *out);
int gguf_get_bool(const struct gguf_file *g, const char *key, bool *out);
int gguf_get_str(const struct gguf_file *g, const char *key, const struct gguf_str **out);
int gguf_get_arr(const struct gguf_file *g, const char *key, const struct gguf_array **out);
const char *gguf_vtype_name(uint32_t t);

/* Block geometry of any ggml tensor type a GGUF file may carry (ggml.c
 * type_traits), including types llm/quant.h has no kernels for, so such files
 * parse and the loader can refuse them by name. 0, or -LLMK_ENOENT if t is not
 * a ggml type. */
int gguf_type_geometry(uint32_t t, uint32_t *blck, uint32_t *bytes);
const char *gguf_type_name(uint32_t t); /* "IQ2_XXS"; "?" if unknown */

/* Strings from the file go into messages: s (len bytes) into dst (cap >= 8
 * bytes), printable ASCII kept, anything else '?', cut with "..." so one
 * line stays one line. */
void gguf_safe_name(char *dst, size_t cap, const char *s, uint64_t len);

#endif
