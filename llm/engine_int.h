/*
 * llm/engine_int.h — what engine_load.c, engine.c, engine_chat.c and
 * engine_batch.c share (not for other modules: they use engine.h).
 */
#ifndef LLM_ENGINE_INT_H
#define LLM_ENGINE_INT_H

#include "engine.h"

/* 0, or -LLMK_EINVAL with err set when no model (weights) is loaded. */
int engine_need_model(struct engine *e, char *err, size_t errlen);
/* text into e->tok_buf (*n tokens, BOS as the vocabulary says): special-
 * token text parsed as parse_special says, or with spans, everywhere but in
 * them (tok_encode_spans). -LLMK_ERANGE when it does not fit the context. */
int engine_tokenize(struct engine *e, const char *text, size_t len, bool parse_special,
		    const struct tok_span *spans, size_t n_spans, uint32_t *n, char *err,
		    size_t errlen);
/* Evaluate e->tok_buf[0..n) and generate (engine_infer's and engine_chat's
 * run), with g's own thread count if it has one. */
int engine_run(struct engine *e, uint32_t n, struct engine_gen *g, char *err, size_t errlen);

/* msgs[0..n) formatted as engine_chat_messages does, tokenized into
 * e->tok_buf (*n_tok tokens); nothing runs. */
int engine_chat_tokens(struct engine *e, const struct chat_msg *msgs, size_t n,
		       const struct engine_gen *g, uint32_t *n_tok, char *err, size_t errlen);
/* Stop strings (engine_gen's): the longest tail of text[0..len) that is a
 * proper prefix of one (held back), and the first one at or after from (-1:
 * none). */
size_t engine_held_back(const struct engine_gen *g, const char *text, size_t len);
long engine_find_stop(const struct engine_gen *g, const char *text, size_t len, size_t from);
/* Generated text and its stop strings, the one owner of what g->emit is
 * given (engine.c's runs and engine_batch.c's slots): piece[0..n) appended
 * to text (*len bytes of cap, kept NUL-terminated; what does not fit is
 * dropped), then emitted from *emitted up to the first stop string, or short
 * of the tail that may still begin one. True when a stop string ended the
 * text (trimmed there). */
bool engine_add_text(const struct engine_gen *g, char *text, size_t cap, size_t *len,
		     size_t *emitted, const char *piece, size_t n);
/* The run's end: text[*emitted..len) goes out unless a stop string ended
 * it (stopped); *emitted = len. */
void engine_end_text(const struct engine_gen *g, const char *text, size_t len, size_t *emitted,
		     bool stopped);
/* Prompt lookup's drafts a pass: `lookup` as asked (ENGINE_LOOKUP_AUTO:
 * ENGINE_LOOKUP_STREAM while streaming, else none), at most ENGINE_LOOKUP_MAX
 * and what a pass of batch tokens carries beside the token. */
uint32_t engine_lookup_drafts(int asked, bool streaming, uint32_t batch);
/* The logits rows of n drafts' passes (the token's and each draft's); the plan
 * leaves room for the configured lookup's. */
uint64_t engine_lookup_bytes(const struct engine *e, uint32_t n);
/* A sealed image's first failure (or a bound plain model's changed block)
 * into err, when there is one: it explains a read error better. */
void engine_seal_msg(struct engine *e, char *err, size_t errlen);
/* End tokens' logits to -inf (--ignore-eos). */
void engine_ban_eog(const struct engine *e, float *logits);
/* DRY's sequence breakers of the loaded vocabulary into smp. */
void engine_mark_breakers(const struct engine *e, struct sampler *smp);
/* The grammar's choice: id if gx allows it, else a draw from smp over the
 * tokens it allows (lg masked); -1 if none. */
struct gram_gen;
int32_t engine_constrain(struct sampler *smp, struct gram_gen *gx, float *lg, int32_t id);

#endif
