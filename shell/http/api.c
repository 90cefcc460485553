/*
 * shell/http/api.c — the endpoints: OpenAI's /v1/chat/completions,
 * /v1/completions and /v1/models, llama-server's /health, /tokenize,
 * /detokenize and /metrics (docs/api.md). The engine is asked only through
 * llm/engine.h; errors are OpenAI error objects.
 */
#include "serve.h"

#include "../../llm/engine.h"
#include "api_format.h"

static const char JSON[] = "application/json";
/* the running request's response_format and tools (api_format.h) */
static struct api_fmt *fmt;

bool api_needs_engine(const struct http_req *req)
{
	return strcmp(req->method, "POST") == 0 &&
	       (strcmp(req->path, "/v1/chat/completions") == 0 ||
		strcmp(req->path, "/v1/completions") == 0 || strcmp(req->path, "/tokenize") == 0 ||
		strcmp(req->path, "/detokenize") == 0 ||
		strncmp(req->path, "/v1/attestation", 15) == 0);
}

static bool loaded(struct srv *s, struct engine_info *info)
{
	return s->sh->engine && engine_get_info(s->sh->engine, info) == 0;
}

static void model_id(const struct engine_info *info, char *buf, size_t cap)
{
	plat_snprintf(buf, cap, "%s", info->hp.name[0] ? info->hp.name : info->hp.arch_name);
}

static void health(struct srv *s, struct srv_conn *c)
{
	struct engine_info info;
	static const char ok[] = "{\"status\":\"ok\"}";

	if (!loaded(s, &info) || info.vocab_only) {
		srv_error(s, c, 503, "unavailable_error", "no model loaded");
		return;
	}
	srv_respond(s, c, 200, JSON, ok, sizeof ok - 1);
}

static void models(struct srv *s, struct srv_conn *c)
{
	struct engine_info info;
	char buf[512], id[80];
	struct json_out o;

	json_out_init(&o, buf, sizeof buf);
	json_out_lit(&o, "{\"object\":\"list\",\"data\":[");
	if (loaded(s, &info) && !info.vocab_only) {
		model_id(&info, id, sizeof id);
		json_out_lit(&o, "{\"id\":");
		json_out_cstr(&o, id);
		json_out_lit(&o, ",\"object\":\"model\",\"created\":0,\"owned_by\":\"llmk\"}");
	}
	json_out_lit(&o, "]}");
	srv_respond(s, c, 200, JSON, buf, o.len);
}

/* Prometheus text exposition format 0.0.4: one HELP, TYPE and sample each. */
static void metrics(struct srv *s, struct srv_conn *c)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
		bool secs;      /* kept in ns, shown in seconds */
	} rows[] = {
		{"llmk_requests_total", "counter", "HTTP requests answered",
		 offsetof(struct srv_metrics, requests), false},
		{"llmk_request_errors_total", "counter", "requests answered with an error status",
		 offsetof(struct srv_metrics, errors), false},
		{"llmk_requests_rejected_total", "counter", "requests refused with 503 (queue or slots full)",
		 offsetof(struct srv_metrics, rejected), false},
		{"llmk_connections_total", "counter", "connections accepted",
		 offsetof(struct srv_metrics, conns), false},
		{"llmk_prompt_tokens_total", "counter", "prompt tokens evaluated",
		 offsetof(struct srv_metrics, prompt_tokens), false},
		{"llmk_tokens_predicted_total", "counter", "tokens generated",
		 offsetof(struct srv_metrics, gen_tokens), false},
		{"llmk_prompt_seconds_total", "counter", "time evaluating prompts (ns / 1e9)",
		 offsetof(struct srv_metrics, prompt_ns), true},
		{"llmk_tokens_predicted_seconds_total", "counter", "time generating (ns / 1e9)",
		 offsetof(struct srv_metrics, gen_ns), true},
	};
	char buf[2048];
	size_t n = 0;

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		uint64_t v = *(const uint64_t *)((const char *)&s->m + rows[i].off);
		n += (size_t)plat_snprintf(buf + n, sizeof buf - n, "# HELP %s %s\n# TYPE %s %s\n",
					   rows[i].name, rows[i].help, rows[i].name, rows[i].type);
		if (rows[i].secs)
			n += (size_t)plat_snprintf(buf + n, sizeof buf - n, "%s %.6f\n", rows[i].name,
						   (double)v / 1e9);
		else
			n += (size_t)plat_snprintf(buf + n, sizeof buf - n, "%s %llu\n", rows[i].name,
						   (unsigned long long)v);
	}
	n += (size_t)plat_snprintf(buf + n, sizeof buf - n,
				   "# HELP llmk_requests_deferred requests waiting for the engine\n"
				   "# TYPE llmk_requests_deferred gauge\nllmk_requests_deferred %d\n",
				   s->n_queued);
	srv_respond(s, c, 200, "text/plain; version=0.0.4", buf, n);
}

/* The body as JSON into s->nodes: false after answering 400. */
static bool body_json(struct srv *s, struct srv_conn *c, struct json_doc *d)
{
	char err[128], msg[192];
	int r;

	*d = (struct json_doc){s->nodes, SRV_NODES, 0, s->store, sizeof s->store, 0, 32, SRV_BODY_MAX};
	r = json_parse(d, c->req.body, c->req.body_len, err, sizeof err);
	if (r == 0 && d->nodes[0].type == JSON_OBJECT)
		return true;
	plat_snprintf(msg, sizeof msg, "the body is not a JSON object: %s",
		      r ? err : "another value");
	srv_error(s, c, 400, "invalid_request_error", msg);
	return false;
}

static bool bad(struct srv *s, struct srv_conn *c, const char *msg)
{
	srv_error(s, c, 400, "invalid_request_error", msg);
	return false;
}

/* A number member in [lo, hi], or absent (dflt kept). */
static bool num(struct srv *s, struct srv_conn *c, const struct json_doc *d, const char *key,
		double lo, double hi, double *v)
{
	const struct json_node *n = json_get(d, &d->nodes[0], key);
	char msg[128];

	if (!n || n->type == JSON_NULL)
		return true;
	if (n->type != JSON_NUMBER || n->num < lo || n->num > hi) {
		plat_snprintf(msg, sizeof msg, "'%s' must be a number in [%g, %g]", key, lo, hi);
		return bad(s, c, msg);
	}
	*v = n->num;
	return true;
}

/* OpenAI's sampling and length parameters into g. */
static bool gen_params(struct srv *s, struct srv_conn *c, const struct json_doc *d,
		       const struct engine_info *info, struct engine_gen *g, bool *stream)
{
	const struct json_node *root = &d->nodes[0], *n;
	double v;

	v = g->samp.temp;
	if (!num(s, c, d, "temperature", 0, 2, &v))
		return false;
	g->samp.temp = (float)v;
	v = g->samp.top_p;
	if (!num(s, c, d, "top_p", 0, 1, &v))
		return false;
	g->samp.top_p = (float)v;
	v = -1;
	if (!num(s, c, d, "max_tokens", 1, ENGINE_MAX_CTX, &v) ||
	    !num(s, c, d, "max_completion_tokens", 1, ENGINE_MAX_CTX, &v))
		return false;
	if (v >= 1)
		g->n_predict = (uint32_t)v;
	n = json_get(d, root, "seed");
	if (n && n->type != JSON_NULL) {
		if (n->type != JSON_NUMBER || !n->is_int || n->i < 0)
			return bad(s, c, "'seed' must be a non-negative integer");
		g->samp.seed = (uint64_t)n->i;
	}
	v = 1;
	if (!num(s, c, d, "n", 1, 1, &v))
		return false;
	n = json_get(d, root, "stream");
	*stream = n && n->type == JSON_TRUE;
	if (n && n->type != JSON_TRUE && n->type != JSON_FALSE && n->type != JSON_NULL)
		return bad(s, c, "'stream' must be a boolean");
	n = json_get(d, root, "stop");
	g->n_stops = 0;
	if (n && n->type == JSON_STRING) {
		g->stops[g->n_stops++] = n->str;
	} else if (n && n->type == JSON_ARRAY) {
		if (n->count > ENGINE_MAX_STOPS)
			return bad(s, c, "'stop' holds at most 8 strings");
		for (const struct json_node *x = json_first(d, n); x; x = json_next(d, x)) {
			if (x->type != JSON_STRING || x->len == 0)
				return bad(s, c, "'stop' must be a string or an array of non-empty strings");
			g->stops[g->n_stops++] = x->str;
		}
	} else if (n && n->type != JSON_NULL) {
		return bad(s, c, "'stop' must be a string or an array of strings");
	}
	n = json_get(d, root, "logit_bias");
	if (n && n->type == JSON_OBJECT) {
		if (n->count > SAMPLE_MAX_BIAS)
			return bad(s, c, "'logit_bias' holds at most 16 tokens");
		g->samp.n_bias = 0;
		for (const struct json_node *x = json_first(d, n); x; x = json_next(d, x)) {
			uint64_t id;
			if (shell_parse_u64(x->key, &id) || id >= info->n_vocab)
				return bad(s, c, "'logit_bias' keys must be token ids of the model");
			if (x->type != JSON_NUMBER || x->num < -100 || x->num > 100)
				return bad(s, c, "'logit_bias' values must be numbers in [-100, 100]");
			/* OpenAI: -100 bans the token */
			g->samp.bias[g->samp.n_bias].id = (uint32_t)id;
			g->samp.bias[g->samp.n_bias++].bias = x->num <= -100 ? -1.0f / 0.0f : (float)x->num;
		}
	} else if (n && n->type != JSON_NULL) {
		return bad(s, c, "'logit_bias' must be an object");
	}
	return true;
}

/* ---- generation: streamed as server-sent events, or one response ---- */

static struct srv_conn *running(struct srv *s)
{
	return &s->c[s->running];
}

/* One SSE event "data: <json>\n\n" as one chunk of the chunked body. */
static void sse(struct srv *s, const char *data, size_t n)
{
	struct srv_conn *c = running(s);
	char head[24];
	int k = plat_snprintf(head, sizeof head, "%zx\r\ndata: ", n + 8);

	if (srv_send(s, c, head, (size_t)k) && srv_send(s, c, data, n))
		srv_send(s, c, "\n\n\r\n", 4);
}

static void sse_head(struct srv *s)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
		"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
	struct srv_conn *c = running(s);

	if (s->head_sent)
		return;
	s->head_sent = true;
	srv_send(s, c, head, sizeof head - 1);
	srv_send(s, c, c->req.keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n",
		 c->req.keep_alive ? 26 : 21);
}

/* The start of a chunk object up to its choices' first field. */
static void chunk_open(struct srv *s, struct json_out *o, bool whole)
{
	json_out_lit(o, "{\"id\":");
	json_out_cstr(o, s->id);
	json_out_lit(o, ",\"object\":");
	json_out_cstr(o, !s->chat ? "text_completion" : whole ? "chat.completion" : "chat.completion.chunk");
	/* no wall clock in the machine: created is 0 */
	json_out_lit(o, ",\"created\":0,\"model\":");
	json_out_cstr(o, s->model);
	json_out_lit(o, ",\"choices\":[{\"index\":0,");
}

static void delta(struct srv *s, const char *text, size_t n, const char *finish)
{
	char buf[4096 + 512];
	struct json_out o;

	json_out_init(&o, buf, sizeof buf);
	chunk_open(s, &o, false);
	if (s->chat) {
		json_out_lit(&o, "\"delta\":");
		if (finish) {
			json_out_lit(&o, "{}");
		} else {
			json_out_lit(&o, "{\"content\":");
			json_out_str(&o, text, n);
			json_out_lit(&o, "}");
		}
	} else {
		json_out_lit(&o, "\"text\":");
		json_out_str(&o, text, n);
		json_out_lit(&o, ",\"logprobs\":null");
	}
	json_out_lit(&o, ",\"finish_reason\":");
	if (finish)
		json_out_cstr(&o, finish);
	else
		json_out_lit(&o, "null");
	json_out_lit(&o, "}]}");
	sse(s, buf, o.len);
}

static void emit(void *ctx, const char *p, size_t n)
{
	struct srv *s = ctx;

	if (n > sizeof s->gen - s->gen_len)
		n = sizeof s->gen - s->gen_len;
	memcpy(s->gen + s->gen_len, p, n);
	s->gen_len += n;
	if (!s->streaming)
		return;
	size_t whole = json_utf8_whole(s->gen + s->sent, s->gen_len - s->sent);
	if (!s->head_sent) {
		sse_head(s);
		if (s->chat) {
			char buf[512];
			struct json_out o;
			json_out_init(&o, buf, sizeof buf);
			chunk_open(s, &o, false);
			json_out_lit(&o, "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}");
			sse(s, buf, o.len);
		}
	}
	for (size_t off = 0; off < whole;) {
		size_t k = json_utf8_whole(s->gen + s->sent + off, whole - off > 1024 ? 1024 : whole - off);
		if (k == 0)
			k = whole - off;
		delta(s, s->gen + s->sent + off, k, NULL);
		off += k;
	}
	s->sent += whole;
}

static bool cancel(void *ctx)
{
	struct srv *s = ctx;

	srv_pump(s);
	if (shell_poll_cancel(s->sh))
		s->stop = true;
	return s->stop || running(s)->gone;
}

static const char *finish_reason(const char *stop)
{
	return stop && (strcmp(stop, "limit") == 0 || strcmp(stop, "context") == 0) ? "length" : "stop";
}

/* A refused response_format, tools or message: OpenAI's 400 naming the param. */
static void param_error(struct srv *s, struct srv_conn *c, const struct api_fmt *f)
{
	char buf[512];
	struct json_out o;

	json_out_init(&o, buf, sizeof buf);
	json_out_lit(&o, "{\"error\":{\"message\":");
	json_out_cstr(&o, f->err);
	json_out_lit(&o, ",\"type\":\"invalid_request_error\",\"param\":");
	json_out_cstr(&o, f->param);
	json_out_lit(&o, ",\"code\":400}}");
	srv_respond(s, c, 400, JSON, buf, o.len);
}

/* A reply with tools, streamed once parsed: the role, its content, each
 * call whole (index, id, type, name, arguments), the finish. */
static void tools_sse(struct srv *s, struct srv_conn *c, int r, const char *err, const char *fin)
{
	char buf[4096 + 512];
	struct json_out o;

	sse_head(s);
	json_out_init(&o, buf, sizeof buf);
	chunk_open(s, &o, false);
	json_out_lit(&o, "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}");
	sse(s, buf, o.len);
	if (fmt->content_len)
		for (size_t off = 0; off < fmt->content_len;) {
			size_t k = json_utf8_whole(s->gen + off, fmt->content_len - off > 1024 ?
						   1024 : fmt->content_len - off);
			if (k == 0)
				k = fmt->content_len - off;
			delta(s, s->gen + off, k, NULL);
			off += k;
		}
	for (size_t i = 0; i < fmt->n_calls; i++) {
		const struct api_call *k = &fmt->calls[i];
		json_out_init(&o, s->out, sizeof s->out);
		chunk_open(s, &o, false);
		json_out_lit(&o, "\"delta\":{\"tool_calls\":[{\"index\":");
		json_out_i64(&o, (int64_t)i);
		json_out_lit(&o, ",\"id\":");
		json_out_cstr(&o, k->id);
		json_out_lit(&o, ",\"type\":\"function\",\"function\":{\"name\":");
		json_out_cstr(&o, k->name);
		json_out_lit(&o, ",\"arguments\":");
		json_out_str(&o, fmt->calls_text + k->args, k->args_len);
		json_out_lit(&o, "}}]},\"finish_reason\":null}]}");
		sse(s, s->out, o.len);
	}
	if (r) {
		json_out_init(&o, buf, sizeof buf);
		json_out_lit(&o, "{\"error\":{\"message\":");
		json_out_cstr(&o, err);
		json_out_lit(&o, ",\"type\":\"server_error\",\"param\":null,\"code\":500}}");
		sse(s, buf, o.len);
	} else {
		delta(s, "", 0, fin);
	}
	sse(s, "[DONE]", 6);
	srv_send(s, c, "0\r\n\r\n", 5);
	s->m.requests++;
}

/* Run prompt (chat: msgs[0..n)); answer c with the completion (stream or whole). */
static void complete(struct srv *s, struct srv_conn *c, const char *prompt,
		     const struct chat_msg *msgs, size_t n, struct engine_gen *g)
{
	struct engine_stats st;
	struct json_out o;
	char err[256];
	int r;

	g->emit = emit;
	g->cancel = cancel;
	g->ctx = s;
	s->gen_len = s->sent = 0;
	s->head_sent = false;
	plat_snprintf(s->id, sizeof s->id, "%s-%llu", s->chat ? "chatcmpl" : "cmpl",
		      (unsigned long long)s->m.requests + 1);
	if (s->chat)
		r = engine_chat_messages(s->sh->engine, msgs, n, g, err, sizeof err);
	else
		r = engine_infer(s->sh->engine, prompt, g, err, sizeof err);
	engine_get_stats(s->sh->engine, &st);
	s->m.prompt_tokens += st.run.n_prompt;
	s->m.gen_tokens += st.run.n_gen;
	s->m.prompt_ns += st.run.prompt_ns;
	s->m.gen_ns += st.run.gen_ns;
	if (r && !s->head_sent) {
		bool theirs = r == -LLMK_ERANGE || r == -LLMK_EINVAL; /* too long, a bad role */
		srv_error(s, c, theirs ? 400 : 500, theirs ? "invalid_request_error" : "server_error", err);
		return;
	}
	const char *fin = finish_reason(st.run.stop);
	if (fmt->tools_on) {
		api_fmt_reply(fmt, s->gen, s->gen_len, s->id + 9);
		if (fmt->n_calls)
			fin = "tool_calls";
		if (fmt->tools_stream) {
			tools_sse(s, c, r, err, fin);
			return;
		}
	}
	if (s->streaming) {
		emit(s, "", 0); /* the head, when nothing was generated */
		if (s->gen_len > s->sent)
			delta(s, s->gen + s->sent, s->gen_len - s->sent, NULL);
		if (r) {
			char buf[512];
			json_out_init(&o, buf, sizeof buf);
			json_out_lit(&o, "{\"error\":{\"message\":");
			json_out_cstr(&o, err);
			json_out_lit(&o, ",\"type\":\"server_error\",\"param\":null,\"code\":500}}");
			sse(s, buf, o.len);
		} else {
			delta(s, "", 0, fin);
		}
		sse(s, "[DONE]", 6);
		srv_send(s, c, "0\r\n\r\n", 5);
		s->m.requests++;
		return;
	}
	uint32_t n_prompt = st.run.n_prompt + st.run.n_reused;
	json_out_init(&o, s->out, sizeof s->out);
	chunk_open(s, &o, true);
	if (s->chat) {
		json_out_lit(&o, "\"message\":{\"role\":\"assistant\"");
		api_fmt_message(fmt, &o, s->gen, s->gen_len);
		json_out_lit(&o, "}");
	} else {
		json_out_lit(&o, "\"text\":");
		json_out_str(&o, s->gen, s->gen_len);
		json_out_lit(&o, ",\"logprobs\":null");
	}
	json_out_lit(&o, ",\"finish_reason\":");
	json_out_cstr(&o, fin);
	json_out_lit(&o, "}],\"usage\":{\"prompt_tokens\":");
	json_out_i64(&o, n_prompt);
	json_out_lit(&o, ",\"completion_tokens\":");
	json_out_i64(&o, st.run.n_gen);
	json_out_lit(&o, ",\"total_tokens\":");
	json_out_i64(&o, n_prompt + st.run.n_gen);
	json_out_lit(&o, "}}");
	srv_respond(s, c, 200, JSON, s->out, o.len);
}

static void generate(struct srv *s, struct srv_conn *c, bool chat)
{
	struct engine *e = s->sh->engine;
	struct engine_info info;
	struct engine_gen g;
	struct json_doc d;
	const struct json_node *prompt;
	bool stream;

	if (!loaded(s, &info) || info.vocab_only) {
		srv_error(s, c, 503, "unavailable_error", "no model loaded");
		return;
	}
	if (!body_json(s, c, &d))
		return;
	engine_gen_init(e, &g);
	if (!gen_params(s, c, &d, &info, &g, &stream))
		return;
	model_id(&info, s->model, sizeof s->model);
	s->chat = chat;
	s->streaming = stream;
	if (!(fmt = plat_alloc(sizeof *fmt, 64))) {
		srv_error(s, c, 503, "server_error", "no memory for the request");
		return;
	}
	if (api_fmt_request(fmt, &d, chat, info.tmpl, &e->mem) == 0) {
		g.grammar = fmt->grammar;
		/* a reply with tools is parsed whole, then streamed (tools_sse) */
		fmt->tools_stream = fmt->tools_on && stream;
		s->streaming = stream && !fmt->tools_on;
		prompt = json_get(&d, &d.nodes[0], "prompt");
		if (chat)
			complete(s, c, NULL, fmt->msgs, fmt->n_msgs, &g);
		else if (!prompt || prompt->type != JSON_STRING)
			bad(s, c, "'prompt' must be a string");
		else
			complete(s, c, prompt->str, NULL, 0, &g);
	} else {
		param_error(s, c, fmt);
	}
	llm_mem_zeroize(fmt, sizeof *fmt); /* prompts are secrets */
	plat_free(fmt, sizeof *fmt);
	fmt = NULL;
}

static void tokenize(struct srv *s, struct srv_conn *c)
{
	const struct tok *t = s->sh->engine ? engine_tok(s->sh->engine) : NULL;
	const struct json_node *content, *add;
	struct json_doc d;
	struct json_out o;
	size_t n;

	if (!t) {
		srv_error(s, c, 503, "unavailable_error", "no model loaded");
		return;
	}
	if (!body_json(s, c, &d))
		return;
	content = json_get(&d, &d.nodes[0], "content");
	add = json_get(&d, &d.nodes[0], "add_special");
	if (!content || content->type != JSON_STRING) {
		bad(s, c, "'content' must be a string");
		return;
	}
	/* llama-server: add_special off unless asked, special-token text parsed */
	if (tok_encode(t, content->str, content->len, add && add->type == JSON_TRUE, true, s->ids,
		       SRV_IDS, &n)) {
		bad(s, c, "the text has too many tokens");
		return;
	}
	json_out_init(&o, s->out, sizeof s->out);
	json_out_lit(&o, "{\"tokens\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			json_out_lit(&o, ",");
		json_out_i64(&o, s->ids[i]);
	}
	json_out_lit(&o, "]}");
	srv_respond(s, c, 200, JSON, s->out, o.len);
}

static void detokenize(struct srv *s, struct srv_conn *c)
{
	const struct tok *t = s->sh->engine ? engine_tok(s->sh->engine) : NULL;
	const struct json_node *tokens;
	struct json_doc d;
	struct json_out o;
	size_t n = 0, len;

	if (!t) {
		srv_error(s, c, 503, "unavailable_error", "no model loaded");
		return;
	}
	if (!body_json(s, c, &d))
		return;
	tokens = json_get(&d, &d.nodes[0], "tokens");
	if (!tokens || tokens->type != JSON_ARRAY || tokens->count > SRV_IDS) {
		bad(s, c, "'tokens' must be an array of at most 8192 token ids");
		return;
	}
	for (const struct json_node *x = json_first(&d, tokens); x; x = json_next(&d, x)) {
		if (x->type != JSON_NUMBER || !x->is_int || x->i < 0 || x->i > INT32_MAX) {
			bad(s, c, "'tokens' must hold token ids");
			return;
		}
		s->ids[n++] = (int32_t)x->i;
	}
	if (tok_decode(t, s->ids, n, false, true, s->gen, sizeof s->gen, &len)) {
		bad(s, c, "a token id is outside the vocabulary");
		return;
	}
	json_out_init(&o, s->out, sizeof s->out);
	json_out_lit(&o, "{\"content\":");
	json_out_str(&o, s->gen, len);
	json_out_lit(&o, "}");
	srv_respond(s, c, 200, JSON, s->out, o.len);
}

void api_handle(struct srv *s, struct srv_conn *c)
{
	static const struct {
		const char *method, *path;
		void (*fn)(struct srv *s, struct srv_conn *c);
	} routes[] = {
		{"GET", "/health", health},
		{"GET", "/v1/models", models},
		{"GET", "/metrics", metrics},
		{"POST", "/tokenize", tokenize},
		{"POST", "/detokenize", detokenize},
		{"POST", "/v1/attestation", api_attestation},
		{"POST", "/v1/attestation/activate", api_attestation_activate},
	};
	bool path_known = false;

	if (strcmp(c->req.path, "/v1/chat/completions") == 0 || strcmp(c->req.path, "/v1/completions") == 0) {
		if (strcmp(c->req.method, "POST") == 0) {
			generate(s, c, c->req.path[4] == 'c' && c->req.path[5] == 'h');
			return;
		}
		path_known = true;
	}
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		if (strcmp(c->req.path, routes[i].path) != 0 ||
		    (!c->tls && routes[i].fn == api_attestation) ||
		    (!c->tls && routes[i].fn == api_attestation_activate))
			continue; /* attestation: TLS only; on plain HTTP an unknown path */
		if (strcmp(c->req.method, routes[i].method) == 0) {
			routes[i].fn(s, c);
			return;
		}
		path_known = true;
	}
	if (path_known)
		srv_error(s, c, 405, "invalid_request_error", "method not allowed");
	else
		srv_error(s, c, 404, "invalid_request_error", "no such endpoint");
}
