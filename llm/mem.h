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

/*
 * Poisoning, in the sanitizer build only (LLMK_POISON=1, which the
 * host-asan flavor sets: mk/poison.mk). AddressSanitizer checks the
 * engine's page-backed memory only as far as it is told which bytes belong
 * to no object: plat_alloc's pages come from mmap, not from ASan's
 * allocator, so by default every byte of them is fair game. The allocators
 * that carve those pages therefore poison what lies between and after
 * their objects (ASan's manual poisoning interface, the same calls as
 * ASAN_POISON_MEMORY_REGION), and leave LLM_MEM_REDZONE poisoned bytes
 * after each object: the arena here, the scratch (model.c) and the KV
 * cache's layers (kv.c); the host's plat_alloc poisons each allocation's
 * tail and puts PROT_NONE guard pages around it. Elsewhere the calls are
 * empty and the redzone 0, so nothing changes in size or layout.
 */
#if defined(LLMK_POISON) && LLMK_POISON
#if !defined(__SANITIZE_ADDRESS__)
#if !defined(__has_feature)
#error "LLMK_POISON needs -fsanitize=address"
#elif !__has_feature(address_sanitizer)
#error "LLMK_POISON needs -fsanitize=address"
#endif
#endif
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define LLM_MEM_REDZONE 64u
static inline void llm_mem_poison(const void *p, size_t n)
{
	__asan_poison_memory_region(p, n);
}
static inline void llm_mem_unpoison(const void *p, size_t n)
{
	__asan_unpoison_memory_region(p, n);
}
#else
#define LLM_MEM_REDZONE 0u
static inline void llm_mem_poison(const void *p, size_t n)
{
	(void)p;
	(void)n;
}
static inline void llm_mem_unpoison(const void *p, size_t n)
{
	(void)p;
	(void)n;
}
#endif

struct llm_mem {
	uint64_t budget; /* bytes the engine may hold at once; 0 = unlimited */
	uint64_t used;   /* bytes held now */
	uint64_t peak;   /* high-water mark of used since llm_mem_reset_peak */
	uint32_t n_allocs;
	uint64_t wiped;  /* bytes zeroized on their way back (tests count them) */
};

void llm_mem_init(struct llm_mem *m, uint64_t budget);
/* NULL (and nothing allocated) if out of memory or if it would pass the budget;
 * *err (if non-NULL) says which: -LLMK_ENOMEM or -LLMK_EBUDGET. */
void *llm_mem_alloc(struct llm_mem *m, size_t size, int *err);
/* The same, charged the same, for memory filled a little at a time (the KV
 * cache): plat_alloc_sparse's pages. */
void *llm_mem_alloc_sparse(struct llm_mem *m, size_t size, int *err);
/* Zeroizes the bytes before returning them (weights and prompts are secrets). */
void llm_mem_free(struct llm_mem *m, void *p, size_t size);
/* llm_mem_alloc_sparse's memory back without the wipe: its owner wiped what
 * it wrote (llm_mem_wipe), and the rest was never written (zero since
 * plat_alloc_sparse): a wipe of it would fault in, and on the host back,
 * every page a short run never touched. */
void llm_mem_free_sparse(struct llm_mem *m, void *p, size_t size);
/* llm_mem_zeroize_all of p[0..size), counted in m->wiped. */
void llm_mem_wipe(struct llm_mem *m, void *p, size_t size);
/* Zero p[0..size) in place, a wipe the compiler cannot drop as a dead store
 * (NULL is fine). p[0..size) must be one object (in the sanitizer build the
 * wipe is checked like any write). */
void llm_mem_zeroize(void *p, size_t size);
/* The same over a whole allocation from llm_mem_alloc, the redzones its
 * owner poisoned inside it included (they stay poisoned): what llm_mem_free
 * does before it frees, and what a carved buffer's owner calls to forget it. */
void llm_mem_zeroize_all(void *p, size_t size);
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
