/*
 * llm/mem.c — the engine's memory budget (llm/mem.h).
 *
 * Every allocation is charged at page granularity, because that is what the
 * platform really hands out: a budget of N bytes then means at most N bytes
 * of pages held by the engine.
 */
#include "mem.h"

#define MEM_PAGE 4096u
#define MEM_ALIGN 64u
#define ARENA_DEFAULT_CHUNK ((size_t)1 << 20)

struct llm_arena_chunk {
	struct llm_arena_chunk *next;
	size_t size; /* bytes including this header */
	size_t used; /* offset of the first free byte from the chunk start */
};

static uint64_t mem_charge(size_t size)
{
	return ((uint64_t)size + MEM_PAGE - 1) & ~(uint64_t)(MEM_PAGE - 1);
}

void llm_mem_init(struct llm_mem *m, uint64_t budget)
{
	m->budget = budget;
	m->used = 0;
	m->peak = 0;
	m->n_allocs = 0;
	m->wiped = 0;
}

static void *mem_alloc(struct llm_mem *m, size_t size, int *err, bool sparse)
{
	uint64_t charge = mem_charge(size);
	void *p;

	if (size == 0 || charge < size) {
		if (err)
			*err = -LLMK_EINVAL;
		return NULL;
	}
	if (m->budget && (charge > m->budget || m->used > m->budget - charge)) {
		if (err)
			*err = -LLMK_EBUDGET;
		return NULL;
	}
	p = sparse ? plat_alloc_sparse(size, MEM_ALIGN) : plat_alloc(size, MEM_ALIGN);
	if (!p) {
		if (err)
			*err = -LLMK_ENOMEM;
		return NULL;
	}
	m->used += charge;
	if (m->used > m->peak)
		m->peak = m->used;
	m->n_allocs++;
	if (err)
		*err = 0;
	return p;
}

void *llm_mem_alloc(struct llm_mem *m, size_t size, int *err)
{
	return mem_alloc(m, size, err, false);
}

void *llm_mem_alloc_sparse(struct llm_mem *m, size_t size, int *err)
{
	return mem_alloc(m, size, err, true);
}

void llm_mem_zeroize(void *p, size_t size)
{
	if (!p)
		return;
	memset(p, 0, size);
	/* The barrier keeps the compiler from dropping the wipe as a dead store. */
	__asm__ volatile("" : : "r"(p) : "memory");
}

#if LLM_MEM_REDZONE
/* Unseen by the sanitizer: the stores are not instrumented and, volatile,
 * never become a memset call its interceptor would check. */
__attribute__((no_sanitize_address)) static void wipe_unchecked(void *p, size_t size)
{
	volatile uint8_t *b = p;
	size_t i = 0;

	for (; i < size && ((uintptr_t)(b + i) & 7); i++)
		b[i] = 0;
	for (; i + 8 <= size; i += 8)
		*(volatile uint64_t *)(b + i) = 0;
	for (; i < size; i++)
		b[i] = 0;
}
#endif

void llm_mem_zeroize_all(void *p, size_t size)
{
#if LLM_MEM_REDZONE
	if (p)
		wipe_unchecked(p, size);
#else
	llm_mem_zeroize(p, size);
#endif
}

void llm_mem_wipe(struct llm_mem *m, void *p, size_t size)
{
	llm_mem_zeroize_all(p, size);
	m->wiped += size;
}

void llm_mem_free(struct llm_mem *m, void *p, size_t size)
{
	if (p)
		llm_mem_wipe(m, p, size);
	llm_mem_free_sparse(m, p, size);
}

void llm_mem_free_sparse(struct llm_mem *m, void *p, size_t size)
{
	uint64_t charge = mem_charge(size);

	if (!p)
		return;
	plat_free(p, size);
	m->used = m->used >= charge ? m->used - charge : 0;
	if (m->n_allocs)
		m->n_allocs--;
}

void llm_mem_reset_peak(struct llm_mem *m)
{
	m->peak = m->used;
}

/* ---- arena ---- */

void llm_arena_init(struct llm_arena *a, struct llm_mem *mem)
{
	a->mem = mem;
	a->head = NULL;
	a->chunk_size = ARENA_DEFAULT_CHUNK;
	a->bytes = 0;
}

static size_t align_up(size_t x, size_t align)
{
	return (x + align - 1) & ~(align - 1);
}

/* A chunk's bytes past its header are poisoned (LLMK_POISON) until an
 * object takes them: its alignment padding and the LLM_MEM_REDZONE bytes
 * after it stay so. */
static struct llm_arena_chunk *arena_new_chunk(struct llm_arena *a, size_t need)
{
	size_t hdr = align_up(sizeof(struct llm_arena_chunk), MEM_ALIGN);
	size_t size = a->chunk_size;
	struct llm_arena_chunk *c;

	if (need > SIZE_MAX - hdr - MEM_PAGE)
		return NULL;
	if (need + hdr > size)
		size = need + hdr;
	c = llm_mem_alloc(a->mem, size, NULL);
	if (!c)
		return NULL;
	c->size = size;
	c->used = hdr;
	llm_mem_poison((uint8_t *)c + hdr, size - hdr);
	a->bytes += mem_charge(size);
	return c;
}

/* The object at the first offset of c that is aligned and leaves a redzone
 * after it, or NULL if c is too full. */
static void *arena_take(struct llm_arena_chunk *c, size_t size, size_t align)
{
	size_t off = align_up(c->used, align);

	/* (size + LLM_MEM_REDZONE cannot wrap: llm_arena_alloc checked) */
	if (off > c->size || size + LLM_MEM_REDZONE > c->size - off)
		return NULL;
	c->used = off + size + LLM_MEM_REDZONE;
	llm_mem_unpoison((uint8_t *)c + off, size);
	return (uint8_t *)c + off;
}

void *llm_arena_alloc(struct llm_arena *a, size_t size, size_t align)
{
	struct llm_arena_chunk *c = a->head;
	void *p;

	if (align == 0)
		align = 1;
	if (align > MEM_PAGE || (align & (align - 1)))
		return NULL;
	/* the sanitizer's shadow holds one state per 8 bytes: an object that
	 * started inside a granule would unpoison its neighbour's redzone */
	if (LLM_MEM_REDZONE && align < 8)
		align = 8;
	if (size == 0)
		size = 1;
	if (size > SIZE_MAX - align - LLM_MEM_REDZONE)
		return NULL;
	if (c && (p = arena_take(c, size, align)))
		return p;
	c = arena_new_chunk(a, size + align + LLM_MEM_REDZONE);
	if (!c)
		return NULL;
	p = arena_take(c, size, align);
	/* A big one-off chunk goes behind the current one so the current chunk's
	 * free tail stays usable for the small objects that follow. */
	if (a->head && c->size > a->chunk_size) {
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = a->head;
		a->head = c;
	}
	return p;
}

char *llm_arena_strndup(struct llm_arena *a, const char *s, size_t n)
{
	char *d;

	if (n == SIZE_MAX)
		return NULL;
	d = llm_arena_alloc(a, n + 1, 1);
	if (!d)
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = 0;
	return d;
}

void llm_arena_free(struct llm_arena *a)
{
	struct llm_arena_chunk *c = a->head, *next;

	while (c) {
		next = c->next;
		llm_mem_free(a->mem, c, c->size);
		c = next;
	}
	a->head = NULL;
	a->bytes = 0;
}
