/*
 * shell/http/api_format.h — what a chat or completion request asks of its
 * answer's shape (docs/api.md): response_format (text, json_object,
 * json_schema) as a grammar; tools and tool_choice written into the
 * prompt in the model template's tool-call format, the reply constrained
 * by a grammar when a call is required, and the reply's calls parsed back
 * into OpenAI tool_calls.
 *
 * Three formats (llama.cpp's common/chat.cpp has them, among others):
 *   HERMES  chatml templates (Qwen2.5, Qwen3, Hermes): the tools as JSON
 *           lines in <tools></tools> in the system message; a call is
 *           <tool_call>\n{"name": .., "arguments": {..}}\n</tool_call>;
 *           tool results are user turns of <tool_response> blocks.
 *   LLAMA3  llama3 templates (Llama 3.1, 3.2, 3.3): the tools, indented
 *           JSON, in the first user message; a call is the reply
 *           {"name": .., "parameters": {..}}; tool results are ipython turns.
 *   MISTRAL mistral-v3 (Mistral 7B v0.3) and mistral-v3-tekken (Nemo): as
 *           their own templates, the tools [AVAILABLE_TOOLS][..] before the
 *           last user message, a call [TOOL_CALLS][{"name", "arguments",
 *           "id"}, ..], a result [TOOL_RESULTS]{"content", "call_id"}
 *           (chat.c writes the markers for the roles available_tools,
 *           tool_calls and tool_results).
 *
 * Everything read is copied into the api_fmt (the request's nodes may be
 * reused); nothing is allocated but gram_schema's parse (from mem, freed).
 */
#ifndef SHELL_HTTP_API_FORMAT_H
#define SHELL_HTTP_API_FORMAT_H

#include "../../llm/engine.h"
#include "../../llm/grammar.h"
#include "json.h"

#define API_MAX_TOOLS 32
#define API_MAX_CALLS 8          /* tool calls parsed from one reply */
#define API_FMT_TEXT (256u << 10) /* messages' text made from tools, results and calls */
#define API_FMT_SCHEMA (128u << 10) /* a schema's text given to the converter */
#define API_FMT_NODES 2048       /* JSON values of one call's arguments or one reply */
#define API_NAME_MAX 64          /* a function's name: [A-Za-z0-9_-], OpenAI's bound */

enum api_tools { API_TOOLS_NONE, API_TOOLS_HERMES, API_TOOLS_LLAMA3, API_TOOLS_MISTRAL };
enum api_choice { API_CHOICE_AUTO, API_CHOICE_NONE, API_CHOICE_REQUIRED, API_CHOICE_NAMED };

struct api_call {
	char id[48];
	char name[API_NAME_MAX + 1];
	size_t args, args_len;   /* compact JSON text at args in calls_text */
};

struct api_fmt {
	/* results of api_fmt_request */
	const char *grammar;            /* GBNF for engine_gen.grammar; NULL: none */
	const char *triggers[2];        /* tool_choice auto: the grammar is lazy (engine_gen) */
	uint32_t n_triggers;
	enum api_tools style;           /* the template's tool format (NONE: it has none) */
	bool jinja;                     /* the model's own template writes the tools:
					   msgs, extra and tools_json are its input */
	enum api_choice choice;
	bool tools_on;                  /* tools listed in the prompt: the reply is parsed */
	bool tools_stream;              /* (api.c) ... and streamed once parsed */
	bool one_call;                  /* parallel_tool_calls false: the first call only */
	struct chat_msg msgs[ENGINE_MAX_MSGS];
	size_t n_msgs;
	const char *extra[ENGINE_MAX_MSGS]; /* jinja: each message's other members (JSON) */
	const char *tools_json;         /* jinja, tools on: the tools as llama.cpp gives them */
	char err[256];                  /* a refusal: what, and the parameter it names */
	char param[96];
	/* the reply, after api_fmt_reply */
	struct api_call calls[API_MAX_CALLS];
	size_t n_calls;
	size_t content_len;             /* of the reply, the content before the calls */
	/* working room */
	char names[API_MAX_TOOLS][API_NAME_MAX + 1];
	size_t n_tools;
	char text[API_FMT_TEXT];
	size_t text_len;
	char schema[API_FMT_SCHEMA];
	char gram[GRAM_SCHEMA_OUT];
	char calls_text[16384];
	size_t calls_len;
	struct json_node nodes[API_FMT_NODES];
	char store[64u << 10];
};

/*
 * The request's messages (chat), response_format, tools and tool_choice,
 * for a model whose template is t (CHAT_JINJA: the template's text is
 * src[0..len), which says the tool format: <tool_call> Hermes', [TOOL_CALLS]
 * Mistral's, else Llama 3's JSON if it speaks of tools at all); mem lends
 * the schema converter its parse. 0, or -LLMK_EINVAL with f->err and
 * f->param saying what is wrong (an OpenAI 400), -LLMK_ERANGE when what is
 * asked passes a bound.
 */
int api_fmt_request(struct api_fmt *f, const struct json_doc *d, bool chat, enum chat_tmpl t,
		    const char *src, size_t len, struct llm_mem *mem);
/* Parse the reply out[0..n) for the tool calls of f's format (when tools
 * are on): f->calls, f->n_calls, f->content_len. Ids are "call_" id_base
 * "_" index. A call that does not parse leaves the reply all content. */
void api_fmt_reply(struct api_fmt *f, const char *out, size_t n, const char *id_base);
/* The message's fields after "role": ,"content":..[,"tool_calls":[..]];
 * out[0..n) the reply (api_fmt_reply's, when tools are on). */
void api_fmt_message(const struct api_fmt *f, struct json_out *o, const char *out, size_t n);

/* JSON value n of d as text: COMPACT (no spaces), PY (Python's json.dumps:
 * ", " and ": "), INDENT4 (json.dumps(indent=4)). */
enum api_json_style { API_JSON_COMPACT, API_JSON_PY, API_JSON_INDENT4 };
void api_json_dump(struct json_out *o, const struct json_doc *d, const struct json_node *n,
		   enum api_json_style style);

#endif
