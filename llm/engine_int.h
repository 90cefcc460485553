/*
 * llm/engine_int.h — what engine.c shares with engine_chat.c (not for
 * other modules: they use engine.h).
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

#endif
