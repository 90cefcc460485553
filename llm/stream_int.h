/*
 * llm/stream_int.h — the streamer's insides, shared by its two halves: the
 * read ring (stream.c: slots, read-ahead, the weights interface, open) and
 * the check (stream_check.c: a sealed slot's chunks decrypted and
 * verified, a plain model's blocks fed to its measurement and tags once and
 * checked on every read after). The ring calls the check, never the other
 * way round. Nothing outside those two includes it.
 */
#ifndef LLM_STREAM_INT_H
#define LLM_STREAM_INT_H

#include "stream.h"
#include "measure.h"

#define ST_ALIGN 512u

enum st_state { ST_FREE, ST_LOADING, ST_HELD };

struct st_range {
	uint64_t lo, hi; /* plaintext bytes an item needs */
};

struct st_slot {
	void *alloc;       /* as allocated (slot_alloc bytes) */
	uint8_t *buf;      /* 512-aligned inside alloc */
	int32_t item;      /* -1: none */
	enum st_state state;
	uint64_t base;     /* plaintext offset of buf[0] */
	uint64_t len;      /* bytes read into buf */
	uint64_t first, count; /* sealed: chunks held */
	struct plat_io *io;
	uint32_t n_io;
	int32_t sync_io;   /* index of a piece read synchronously (past the disk end), or -1 */
};

struct wt_stream {
	const struct gguf_file *g;
	struct llm_reader rd;
	struct llm_mem *mem;
	struct seal_ctx *seal;
	int disk;
	uint64_t disk_size;
	uint32_t n_layer, n_embd, n_items, n_slots, head_rows, io_cap;
	uint64_t slot_bytes;
	struct st_range *items;
	const struct gguf_tensor **lt;  /* n_layer x wt_n_layer_slots; NULL = absent */
	const struct gguf_tensor *embd, *head;
	float *onorm, *rfreq, *rlong, *rshort; /* rope factors: llama3's, LongRoPE's */
	uint64_t onorm_bytes, rfreq_bytes, rlong_bytes, rshort_bytes;
	uint8_t *emb;                   /* the token embedding table, held */
	uint64_t emb_bytes, row_bytes;
	struct bind_ctx *bind;          /* plain, bound to the measurement: each block checked */
	struct llm_measure *meas;       /* bind: the digest the bytes go into */
	uint8_t *blk;                   /* bind: one block, for the reads outside the slots */
	/* bind, measured by the first pass: the small tensors read for use
	 * before the measurement reached them, compared when it does */
	struct st_pin {
		const uint8_t *p;
		uint64_t off, n;
	} pin[3];
	uint32_t n_pin;
	/* bind, the first pass: a slot's bytes into the digest beside the
	 * pass (plat_background), while the slot is held */
	struct {
		bool on, final;
		int32_t slot;
		const uint8_t *p;
		size_t n;
	} bg;
	struct st_grid {
		uint64_t base, unit;    /* reads cover whole units from base */
	} grid;
	uint32_t next;                  /* next item to read ahead */
	struct st_slot slots[STREAM_MAX_SLOTS];
	struct wt_io_stats st;
};

static inline uint64_t st_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}


/* the ring (stream.c) */
void st_read_range(struct wt_stream *s, struct st_slot *sl, uint64_t a, uint64_t b);
int st_wait_io(struct wt_stream *s, struct st_slot *sl);
void st_drop(struct wt_stream *s, struct st_slot *sl);
void st_drain(struct wt_stream *s);
void st_fill(struct wt_stream *s);

/* the check (stream_check.c) */
uint64_t st_meas_pos(const struct wt_stream *s);
bool st_meas_pending(const struct wt_stream *s);
void st_bg_wait(struct wt_stream *s);
int st_verify(struct wt_stream *s, struct st_slot *sl, uint64_t k0, uint64_t k1);
int st_measure_slot(struct wt_stream *s, struct st_slot *sl);
int st_feed(struct wt_stream *s, const uint8_t *p, uint64_t off, uint64_t n);
bool st_defer_ok(const struct wt_stream *s);
int st_read_outside(struct wt_stream *s, uint64_t off, void *dst, size_t n, bool pin);

#endif
