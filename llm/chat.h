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

/* In detection order (chat.c's table, one row each, in this order). */
enum chat_tmpl {
	CHAT_UNKNOWN = 0,
	CHAT_PHI4, CHAT_SMOLVLM, CHAT_CHATML,
	CHAT_MISTRAL_V7, CHAT_MISTRAL_V1, CHAT_MISTRAL_V3_TEKKEN, CHAT_MISTRAL_V3,
	CHAT_LLAMA2_SYS_STRIP, CHAT_LLAMA2_SYS_BOS, CHAT_LLAMA2_SYS, CHAT_LLAMA2,
	CHAT_PHI3, CHAT_CHATGLM4, CHAT_FALCON3, CHAT_GLMEDGE, CHAT_GLMEDGE_V, CHAT_ZEPHYR,
	CHAT_MONARCH, CHAT_GEMMA, CHAT_ORION, CHAT_OPENCHAT, CHAT_VICUNA_ORCA, CHAT_VICUNA,
	CHAT_DEEPSEEK, CHAT_COMMAND_R, CHAT_LLAMA3, CHAT_CHATGLM3, CHAT_MINICPM, CHAT_DEEPSEEK2,
	CHAT_DEEPSEEK3, CHAT_EXAONE4, CHAT_EXAONE3, CHAT_RWKV_WORLD, CHAT_GRANITE4, CHAT_GRANITE,
	CHAT_GIGACHAT, CHAT_MEGREZ, CHAT_YANDEX, CHAT_BAILING, CHAT_BAILING_THINK, CHAT_BAILING2,
	CHAT_LLAMA4, CHAT_DOTS1, CHAT_HUNYUAN_MOE, CHAT_GPT_OSS, CHAT_HUNYUAN_DENSE, CHAT_KIMI_K2,
	CHAT_SEED_OSS, CHAT_GROK2, CHAT_PANGU_EMBED,
	CHAT_MISTRAL_V7_TEKKEN, /* by name only, as in llama.cpp */
	CHAT_N,
	/* none of the rows: the model's own tokenizer.chat_template run by
	 * llm/jinja.c (chat_format refuses it, it needs the source) */
	CHAT_JINJA = CHAT_N
};

/* The format when a model names no template at all (llama.cpp's default).
 * A template that is there but not recognised runs as itself (CHAT_JINJA). */
#define CHAT_DEFAULT CHAT_CHATML
#define CHAT_ROLE_MAX 32

struct chat_msg {
	const char *role;    /* "system", "user", "assistant" or another: [A-Za-z0-9_-], 1..32 */
	const char *content;
};

/* tmpl (the Jinja source, or a template's name) -> its format, by the
 * marker strings llama.cpp's llm_chat_detect_template looks for, in its
 * order; CHAT_UNKNOWN if NULL or none matches. */
enum chat_tmpl chat_detect(const char *tmpl);
const char *chat_tmpl_name(enum chat_tmpl t);
/* The names chat_tmpl_parse knows ("jinja" last), ", "-separated, NUL-terminated in out
 * (cut at cap); returns the whole list's length. */
size_t chat_tmpl_list(char *out, size_t cap);
/* Name (as chat_tmpl_name) -> template; -LLMK_EINVAL if unknown. */
int chat_tmpl_parse(const char *name, enum chat_tmpl *out);

/* A role is a word: [A-Za-z0-9_-], 1..CHAT_ROLE_MAX bytes (a newline or a
 * marker in one would be text the template did not write). */
bool chat_role_ok(const char *role);
/* A role only the API writes (Mistral's tool markers: available_tools,
 * tool_calls, tool_results, tool_calls_open): a message from a client may
 * not have it, or its text would come with control tokens around it. */
bool chat_role_reserved(const char *role);

/*
 * Render msgs[0..n) and, if add_assistant, the opening of the assistant's
 * reply. Writes a NUL-terminated string; *n_out = its length. Returns 0,
 * -LLMK_ERANGE if cap is too small, -LLMK_EINVAL for a malformed role or an
 * unknown template. Roles other than system/user/assistant are written as
 * llama.cpp writes them (most templates name the role; some drop it).
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
