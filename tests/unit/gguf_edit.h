/*
 * tests/unit/gguf_edit.h — a valid GGUF rewritten with a few edits, for the
 * tests of what the loader refuses: metadata values changed, added or
 * removed, tensor shapes changed, the alignment and the data section's
 * placement chosen. Everything not edited is written back as it was read
 * (llm/gguf.c parses the source), tensor data copied (cut or zero-padded
 * to a new shape's size).
 */
#ifndef TEST_GGUF_EDIT_H
#define TEST_GGUF_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GEDIT_REMOVE 0xffffffffu /* as a gedit_kv type: drop the key */

struct gedit_kv {
	const char *key;
	uint32_t type; /* GGUF_VT_UINT32, _UINT64, _INT32, _FLOAT32, _FLOAT64, _STRING, or GEDIT_REMOVE */
	uint64_t u;    /* the integer types */
	double f;      /* the float types */
	const char *s; /* STRING */
};

/* A tensor of the source reshaped; or, if the source has no tensor of that
 * name, a new one of the given type and data (its size in bytes). */
struct gedit_tensor {
	const char *name;
	uint32_t n_dims;
	uint64_t ne[4];
	uint32_t type;    /* new tensors */
	const void *data; /* new tensors */
};

struct gedit {
	const struct gedit_kv *kv;
	size_t n_kv;
	const struct gedit_tensor *t;
	size_t n_t;
	uint32_t alignment; /* 0: 32; else written as general.alignment */
	uint32_t lead;      /* bytes before the first tensor in the data section */
};

/* Rewrite the GGUF at src into dst with ed's edits; 0, or -1 with a line on stderr. */
int gedit_rewrite(const char *src, const char *dst, const struct gedit *ed);

#endif
