/*
 * llm/engine_chat.c — chat (engine.h): the conversation's messages, the
 * prompt the model's template makes of them with the messages kept text,
 * and the context shift that drops the oldest turns when it grows past the
 * context.
 */
#include "engine_int.h"
#include "jinja.h"

static const char *chat_keep(struct engine *e, const char *s, size_t n)
{
	char *p;

	if (e->chat_len + n + 1 > e->chat_cap)
		return NULL;
	p = e->chat_buf + e->chat_len;
	memcpy(p, s, n);
	p[n] = 0;
	e->chat_len += n + 1;
	return p;
}

int engine_chat_system(struct engine *e, const char *text, char *err, size_t errlen)
{
	const char *c;
	int r;

	if ((r = engine_need_model(e, err, errlen)))
		return r;
	if (e->n_msgs) {
		plat_snprintf(err, errlen, "a system message must come first (use 'chat --reset')");
		return -LLMK_EINVAL;
	}
	if (!(c = chat_keep(e, text, strlen(text)))) {
		plat_snprintf(err, errlen, "conversation is full (use 'chat --reset')");
		return -LLMK_ERANGE;
	}
	e->msgs[0].role = "system";
	e->msgs[0].content = c;
	e->n_msgs = 1;
	return 0;
}

void engine_chat_reset(struct engine *e)
{
	engine_forget(e);
}

/* The first message a context shift may drop: the system message stays. */
static uint32_t chat_first(const struct engine *e)
{
	return e->n_msgs && !strcmp(e->msgs[0].role, "system") ? 1 : 0;
}

/*
 * Context shift at a turn's start (llama.cpp's, with n_keep the system
 * message): of the turns in msgs[first, end) (a user message and what
 * follows it), the older half, at least one, leaves; msgs[end, total) (the
 * message being added) stay. Their text leaves chat_buf, which is compacted
 * (the texts lie there in order) and its freed tail zeroized. Returns the
 * messages dropped; 0 when no turn is left to drop.
 */
static uint32_t chat_shift(struct engine *e, uint32_t end, uint32_t total)
{
	uint32_t first = chat_first(e), turns = 0, keep = end, k;
	const char *to;
	size_t delta;
	char *from;

	for (uint32_t i = first; i < end; i++)
		turns += !strcmp(e->msgs[i].role, "user");
	if (!turns)
		return 0;
	/* keep from the user message that starts turn (turns + 1) / 2 on, or end */
	for (uint32_t i = first, t = 0; i < end; i++)
		if (!strcmp(e->msgs[i].role, "user") && t++ == (turns + 1) / 2) {
			keep = i;
			break;
		}
	k = keep - first;
	from = (char *)e->msgs[first].content;
	to = keep < total ? e->msgs[keep].content : e->chat_buf + e->chat_len;
	delta = (size_t)(to - from);
	memmove(from, to, (size_t)(e->chat_buf + e->chat_len - to));
	for (uint32_t i = keep; i < total; i++) {
		e->msgs[i - k].role = e->msgs[i].role;
		e->msgs[i - k].content = e->msgs[i].content - delta;
	}
	e->chat_len -= delta;
	llm_mem_zeroize(e->chat_buf + e->chat_len, delta);
	llm_mem_zeroize(&e->msgs[total - k], k * sizeof e->msgs[0]);
	e->n_msgs -= k;
	return k;
}

const char *engine_tmpl_source(const struct engine_info *info)
{
	if (info->tmpl == CHAT_JINJA && info->tmpl_in_file)
		return "the model's own template";
	if (info->tmpl_detected)
		return "from tokenizer.chat_template";
	if (info->tmpl_configured)
		return "configured";
	if (!info->tmpl_in_file)
		return "the model has no tokenizer.chat_template: llama.cpp's default";
	return "tokenizer.chat_template is none llmk knows";
}

/* A run's template: a format, and for CHAT_JINJA the text it runs (and
 * the tools and messages' extra members it is given). */
struct tmpl_use {
	enum chat_tmpl t;
	const char *src;
	size_t len;
	const char *tools;
	const char *const *extra;
};

const char *engine_tmpl_text(const struct engine *e, size_t *len)
{
	*len = e->loaded && e->tmpl_src ? e->tmpl_len : 0;
	return e->loaded ? e->tmpl_src : NULL;
}

/* This run's template (text: --chat-template-file's, run as jinja), or an
 * error that says how to choose one. */
static int chat_tmpl_use(const struct engine *e, enum chat_tmpl want, const char *text,
			 struct tmpl_use *u, char *err, size_t errlen)
{
	if (text) {
		*u = (struct tmpl_use){CHAT_JINJA, text, strlen(text), NULL, NULL};
		return 0;
	}
	u->t = want != CHAT_UNKNOWN ? want : e->tmpl;
	u->tools = NULL;
	u->extra = NULL;
	u->src = e->loaded ? e->tmpl_src : NULL;
	u->len = e->tmpl_len;
	if (u->t == CHAT_JINJA && !u->src) {
		plat_snprintf(err, errlen, "--chat-template jinja: %s", e->loaded ? "the model has "
			      "no tokenizer.chat_template to run" : "no model loaded (use 'load N')");
		return -LLMK_EINVAL;
	}
	if (u->t != CHAT_UNKNOWN)
		return 0;
	plat_snprintf(err, errlen, "the model's chat template (tokenizer.chat_template) is none "
		      "llmk knows: choose one with --chat-template NAME or 'config chat-template "
		      "NAME' (a wrong NAME lists them)");
	return -LLMK_EINVAL;
}

/* The vocabulary's text of a control token ("" if none), for the template. */
static void token_text(const struct engine *e, int32_t id, char *buf, size_t cap)
{
	int n = id == TOK_NULL ? 0 : tok_piece(&e->tok, id, TOK_PIECE_SPECIAL, buf, cap - 1);
	buf[n > 0 ? n : 0] = 0;
}

/* The model's own template run by llm/jinja.c, as llama.cpp --jinja
 * (common_chat_templates_apply): bos_token and eos_token are the
 * vocabulary's texts, and a leading BOS text goes when the tokenizer adds
 * BOS itself. The arena lives for this render only (zeroed after: it held
 * the conversation). */
static int fmt_jinja(struct engine *e, const struct tmpl_use *u, const struct chat_msg *msgs,
		     size_t n, char *out,
		     size_t cap, size_t *len, struct tok_span *spans, size_t max, size_t *n_spans,
		     char *err, size_t errlen)
{
	char bos[64], eos[64];
	/* the messages' text lives in the arena a few times over (a copy, its
	 * taint map, the strings the template builds, the output) */
	size_t size = JINJA_ARENA_DEFAULT + 8 * cap;
	void *arena = plat_alloc(size, 64);
	int r;

	if (!arena) {
		plat_snprintf(err, errlen, "no memory for the chat template's %zu bytes", size);
		return -LLMK_ENOMEM;
	}
	bos[0] = eos[0] = 0;
	if (e->loaded) {
		token_text(e, e->tok.bos, bos, sizeof bos);
		token_text(e, e->tok.eos, eos, sizeof eos);
	}
	struct jinja_input in = {msgs, n, true, bos, eos, u->tools, false, NULL, u->extra, false};
	struct jinja_limits lim = {arena, size, JINJA_STEPS_DEFAULT};
	struct jinja_out o = {out, cap, 0, spans, max, 0};
	r = jinja_chat(u->src, u->len, &in, &lim, &o, err, errlen);
	llm_mem_zeroize(arena, size);
	plat_free(arena, size);
	size_t bl = strlen(bos);
	if (r == 0 && e->loaded && e->tok.add_bos && bl && o.len >= bl && memcmp(out, bos, bl) == 0) {
		memmove(out, out + bl, o.len - bl + 1);
		o.len -= bl;
		for (size_t i = 0; i < o.n_spans; i++)
			spans[i].off -= bl; /* the BOS text is the template's, no span's */
	}
	*len = o.len;
	*n_spans = o.n_spans;
	return r;
}

/* msgs rendered with t into out (and the spans of their text); err says
 * why not. */
static int chat_render(struct engine *e, const struct tmpl_use *u, const struct chat_msg *msgs,
		       size_t n, char *out, size_t cap, size_t *len, struct tok_span *spans,
		       size_t max, size_t *n_spans, char *err, size_t errlen)
{
	size_t ns;
	int r;

	if (!spans) {
		max = 0;
		n_spans = &ns;
	}
	for (size_t i = 0; i < n; i++)
		if (!chat_role_ok(msgs[i].role) || !msgs[i].content) {
			plat_snprintf(err, errlen, "a role is not a word of letters, digits, '_' "
				      "or '-' (at most %d bytes)", CHAT_ROLE_MAX);
			return -LLMK_EINVAL;
		}
	if (u->t == CHAT_JINJA)
		return fmt_jinja(e, u, msgs, n, out, cap, len, spans, max, n_spans, err, errlen);
	r = chat_format_spans(u->t, msgs, n, true, out, cap, len, spans, max, n_spans);
	if (r == -LLMK_ERANGE)
		plat_snprintf(err, errlen, "the formatted conversation is over %zu bytes", cap);
	else if (r)
		plat_snprintf(err, errlen, "the template cannot format these messages");
	return r;
}

int engine_chat_render_tools(struct engine *e, enum chat_tmpl want, const char *text,
			     const struct chat_msg *msgs, const char *const *extra, size_t n,
			     const char *tools_json, char *out, size_t cap, size_t *len,
			     char *err, size_t errlen)
{
	struct tmpl_use u;
	int r;

	if (want == CHAT_UNKNOWN && !text && (r = engine_need_model(e, err, errlen)))
		return r;
	if ((r = chat_tmpl_use(e, want, text, &u, err, errlen)))
		return r;
	u.tools = tools_json;
	u.extra = extra;
	return chat_render(e, &u, msgs, n, out, cap, len, NULL, 0, NULL, err, errlen);
}

int engine_chat_render(struct engine *e, enum chat_tmpl want, const char *text,
		       const struct chat_msg *msgs, size_t n, char *out, size_t cap, size_t *len,
		       char *err, size_t errlen)
{
	return engine_chat_render_tools(e, want, text, msgs, NULL, n, NULL, out, cap, len, err,
					errlen);
}

/* Tokens the reply gets room for: n_predict, at most half the context. */
static uint32_t reply_room(const struct engine *e, const struct engine_gen *g)
{
	return g->n_predict < e->n_ctx / 2 ? g->n_predict : e->n_ctx / 2;
}

/* The conversation with the new message (msgs[n_msgs]) rendered and
 * tokenized, older turns shifted out until it and the reply's room fit
 * (or only it does); *dropped counts the messages that left. */
static int chat_prompt(struct engine *e, const struct engine_gen *g, const struct tmpl_use *u,
		       uint32_t *n, uint32_t *dropped, char *err, size_t errlen)
{
	uint32_t room = reply_room(e, g);
	size_t len, n_spans;
	int r;

	for (;;) {
		r = chat_render(e, u, e->msgs, e->n_msgs + 1, e->fmt_buf, e->chat_cap, &len,
				e->spans, ENGINE_MAX_MSGS, &n_spans, err, errlen);
		if (r == 0)
			r = engine_tokenize(e, e->fmt_buf, len, true,
				     g->special == ENGINE_SPECIAL_PARSE ? NULL : e->spans, n_spans, n,
				     err, errlen);
		if (r == 0 && *n + room <= e->n_ctx)
			return 0;
		if (r && r != -LLMK_ERANGE)
			return r;
		uint32_t k = chat_shift(e, e->n_msgs, e->n_msgs + 1);
		if (!k && r == 0)
			return 0; /* it fits, the reply may end at the context */
		if (!k) {
			plat_snprintf(err, errlen, "the message%s does not fit the context (%u "
				      "positions)", chat_first(e) ? " with the system prompt" : "",
				      e->n_ctx);
			return -LLMK_ERANGE;
		}
		*dropped += k;
	}
}

int engine_chat(struct engine *e, const char *user, struct engine_gen *g, char *err,
		size_t errlen)
{
	size_t ulen = strlen(user);
	uint32_t n, dropped = 0, k;
	struct tmpl_use u;
	const char *c;
	char line[160];
	bool first;
	int r;

	if ((r = engine_need_model(e, err, errlen)) ||
	    (r = chat_tmpl_use(e, g->tmpl, g->tmpl_text, &u, err, errlen)))
		return r;
	first = e->n_msgs == chat_first(e);
	/* room for the message and its reply among the messages and their text */
	while (e->n_msgs + 2 > ENGINE_MAX_MSGS || e->chat_len + ulen + 1 > e->chat_cap) {
		if (!(k = chat_shift(e, e->n_msgs, e->n_msgs))) {
			plat_snprintf(err, errlen, "the message (%zu bytes) does not fit the "
				      "conversation's %zu bytes", ulen, e->chat_cap);
			return -LLMK_ERANGE;
		}
		dropped += k;
	}
	c = chat_keep(e, user, ulen);
	e->msgs[e->n_msgs].role = "user";
	e->msgs[e->n_msgs].content = c;
	r = chat_prompt(e, g, &u, &n, &dropped, err, errlen);
	if (r == 0 && first && g->notice) {
		struct engine_info info;
		engine_get_info(e, &info);
		plat_snprintf(line, sizeof line, "template %s (%s)", chat_tmpl_name(u.t),
			      g->tmpl_text ? "--chat-template-file" : u.t == g->tmpl ? "--chat-template"
			      : engine_tmpl_source(&info));
		g->notice(g->ctx, line);
	}
	if (r == 0 && g->prompt)
		g->prompt(g->ctx, e->fmt_buf, strlen(e->fmt_buf));
	if (r == 0 && dropped && g->notice) {
		plat_snprintf(line, sizeof line, "context full: the oldest %u message%s left the "
			      "conversation (%s)", dropped, dropped == 1 ? "" : "s",
			      chat_first(e) ? "the system prompt stays" : "no system prompt");
		g->notice(g->ctx, line);
	}
	if (r == 0)
		r = engine_run(e, n, g, err, errlen);
	if (r && (r != -LLMK_ECANCEL || e->run.n_gen == 0)) {
		/* the turn did not happen: its message goes */
		size_t at = (size_t)(e->msgs[e->n_msgs].content - e->chat_buf);
		llm_mem_zeroize(e->chat_buf + at, e->chat_len - at);
		e->chat_len = at;
		return r;
	}
	e->n_msgs++;
	/* the reply's text: older turns make room for it if need be */
	while (!(c = chat_keep(e, e->text, e->text_len)) && chat_shift(e, e->n_msgs - 1, e->n_msgs))
		;
	if (c) {
		e->msgs[e->n_msgs].role = "assistant";
		e->msgs[e->n_msgs].content = c;
		e->n_msgs++;
	}
	return r;
}

int engine_chat_tokens(struct engine *e, const struct chat_msg *msgs, size_t n,
		       const struct engine_gen *g, uint32_t *n_tok, char *err, size_t errlen)
{
	size_t len, n_spans;
	struct tmpl_use u;
	int r;

	if ((r = engine_need_model(e, err, errlen)) ||
	    (r = chat_tmpl_use(e, g->tmpl, g->tmpl_text, &u, err, errlen)))
		return r;
	u.tools = g->tools_json;
	u.extra = g->msg_extra;
	if (n > ENGINE_MAX_MSGS) {
		plat_snprintf(err, errlen, "%zu messages (at most %d)", n, ENGINE_MAX_MSGS);
		return -LLMK_ERANGE;
	}
	r = chat_render(e, &u, msgs, n, e->fmt_buf, e->chat_cap, &len, e->spans, ENGINE_MAX_MSGS,
			&n_spans, err, errlen);
	if (r)
		return r;
	return engine_tokenize(e, e->fmt_buf, len, true,
			       g->special == ENGINE_SPECIAL_PARSE ? NULL : e->spans, n_spans, n_tok,
			       err, errlen);
}

int engine_chat_messages(struct engine *e, const struct chat_msg *msgs, size_t n,
			 struct engine_gen *g, char *err, size_t errlen)
{
	uint32_t n_tok;
	int r = engine_chat_tokens(e, msgs, n, g, &n_tok, err, errlen);

	return r ? r : engine_run(e, n_tok, g, err, errlen);
}
