/*
 * llm/stream.h — the layer streamer: the weights interface (weights.h) over
 * a model that stays on its disk.
 *
 * The forward pass walks the same items in the same order every pass:
 * layer 0 .. n_layer-1, then the output head in row chunks. The streamer
 * keeps n_slots buffers, each as large as the largest item's disk span, and
 * keeps every slot not in use busy reading the items that come next
 * (asynchronous plat_disk_read_async requests of STREAM_PIECE bytes, many in
 * flight), so while layer l computes, layers l+1 .. l+n_slots-1 arrive.
 * The token embedding table is read whole at open and held (charged to the
 * budget), as are the output norm and rope frequencies: no read depends on
 * a token id, so the host learns no token from the disk's requests
 * (issue 27; docs/streaming.md).
 *
 * Sealed images (llm/seal.h): a slot reads the whole chunks its item's
 * plaintext range touches, verifies and decrypts them in place at acquire
 * (seal_decrypt_chunks: a bad tag zeroes the slot, the acquire fails with
 * -LLMK_EAUTH and every later one too), and zeroizes the plaintext at release.
 *
 * Every buffer comes from the session's llm_mem, so mem-budget bounds it.
 */
#ifndef LLM_STREAM_H
#define LLM_STREAM_H

#include "bind.h"
#include "seal.h"
#include "sha256.h"
#include "weights.h"

#define STREAM_PIECE (2u << 20)  /* bytes per async request */
#define STREAM_MAX_SLOTS 8u

/* What streaming a model costs, before any allocation (for the memory plan). */
struct stream_need {
	uint64_t slot_bytes;   /* charge of one slot (page-rounded) */
	uint64_t fixed_bytes;  /* everything else the streamer allocates for n_slots */
	uint64_t embd_bytes;   /* of which the token embedding table, held whole */
	uint32_t n_items;      /* layers + head chunks: slots beyond this are useless */
	uint32_t head_rows;    /* output-head rows per chunk */
};

/*
 * Size the streamer for g read through disk (plain) or seal (sealed: the
 * disk holds seal's image; NULL otherwise) with n_slots slots. The tensor
 * layout must already have been checked (model_check_layout).
 */
void stream_measure(const struct gguf_file *g, const struct seal_ctx *seal, bool bind,
		    uint32_t n_layer, uint32_t n_embd, uint32_t n_slots, struct stream_need *out);

/*
 * A plain model bound to its measurement (llm/bind.h, llm/measure.h): the
 * streamer reads every byte from the 512-byte sector the data section
 * starts in to the model's extent once, feeding meas (which already holds
 * the header, [0, from), from = the data section's offset) and its tags
 * (meas->tags, fed the header's tail first: meas->tail, the copy the header
 * was parsed from), then completes meas (measure_complete). Where the first
 * pass reads the model in file order (layers, then
 * the head, with the token embeddings before them: llama.cpp's GGUFs) the
 * open measures up to layer 0 and the first pass the rest, from the very
 * bytes it computes with; else the open measures it all. Every read after
 * the measurement passed a block (slots, the embedding table, small tensors) is
 * checked against its tag, and a block that differs fails the acquire with
 * -LLMK_EAUTH (meas->tags.why says which) and every one after it. The small
 * tensors and the table, read at open, are compared with what the
 * measurement reads if it has not passed them (stream_check.c).
 * The tags are initialised at open and freed at close.
 */
struct llm_measure;
struct stream_bind {
	struct llm_measure *meas;
	uint64_t from;
};

/*
 * Finish a bound model's measurement now (a first pass that has not, and
 * someone asks for the digest): reads what it has not measured through the
 * slots. 0 when there is nothing to finish (or w is not the streamer);
 * -LLMK_EBUSY while a slot is held (inside a pass); else as a read.
 */
int wt_stream_measure_rest(struct wt_ctx *w);

/*
 * Open the streamer: rd reads the plaintext GGUF (for the embedding table and
 * the small tensors), disk is the platform disk the slots read from directly
 * (the image itself when seal is non-NULL). n_slots >= 1. On error returns
 * -LLMK_E* with one line in err and holds nothing.
 */
int wt_stream_open(struct wt_ctx *w, const struct gguf_file *g, const struct llm_reader *rd,
		   int disk, struct seal_ctx *seal, const struct stream_bind *bind,
		   struct llm_mem *mem, uint32_t n_layer, uint32_t n_embd, uint32_t n_slots,
		   char *err, size_t errlen);

#endif
