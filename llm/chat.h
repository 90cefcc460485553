/*
 * llm/chat.h — chat templates: a conversation rendered as the prompt text a
 * chat-tuned model was trained on.
 *
 * Only a few fixed formats exist in practice, so instead of running the
 * Jinja template in tokenizer.chat_template we recognise it by its marker
 * strings (as llama.cpp's llm_chat_detect_template does) and render the
 * matching format ourselves. BOS is not part of the text: the tokenizer
 * adds it as the vocabulary says. Special-token text in the result
 * (<|im_start|>, [INST], ...) must be tokenized with parse_special.
 */
#ifndef LLM_CHAT_H
#define LLM_CHAT_H

#include "../kernel/platform.h"
#include "tok.h"

enum chat_tmpl {
	CHAT_UNKNOWN = 0,
	CHAT_CHATML,  /* <|im_start|>role\n...<|im_end|>\n (Qwen, SmolLM, many others) */
	CHAT_LLAMA2,  /* [INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] ...</s> */
	CHAT_LLAMA3,  /* <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|> */
	CHAT_MISTRAL, /* [INST] ... [/INST]...</s> (no system block) */
	CHAT_ZEPHYR,  /* <|role|>\n...</s>\n */
	CHAT_PHI3,    /* <|role|>\n...<|end|>\n */
	CHAT_GEMMA,   /* <start_of_turn>role\n...<end_of_turn>\n, assistant = "model" */
	CHAT_N
};

/* The format when a model has no template or one we do not recognise. */
#define CHAT_FALLBACK CHAT_CHATML

struct chat_msg {
	const char *role;    /* "system", "user" or "assistant" */
	const char *content;
};

/* CHAT_UNKNOWN if tmpl (the Jinja source) is NULL or matches no format. */
enum chat_tmpl chat_detect(const char *tmpl);
const char *chat_tmpl_name(enum chat_tmpl t);
/* Name (as chat_tmpl_name) -> template; -LLMK_EINVAL if unknown. */
int chat_tmpl_parse(const char *name, enum chat_tmpl *out);

/*
 * Render msgs[0..n) and, if add_assistant, the opening of the assistant's
 * reply. Writes a NUL-terminated string; *n_out = its length. Returns 0,
 * -LLMK_ERANGE if cap is too small, -LLMK_EINVAL for an unknown role or
 * template.
 */
int chat_format(enum chat_tmpl t, const struct chat_msg *msgs, size_t n, bool add_assistant,
		char *out, size_t cap, size_t *n_out);
/* chat_format, and where in out each message's content went: spans[0..
 * *n_spans) in order (a message rendered nowhere, as gemma's system text
 * without a user turn, has none; at most max), so the tokenizer can keep
 * them text (tok_encode_spans) while the markers around become tokens. */
int chat_format_spans(enum chat_tmpl t, const struct chat_msg *msgs, size_t n,
		      bool add_assistant, char *out, size_t cap, size_t *n_out,
		      struct tok_span *spans, size_t max, size_t *n_spans);

#endif
