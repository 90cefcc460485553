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

bool api_needs_engine(const struct http_req *req)
{
	/* (/tokenize and /detokenize need only the tokenizer: answered at once) */
	return strcmp(req->method, "POST") == 0 &&
	       (strcmp(req->path, "/v1/chat/completions") == 0 ||
		strcmp(req->path, "/v1/completions") == 0 ||
		strncmp(req->path, "/v1/attestation", 15) == 0 ||
		strcmp(req->path, "/v1/keys") == 0);
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
	char buf[4096];
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
	n += sched_metrics(s, buf + n, sizeof buf - n);
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

static void generate(struct srv *s, struct srv_conn *c, bool chat)
{
	struct engine *e = s->sh->engine;
	struct engine_info info;
	struct engine_gen g;
	struct json_doc d;
	const struct json_node *prompt;
	struct api_fmt *f;
	char model[80];
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
	model_id(&info, model, sizeof model);
	if (!(f = plat_alloc(sizeof *f, 64))) {
		srv_error(s, c, 503, "server_error", "no memory for the request");
		return;
	}
	size_t src_len;
	const char *src = engine_tmpl_text(e, &src_len);
	if (api_fmt_request(f, &d, chat, info.tmpl, src, src_len, &e->mem) == 0) {
		g.grammar = f->grammar;
		for (g.n_triggers = 0; g.n_triggers < f->n_triggers; g.n_triggers++)
			g.triggers[g.n_triggers] = f->triggers[g.n_triggers];
		/* the model's own template writes the tools and calls */
		g.tools_json = f->tools_json;
		g.msg_extra = f->jinja ? f->extra : NULL;
		/* a reply with tools is parsed whole, then streamed (sched.c) */
		f->tools_stream = f->tools_on && stream;
		prompt = json_get(&d, &d.nodes[0], "prompt");
		if (!chat && (!prompt || prompt->type != JSON_STRING))
			bad(s, c, "'prompt' must be a string");
		else if (sched_join(s, c, chat, stream && !f->tools_on, model, chat ? NULL : prompt->str,
				    chat ? f->msgs : NULL, chat ? f->n_msgs : 0, &g,
				    f->tools_on ? f : NULL) && f->tools_on)
			f = NULL; /* the request's now: its reply is parsed at the end */
	} else {
		param_error(s, c, f);
	}
	if (f) {
		llm_mem_zeroize(f, sizeof *f); /* prompts are secrets */
		plat_free(f, sizeof *f);
	}
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
		{"POST", "/v1/keys", api_keys},
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
		    (!c->tls && routes[i].fn == api_attestation_activate) ||
		    (!c->tls && routes[i].fn == api_keys))
			continue; /* attestation, keys: TLS only; on plain HTTP an unknown path */
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
