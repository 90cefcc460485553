/*
 * llm/measure.h — the one owner of a plain model's measurement: SHA-256 of
 * the GGUF's bytes [0, extent) as the engine computes with them.
 *
 * The header is read again into memory, hashed, and parsed again from that
 * copy (measure_header), so the digest covers the header the engine uses,
 * not another read the host could answer differently. The tensor data
 * follows in file order from whoever reads it: a resident load as it reads
 * (llm/weights.c), the streamer as it reads the model once at load and,
 * where its first pass reads in file order, from that pass's own slots
 * (llm/stream_check.c, which keeps the tags a streamed model's later reads
 * are checked against beside it). measure_complete closes the digest; once the engine
 * armed it (a load that succeeded) the completion is reported, once, to
 * the callback it was armed with (engine_config.on_measured: the shell
 * extends the attestation service's measurements from there).
 *
 * A sealed image is not measured here: its header carries the plaintext
 * digest (llm/seal.h).
 */
#ifndef LLM_MEASURE_H
#define LLM_MEASURE_H

#include "bind.h"
#include "gguf.h"
#include "mem.h"
#include "reader.h"
#include "sha256.h"

#define MEASURE_TAIL_MAX 512

struct llm_measure {
	struct llm_sha256 sha;
	bool on;             /* the header is in: the digest is being built */
	bool done;           /* digest is SHA-256 of [0, extent) */
	bool armed, reported;
	uint64_t fed;        /* bytes hashed, header included */
	uint8_t digest[32];
	/* the header's bytes in the data section's 512-byte sector (the
	 * streamer's checked blocks start at that sector) */
	uint8_t tail[MEASURE_TAIL_MAX];
	size_t tail_len;
	void (*report)(void *ctx, const uint8_t digest[32]);
	void *report_ctx;
	/* a streamed model: the tags every later read is checked against,
	 * built from the same bytes (llm/bind.h; the streamer keys them at
	 * open and frees them at close) */
	struct bind_ctx tags;
};

/* Nothing measured, nothing armed. */
void measure_reset(struct llm_measure *m);

/*
 * Read g's header (bytes [0, data_offset)) again through rd into memory,
 * hash it, and parse g again from that copy (the first parse found where
 * it ends). 0 with m on; 0 with m off when g has no tensor data to measure
 * (data_offset past its extent: whoever needs a digest hashes the disk);
 * else -LLMK_E* with one line in err (g closed).
 */
int measure_header(struct llm_measure *m, struct gguf_file *g, const struct llm_reader *rd,
		   struct llm_mem *mem, char *err, size_t errlen);

/* The next n bytes of the model, in file order. One thread at a time. */
void measure_update(struct llm_measure *m, const void *p, size_t n);

/* All bytes are in: the digest out, reported if armed. */
void measure_complete(struct llm_measure *m);

/*
 * Report the completion to fn(ctx, digest) from now on: at once when it is
 * complete, else when measure_complete runs. Reported once; fn may be NULL.
 */
void measure_arm(struct llm_measure *m, void (*fn)(void *ctx, const uint8_t digest[32]),
		 void *ctx);

#endif
