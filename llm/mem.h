/*
 * llm/mem.h — the engine's memory budget.
 *
 * Every byte the engine keeps (weights, slots, KV, scratch, metadata) comes
 * through a struct llm_mem so that `mem-budget` is enforced by the allocator,
 * not by hope. Allocations are page-backed (plat_alloc) and zero-filled.
 */
#ifndef LLM_MEM_H
#define LLM_MEM_H

#include "../kernel/platform.h"

struct llm_mem {
	uint64_t budget; /* bytes the engine may hold at once; 0 = unlimited */
	uint64_t used;   /* bytes held now */
	uint64_t peak;   /* high-water mark of used since llm_mem_reset_peak */
	uint32_t n_allocs;
};

void llm_mem_init(struct llm_mem *m, uint64_t budget);
/* NULL (and nothing allocated) if out of memory or if it would pass the budget;
 * *err (if non-NULL) says which: -LLMK_ENOMEM or -LLMK_EBUDGET. */
void *llm_mem_alloc(struct llm_mem *m, size_t size, int *err);
/* Zeroizes the bytes before returning them (weights and prompts are secrets). */
void llm_mem_free(struct llm_mem *m, void *p, size_t size);
/* Zero p[0..size) in place, a wipe the compiler cannot drop as a dead store
 * (what llm_mem_free does before it frees; NULL is fine). */
void llm_mem_zeroize(void *p, size_t size);
void llm_mem_reset_peak(struct llm_mem *m);

/*
 * Arena for many small objects (GGUF metadata, vocab strings): chunks come
 * from an llm_mem; freed all at once.
 */
struct llm_arena {
	struct llm_mem *mem;
	struct llm_arena_chunk *head;
	size_t chunk_size; /* default 1 MiB */
	uint64_t bytes;    /* bytes held from mem */
};
void llm_arena_init(struct llm_arena *a, struct llm_mem *mem);
void *llm_arena_alloc(struct llm_arena *a, size_t size, size_t align); /* zeroed; NULL on failure */
char *llm_arena_strndup(struct llm_arena *a, const char *s, size_t n); /* NUL-terminated copy */
void llm_arena_free(struct llm_arena *a); /* returns and zeroizes every chunk */

#endif
