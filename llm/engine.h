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
#include "measure.h"
#include "sha256.h"
#include "stream.h"
#include "tok.h"

#define ENGINE_MAX_STOPS 8
#define ENGINE_MAX_TRIGGERS 4 /* a lazy grammar's trigger words (GRAM_MAX_TRIGGERS) */
#define ENGINE_MAX_MSGS 256
/* prompt tokens per forward pass: a prefill tile repacks its weights once
 * per pass, so a 128-token prompt in one pass costs one repack */
#define ENGINE_DEFAULT_BATCH 128
#define ENGINE_STREAM_SLOTS 4   /* slots the streamer takes when the budget allows */
/* The most context positions (`config ctx`'s limit): the configuration's or
 * the file's context_length is capped here, then at what the memory plan holds. */
#define ENGINE_MAX_CTX MODEL_MAX_POS
/* With `config ctx 0` the file's context_length is used up to this many
 * positions (llama.cpp's --ctx-size default): a file's claim alone never
 * plans gigabytes of cache; `config ctx N` or `load -c N` asks for more. */
#define ENGINE_DEFAULT_CTX 4096
/* n_predict: until the context is full or an end token (llama.cpp's -n -1) */
#define ENGINE_PREDICT_ALL UINT32_MAX
/* Prompt-lookup decoding (`lookup N`): where the last tokens occurred
 * before in the context, the tokens that followed them there are drafted
 * and checked in the same pass as the token sampled, up to N of them.
 * AUTO: ENGINE_LOOKUP_STREAM while the weights stream (a pass is a read of
 * the model, whatever the tokens it carries), else none. */
#define ENGINE_LOOKUP_MAX 16
#define ENGINE_LOOKUP_AUTO (-1)
#define ENGINE_LOOKUP_STREAM 8

/* How load holds the weights: by the memory plan, or forced (load --resident/--stream). */
enum engine_weights { ENGINE_WEIGHTS_AUTO, ENGINE_WEIGHTS_RESIDENT, ENGINE_WEIGHTS_STREAM };

/* What engine_config.on_measured is told. */
struct engine_measurement {
	int disk;
	bool sealed;            /* digest: the sealed header's plaintext digest */
	uint64_t extent;        /* else: SHA-256 of the GGUF's bytes [0, extent) as loaded */
	uint8_t digest[32];
};

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
	int lookup;             /* drafted tokens a pass at most; ENGINE_LOOKUP_AUTO */
	/* The loaded model's measurement, once it exists: a sealed image's
	 * header digest at load, a plain model's digest as loaded when it is
	 * complete (at load, or a streamed model's first pass or
	 * engine_measure). Called once a load, only after the load succeeded,
	 * on the caller's thread; NULL = nobody asks. */
	void (*on_measured)(void *ctx, const struct engine_measurement *m);
	void *on_measured_ctx;
};

/* Counters of the last run (the engine keeps them in e->run). */
struct engine_run {
	uint32_t n_prompt;      /* prompt tokens evaluated in the last run */
	uint32_t n_reused;      /* prompt tokens found already in the cache */
	uint32_t n_gen;         /* tokens generated */
	uint64_t prompt_ns, gen_ns;
	uint64_t load_ns;
	const char *stop;       /* why the last run ended: "eog", "stop", "limit", "context",
				   "cancel", "error", "grammar" (complete),
				   "grammar-refused" (no token fits it) */
	uint64_t seed;          /* the sampler's seed in the last run (--seed reproduces it) */
	int threads;            /* matmul workers the last run used */
	/* generation's forward passes, and prompt lookup's drafts in them */
	uint32_t n_passes, n_drafted, n_accepted;
	uint32_t lookup;        /* the most drafted a pass in the last run; 0 = none */
	/* under a grammar: its time, steps whose token it refused (masked),
	 * and those whose mask its cache held */
	bool grammar;
	uint64_t grammar_ns;
	uint32_t n_masked, n_mask_hits;
	const char *lookup_off; /* why the run went without, asked for (NULL: it did not) */
};

/* Special-token text (<|im_start|>, [INST], ...) in the user's text: parsed
 * into those tokens, or kept as text. DEFAULT is the command's own: the
 * infer prompt is parsed (llama-cli's -p), chat messages are text, so a
 * message cannot close its turn and open another role's. */
enum engine_special { ENGINE_SPECIAL_DEFAULT, ENGINE_SPECIAL_PARSE, ENGINE_SPECIAL_TEXT };

/* One generation request and its results. */
struct engine_gen {
	struct sample_params samp;
	uint32_t n_predict;     /* ENGINE_PREDICT_ALL: until the context is full */
	bool ignore_eos;        /* end tokens get logit -inf: keep generating past them */
	int threads;            /* matmul workers for this run; 0 = as loaded */
	int lookup;             /* drafted tokens a pass at most; ENGINE_LOOKUP_AUTO */
	enum engine_special special;
	const char *stops[ENGINE_MAX_STOPS];
	uint32_t n_stops;
	/* A GBNF grammar (llm/grammar.h) every generated token keeps to, the
	 * run ending when it is complete; NULL: none. Parsed at the run's
	 * start (a bad one: -LLMK_EFORMAT, err names line and column). */
	const char *grammar;
	/* A JSON schema instead (llm/grammar_schema.c): its grammar, the same. */
	const char *json_schema;
	/* n_triggers > 0: the grammar (or schema) is lazy (grammar.h): tokens
	 * are free until the text holds one of these words ("^word": only at
	 * the text's start), the grammar then applies from the word's start. */
	const char *triggers[ENGINE_MAX_TRIGGERS];
	uint32_t n_triggers;
	/* Output as it is produced (text held back while it may be the start of
	 * a stop string). cancel is polled between tokens. */
	void (*emit)(void *ctx, const char *s, size_t n);
	bool (*cancel)(void *ctx);
	/* A line the engine wants said before the reply (chat: which turns
	 * the context shift dropped); NULL: not said. */
	void (*notice)(void *ctx, const char *line);
	/* chat: the formatted prompt of the turn, before it runs (chat
	 * --show-prompt); NULL: not shown. */
	void (*prompt)(void *ctx, const char *s, size_t n);
	void *ctx;
	enum chat_tmpl tmpl;    /* chat: this run's template; CHAT_UNKNOWN: the model's */
	const char *tmpl_text;  /* chat: a template's text run as jinja (--chat-template-file);
				   NULL: tmpl's */
	/* chat, a Jinja template (CHAT_JINJA) only: the tools (a JSON array)
	 * and each message's other members (NULL, or per message NULL or a
	 * JSON object: tool_calls, tool_call_id, name), as llm/jinja.h's
	 * jinja_input takes them; NULL: none. engine_chat_messages' and
	 * engine_chat_tokens' messages only. */
	const char *tools_json;
	const char *const *msg_extra;
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
	/* a plain model's measurement from the bytes it is computed with:
	 * the header as parsed, then (resident) the tensor data as read */
	struct llm_measure meas; /* complete at load, or (streaming) by the first pass;
				    streaming: every read checked against its tags */
	struct tok tok;
	struct model model;
	struct model_scratch s;
	struct kv_cache kv;
	struct sampler smp;
	struct mm_ctx mm;
	uint32_t n_ctx;
	uint32_t n_ctx_asked;   /* config ctx, or (ctx 0) the file's context_length */
	const char *ctx_cap;    /* why n_ctx < n_ctx_asked ("at the ctx limit",
				   "by mem-budget", "by free memory"), or NULL */
	enum chat_tmpl tmpl;    /* in use */
	bool tmpl_detected;     /* false: default, configured or unknown */
	bool tmpl_in_file;      /* the model has a tokenizer.chat_template */
	const char *tmpl_src;   /* its text (in the GGUF's arena), for CHAT_JINJA */
	size_t tmpl_len;

	int32_t *ctx_tok;       /* tokens whose keys/values are in the cache */
	uint32_t n_past;
	int32_t *tok_buf;       /* a tokenized prompt (n_ctx + 1) */

	char *text;             /* the last run's generated text */
	size_t text_len, text_cap;

	/* chat: messages point into chat_buf, their texts in order; fmt_buf
	 * holds the rendered prompt, spans where the messages are in it */
	struct chat_msg msgs[ENGINE_MAX_MSGS];
	struct tok_span spans[ENGINE_MAX_MSGS];
	uint32_t n_msgs;
	char *chat_buf, *fmt_buf;
	size_t chat_len, chat_cap;

	uint64_t weight_bytes, kv_bytes, scratch_bytes;
	uint64_t plan_budget;   /* what the plan fitted: mem-budget, or the free
				   memory when none is set (0: unknown) */
	bool streaming;         /* the plan: weights streamed through slots */
	uint32_t n_slots;       /* streaming: slots, each slot_bytes */
	uint64_t slot_bytes;
	uint64_t embd_bytes;    /* streaming: the token embedding table, held */
	struct engine_run run;
	/* changes with every run, bench, forget, load and unload: a batch
	 * (engine_batch.h) holds the cache only while it stays the same */
	uint32_t epoch;
};

void engine_init(struct engine *e);
/* Load the GGUF on disk (vocab_only: tokenizer only). Unloads what was there.
 * On error returns -LLMK_E* with one line in err and leaves nothing loaded. */
int engine_load(struct engine *e, int disk, bool vocab_only, char *err, size_t errlen);
void engine_unload(struct engine *e);
/* Complete the loaded model's measurement if the first pass has not
 * (engine_info.measure_pending): a streamed plain model read in file order
 * is measured by its first pass, and whoever needs the digest before then
 * calls this. 0 when there is nothing to complete; else -LLMK_E* with one
 * line in err (a block that changed: every run fails too, until a load). */
int engine_measure(struct engine *e, char *err, size_t errlen);
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

/* gen defaults from the configuration. */
void engine_gen_init(const struct engine *e, struct engine_gen *g);

/*
 * Workers for one run (infer and chat's -t, bench -t): n matmul threads
 * (1 .. plat_cpu_count()), and at most n of the workers that attention and
 * the feed-forward use, whose scratch load sized (so more than load's count
 * speeds only the matmuls). n <= 0 changes nothing. The returned counts go
 * back with engine_threads_restore when the run ends.
 */
struct engine_threads {
	int mm;
	uint32_t workers;
};
struct engine_threads engine_threads_set(struct engine *e, int n);
void engine_threads_restore(struct engine *e, struct engine_threads t);
/*
 * Tokenize prompt (BOS as the vocabulary says, special-token text parsed
 * unless g->special is ENGINE_SPECIAL_TEXT), evaluate it and generate. Errors: -LLMK_EINVAL (no model / vocab only),
 * -LLMK_ERANGE (prompt does not fit the context; err says the sizes),
 * -LLMK_ECANCEL, or a forward-pass error. err gets one line.
 */
int engine_infer(struct engine *e, const char *prompt, struct engine_gen *g,
		 char *err, size_t errlen);
/*
 * One chat turn: user's message is added to the conversation, the reply is
 * generated and kept. The message is text (g->special DEFAULT or TEXT: its
 * special-token text stays text; PARSE: parsed, as the template's markers
 * always are). When the conversation and room for the reply (n_predict, at
 * most half the context) pass the context, or the messages their buffers,
 * the older half of the earlier turns leaves it (again until it fits; the
 * system message stays: llama.cpp's context shift with n_keep), and
 * g->notice says so before the reply.
 */
int engine_chat(struct engine *e, const char *user, struct engine_gen *g,
		char *err, size_t errlen);
/*
 * One reply to the whole conversation msgs[0..n) (the HTTP API's request,
 * which carries every turn): formatted with g->tmpl (CHAT_UNKNOWN: the
 * model's) and the generation prompt, the messages' text kept text as in
 * engine_chat (g->special PARSE: parsed), then generated as engine_infer.
 * The shell's conversation is not changed, but the cache holds this prompt.
 */
int engine_chat_messages(struct engine *e, const struct chat_msg *msgs, size_t n,
			 struct engine_gen *g, char *err, size_t errlen);
/* A new conversation: engine_forget. */
void engine_chat_reset(struct engine *e);
/* Open the conversation with a system message (only before the first turn). */
int engine_chat_system(struct engine *e, const char *text, char *err, size_t errlen);
/* The model's own template's text (NULL when it has none), for a caller
 * that reads what a CHAT_JINJA template writes (the API's tool format). */
const char *engine_tmpl_text(const struct engine *e, size_t *len);
/* engine_chat_render with a Jinja template's tools and messages' extra
 * members (engine_gen's tools_json, msg_extra). */
int engine_chat_render_tools(struct engine *e, enum chat_tmpl t, const char *text,
			     const struct chat_msg *msgs, const char *const *extra, size_t n,
			     const char *tools_json, char *out, size_t cap, size_t *len,
			     char *err, size_t errlen);
/*
 * msgs[0..n) formatted with template t (CHAT_UNKNOWN: the loaded model's;
 * text not NULL: that template text run as jinja) and the generation
 * prompt, into out (chat --show-prompt --messages): nothing runs.
 * -LLMK_EINVAL with err when there is no template to use.
 */
int engine_chat_render(struct engine *e, enum chat_tmpl t, const char *text,
		       const struct chat_msg *msgs, size_t n, char *out, size_t cap, size_t *len,
		       char *err, size_t errlen);

/* ---- what the engine tells its callers (llm/engine_info.c) ----
 * Snapshots: each call copies what it reports into the caller's struct, so
 * a caller reads and prints without reaching into struct engine, and
 * changes the engine only through the calls above and below. */

/* The configuration: a copy out, and a new one in. Fields that shape the
 * model (threads, n_ctx, mem_budget, kv_type, n_batch, weights, no_pack,
 * keysrc) apply at the next engine_load; the rest (sampling defaults,
 * n_predict, tmpl) at the next run. */
void engine_get_config(const struct engine *e, struct engine_config *out);
void engine_set_config(struct engine *e, const struct engine_config *cfg);

/* The loaded model: what it is, its tokenizer and chat template. */
struct engine_info {
	bool loaded, vocab_only;
	int disk;
	struct model_hparams hp;        /* vocab_only: only hp.name is set */
	bool sealed;                    /* read through a sealed image */
	uint8_t plain_sha256[32];       /* sealed: the header's digest of the plaintext GGUF;
					   digest_as_loaded: SHA-256 of the bytes loaded */
	bool digest_as_loaded;          /* a plain model: plain_sha256 is the digest of its
					   bytes as the engine read and uses them */
	bool measure_pending;           /* ... not yet: the first pass (or engine_measure)
					   completes it; plain_sha256 is zeros */
	uint64_t measured_bytes;        /* bytes of the extent measured so far */
	uint64_t bind_blocks;           /* streaming plain: blocks checked on every read */
	uint32_t bind_block;            /* bytes a block */
	const char *bind_impl;          /* the check's GHASH ("ghash_vpclmul512", ...) */
	uint64_t extent;                /* the GGUF's own extent in bytes (header + tensors) */
	uint64_t seal_chunks;
	uint32_t seal_chunk_size;
	/* tensors and their bytes per GGUF type (the quant mix) */
	uint64_t type_count[GGML_TYPE_COUNT], type_bytes[GGML_TYPE_COUNT];
	uint32_t n_vocab;
	const char *tok_model;          /* tokenizer.ggml.model: "llama", "gpt2" */
	const char *tok_pre;            /* byte-level BPE: its pre-tokenizer; else NULL */
	int32_t bos, eos;
	enum chat_tmpl tmpl;            /* in use */
	bool tmpl_detected;             /* from tokenizer.chat_template */
	bool tmpl_configured;           /* chosen by the configuration */
	bool tmpl_in_file;              /* CHAT_UNKNOWN: it is there, not recognised */
};
/* 0; -LLMK_EINVAL (info->loaded false) when nothing is loaded. */
int engine_get_info(const struct engine *e, struct engine_info *info);
/* Where the template in use comes from, one phrase ("from
 * tokenizer.chat_template", "configured", ...), for info and chat. */
const char *engine_tmpl_source(const struct engine_info *info);

/* The memory plan of the loaded model and the memory held now. */
struct engine_plan {
	bool streaming;                 /* weights streamed through slots */
	uint32_t n_ctx;                 /* context positions the cache holds */
	uint32_t n_ctx_asked;           /* what was asked: config ctx, or the file's */
	bool ctx_from_file;             /* n_ctx_asked is the file's context_length */
	const char *ctx_capped;         /* NULL, or why n_ctx is less: "at the ctx
					   limit", "by mem-budget", "by free memory" */
	uint32_t n_slots;               /* streaming: slots of slot_bytes */
	uint64_t slot_bytes;
	uint64_t embd_bytes;            /* streaming: the token embedding table, held */
	uint64_t weight_bytes, kv_bytes, scratch_bytes;
	uint32_t kv_type;
	const char *weights_kind;       /* "resident", "streaming" */
	uint64_t packed_bytes, pack_ns; /* weights packed at load, and the time it took */
	uint64_t packed_types;          /* bit t: some matrix of ggml type t was packed */
	uint64_t mem_budget;            /* the configured mem-budget; 0 = none */
	uint64_t plan_budget;           /* what the plan fitted: mem_budget, or the
					   free memory when none is set (0: unknown) */
	uint64_t mem_used, mem_peak;    /* bytes the engine holds now, and at most */
	uint32_t n_batch;               /* prompt tokens per pass (and most sequences
					   decoding together) */
	int threads;                    /* matmul workers */
};
/* 0; -LLMK_EINVAL when no model (weights) is loaded. */
int engine_get_plan(const struct engine *e, struct engine_plan *plan);

/* The last run and the session now. */
struct engine_stats {
	struct engine_run run;          /* run.stop NULL: no run yet */
	uint32_t n_past, n_ctx;         /* positions the cache holds, of */
	uint64_t mem_used, mem_peak;
	bool streaming;
	bool sealed;                    /* io.decrypt_ns: decrypting, else checking blocks */
	int disk;                       /* the disk the weights come from */
	struct wt_io_stats io;          /* disk traffic since the last run began */
};
/* 0; -LLMK_EINVAL when nothing is loaded. */
int engine_get_stats(const struct engine *e, struct engine_stats *st);

/* The loaded tokenizer (also with --vocab-only), or NULL. */
const struct tok *engine_tok(const struct engine *e);

/* Forward-pass profiling (`profile`): on/off, and zero the counters. The
 * counters, or NULL when no model is loaded: per stage, and per layer
 * (hp.n_layer entries). */
int engine_profile(struct engine *e, bool on, bool reset);
const struct model_prof *engine_get_profile(const struct engine *e);

#endif
