/*
 * llm/engine_batch.h — continuous batching: several generations decoding
 * together, each pass over the weights (resident or streamed) shared by
 * all of them.
 *
 *   engine_batch_init(b, e, 8, ...)     up to 8 slots in the loaded model's cache
 *   engine_batch_infer(b, prompt, g)    a request joins (its prompt tokenized)
 *   engine_batch_chat(b, msgs, n, g)
 *   engine_batch_step(b)                one pass: every decoding slot's next
 *                                       token and pieces of the prompts joining
 *   engine_batch_done(b, i) / _release  a finished slot's results, then free
 *   engine_batch_free(b)
 *
 * The loaded model's KV cache (e->n_ctx positions, sized by the memory
 * plan) is cut into n_slots ranges of n_ctx positions each, whole attention
 * tiles apart, so a slot's attention splits where a lone run's does. Each
 * slot has its own tokens, sampler (llm/sample.h), grammar state, stop
 * strings, n_predict and emit callback (struct engine_gen, as engine_infer
 * takes it). A request joins at a token boundary and leaves when done:
 * its prompt goes in with the next passes, beside the other slots' decode
 * tokens (up to ENGINE_BATCH_PASS tokens a pass, those who joined first
 * first), and the pass that reads its last prompt token samples its first.
 * Greedy output is the same as the request alone through engine_infer
 * (without prompt lookup, which the batch does not draft).
 *
 * The batch owns the cache while it lives: engine_infer, engine_chat, a
 * bench or a load (the console's) changes the engine's epoch, and every
 * slot active then ends with stop "error" ("the engine was used meanwhile").
 */
#ifndef LLM_ENGINE_BATCH_H
#define LLM_ENGINE_BATCH_H

#include "engine.h"
#include "grammar.h"

#define ENGINE_BATCH_MAX 16
/* positions a slot holds at least: fewer slots when the cache is smaller */
#define ENGINE_BATCH_MIN_CTX 128
/* tokens a pass carries at most (decode tokens and pieces of prompts),
 * within the model's batch (config batch) */
#define ENGINE_BATCH_PASS 128

struct engine_batch_slot {
	bool used;              /* holds a request (active or finished, not released) */
	bool active;            /* decoding: next is the token it feeds */
	struct engine_gen *g;   /* the caller's, until released */
	uint32_t base;          /* its cache rows: [base, base + n_ctx) */
	uint32_t n_past;        /* positions of its cache written */
	int32_t *toks;          /* n_ctx + 1: its prompt and generated tokens */
	int32_t next;           /* the token sampled, fed by the next pass */
	bool prefilling;        /* its prompt still going in: toks[fed..n_prompt) */
	uint32_t fed, n_prompt;
	uint64_t order;         /* when it joined: prompts go in first come first */
	uint32_t i;             /* tokens generated */
	struct sampler smp;
	bool has_gram;
	struct gram gr;
	struct gram_gen gx;
	char *text;             /* generated text (stop strings are found in it) */
	size_t text_len, text_cap, emitted;
	struct engine_run run;
	int result;             /* 0, or -LLMK_E* with err */
	char err[160];
	uint64_t t_start;
};

struct engine_batch {
	struct engine *e;
	uint32_t n_slots;       /* slots (each with its sampler and buffers) */
	uint32_t n_ctx;         /* positions each */
	uint32_t epoch;         /* the engine's, when the batch took the cache */
	uint32_t n_active;
	struct engine_batch_slot slot[ENGINE_BATCH_MAX];
	struct llm_mem mem;     /* the batch's own, within what mem-budget leaves */
	float *rows;            /* n_slots x n_vocab logits of a pass */
	size_t rows_bytes;
	uint64_t joined;        /* requests that joined */
	/* a pass: its tokens, where they go, whose logits, which slot's */
	int32_t tok[ENGINE_BATCH_PASS];
	uint32_t base[ENGINE_BATCH_PASS], pos[ENGINE_BATCH_PASS];
	uint8_t want[ENGINE_BATCH_PASS], who[ENGINE_BATCH_PASS];
	uint64_t passes, tokens; /* decode passes, and the tokens they carried */
};

/*
 * Up to want slots (1 .. ENGINE_BATCH_MAX) in the loaded model's cache:
 * fewer when the cache holds fewer ranges of ENGINE_BATCH_MIN_CTX, or the
 * memory budget fewer samplers and buffers (at least one). 0, or -LLMK_E*
 * with one line in err.
 */
int engine_batch_init(struct engine_batch *b, struct engine *e, uint32_t want, char *err,
		      size_t errlen);
void engine_batch_free(struct engine_batch *b);
/* Whether the cache is still the batch's (no run, load or bench since). */
bool engine_batch_valid(const struct engine_batch *b);

/*
 * A request joins: prompt tokenized (as engine_infer; chat: msgs formatted
 * as engine_chat_messages) into a free slot, its grammar parsed and its
 * sampler seeded; the passes that follow read the prompt. The slot index,
 * or -LLMK_EBUSY when every slot is taken, or -LLMK_E* with err
 * (-LLMK_ERANGE: the prompt does not fit a slot). n_predict 0 is done on
 * return. g stays the caller's until engine_batch_release; g->cancel is
 * polled before each token sampled.
 */
int engine_batch_infer(struct engine_batch *b, const char *prompt, struct engine_gen *g,
		       char *err, size_t errlen);
int engine_batch_chat(struct engine_batch *b, const struct chat_msg *msgs, size_t n,
		      struct engine_gen *g, char *err, size_t errlen);
/*
 * One pass through model_forward_seqs_some: every decoding slot's token and
 * as much of the joining prompts as the pass holds; then each slot with
 * logits (decoding, or its prompt's end read) samples, emits and maybe ends.
 * Returns the slots that took part (0: none active), or -LLMK_E* when the
 * pass failed (every active slot then ends with stop "error").
 */
int engine_batch_step(struct engine_batch *b);
/* End slot i now (a client gone): stop "cancel". */
void engine_batch_cancel(struct engine_batch *b, int i);
/* Slot i holds a finished request: its counters (run.stop says why it
 * ended), the result, and err when not 0. */
bool engine_batch_done(const struct engine_batch *b, int i);
/* Give slot i back (its grammar freed, its text zeroized). */
void engine_batch_release(struct engine_batch *b, int i);
/* Slots holding a request, and the free ones. */
uint32_t engine_batch_used(const struct engine_batch *b);

#endif
