/*
 * llm/chat.c — chat template detection and rendering (chat.h). The formats
 * are those the models' own tokenizer_config.json templates produce
 * (checked against llama.cpp's tests/test-chat-template.cpp outputs).
 */
#include "chat.h"

static const char *const tmpl_names[CHAT_N] = {
	"unknown", "chatml", "llama2", "llama3", "mistral", "zephyr", "phi3", "gemma",
};

static bool has(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s; s++)
		if (*s == *needle && strncmp(s, needle, n) == 0)
			return true;
	return false;
}

/* Order matters: phi3 also contains <|user|>, llama2 also [INST]. */
enum chat_tmpl chat_detect(const char *t)
{
	if (!t)
		return CHAT_UNKNOWN;
	if (has(t, "<|im_start|>"))
		return CHAT_CHATML;
	if (has(t, "[INST]"))
		return has(t, "<<SYS>>") ? CHAT_LLAMA2 : CHAT_MISTRAL;
	if (has(t, "<|start_header_id|>") && has(t, "<|end_header_id|>"))
		return CHAT_LLAMA3;
	if (has(t, "<|assistant|>") && has(t, "<|end|>"))
		return CHAT_PHI3;
	if (has(t, "<|user|>"))
		return CHAT_ZEPHYR;
	if (has(t, "<start_of_turn>"))
		return CHAT_GEMMA;
	return CHAT_UNKNOWN;
}

const char *chat_tmpl_name(enum chat_tmpl t)
{
	return (unsigned)t < CHAT_N ? tmpl_names[t] : "?";
}

int chat_tmpl_parse(const char *name, enum chat_tmpl *out)
{
	for (int i = 1; i < CHAT_N; i++) {
		if (strcmp(name, tmpl_names[i]) == 0) {
			*out = (enum chat_tmpl)i;
			return 0;
		}
	}
	return -LLMK_EINVAL;
}

/* A bounded string builder: overflow is remembered, not written. The
 * messages' contents are recorded as spans when spans is not NULL. */
struct sbuf {
	char *p;
	size_t cap, len;
	bool full;
	struct tok_span *spans;
	size_t max_spans, n_spans;
};

static void put(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n >= b->cap) {
		b->full = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

/* A message's own text (not the template's): where it lands is a span. */
static void put_content(struct sbuf *b, const char *s)
{
	size_t at = b->len;

	put(b, s);
	if (!b->spans || b->full || b->len == at)
		return;
	if (b->n_spans == b->max_spans)
		b->full = true; /* a content without its span would be parsed: refuse */
	else
		b->spans[b->n_spans++] = (struct tok_span){at, b->len - at};
}

static bool is_role(const char *r, const char *want)
{
	return strcmp(r, want) == 0;
}

static int fmt_generic(struct sbuf *b, enum chat_tmpl t, const struct chat_msg *m, size_t n,
		       bool add_ass)
{
	for (size_t i = 0; i < n; i++) {
		const char *role = m[i].role;
		switch (t) {
		case CHAT_CHATML:
			put(b, "<|im_start|>"); put(b, role); put(b, "\n");
			put_content(b, m[i].content); put(b, "<|im_end|>\n");
			break;
		case CHAT_LLAMA3:
			put(b, "<|start_header_id|>"); put(b, role); put(b, "<|end_header_id|>\n\n");
			put_content(b, m[i].content); put(b, "<|eot_id|>");
			break;
		case CHAT_ZEPHYR:
			put(b, "<|"); put(b, role); put(b, "|>\n");
			put_content(b, m[i].content); put(b, "</s>\n");
			break;
		case CHAT_PHI3:
			put(b, "<|"); put(b, role); put(b, "|>\n");
			put_content(b, m[i].content); put(b, "<|end|>\n");
			break;
		default:
			return -LLMK_EINVAL;
		}
	}
	if (!add_ass)
		return 0;
	if (t == CHAT_CHATML)
		put(b, "<|im_start|>assistant\n");
	else if (t == CHAT_LLAMA3)
		put(b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
	else
		put(b, "<|assistant|>\n");
	return 0;
}

/*
 * [INST] formats. llama2: the system message sits in a <<SYS>> block inside
 * the first [INST]; later turns start with "<s>" text (BOS between turns).
 * mistral: no system block, the system text leads the first user turn.
 * The opening [INST] of the reply is implicit: add_assistant adds nothing.
 */
static int fmt_inst(struct sbuf *b, bool llama2, const struct chat_msg *m, size_t n)
{
	bool in_turn = true;

	put(b, "[INST] ");
	for (size_t i = 0; i < n; i++) {
		if (!in_turn) {
			put(b, llama2 ? "<s>[INST] " : "[INST] ");
			in_turn = true;
		}
		if (is_role(m[i].role, "system")) {
			if (llama2) {
				put(b, "<<SYS>>\n"); put_content(b, m[i].content); put(b, "\n<</SYS>>\n\n");
			} else {
				put_content(b, m[i].content); put(b, "\n\n");
			}
		} else if (is_role(m[i].role, "user")) {
			put_content(b, m[i].content); put(b, " [/INST]");
		} else {
			/* Meta's template: ' ' + content + ' ' + eos_token */
			put(b, llama2 ? " " : ""); put_content(b, m[i].content); put(b, llama2 ? " </s>" : "</s>");
			in_turn = false;
		}
	}
	return 0;
}

/* gemma: no system role; its text leads the first user turn. */
static int fmt_gemma(struct sbuf *b, const struct chat_msg *m, size_t n, bool add_ass)
{
	const char *sys = NULL;

	for (size_t i = 0; i < n; i++) {
		if (is_role(m[i].role, "system")) {
			sys = m[i].content;
			continue;
		}
		put(b, "<start_of_turn>");
		put(b, is_role(m[i].role, "assistant") ? "model" : m[i].role);
		put(b, "\n");
		if (sys && is_role(m[i].role, "user")) {
			put_content(b, sys); put(b, "\n\n");
			sys = NULL;
		}
		put_content(b, m[i].content); put(b, "<end_of_turn>\n");
	}
	if (add_ass)
		put(b, "<start_of_turn>model\n");
	return 0;
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
	int e;

	for (size_t i = 0; i < n; i++)
		if (!is_role(msgs[i].role, "system") && !is_role(msgs[i].role, "user") &&
		    !is_role(msgs[i].role, "assistant"))
			return -LLMK_EINVAL;
	if (cap)
		out[0] = 0;
	if (t == CHAT_LLAMA2 || t == CHAT_MISTRAL)
		e = fmt_inst(&b, t == CHAT_LLAMA2, msgs, n);
	else if (t == CHAT_GEMMA)
		e = fmt_gemma(&b, msgs, n, add_assistant);
	else
		e = fmt_generic(&b, t, msgs, n, add_assistant);
	if (e)
		return e;
	*n_out = b.len;
	*n_spans = b.n_spans;
	return b.full ? -LLMK_ERANGE : 0;
}
