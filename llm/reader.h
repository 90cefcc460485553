/*
 * llm/reader.h — where a model's bytes come from: a disk, a file, a sealed
 * image's plaintext, a memory buffer. The GGUF parser, the sealed-image
 * reader and the layer streamer each take a struct llm_reader and know
 * nothing of what is behind it.
 */
#ifndef LLM_READER_H
#define LLM_READER_H

#include "../kernel/platform.h"

struct llm_reader {
	/* Read exactly n bytes at off; 0 or -LLMK_E*. */
	int (*read)(void *ctx, uint64_t off, void *buf, size_t n);
	void *ctx;
	uint64_t size; /* bytes readable (disk capacity, file size, plaintext size) */
};

/* Reader over a memory buffer (tests, fuzzing): ctx is a struct llm_membuf. */
struct llm_membuf { const uint8_t *p; uint64_t n; };
void llm_reader_mem(struct llm_reader *r, struct llm_membuf *mb, const void *p, uint64_t n);
/* Reader over a platform disk: ctx is the disk index cast (intptr_t). */
void llm_reader_disk(struct llm_reader *r, int disk);

#endif
