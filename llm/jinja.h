/*
 * llm/jinja.h — a small Jinja interpreter for chat templates: runs a GGUF's
 * own tokenizer.chat_template when it is none of the formats chat.c knows.
 *
 * The subset is what HF chat templates use (as HF's apply_chat_template
 * renders them: trim_blocks and lstrip_blocks on, loop controls on):
 * text, {{ }}, {% if/elif/else %}, {% for %} (with an `if` filter, else,
 * loop.*, break/continue), {% set %} (names, namespace attributes, block
 * set), {% macro %}, {% generation %}, comments and {%- -%} whitespace
 * control; expressions with literals, lists, dicts, attribute/index/slice,
 * calls, filters, tests, `~`, arithmetic, comparison, `in`, and/or/not and
 * `a if c else b`. The template comes from a disk and is hostile: the caller
 * gives an arena (all memory comes from it) and a step budget; running out
 * of either, or any unsupported construct, is one error, never a crash.
 */
#ifndef LLM_JINJA_H
#define LLM_JINJA_H

#include "../kernel/platform.h"
#include "chat.h"

#define JINJA_STEPS_DEFAULT 2000000u    /* evaluation steps per render */
#define JINJA_ARENA_DEFAULT (4u << 20)  /* bytes the caller lends */

/* The context HF's apply_chat_template (and llama.cpp's --jinja) gives. */
struct jinja_input {
	const struct chat_msg *msgs;
	size_t n;
	bool add_generation_prompt; /* false: the variable is left undefined, as llama.cpp */
	const char *bos_token, *eos_token; /* NULL: "" */
	const char *tools_json; /* a JSON array, or NULL: `tools` undefined */
	/* merge a leading system message into the next one ("sys\ncontent"),
	 * as llama.cpp does for templates that ignore the system role */
	bool merge_system;
	/* "YYYY-MM-DD" for strftime_now (llama.cpp gives the local date);
	 * NULL: strftime_now is undefined (llmk's kernel has no calendar
	 * clock; templates test `strftime_now is defined` and fall back) */
	const char *today;
	/* NULL, or for each message NULL or a JSON object of its other
	 * members (tool_calls, tool_call_id, name: shell/http/api_format.c),
	 * set into the message as llama.cpp's --jinja does (strings tainted) */
	const char *const *extra;
	/* a tool call's function.arguments (a JSON object's text in extra)
	 * given as that object, as llama.cpp does for a template that reads
	 * them as one (jinja_chat decides by a probe) */
	bool object_args;
};

struct jinja_out {
	char *buf;              /* NUL-terminated output */
	size_t cap, len;
	/* where the messages' own text landed (kept text by the tokenizer);
	 * NULL: not wanted */
	struct tok_span *spans;
	size_t max_spans, n_spans;
};

struct jinja_limits {
	void *arena;
	size_t arena_size;
	uint32_t steps;
};

/*
 * Render src[0..len) with in. Returns 0; -LLMK_ERANGE when out->cap is too
 * small or the messages' text lands in more than out->max_spans runs (the
 * caller may drop old turns and retry); -LLMK_EFORMAT for a syntax error,
 * -LLMK_ENOTSUP for a construct outside the subset, -LLMK_EINVAL for
 * raise_exception, a type error or an overflow; -LLMK_ENOMEM when the arena
 * is spent; -LLMK_EBUDGET when the steps or a nesting bound are. err gets
 * one line that says which and where (line:column).
 */
int jinja_render(const char *src, size_t len, const struct jinja_input *in,
		 const struct jinja_limits *lim, struct jinja_out *out, char *err, size_t errlen);

/*
 * As llama.cpp's common_chat_templates_apply: probes whether the template
 * renders a system message (a needle in a two-message conversation); if not
 * (or it raises), the system text is merged into the next message. Then
 * renders. Same returns as jinja_render.
 */
int jinja_chat(const char *src, size_t len, const struct jinja_input *in,
	       const struct jinja_limits *lim, struct jinja_out *out, char *err, size_t errlen);

#endif
