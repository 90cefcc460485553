/*
 * llm/chat.c — chat template detection and rendering (chat.h): the formats
 * llama.cpp builds in (src/llama-chat.cpp: llm_chat_detect_template,
 * llm_chat_apply_template), one row each, checked byte for byte against
 * the cases of its tests/test-chat-template.cpp (tests/unit/test_chat*.c).
 *
 * Most formats are one shape: an optional start, then per message a
 * prefix and a suffix chosen by its role around its (maybe trimmed) text,
 * then the generation prompt. A row says those strings; the few formats
 * with a state of their own (the [INST] turns, gemma and orion folding
 * the system text into the next user turn) name a function instead.
 */
#include "chat.h"

/* In a row's strings: the message's role as given, upper-cased, or with
 * its first letter upper-cased (openchat's "GPT4 Correct User: "). Each is
 * its own string literal, so no hex escape swallows the next character. */
#define R  "\x01"
#define RU "\x02"
#define RC "\x03"

#define MAX_PARTS 7
#define CHAT_NEED_MAX 4
#define TRIM 1 /* chat_part.flags: the text is trimmed of ASCII whitespace */

/* Detection: every clause must hold; a clause holds if any of its (up to
 * two) strings is in the template; a string starting with '^' must open it. */
struct chat_clause {
	const char *any[2];
};

/* How a message with this role is written; role "*" is any role. A
 * message whose role no part names is left out (as llama.cpp does). */
struct chat_part {
	const char *role, *pre, *post;
	unsigned flags;
};

struct sbuf;
struct chat_row;
typedef void (*chat_fmt_fn)(struct sbuf *b, const struct chat_row *t, const struct chat_msg *m,
			    size_t n, bool add_ass);

struct chat_row {
	const char *name;         /* NULL: a second way to detect row `as` */
	enum chat_tmpl as;
	struct chat_clause need[CHAT_NEED_MAX];
	chat_fmt_fn fmt;          /* NULL: fmt_parts */
	const char *start;        /* once, first */
	const char *first_sys[2]; /* a system message first: pre, post (NULL: as the parts) */
	const char *no_sys;       /* before the first message if it is not a system one */
	const char *between;      /* before each message but the first */
	struct chat_part part[MAX_PARTS];
	const char *gen;          /* the generation prompt (add_assistant) */
	unsigned var;             /* the special formatters' variant bits */
};

/* ---- the bounded builder ---- */

/* Overflow is remembered, not written. The messages' texts are recorded as
 * spans when spans is not NULL. */
struct sbuf {
	char *p;
	size_t cap, len;
	bool full;
	struct tok_span *spans;
	size_t max_spans, n_spans;
};

static void put_n(struct sbuf *b, const char *s, size_t n)
{
	if (b->full || b->len + n >= b->cap) {
		b->full = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void put(struct sbuf *b, const char *s)
{
	put_n(b, s, strlen(s));
}

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* A message's own text (not the template's): where it lands is a span. */
static void put_content(struct sbuf *b, const char *s, bool trim)
{
	size_t at = b->len, n = strlen(s);

	if (trim) {
		while (n && is_space(*s))
			s++, n--;
		while (n && is_space(s[n - 1]))
			n--;
	}
	put_n(b, s, n);
	if (!b->spans || b->full || b->len == at)
		return;
	if (b->n_spans == b->max_spans)
		b->full = true; /* a content without its span would be parsed: refuse */
	else
		b->spans[b->n_spans++] = (struct tok_span){at, b->len - at};
}

/* A row's string with the role put in for R, RU, RC. */
static void put_role(struct sbuf *b, const char *s, const char *role)
{
	for (; *s; s++) {
		if ((unsigned char)*s > 3) {
			put_n(b, s, 1);
			continue;
		}
		for (const char *r = role; *r; r++) {
			char c = *r;
			if ((*s == 2 || (*s == 3 && r == role)) && c >= 'a' && c <= 'z')
				c = (char)(c - 'a' + 'A');
			put_n(b, &c, 1);
		}
	}
}

static bool is_role(const char *r, const char *want)
{
	return strcmp(r, want) == 0;
}

static const struct chat_part *part_of(const struct chat_row *t, const char *role)
{
	for (int i = 0; i < MAX_PARTS && t->part[i].role; i++)
		if (is_role(t->part[i].role, "*") || is_role(t->part[i].role, role))
			return &t->part[i];
	return NULL;
}

/* ---- the formats ---- */

#define GEN_AFTER_LAST_USER 1 /* fmt_parts: rwkv's "Assistant:" whatever add_ass */

static void fmt_parts(struct sbuf *b, const struct chat_row *t, const struct chat_msg *m,
		      size_t n, bool add_ass)
{
	put(b, t->start ? t->start : "");
	for (size_t i = 0; i < n; i++) {
		const struct chat_part *p;
		bool sys = is_role(m[i].role, "system");

		if (i == 0 && sys && t->first_sys[0]) {
			put(b, t->first_sys[0]);
			put_content(b, m[i].content, false);
			put(b, t->first_sys[1]);
			continue;
		}
		if (i == 0 && !sys && t->no_sys)
			put(b, t->no_sys);
		if (i > 0 && t->between)
			put(b, t->between);
		if (!(p = part_of(t, m[i].role)))
			continue;
		put_role(b, p->pre, m[i].role);
		put_content(b, m[i].content, p->flags & TRIM);
		put_role(b, p->post, m[i].role);
	}
	if ((t->var & GEN_AFTER_LAST_USER) && n && is_role(m[n - 1].role, "user"))
		put(b, "Assistant:");
	if (add_ass && t->gen)
		put(b, t->gen);
}

/* llama2 and its variants: "[INST] " opens the first turn, an assistant
 * message ends one; the system text sits in a <<SYS>> block (or, without
 * one, on a line of its own). No generation prompt: the turn is open. */
#define L2_SYS 1   /* <<SYS>> block */
#define L2_BOS 2   /* "<s>" text before each later [INST] */
#define L2_STRIP 4 /* every text trimmed */

static void fmt_llama2(struct sbuf *b, const struct chat_row *t, const struct chat_msg *m,
		       size_t n, bool add_ass)
{
	bool in_turn = true, strip = t->var & L2_STRIP;

	put(b, "[INST] ");
	for (size_t i = 0; i < n; i++) {
		if (!in_turn) {
			put(b, t->var & L2_BOS ? "<s>[INST] " : "[INST] ");
			in_turn = true;
		}
		if (is_role(m[i].role, "system")) {
			put(b, t->var & L2_SYS ? "<<SYS>>\n" : "");
			put_content(b, m[i].content, strip);
			put(b, t->var & L2_SYS ? "\n<</SYS>>\n\n" : "\n");
		} else if (is_role(m[i].role, "user")) {
			put_content(b, m[i].content, strip);
			put(b, " [/INST]");
		} else {
			put_content(b, m[i].content, strip);
			put(b, "</s>");
			in_turn = false;
		}
	}
}

/* mistral v1, v3, v3-tekken: the turn opens before the message that
 * follows an assistant one (or the first); v1 puts a space before [INST]
 * and [/INST], tekken none after [INST]; v3 trims the assistant's text.
 * The roles available_tools, tool_calls and tool_results (made by the API's
 * tools, docs/api.md) are written between the turns as v3 and tekken do. */
#define MI_LEAD 1
#define MI_TRAIL 2
#define MI_TRIM 4

static const struct mi_tool {
	const char *role, *pre, *post;
	bool keeps_turn, spaced;
} mi_tools[] = {
	{"available_tools", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", true, true},
	{"tool_calls", "[TOOL_CALLS]", "</s>", false, true},
	{"tool_results", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", false, true},
	/* the reply's start when it must be a call: the model goes on with the array */
	{"tool_calls_open", "[TOOL_CALLS]", "", false, false},
};

static void fmt_mistral(struct sbuf *b, const struct chat_row *t, const struct chat_msg *m,
			size_t n, bool add_ass)
{
	const char *lead = t->var & MI_LEAD ? " " : "", *trail = t->var & MI_TRAIL ? " " : "";
	bool in_turn = false, after_tool = false;

	for (size_t i = 0; i < n; i++) {
		/* the tool roles (shell/http/api_format.c writes their JSON) stand
		 * between turns, as Mistral's own templates write them: the tools
		 * before the last [INST], an assistant's calls, a call's result */
		const struct mi_tool *tr = NULL;
		for (size_t k = 0; k < sizeof mi_tools / sizeof mi_tools[0]; k++)
			if (is_role(m[i].role, mi_tools[k].role))
				tr = &mi_tools[k];
		if (tr) {
			put(b, tr->pre); put(b, tr->spaced ? trail : ""); put_content(b, m[i].content, false);
			put(b, tr->post);
			in_turn = in_turn && tr->keeps_turn;
			after_tool = !tr->keeps_turn;
			continue;
		}
		/* the answer after a call's results opens no turn */
		if (!in_turn && !(after_tool && is_role(m[i].role, "assistant"))) {
			put(b, lead); put(b, "[INST]"); put(b, trail);
			in_turn = true;
		}
		if (is_role(m[i].role, "system")) {
			put_content(b, m[i].content, false); put(b, "\n\n");
		} else if (is_role(m[i].role, "user")) {
			put_content(b, m[i].content, false); put(b, lead); put(b, "[/INST]");
		} else {
			put(b, trail); put_content(b, m[i].content, t->var & MI_TRIM); put(b, "</s>");
			in_turn = false;
		}
		after_tool = false;
	}
}

/* The system messages in m[from, to), trimmed or not, one after another:
 * gemma and orion have no system turn and lead the next user turn with it. */
static bool put_pending_sys(struct sbuf *b, const struct chat_msg *m, size_t from, size_t to,
			    bool trim)
{
	bool any = false;

	for (size_t j = from; j < to; j++) {
		if (is_role(m[j].role, "system")) {
			put_content(b, m[j].content, trim);
			any = true;
		}
	}
	return any;
}

/* Whether m[from, to) holds a system text that is not empty once trimmed. */
static bool has_sys(const struct chat_msg *m, size_t from, size_t to, bool trim)
{
	for (size_t j = from; j < to; j++) {
		const char *s = m[j].content;
		if (!is_role(m[j].role, "system"))
			continue;
		while (trim && is_space(*s))
			s++;
		if (*s)
			return true;
	}
	return false;
}

/* gemma: "assistant" is "model"; the system text (trimmed) joins the
 * next turn that is not the model's. */
static void fmt_gemma(struct sbuf *b, const struct chat_row *t, const struct chat_msg *m,
		      size_t n, bool add_ass)
{
	size_t sys_from = 0;

	for (size_t i = 0; i < n; i++) {
		bool model = is_role(m[i].role, "assistant");
		if (is_role(m[i].role, "system"))
			continue;
		put(b, "<start_of_turn>");
		put(b, model ? "model" : m[i].role);
		put(b, "\n");
		if (!model && has_sys(m, sys_from, i, true)) {
			put_pending_sys(b, m, sys_from, i, true);
			put(b, "\n\n");
		}
		if (!model)
			sys_from = i;
		put_content(b, m[i].content, true);
		put(b, "<end_of_turn>\n");
	}
	if (add_ass)
		put(b, "<start_of_turn>model\n");
}

/* orion: "Human: " turns that end in an empty "Assistant: </s>"; the
 * system text joins the next user turn. No generation prompt. */
static void fmt_orion(struct sbuf *b, const struct chat_row *t, const struct chat_msg *m,
		      size_t n, bool add_ass)
{
	size_t sys_from = 0;

	for (size_t i = 0; i < n; i++) {
		if (is_role(m[i].role, "system"))
			continue;
		if (is_role(m[i].role, "user")) {
			put(b, "Human: ");
			if (has_sys(m, sys_from, i, false)) {
				put_pending_sys(b, m, sys_from, i, false);
				put(b, "\n\n");
			}
			sys_from = i;
			put_content(b, m[i].content, false);
			put(b, "\n\nAssistant: </s>");
		} else {
			put_content(b, m[i].content, false);
			put(b, "</s>");
		}
	}
}

/* ---- the table: llama.cpp's detection order ---- */

#define NEED(...) .need = {__VA_ARGS__}
#define ANY(...) {{__VA_ARGS__}}
#define INST ANY("[INST]", "^mistral")
#define MISTRAL_OFFICIAL ANY("' [INST] ' + system_message", "[AVAILABLE_TOOLS]")
#define ALL(pre, post) {{"*", pre, post, 0}}
#define ALL_TRIM(pre, post) {{"*", pre, post, TRIM}}

static const struct chat_row rows[CHAT_N] = {
	[CHAT_PHI4] = {"phi4", 0, NEED(ANY("<|im_start|>"), ANY("<|im_sep|>")),
		.part = ALL("<|im_start|>" R "<|im_sep|>", "<|im_end|>"),
		.gen = "<|im_start|>assistant<|im_sep|>"},
	/* SmolVLM opens with <|im_start|> as its BOS, and is not chatml */
	[CHAT_SMOLVLM] = {"smolvlm", 0, NEED(ANY("<|im_start|>"), ANY("<end_of_utterance>")),
		.start = "<|im_start|>",
		.part = {{"system", "", "\n\n"}, {"user", "User: ", "<end_of_utterance>\n"},
			 {"*", "Assistant: ", "<end_of_utterance>\n"}},
		.gen = "Assistant:"},
	[CHAT_CHATML] = {"chatml", 0, NEED(ANY("<|im_start|>")),
		.part = ALL("<|im_start|>" R "\n", "<|im_end|>\n"), .gen = "<|im_start|>assistant\n"},
	[CHAT_MISTRAL_V7] = {"mistral-v7", 0, NEED(INST, ANY("[SYSTEM_PROMPT]")),
		.part = {{"system", "[SYSTEM_PROMPT] ", "[/SYSTEM_PROMPT]"},
			 {"user", "[INST] ", "[/INST]"}, {"*", " ", "</s>"}}},
	[CHAT_MISTRAL_V1] = {"mistral-v1", 0, NEED(INST, MISTRAL_OFFICIAL, ANY(" [INST]")),
		.fmt = fmt_mistral, .var = MI_LEAD | MI_TRAIL},
	[CHAT_MISTRAL_V3_TEKKEN] = {"mistral-v3-tekken", 0,
		NEED(INST, MISTRAL_OFFICIAL, ANY("\"[INST]\"")), .fmt = fmt_mistral},
	[CHAT_MISTRAL_V3] = {"mistral-v3", 0, NEED(INST, MISTRAL_OFFICIAL),
		.fmt = fmt_mistral, .var = MI_TRAIL | MI_TRIM},
	[CHAT_LLAMA2_SYS_STRIP] = {"llama2-sys-strip", 0, NEED(INST, ANY("content.strip()")),
		.fmt = fmt_llama2, .var = L2_SYS | L2_STRIP},
	[CHAT_LLAMA2_SYS_BOS] = {"llama2-sys-bos", 0, NEED(INST, ANY("bos_token + '[INST]")),
		.fmt = fmt_llama2, .var = L2_SYS | L2_BOS},
	[CHAT_LLAMA2_SYS] = {"llama2-sys", 0, NEED(INST, ANY("<<SYS>>")),
		.fmt = fmt_llama2, .var = L2_SYS},
	[CHAT_LLAMA2] = {"llama2", 0, NEED(INST), .fmt = fmt_llama2},
	[CHAT_PHI3] = {"phi3", 0, NEED(ANY("<|assistant|>"), ANY("<|end|>")),
		.part = ALL("<|" R "|>\n", "<|end|>\n"), .gen = "<|assistant|>\n"},
	[CHAT_CHATGLM4] = {"chatglm4", 0, NEED(ANY("[gMASK]<sop>")), .start = "[gMASK]<sop>",
		.part = ALL("<|" R "|>\n", ""), .gen = "<|assistant|>\n"},
	[CHAT_FALCON3] = {"falcon3", 0, NEED(ANY("<|assistant|>"), ANY("<|user|>"), ANY("</s>")),
		.part = ALL("<|" R "|>\n", "\n"), .gen = "<|assistant|>\n"},
	[CHAT_GLMEDGE] = {"glmedge", 0, NEED(ANY("<|assistant|>"), ANY("<|user|>")),
		.part = ALL("<|" R "|>\n", ""), .gen = "<|assistant|>"},
	[CHAT_GLMEDGE_V] = {NULL, CHAT_GLMEDGE,
		NEED(ANY("<|{{ item['role'] }}|>"), ANY("<|begin_of_image|>"))},
	[CHAT_ZEPHYR] = {"zephyr", 0, NEED(ANY("<|user|>"), ANY("<|endoftext|>")),
		.part = ALL("<|" R "|>\n", "<|endoftext|>\n"), .gen = "<|assistant|>\n"},
	/* the BOS text is written inside the history, but not first */
	[CHAT_MONARCH] = {"monarch", 0, NEED(ANY("bos_token + message['role']")),
		.between = "<s>", .part = ALL(R "\n", "</s>\n"), .gen = "<s>assistant\n"},
	[CHAT_GEMMA] = {"gemma", 0, NEED(ANY("<start_of_turn>")), .fmt = fmt_gemma},
	[CHAT_ORION] = {"orion", 0, NEED(ANY("'\\n\\nAssistant: ' + eos_token")), .fmt = fmt_orion},
	[CHAT_OPENCHAT] = {"openchat", 0, NEED(ANY("GPT4 Correct ")),
		.part = {{"system", "", "<|end_of_turn|>"},
			 {"*", "GPT4 Correct " RC ": ", "<|end_of_turn|>"}},
		.gen = "GPT4 Correct Assistant:"},
	[CHAT_VICUNA_ORCA] = {"vicuna-orca", 0, NEED(ANY("USER: "), ANY("ASSISTANT: "), ANY("SYSTEM: ")),
		.part = {{"system", "SYSTEM: ", "\n"}, {"user", "USER: ", "\n"},
			 {"assistant", "ASSISTANT: ", "</s>\n"}},
		.gen = "ASSISTANT:"},
	[CHAT_VICUNA] = {"vicuna", 0, NEED(ANY("USER: "), ANY("ASSISTANT: ")),
		.part = {{"system", "", "\n\n"}, {"user", "USER: ", "\n"},
			 {"assistant", "ASSISTANT: ", "</s>\n"}},
		.gen = "ASSISTANT:"},
	[CHAT_DEEPSEEK] = {"deepseek", 0, NEED(ANY("### Instruction:"), ANY("<|EOT|>")),
		.part = {{"system", "", ""}, {"user", "### Instruction:\n", "\n"},
			 {"assistant", "### Response:\n", "\n<|EOT|>\n"}},
		.gen = "### Response:\n"},
	[CHAT_COMMAND_R] = {"command-r", 0,
		NEED(ANY("<|START_OF_TURN_TOKEN|>"), ANY("<|USER_TOKEN|>")),
		.part = {{"system", "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>", TRIM},
			 {"user", "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>", TRIM},
			 {"assistant", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
			  TRIM}},
		.gen = "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
	[CHAT_LLAMA3] = {"llama3", 0, NEED(ANY("<|start_header_id|>"), ANY("<|end_header_id|>")),
		.part = ALL_TRIM("<|start_header_id|>" R "<|end_header_id|>\n\n", "<|eot_id|>"),
		.gen = "<|start_header_id|>assistant<|end_header_id|>\n\n"},
	[CHAT_CHATGLM3] = {"chatglm3", 0, NEED(ANY("[gMASK]sop")), .start = "[gMASK]sop",
		.part = ALL("<|" R "|>\n ", ""), .gen = "<|assistant|>"},
	[CHAT_MINICPM] = {"minicpm", 0, NEED(ANY("<\xe7\x94\xa8\xe6\x88\xb7>")), /* <用户> */
		.part = {{"user", "<\xe7\x94\xa8\xe6\x88\xb7>", "<AI>", TRIM}, {"*", "", "", TRIM}}},
	[CHAT_DEEPSEEK2] = {"deepseek2", 0, NEED(ANY("'Assistant: ' + message['content'] + eos_token")),
		.part = {{"system", "", "\n\n"}, {"user", "User: ", "\n\n"},
			 {"assistant", "Assistant: ", "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"}},
		.gen = "Assistant:"},
	[CHAT_DEEPSEEK3] = {"deepseek3", 0,
		NEED(ANY("<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>"), ANY("<\xef\xbd\x9cUser\xef\xbd\x9c>"),
		     ANY("<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>")),
		.part = {{"system", "", "\n\n"}, {"user", "<\xef\xbd\x9cUser\xef\xbd\x9c>", ""},
			 {"assistant", "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>",
			  "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"}},
		.gen = "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>"},
	[CHAT_EXAONE4] = {"exaone4", 0,
		NEED(ANY("[|system|]"), ANY("[|assistant|]"), ANY("[|endofturn|]"), ANY("[|tool|]")),
		.part = {{"system", "[|system|]", "[|endofturn|]\n", TRIM}, {"user", "[|user|]", "\n", TRIM},
			 {"assistant", "[|assistant|]", "[|endofturn|]\n", TRIM},
			 {"tool", "[|tool|]", "[|endofturn|]\n", TRIM}},
		.gen = "[|assistant|]"},
	[CHAT_EXAONE3] = {"exaone3", 0,
		NEED(ANY("[|system|]"), ANY("[|assistant|]"), ANY("[|endofturn|]")),
		.part = {{"system", "[|system|]", "[|endofturn|]\n", TRIM}, {"user", "[|user|]", "\n", TRIM},
			 {"assistant", "[|assistant|]", "[|endofturn|]\n", TRIM}},
		.gen = "[|assistant|]"},
	/* needs "\n\n" as its end-of-turn token */
	[CHAT_RWKV_WORLD] = {"rwkv-world", 0,
		NEED(ANY("rwkv-world", "{{- 'User: ' + message['content']|trim + '\\n\\n' -}}")),
		.part = {{"system", "System: ", "\n\n", TRIM}, {"user", "User: ", "\n\n", TRIM},
			 {"assistant", "Assistant: ", "\n\n", TRIM}},
		.var = GEN_AFTER_LAST_USER},
	/* granite 4 (its template speaks of <tool_call>): a tool call is the assistant's */
	[CHAT_GRANITE4] = {"granite-4.0", 0, NEED(ANY("<|start_of_role|>"), ANY("<tool_call>")),
		.part = {{"assistant_tool_call", "<|start_of_role|>assistant<|end_of_role|><|tool_call|>",
			  "<|end_of_text|>\n"},
			 {"*", "<|start_of_role|>" R "<|end_of_role|>", "<|end_of_text|>\n"}},
		.gen = "<|start_of_role|>assistant<|end_of_role|>"},
	[CHAT_GRANITE] = {"granite", 0, NEED(ANY("<|start_of_role|>")),
		.part = {{"assistant_tool_call",
			  "<|start_of_role|>assistant_tool_call<|end_of_role|><|tool_call|>",
			  "<|end_of_text|>\n"},
			 {"*", "<|start_of_role|>" R "<|end_of_role|>", "<|end_of_text|>\n"}},
		.gen = "<|start_of_role|>assistant<|end_of_role|>"},
	[CHAT_GIGACHAT] = {"gigachat", 0, NEED(ANY("message['role'] + additional_special_tokens[0] + "
						"message['content'] + additional_special_tokens[1]")),
		.start = "<s>", .first_sys = {"", "<|message_sep|>"},
		.part = {{"user", "user<|role_sep|>",
			  "<|message_sep|>available functions<|role_sep|>[]<|message_sep|>"},
			 {"assistant", "assistant<|role_sep|>", "<|message_sep|>"}},
		.gen = "assistant<|role_sep|>"},
	[CHAT_MEGREZ] = {"megrez", 0, NEED(ANY("<|role_start|>")),
		.part = ALL("<|role_start|>" R "<|role_end|>", "<|turn_end|>"),
		.gen = "<|role_start|>assistant<|role_end|>"},
	/* " Пользователь: ", " Ассистент: "; "\n\n" is its end-of-turn token */
	[CHAT_YANDEX] = {"yandex", 0, /* no "<s>" text: the tokenizer adds BOS */
		NEED(ANY(" \xd0\x90\xd1\x81\xd1\x81\xd0\xb8\xd1\x81\xd1\x82\xd0\xb5\xd0\xbd\xd1\x82:")),
		.part = {{"user", " \xd0\x9f\xd0\xbe\xd0\xbb\xd1\x8c\xd0\xb7\xd0\xbe\xd0\xb2\xd0\xb0\xd1\x82"
			  "\xd0\xb5\xd0\xbb\xd1\x8c: ", "\n\n"},
			 {"assistant", " \xd0\x90\xd1\x81\xd1\x81\xd0\xb8\xd1\x81\xd1\x82\xd0\xb5\xd0\xbd\xd1\x82: ",
			  "\n\n"}},
		.gen = " \xd0\x90\xd1\x81\xd1\x81\xd0\xb8\xd1\x81\xd1\x82\xd0\xb5\xd0\xbd\xd1\x82:[SEP]"},
	[CHAT_BAILING] = {"bailing", 0, NEED(ANY("<role>ASSISTANT</role>"), ANY("'HUMAN'")),
		.part = {{"user", "<role>HUMAN</role>", ""}, {"*", "<role>" RU "</role>", ""}},
		.gen = "<role>ASSISTANT</role>"},
	[CHAT_BAILING_THINK] = {"bailing-think", 0,
		NEED(ANY("<role>ASSISTANT</role>"), ANY("\"HUMAN\""), ANY("<think>")),
		.part = {{"user", "<role>HUMAN</role>", ""}, {"*", "<role>" RU "</role>", ""}},
		.gen = "<role>ASSISTANT</role><think>"},
	[CHAT_BAILING2] = {"bailing2", 0,
		NEED(ANY("<role>ASSISTANT</role>"), ANY("<role>HUMAN</role>"), ANY("<|role_end|>")),
		.no_sys = "<role>SYSTEM</role>detailed thinking off<|role_end|>",
		.part = {{"user", "<role>HUMAN</role>", "<|role_end|>"},
			 {"*", "<role>" RU "</role>", "<|role_end|>"}},
		.gen = "<role>ASSISTANT</role>"},
	[CHAT_LLAMA4] = {"llama4", 0, NEED(ANY("<|header_start|>"), ANY("<|header_end|>")),
		.part = ALL_TRIM("<|header_start|>" R "<|header_end|>\n\n", "<|eot|>"),
		.gen = "<|header_start|>assistant<|header_end|>\n\n"},
	[CHAT_DOTS1] = {"dots1", 0, NEED(ANY("<|endofuserprompt|>")),
		.part = {{"system", "<|system|>", "<|endofsystem|>"},
			 {"user", "<|userprompt|>", "<|endofuserprompt|>"},
			 {"*", "<|response|>", "<|endofresponse|>"}},
		.gen = "<|response|>"},
	[CHAT_HUNYUAN_MOE] = {"hunyuan-moe", 0, NEED(ANY("<|extra_0|>"), ANY("<|extra_4|>")),
		.part = {{"system", "<|startoftext|>", "<|extra_4|>"}, {"assistant", "", "<|eos|>"},
			 {"*", "<|startoftext|>", "<|extra_0|>"}}},
	[CHAT_GPT_OSS] = {"gpt-oss", 0, NEED(ANY("<|start|>"), ANY("<|channel|>")),
		.part = {{"assistant", "<|start|>assistant<|message|>", "<|return|>"},
			 {"*", "<|start|>" R "<|message|>", "<|end|>"}},
		.gen = "<|start|>assistant"},
#define HY(s) "<\xef\xbd\x9chy_" s "\xef\xbd\x9c>"
#define HY_NO(k) HY("place\xe2\x96\x81holder\xe2\x96\x81no\xe2\x96\x81" k)
	[CHAT_HUNYUAN_DENSE] = {"hunyuan-dense", 0, NEED(ANY(HY("Assistant")), ANY(HY_NO("3"))),
		.first_sys = {"", HY_NO("3")},
		.part = {{"assistant", HY("Assistant"), HY_NO("2")},
			 {"user", HY("User"), HY("Assistant")}}},
	[CHAT_KIMI_K2] = {"kimi-k2", 0, NEED(ANY("<|im_assistant|>assistant<|im_middle|>")),
		.part = {{"system", "<|im_system|>system<|im_middle|>", "<|im_end|>"},
			 {"user", "<|im_user|>user<|im_middle|>", "<|im_end|>"},
			 {"assistant", "<|im_assistant|>assistant<|im_middle|>", "<|im_end|>"},
			 {"tool", "<|im_system|>tool<|im_middle|>", "<|im_end|>"}, {"*", "", "<|im_end|>"}},
		.gen = "<|im_assistant|>assistant<|im_middle|>"},
	[CHAT_SEED_OSS] = {"seed_oss", 0, NEED(ANY("<seed:bos>")),
		.part = {{"assistant", "<seed:bos>assistant\n", "<seed:eos>", TRIM},
			 {"*", "<seed:bos>" R "\n", "<seed:eos>"}},
		.gen = "<seed:bos>assistant\n"},
	[CHAT_GROK2] = {"grok-2", 0, NEED(ANY("'Assistant: '  + message['content'] + '<|separator|>")),
		.part = {{"system", "System: ", "<|separator|>\n\n", TRIM},
			 {"user", "Human: ", "<|separator|>\n\n", TRIM},
			 {"assistant", "Assistant: ", "<|separator|>\n\n"}},
		.gen = "Assistant:"},
#define PANGU(who) "[unused9]" who "\xef\xbc\x9a" /* "[unused9]系统：" and the like */
#define XT "\xe7\xb3\xbb\xe7\xbb\x9f" /* 系统 */
	[CHAT_PANGU_EMBED] = {"pangu-embedded", 0, NEED(ANY(PANGU(XT) "[unused10]")),
		.no_sys = PANGU(XT) "[unused10]",
		.part = {{"system", PANGU(XT), "[unused10]"},
			 {"user", PANGU("\xe7\x94\xa8\xe6\x88\xb7"), "[unused10]"},             /* 用户 */
			 {"assistant", PANGU("\xe5\x8a\xa9\xe6\x89\x8b"), "[unused10]"},        /* 助手 */
			 {"tool", PANGU("\xe5\xb7\xa5\xe5\x85\xb7"), "[unused10]"},             /* 工具 */
			 {"function", PANGU("\xe6\x96\xb9\xe6\xb3\x95"), "[unused10]"}},        /* 方法 */
		.gen = PANGU("\xe5\x8a\xa9\xe6\x89\x8b")},
	[CHAT_MISTRAL_V7_TEKKEN] = {"mistral-v7-tekken",
		.part = {{"system", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"},
			 {"user", "[INST]", "[/INST]"}, {"*", "", "</s>"}}},
};

/* ---- detection, names, the entry points ---- */

static bool has(const char *s, const char *needle)
{
	size_t n;

	if (*needle == '^')
		return strncmp(s, needle + 1, strlen(needle + 1)) == 0;
	n = strlen(needle);
	for (; *s; s++)
		if (*s == *needle && strncmp(s, needle, n) == 0)
			return true;
	return false;
}

static bool row_matches(const struct chat_row *r, const char *t)
{
	if (!r->need[0].any[0])
		return false; /* chosen by name only */
	for (int c = 0; c < CHAT_NEED_MAX && r->need[c].any[0]; c++)
		if (!has(t, r->need[c].any[0]) && !(r->need[c].any[1] && has(t, r->need[c].any[1])))
			return false;
	return true;
}

enum chat_tmpl chat_detect(const char *t)
{
	enum chat_tmpl by_name;

	if (!t)
		return CHAT_UNKNOWN;
	if (chat_tmpl_parse(t, &by_name) == 0)
		return by_name;
	for (int i = 1; i < CHAT_N; i++)
		if (row_matches(&rows[i], t))
			return rows[i].name ? (enum chat_tmpl)i : rows[i].as;
	return CHAT_UNKNOWN;
}

const char *chat_tmpl_name(enum chat_tmpl t)
{
	if (t == CHAT_UNKNOWN)
		return "unknown";
	if (t == CHAT_JINJA)
		return "jinja";
	return (unsigned)t < CHAT_N && rows[t].name ? rows[t].name : "?";
}

int chat_tmpl_parse(const char *name, enum chat_tmpl *out)
{
	if (strcmp(name, "jinja") == 0) {
		*out = CHAT_JINJA;
		return 0;
	}
	for (int i = 1; i < CHAT_N; i++) {
		if (rows[i].name && strcmp(name, rows[i].name) == 0) {
			*out = (enum chat_tmpl)i;
			return 0;
		}
	}
	return -LLMK_EINVAL;
}

size_t chat_tmpl_list(char *out, size_t cap)
{
	size_t len = 0;

	for (int i = 1; i < CHAT_N; i++) {
		if (!rows[i].name)
			continue;
		len += plat_snprintf(out + (len < cap ? len : cap), len < cap ? cap - len : 0,
				     "%s%s", len ? ", " : "", rows[i].name);
	}
	len += plat_snprintf(out + (len < cap ? len : cap), len < cap ? cap - len : 0, ", jinja");
	return len;
}

/* A role is a word: llama.cpp takes any, but a newline or a marker in one
 * would be text the template did not write. */
bool chat_role_ok(const char *r)
{
	size_t n = 0;

	for (; r[n]; n++) {
		char c = r[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-') || n >= CHAT_ROLE_MAX)
			return false;
	}
	return n > 0;
}

bool chat_role_reserved(const char *r)
{
	for (size_t k = 0; k < sizeof mi_tools / sizeof mi_tools[0]; k++)
		if (is_role(r, mi_tools[k].role))
			return true;
	return false;
}

int chat_format(enum chat_tmpl t, const struct chat_msg *msgs, size_t n, bool add_assistant,
		char *out, size_t cap, size_t *n_out)
{
	size_t n_spans;

	return chat_format_spans(t, msgs, n, add_assistant, out, cap, n_out, NULL, 0, &n_spans);
}

int chat_format_spans(enum chat_tmpl t, const struct chat_msg *msgs, size_t n,
		      bool add_assistant, char *out, size_t cap, size_t *n_out,
		      struct tok_span *spans, size_t max, size_t *n_spans)
{
	struct sbuf b = {out, cap, 0, cap == 0, spans, max, 0};
	const struct chat_row *row;

	if (t <= CHAT_UNKNOWN || t >= CHAT_N || !rows[t].name)
		return -LLMK_EINVAL;
	row = &rows[t];
	for (size_t i = 0; i < n; i++)
		if (!chat_role_ok(msgs[i].role) || !msgs[i].content)
			return -LLMK_EINVAL;
	if (cap)
		out[0] = 0;
	(row->fmt ? row->fmt : fmt_parts)(&b, row, msgs, n, add_assistant);
	*n_out = b.len;
	*n_spans = b.n_spans;
	return b.full ? -LLMK_ERANGE : 0;
}
