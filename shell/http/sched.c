/*
 * shell/http/sched.c — the generations the API server runs together
 * (serve.h's sched_*): each joins the batch (llm/engine_batch.h) in a free
 * slot, its tokens go out as server-sent events after every pass (or as
 * one response at its end), and it leaves when done while the others go
 * on. Between passes the server's loop reads and answers the other
 * connections and the console.
 *
 * A streaming client's bytes wait in its own buffer when its socket is
 * full, flushed without blocking after each pass: one client that does not
 * read never holds up the others, and is dropped when its buffer fills or
 * it takes nothing for SRV_SEND_NS.
 */
#include "serve.h"

#include "../../llm/engine_batch.h"
#include "api_format.h"

#define SCHED_REQS (2 * ENGINE_BATCH_MAX) /* running, and finished ones still sending */
#define SCHED_STOP_BYTES 1024             /* a request's stop strings, together */

enum { RQ_FREE, RQ_RUN, RQ_DRAIN };

struct sched_req {
	int state;
	int conn;               /* index in srv.c */
	int slot;               /* the batch's */
	bool chat, streaming, head_sent;
	struct engine_gen g;
	char stops[SCHED_STOP_BYTES];
	char id[40], model[80];
	char *gen;              /* SRV_OUT: the text generated */
	size_t gen_len, sent;   /* streaming: bytes of gen sent (the rest an unfinished UTF-8 sequence) */
	char *pend;             /* SRV_OUT: bytes the client's socket has not taken yet */
	size_t pend_len, pend_off;
	uint64_t t_send;        /* the client last took bytes */
	struct api_fmt *fmt;    /* tools: the reply is parsed for calls at the end; NULL: none */
	struct srv *s;
};

struct sched {
	struct engine_batch b;
	bool have;
	struct sched_req r[SCHED_REQS];
	uint64_t joined;
};

static const char JSON[] = "application/json";

static struct sched *sched_get(struct srv *s)
{
	if (!s->sched) {
		struct sched *q = plat_alloc(sizeof *q, 64);
		if (!q)
			return NULL;
		memset(q, 0, sizeof *q);
		s->sched = q;
	}
	return s->sched;
}

static struct srv_conn *conn_of(struct sched_req *r)
{
	return &r->s->c[r->conn];
}

/* Bytes for the client, after those still waiting; the client is dropped
 * when they do not fit. */
static void put(struct sched_req *r, const char *p, size_t n)
{
	struct srv_conn *c = conn_of(r);

	if (c->gone)
		return;
	if (r->pend_off) {
		memmove(r->pend, r->pend + r->pend_off, r->pend_len - r->pend_off);
		r->pend_len -= r->pend_off;
		r->pend_off = 0;
	}
	if (n > SRV_OUT - r->pend_len) {
		c->gone = true; /* it reads nothing: its request ends */
		return;
	}
	memcpy(r->pend + r->pend_len, p, n);
	r->pend_len += n;
}

/* What the client's socket takes now. */
static void flush(struct sched_req *r)
{
	struct srv_conn *c = conn_of(r);
	uint64_t now = plat_time_ns();

	while (r->pend_off < r->pend_len && !c->gone) {
		long k = srv_send_some(r->s, c, r->pend + r->pend_off, r->pend_len - r->pend_off);
		if (k <= 0)
			break;
		r->pend_off += (size_t)k;
		r->t_send = now;
	}
	if (r->pend_off == r->pend_len)
		r->pend_off = r->pend_len = 0;
	else if (now - r->t_send > SRV_SEND_NS)
		c->gone = true;
}

/* One SSE event "data: <json>\n\n" as one chunk of the chunked body. */
static void sse(struct sched_req *r, const char *data, size_t n)
{
	char head[24];
	int k = plat_snprintf(head, sizeof head, "%zx\r\ndata: ", n + 8);

	put(r, head, (size_t)k);
	put(r, data, n);
	put(r, "\n\n\r\n", 4);
}

/* The start of a chunk object up to its choices' first field. */
static void chunk_open(struct sched_req *r, struct json_out *o, bool whole)
{
	json_out_lit(o, "{\"id\":");
	json_out_cstr(o, r->id);
	json_out_lit(o, ",\"object\":");
	json_out_cstr(o, !r->chat ? "text_completion" : whole ? "chat.completion" : "chat.completion.chunk");
	/* no wall clock in the machine: created is 0 */
	json_out_lit(o, ",\"created\":0,\"model\":");
	json_out_cstr(o, r->model);
	json_out_lit(o, ",\"choices\":[{\"index\":0,");
}

/*
 * An event's object, o without its closing brace, padded by an
 * "obfuscation" member (OpenAI's name for the same thing) so its chunk is a
 * multiple of SRV_SSE_PAD bytes: the host sees how many events a record
 * holds, not how long their text is (docs/tls.md, "Threat model").
 */
static void sse_obj(struct sched_req *r, struct json_out *o)
{
	static const char fill[64] = "................................................................";
	static const char key[] = ",\"obfuscation\":\"";
	/* the chunk: "data: " (6), the object, the member, "\"}" and "\n\n" */
	size_t n = 6 + o->len + sizeof key - 1 + 2 + 2;
	size_t pad = (SRV_SSE_PAD - n % SRV_SSE_PAD) % SRV_SSE_PAD;

	json_out_raw(o, key, sizeof key - 1);
	while (pad) {
		size_t k = pad < sizeof fill ? pad : sizeof fill;
		json_out_raw(o, fill, k);
		pad -= k;
	}
	json_out_lit(o, "\"}");
	sse(r, o->buf, o->len);
}

/* At most this much text an event: escaped six times over (control
 * characters) it still fits delta's buffer with the padding. */
#define SSE_TEXT 512

static void delta(struct sched_req *r, const char *text, size_t n, const char *finish)
{
	char buf[6 * SSE_TEXT + 512 + SRV_SSE_PAD];
	struct json_out o;

	json_out_init(&o, buf, sizeof buf);
	chunk_open(r, &o, false);
	if (r->chat) {
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
	json_out_lit(&o, "}]");
	sse_obj(r, &o);
}

static void sse_head(struct sched_req *r)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
		"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
	static const char alive[] = "Connection: keep-alive\r\n\r\n", close[] = "Connection: close\r\n\r\n";
	struct srv_conn *c = conn_of(r);

	if (r->head_sent)
		return;
	r->head_sent = true;
	put(r, head, sizeof head - 1);
	if (c->req.keep_alive)
		put(r, alive, sizeof alive - 1);
	else
		put(r, close, sizeof close - 1);
	if (r->chat) {
		char buf[512 + SRV_SSE_PAD];
		struct json_out o;
		json_out_init(&o, buf, sizeof buf);
		chunk_open(r, &o, false);
		json_out_lit(&o, "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]");
		sse_obj(r, &o);
	}
}

static void emit(void *ctx, const char *p, size_t n)
{
	struct sched_req *r = ctx;

	if (n > SRV_OUT - r->gen_len)
		n = SRV_OUT - r->gen_len;
	memcpy(r->gen + r->gen_len, p, n);
	r->gen_len += n;
	if (!r->streaming)
		return;
	sse_head(r);
	size_t whole = json_utf8_whole(r->gen + r->sent, r->gen_len - r->sent);
	for (size_t off = 0; off < whole;) {
		size_t k = json_utf8_whole(r->gen + r->sent + off,
					   whole - off > SSE_TEXT ? SSE_TEXT : whole - off);
		if (k == 0)
			k = whole - off;
		delta(r, r->gen + r->sent + off, k, NULL);
		off += k;
	}
	r->sent += whole;
}

/* Polled by the engine before each token: the client gone, or serving stopped. */
static bool cancel(void *ctx)
{
	struct sched_req *r = ctx;

	return r->s->stop || conn_of(r)->gone;
}

static const char *finish_reason(const char *stop)
{
	return stop && (strcmp(stop, "limit") == 0 || strcmp(stop, "context") == 0) ? "length" : "stop";
}

static void fmt_free(struct sched_req *r)
{
	if (!r->fmt)
		return;
	llm_mem_zeroize(r->fmt, sizeof *r->fmt); /* the conversation is a secret */
	plat_free(r->fmt, sizeof *r->fmt);
	r->fmt = NULL;
}

/* A reply with tools, streamed once parsed: the role, its content, each
 * call whole (index, id, type, name, arguments). */
static void tools_sse(struct sched_req *r)
{
	const struct api_fmt *f = r->fmt;
	struct json_out o;

	r->streaming = true;
	sse_head(r);
	for (size_t off = 0; off < f->content_len;) {
		size_t k = json_utf8_whole(r->gen + off, f->content_len - off > SSE_TEXT
							     ? SSE_TEXT : f->content_len - off);
		if (k == 0)
			k = f->content_len - off;
		delta(r, r->gen + off, k, NULL);
		off += k;
	}
	for (size_t i = 0; i < f->n_calls; i++) {
		const struct api_call *k = &f->calls[i];
		json_out_init(&o, r->s->out, sizeof r->s->out);
		chunk_open(r, &o, false);
		json_out_lit(&o, "\"delta\":{\"tool_calls\":[{\"index\":");
		json_out_i64(&o, (int64_t)i);
		json_out_lit(&o, ",\"id\":");
		json_out_cstr(&o, k->id);
		json_out_lit(&o, ",\"type\":\"function\",\"function\":{\"name\":");
		json_out_cstr(&o, k->name);
		json_out_lit(&o, ",\"arguments\":");
		json_out_str(&o, f->calls_text + k->args, k->args_len);
		json_out_lit(&o, "}}]},\"finish_reason\":null}]");
		sse_obj(r, &o);
	}
	r->sent = r->gen_len; /* what answer() would send as content is sent */
}

static void req_free(struct sched_req *r)
{
	struct srv_conn *c = conn_of(r);

	r->state = RQ_FREE;
	r->pend_len = r->pend_off = 0;
	fmt_free(r);
	llm_mem_zeroize(r->gen, r->gen_len);
	r->gen_len = 0;
	c->done = true; /* serve.c ends it at its next pump */
}

/* Slot r->slot is done: the answer's end, or the whole answer. */
static void answer(struct sched *q, struct sched_req *r)
{
	struct srv *s = r->s;
	struct srv_conn *c = conn_of(r);
	const struct engine_batch_slot *sl = &q->b.slot[r->slot];
	const struct engine_run *run = &sl->run;
	struct json_out o;
	int res = sl->result;

	s->m.prompt_tokens += run->n_prompt;
	s->m.gen_tokens += run->n_gen;
	s->m.prompt_ns += run->prompt_ns;
	s->m.gen_ns += run->gen_ns;
	const char *fin = finish_reason(run->stop);
	if (r->fmt && r->fmt->tools_on && !res) {
		api_fmt_reply(r->fmt, r->gen, r->gen_len, r->id + 9);
		if (r->fmt->n_calls)
			fin = "tool_calls";
		if (r->fmt->tools_stream)
			tools_sse(r);
	}
	if (res && !r->head_sent) {
		flush(r);
		srv_error(s, c, 500, "server_error", sl->err);
	} else if (r->streaming) {
		sse_head(r); /* when nothing was generated */
		if (r->gen_len > r->sent)
			delta(r, r->gen + r->sent, r->gen_len - r->sent, NULL);
		if (res) {
			char buf[512 + SRV_SSE_PAD];
			json_out_init(&o, buf, sizeof buf);
			json_out_lit(&o, "{\"error\":{\"message\":");
			json_out_cstr(&o, sl->err);
			json_out_lit(&o, ",\"type\":\"server_error\",\"param\":null,\"code\":500}");
			sse_obj(r, &o);
		} else {
			delta(r, "", 0, fin);
		}
		sse(r, "[DONE]", 6);
		put(r, "0\r\n\r\n", 5);
		s->m.requests++;
	} else {
		uint32_t n_prompt = run->n_prompt + run->n_reused;
		json_out_init(&o, s->out, sizeof s->out);
		chunk_open(r, &o, true);
		if (r->chat && r->fmt) {
			json_out_lit(&o, "\"message\":{\"role\":\"assistant\"");
			api_fmt_message(r->fmt, &o, r->gen, r->gen_len);
			json_out_lit(&o, "}");
		} else if (r->chat) {
			json_out_lit(&o, "\"message\":{\"role\":\"assistant\",\"content\":");
			json_out_str(&o, r->gen, r->gen_len);
			json_out_lit(&o, "}");
		} else {
			json_out_lit(&o, "\"text\":");
			json_out_str(&o, r->gen, r->gen_len);
			json_out_lit(&o, ",\"logprobs\":null");
		}
		json_out_lit(&o, ",\"finish_reason\":");
		json_out_cstr(&o, fin);
		json_out_lit(&o, "}],\"usage\":{\"prompt_tokens\":");
		json_out_i64(&o, n_prompt);
		json_out_lit(&o, ",\"completion_tokens\":");
		json_out_i64(&o, run->n_gen);
		json_out_lit(&o, ",\"total_tokens\":");
		json_out_i64(&o, n_prompt + run->n_gen);
		json_out_lit(&o, "}}");
		srv_respond(s, c, 200, JSON, s->out, o.len);
	}
	engine_batch_release(&q->b, r->slot);
	r->slot = -1;
	flush(r);
	if (r->pend_len && !c->gone)
		r->state = RQ_DRAIN; /* the rest goes out as the client reads */
	else
		req_free(r);
}

/* The batch, made (again) when there is none or the engine changed under
 * an idle one. False with err when it cannot be. */
static bool batch_ready(struct srv *s, struct sched *q, char *err, size_t errlen)
{
	if (q->have && engine_batch_valid(&q->b))
		return true;
	if (q->have && engine_batch_used(&q->b)) {
		plat_snprintf(err, errlen, "the engine changed under the running requests");
		return false;
	}
	if (q->have)
		engine_batch_free(&q->b);
	q->have = false;
	if (engine_batch_init(&q->b, s->sh->engine, s->slots, err, errlen))
		return false;
	q->have = true;
	return true;
}

bool sched_room(struct srv *s)
{
	struct sched *q = s->sched;

	if (!q || !q->have || !engine_batch_valid(&q->b))
		return true; /* the join makes the batch, or says why not */
	if (engine_batch_used(&q->b) >= q->b.n_slots)
		return false;
	for (int i = 0; i < SCHED_REQS; i++)
		if (q->r[i].state == RQ_FREE)
			return true;
	return false;
}

bool sched_join(struct srv *s, struct srv_conn *c, bool chat, bool stream, const char *model,
		const char *prompt, const struct chat_msg *msgs, size_t n, struct engine_gen *g,
		struct api_fmt *fmt)
{
	struct sched *q = sched_get(s);
	struct sched_req *r = NULL;
	char err[256];
	size_t used = 0;
	int slot;

	if (!q) {
		srv_error(s, c, 500, "server_error", "no memory for the batch");
		return false;
	}
	if (!batch_ready(s, q, err, sizeof err)) {
		srv_error(s, c, 503, "server_error", err);
		return false;
	}
	for (int i = 0; i < SCHED_REQS && !r; i++)
		if (q->r[i].state == RQ_FREE)
			r = &q->r[i];
	if (!r || engine_batch_used(&q->b) >= q->b.n_slots) {
		s->m.rejected++;
		srv_error(s, c, 503, "server_error", "every batch slot is taken; try again");
		return false;
	}
	if (!r->gen)
		r->gen = plat_alloc(SRV_OUT, 64);
	if (!r->pend)
		r->pend = plat_alloc(SRV_OUT, 64);
	if (!r->gen || !r->pend) {
		srv_error(s, c, 500, "server_error", "no memory for the request's buffers");
		return false;
	}
	r->g = *g;
	/* the stop strings point into the request's JSON: copied */
	for (uint32_t i = 0; i < g->n_stops; i++) {
		size_t k = strlen(g->stops[i]) + 1;
		if (k > sizeof r->stops - used) {
			srv_error(s, c, 400, "invalid_request_error", "'stop' strings are over 1 KiB together");
			return false;
		}
		memcpy(r->stops + used, g->stops[i], k);
		r->g.stops[i] = r->stops + used;
		used += k;
	}
	r->g.emit = emit;
	r->g.cancel = cancel;
	r->g.notice = NULL;
	r->g.prompt = NULL;
	r->g.ctx = r;
	r->s = s;
	r->conn = (int)(c - s->c);
	r->chat = chat;
	r->streaming = stream;
	r->head_sent = false;
	r->gen_len = r->sent = 0;
	r->pend_len = r->pend_off = 0;
	r->t_send = plat_time_ns();
	plat_snprintf(r->model, sizeof r->model, "%s", model);
	plat_snprintf(r->id, sizeof r->id, "%s-%llu", chat ? "chatcmpl" : "cmpl",
		      (unsigned long long)++q->joined);
	c->busy = true;
	slot = chat ? engine_batch_chat(&q->b, msgs, n, &r->g, err, sizeof err)
		    : engine_batch_infer(&q->b, prompt, &r->g, err, sizeof err);
	r->g.grammar = r->g.json_schema = NULL; /* parsed: their text is the request's */
	r->g.n_triggers = 0;                      /* (as are the lazy grammar's triggers) */
	if (slot < 0) {
		bool theirs = slot == -LLMK_ERANGE || slot == -LLMK_EINVAL || slot == -LLMK_EFORMAT;
		c->busy = false;
		if (slot == -LLMK_EBUSY)
			s->m.rejected++;
		srv_error(s, c, slot == -LLMK_EBUSY ? 503 : theirs ? 400 : 500,
			  theirs ? "invalid_request_error" : "server_error", err);
		return false;
	}
	r->slot = slot;
	r->state = RQ_RUN;
	r->fmt = fmt;
	if (engine_batch_done(&q->b, slot))
		answer(q, r);
	return true;
}

bool sched_run(struct srv *s)
{
	struct sched *q = s->sched;
	bool work = false;

	if (!q)
		return false;
	/* finished answers still going out */
	for (int i = 0; i < SCHED_REQS; i++) {
		struct sched_req *r = &q->r[i];
		if (r->state != RQ_DRAIN)
			continue;
		flush(r);
		if (!r->pend_len || conn_of(r)->gone) {
			req_free(r);
			work = true; /* the next pump ends it without waiting */
		}
	}
	if (!q->have)
		return work;
	for (int i = 0; i < SCHED_REQS; i++) {
		struct sched_req *r = &q->r[i];
		if (r->state == RQ_RUN && (conn_of(r)->gone || s->stop))
			engine_batch_cancel(&q->b, r->slot);
	}
	if (q->b.n_active) {
		engine_batch_step(&q->b);
		work = true;
	}
	for (int i = 0; i < SCHED_REQS; i++) {
		struct sched_req *r = &q->r[i];
		if (r->state != RQ_RUN)
			continue;
		if (engine_batch_done(&q->b, r->slot))
			answer(q, r);
		else
			flush(r);
	}
	return work;
}

void sched_stop(struct srv *s)
{
	struct sched *q = s->sched;

	if (!q)
		return;
	for (int i = 0; i < SCHED_REQS; i++) {
		struct sched_req *r = &q->r[i];
		if (r->state == RQ_RUN) {
			engine_batch_cancel(&q->b, r->slot);
			answer(q, r);
		}
		if (r->state == RQ_DRAIN)
			req_free(r);
		if (r->gen)
			plat_free(r->gen, SRV_OUT);
		if (r->pend)
			plat_free(r->pend, SRV_OUT);
	}
	if (q->have)
		engine_batch_free(&q->b);
	plat_free(q, sizeof *q);
	s->sched = NULL;
}

size_t sched_metrics(struct srv *s, char *buf, size_t cap)
{
	struct sched *q = s->sched;
	bool have = q && q->have;

	return (size_t)plat_snprintf(buf, cap,
		"# HELP llmk_batch_slots generations the batch holds at once\n"
		"# TYPE llmk_batch_slots gauge\nllmk_batch_slots %u\n"
		"# HELP llmk_batch_active generations decoding now\n"
		"# TYPE llmk_batch_active gauge\nllmk_batch_active %u\n"
		"# HELP llmk_batch_slot_ctx context positions each slot holds\n"
		"# TYPE llmk_batch_slot_ctx gauge\nllmk_batch_slot_ctx %u\n"
		"# HELP llmk_batch_passes_total decode passes over the weights\n"
		"# TYPE llmk_batch_passes_total counter\nllmk_batch_passes_total %llu\n"
		"# HELP llmk_batch_tokens_total tokens those passes carried\n"
		"# TYPE llmk_batch_tokens_total counter\nllmk_batch_tokens_total %llu\n",
		have ? q->b.n_slots : s->slots, have ? q->b.n_active : 0u, have ? q->b.n_ctx : 0u,
		(unsigned long long)(have ? q->b.passes : 0), (unsigned long long)(have ? q->b.tokens : 0));
}
