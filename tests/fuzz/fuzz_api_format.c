/*
 * tests/fuzz/fuzz_api_format.c — libFuzzer target for the API's
 * response_format, tools and tool_choice (shell/http/api_format.c).
 *
 * Input: one byte choosing the template (chatml, llama3, gemma,
 * mistral-v3, mistral-v3-tekken, or a Jinja one of Hermes', Mistral's or
 * Llama 3's tool format: bits 0, 1 and 3) and the endpoint (bit 2), then a
 * request body. Checks: a refusal names its param and
 * says why; an accepted request holds no memory of the converter's,
 * its messages have roles and contents and format; with tools on, the
 * body's own bytes parsed as a reply give calls whose arguments are JSON
 * objects, and the message written for them is JSON that parses.
 */
#include <stdlib.h>
#include <string.h>

#include "../../shell/http/api_format.h"

static struct json_node nodes[4096], nodes2[4096];
static char store[1 << 16], store2[1 << 17], out[1 << 18];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum chat_tmpl tmpl[] = {CHAT_CHATML, CHAT_LLAMA3, CHAT_GEMMA, CHAT_MISTRAL_V3,
		CHAT_MISTRAL_V3_TEKKEN, CHAT_JINJA, CHAT_JINJA, CHAT_JINJA};
	static const char *const src[] = {NULL, NULL, NULL, NULL, NULL, "{{ '<tool_call>' }}",
		"{{ '[TOOL_CALLS]' }}", "{{ tools }}"};
	static struct api_fmt *f;
	struct json_doc d = {nodes, 4096, 0, store, sizeof store, 0, 32, 1 << 16};
	struct llm_mem m;
	char err[128];
	size_t n;

	if (size < 1)
		return 0;
	if (!f && !(f = calloc(1, sizeof *f)))
		abort();
	unsigned k = (data[0] & 3u) | ((data[0] >> 1) & 4u);
	enum chat_tmpl t = tmpl[k];
	if (json_parse(&d, (const char *)data + 1, size - 1, err, sizeof err) ||
	    d.nodes[0].type != JSON_OBJECT)
		return 0;
	llm_mem_init(&m, 0);
	int r = api_fmt_request(f, &d, (data[0] & 4) == 0, t, src[k], src[k] ? strlen(src[k]) : 0,
				&m);
	if (m.used)
		abort();
	if (r) {
		if (!f->err[0] || !f->param[0] || (r != -LLMK_EINVAL && r != -LLMK_ERANGE))
			abort();
		return 0;
	}
	for (size_t i = 0; i < f->n_msgs; i++) {
		if (!f->msgs[i].role || !f->msgs[i].content)
			abort();
		/* a Jinja template's input: each extra and the tools are JSON */
		const char *x = f->jinja ? f->extra[i] : NULL;
		struct json_doc a = {nodes2, 4096, 0, store2, sizeof store2, 0, 64, sizeof store2};
		if (x && (json_parse(&a, x, strlen(x), err, sizeof err) || a.nodes[0].type != JSON_OBJECT))
			abort();
	}
	if (f->tools_json) {
		struct json_doc a = {nodes2, 4096, 0, store2, sizeof store2, 0, 64, sizeof store2};
		if (json_parse(&a, f->tools_json, strlen(f->tools_json), err, sizeof err) ||
		    a.nodes[0].type != JSON_ARRAY)
			abort();
	}
	if (f->n_msgs)
		(void)chat_format(t, f->msgs, f->n_msgs, true, out, sizeof out, &n);
	if (!f->tools_on)
		return 0;
	api_fmt_reply(f, (const char *)data + 1, size - 1, "1");
	if (f->content_len > size - 1)
		abort();
	for (size_t i = 0; i < f->n_calls; i++) {
		struct json_doc a = {nodes2, 4096, 0, store2, sizeof store2, 0, 64, sizeof store2};
		if (json_parse(&a, f->calls_text + f->calls[i].args, f->calls[i].args_len, err,
			       sizeof err) || a.nodes[0].type != JSON_OBJECT)
			abort();
	}
	struct json_out o;
	json_out_init(&o, out, sizeof out);
	json_out_lit(&o, "{\"role\":\"assistant\"");
	api_fmt_message(f, &o, (const char *)data + 1, size - 1);
	json_out_lit(&o, "}");
	struct json_doc w = {nodes2, 4096, 0, store2, sizeof store2, 0, 64, sizeof out};
	if (!o.overflow && json_parse(&w, out, o.len, err, sizeof err))
		abort();
	return 0;
}
