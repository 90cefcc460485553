/*
 * llm/engine.h — an inference session: one loaded model with its tokenizer,
 * KV cache, sampler, configuration and statistics.
 *
 *   engine_init(e)                     defaults, nothing loaded
 *   engine_load(e, disk, false, ...)   GGUF -> tokenizer -> model -> memory plan
 *   engine_infer(e, "prompt", &gen)    prompt + continuation, streamed through gen.emit
 *   engine_chat(e, "hi", &gen)         one turn; earlier turns stay in the cache
 *   engine_unload(e)
 *
 * The cache remembers which tokens it holds (ctx_tok), so a new prompt that
 * starts with the same tokens as the last one (the next chat turn, the same
 * prompt again) only evaluates what differs.
 */
#ifndef LLM_ENGINE_H
#define LLM_ENGINE_H

#include "chat.h"
#include "gguf.h"
#include "kv.h"
#include "matmul.h"
#include "model.h"
#include "sample.h"
#include "seal.h"
#include "stream.h"
#include "tok.h"

#define ENGINE_MAX_STOPS 8
#define ENGINE_MAX_MSGS 256
/* prompt tokens per forward pass: a prefill tile repacks its weights once
 * per pass, so a 128-token prompt in one pass costs one repack */
#define ENGINE_DEFAULT_BATCH 128
#define ENGINE_STREAM_SLOTS 4   /* slots the streamer takes when the budget allows */

/* How load holds the weights: by the memory plan, or forced (load --resident/--stream). */
enum engine_weights { ENGINE_WEIGHTS_AUTO, ENGINE_WEIGHTS_RESIDENT, ENGINE_WEIGHTS_STREAM };

struct engine_config {
	int threads;            /* workers for matmuls; 0 = every CPU */
	uint32_t n_ctx;         /* 0 = the model's context_length */
	uint64_t mem_budget;    /* bytes the engine may hold; 0 = no limit */
	uint32_t kv_type;       /* GGML_TYPE_F16 (default), _Q8_0, _F32 */
	uint32_t n_batch;       /* prompt tokens per forward pass */
	uint32_t n_predict;     /* default max new tokens */
	enum chat_tmpl tmpl;    /* CHAT_UNKNOWN = detect from the model */
	struct sample_params samp;
	/* Key for sealed disks (llm/seal.h); NULL = none. Owned by the caller. */
	const struct seal_keysrc *keysrc;
	enum engine_weights weights;
	bool no_pack;           /* keep resident weights in GGUF order (quant.h, packed) */
};

struct engine_stats {
	uint32_t n_prompt;      /* prompt tokens evaluated in the last run */
	uint32_t n_reused;      /* prompt tokens found already in the cache */
	uint32_t n_gen;         /* tokens generated */
	uint64_t prompt_ns, gen_ns;
	uint64_t load_ns;
	const char *stop;       /* why the last run ended: "eog", "stop", "limit", "context", "cancel" */
	uint64_t seed;          /* the sampler's seed in the last run (--seed reproduces it) */
};

/* One generation request and its results. */
struct engine_gen {
	struct sample_params samp;
	uint32_t n_predict;
	const char *stops[ENGINE_MAX_STOPS];
	uint32_t n_stops;
	/* Output as it is produced (text held back while it may be the start of
	 * a stop string). cancel is polled between tokens. */
	void (*emit)(void *ctx, const char *s, size_t n);
	bool (*cancel)(void *ctx);
	void *ctx;
	/* Results: generated ids (up to out_cap), and the text (in e->text). */
	int32_t *out_ids;
	uint32_t out_cap, n_out;
};

struct engine {
	struct engine_config cfg;
	struct llm_mem mem;
	bool loaded, vocab_only;
	int disk;
	struct llm_reader rd;   /* the disk, or the plaintext of a sealed disk */
	bool sealed;
	struct seal_ctx seal;   /* when sealed: decrypts each read of rd */
	struct gguf_file g;
	struct tok tok;
	struct model model;
	struct model_scratch s;
	struct kv_cache kv;
	struct sampler smp;
	struct mm_ctx mm;
	uint32_t n_ctx;
	enum chat_tmpl tmpl;    /* in use */
	bool tmpl_detected;     /* false: fallback or configured */

	int32_t *ctx_tok;       /* tokens whose keys/values are in the cache */
	uint32_t n_past;
	int32_t *tok_buf;       /* a tokenized prompt (n_ctx + 1) */

	char *text;             /* the last run's generated text */
	size_t text_len, text_cap;

	/* chat: messages point into chat_buf; fmt_buf holds the rendered prompt */
	struct chat_msg msgs[ENGINE_MAX_MSGS];
	uint32_t n_msgs;
	char *chat_buf, *fmt_buf;
	size_t chat_len, chat_cap;

	uint64_t weight_bytes, kv_bytes, scratch_bytes;
	uint64_t plan_budget;   /* what the plan fitted: mem-budget, or the free
				   memory when none is set (0: unknown) */
	bool streaming;         /* the plan: weights streamed through slots */
	uint32_t n_slots;       /* streaming: slots, each slot_bytes */
	uint64_t slot_bytes;
	struct engine_stats stats;
};

/* bench --batch: sequences decoding together, at most */
#define ENGINE_BENCH_MAX_SEQS 64

void engine_init(struct engine *e);
/* Load the GGUF on disk (vocab_only: tokenizer only). Unloads what was there.
 * On error returns -LLMK_E* with one line in err and leaves nothing loaded. */
int engine_load(struct engine *e, int disk, bool vocab_only, char *err, size_t errlen);
void engine_unload(struct engine *e);
/*
 * Forget the conversation and the last run: the chat messages and their
 * text, the generated text, the rendered prompt, the cached tokens and
 * every KV row, the model's activations and logits, the sampler's
 * candidates, history and RNG are zeroized (the bytes, not only the
 * counts), and the statistics cleared. Nothing of it is reused: the next
 * prompt is evaluated from position 0. The model stays loaded. For `chat
 * --reset` and a confidential session's start and end; engine_unload
 * zeroizes the same memory as it frees it (llm_mem_free).
 */
void engine_forget(struct engine *e);
/* The disk whose GGUF general.name equals name (ASCII case-insensitive);
 * -LLMK_ENOENT if none. */
int engine_find_disk(const char *name, int *disk);

/* gen defaults from the configuration. */
void engine_gen_init(const struct engine *e, struct engine_gen *g);
/*
 * Tokenize prompt (BOS as the vocabulary says, special-token text parsed),
 * evaluate it and generate. Errors: -LLMK_EINVAL (no model / vocab only),
 * -LLMK_ERANGE (prompt does not fit the context; err says the sizes),
 * -LLMK_ECANCEL, or a forward-pass error. err gets one line.
 */
int engine_infer(struct engine *e, const char *prompt, struct engine_gen *g,
		 char *err, size_t errlen);
/* One chat turn: user's message is added to the conversation, the reply is
 * generated and kept. */
int engine_chat(struct engine *e, const char *user, struct engine_gen *g,
		char *err, size_t errlen);
/* A new conversation: engine_forget. */
void engine_chat_reset(struct engine *e);
/* Open the conversation with a system message (only before the first turn). */
int engine_chat_system(struct engine *e, const char *text, char *err, size_t errlen);

#endif
