/*
 * tests/unit/test_api_format.c — shell/http/api_format.c: response_format
 * as a grammar, tools in the prompt as the Qwen2.5/Qwen3 (chatml) and
 * Llama 3.1 (llama3) templates write them, the call grammars, the replies'
 * calls, and the 400s naming their param.
 *
 * llama.cpp's tests check tool prompts by running the models' Jinja
 * templates, giving no text to compare with; the expected prompts here
 * were checked once, byte for byte, against python3-jinja2 renders of
 * Qwen2.5-Instruct's, Qwen3's and Llama-3.1-Instruct's templates with
 * HF's tojson (json.dumps, ensure_ascii off) for the same messages.
 */
#include "test.h"
#include "../../shell/http/api_format.h"

#include <stdlib.h>

static struct json_node nodes[4096];
static char store[64u << 10];
static struct gram_state gst[2];

static struct api_fmt *fmt_new(void)
{
	struct api_fmt *f = calloc(1, sizeof *f);
	return f;
}

/* Parse body into d and run api_fmt_request for template t. */
static const char *req_src; /* CHAT_JINJA: the template's text */

static int req(struct api_fmt *f, struct json_doc *d, const char *body, bool chat, enum chat_tmpl t)
{
	struct llm_mem m;
	char err[128];

	*d = (struct json_doc){nodes, 4096, 0, store, sizeof store, 0, 32, 1u << 20};
	if (json_parse(d, body, strlen(body), err, sizeof err)) {
		fprintf(stderr, "  bad test body: %s\n", err);
		return -999;
	}
	llm_mem_init(&m, 0);
	int r = api_fmt_request(f, d, chat, t, req_src, req_src ? strlen(req_src) : 0, &m);
	CHECK_EQ_INT(m.used, 0);
	return r;
}

static const char *render(struct api_fmt *f, enum chat_tmpl t)
{
	static char out[65536];
	size_t n;

	if (chat_format(t, f->msgs, f->n_msgs, true, out, sizeof out, &n))
		return "(chat_format failed)";
	return out;
}

static bool accepts(const char *grammar, const char *s)
{
	struct llm_mem m;
	struct gram g;
	char err[160];
	bool ok;

	llm_mem_init(&m, 0);
	if (gram_parse(&g, &m, grammar, strlen(grammar), err, sizeof err)) {
		fprintf(stderr, "  grammar refused: %s\n", err);
		return false;
	}
	ok = gram_accepts(&g, s, strlen(s), gst);
	gram_free(&g);
	return ok;
}

#define TOOL "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":" \
	"\"Weather in a city\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":" \
	"{\"type\":\"string\"},\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":7}}," \
	"\"required\":[\"city\"]}}}"
#define CONVO "\"messages\":[{\"role\":\"system\",\"content\":\"You are helpful.\"}," \
	"{\"role\":\"user\",\"content\":\"What is the weather in Paris?\"}," \
	"{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\"," \
	"\"function\":{\"name\":\"get_weather\"," \
	"\"arguments\":\"{\\\"city\\\":\\\"Paris\\\",\\\"days\\\":2}\"}}]}," \
	"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"22 C\"}]"

TEST(api_fmt_hermes_prompt_is_the_qwen_templates)
{
	struct api_fmt *f = fmt_new();
	struct json_doc d;

	CHECK_EQ_INT(req(f, &d, "{" CONVO ",\"tools\":[" TOOL "]}", true, CHAT_CHATML), 0);
	CHECK(f->tools_on && f->style == API_TOOLS_HERMES && f->grammar && f->n_triggers == 1);
	CHECK_STR(render(f, CHAT_CHATML),
		  "<|im_start|>system\nYou are helpful.\n\n# Tools\n\nYou may call one or more "
		  "functions to assist with the user query.\n\nYou are provided with function "
		  "signatures within <tools></tools> XML tags:\n<tools>\n"
		  "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": "
		  "\"Weather in a city\", \"parameters\": {\"type\": \"object\", \"properties\": "
		  "{\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\", \"minimum\": 1, "
		  "\"maximum\": 7}}, \"required\": [\"city\"]}}}\n</tools>\n\nFor each function call, "
		  "return a json object with function name and arguments within <tool_call></tool_call> "
		  "XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
		  "<args-json-object>}\n</tool_call><|im_end|>\n"
		  "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n"
		  "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
		  "{\"city\": \"Paris\", \"days\": 2}}\n</tool_call><|im_end|>\n"
		  "<|im_start|>user\n<tool_response>\n22 C\n</tool_response><|im_end|>\n"
		  "<|im_start|>assistant\n");
	/* no system message: Qwen3's form (the tools alone); two results, one turn */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
			 "{\"role\":\"assistant\",\"content\":\"Let me see.\",\"tool_calls\":["
			 "{\"type\":\"function\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}},"
			 "{\"type\":\"function\",\"function\":{\"name\":\"b\",\"arguments\":\"{\\\"x\\\":[1.5,true,null]}\"}}]},"
			 "{\"role\":\"tool\",\"content\":\"1\"},{\"role\":\"tool\",\"content\":\"2\"}],"
			 "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},"
			 "{\"type\":\"function\",\"function\":{\"name\":\"b\"}}]}", true, CHAT_CHATML), 0);
	CHECK_STR(render(f, CHAT_CHATML),
		  "<|im_start|>system\n# Tools\n\nYou may call one or more "
		  "functions to assist with the user query.\n\nYou are provided with function "
		  "signatures within <tools></tools> XML tags:\n<tools>\n"
		  "{\"type\": \"function\", \"function\": {\"name\": \"a\"}}\n"
		  "{\"type\": \"function\", \"function\": {\"name\": \"b\"}}\n</tools>\n\nFor each function call, "
		  "return a json object with function name and arguments within <tool_call></tool_call> "
		  "XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
		  "<args-json-object>}\n</tool_call><|im_end|>\n"
		  "<|im_start|>user\nhi<|im_end|>\n"
		  "<|im_start|>assistant\nLet me see.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
		  "<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": [1.5, true, null]}}\n</tool_call><|im_end|>\n"
		  "<|im_start|>user\n<tool_response>\n1\n</tool_response>\n<tool_response>\n2\n"
		  "</tool_response><|im_end|>\n<|im_start|>assistant\n");
	free(f);
}

TEST(api_fmt_llama3_prompt_is_the_llama31_template)
{
	struct api_fmt *f = fmt_new();
	struct json_doc d;

	CHECK_EQ_INT(req(f, &d, "{" CONVO ",\"tools\":[" TOOL "]}", true, CHAT_LLAMA3), 0);
	CHECK(f->tools_on && f->style == API_TOOLS_LLAMA3);
	CHECK_STR(render(f, CHAT_LLAMA3),
		  "<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
		  "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are helpful."
		  "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
		  "Given the following functions, please respond with a JSON for a function call with "
		  "its proper arguments that best answers the given prompt.\n\nRespond in the format "
		  "{\"name\": function name, \"parameters\": dictionary of argument name and its value}."
		  "Do not use variables.\n\n"
		  "{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"get_weather\",\n"
		  "        \"description\": \"Weather in a city\",\n        \"parameters\": {\n"
		  "            \"type\": \"object\",\n            \"properties\": {\n"
		  "                \"city\": {\n                    \"type\": \"string\"\n                },\n"
		  "                \"days\": {\n                    \"type\": \"integer\",\n"
		  "                    \"minimum\": 1,\n                    \"maximum\": 7\n                }\n"
		  "            },\n            \"required\": [\n                \"city\"\n            ]\n"
		  "        }\n    }\n}\n\nWhat is the weather in Paris?<|eot_id|>"
		  "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"get_weather\", "
		  "\"parameters\": {\"city\": \"Paris\", \"days\": 2}}<|eot_id|>"
		  "<|start_header_id|>ipython<|end_header_id|>\n\n\"22 C\"<|eot_id|>"
		  "<|start_header_id|>assistant<|end_header_id|>\n\n");
	/* an empty tool_calls is none (the templates test its truth) */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"assistant\",\"content\":\"ok\","
			 "\"tool_calls\":[]}]}", true, CHAT_CHATML), 0);
	CHECK_STR(render(f, CHAT_CHATML), "<|im_start|>assistant\nok<|im_end|>\n<|im_start|>assistant\n");
	/* tool_choice none: no tools in the prompt, nothing parsed */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
			 TOOL "],\"tool_choice\":\"none\"}", true, CHAT_LLAMA3), 0);
	CHECK(!f->tools_on && !f->grammar);
	CHECK_STR(render(f, CHAT_LLAMA3), "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
		  "<|start_header_id|>assistant<|end_header_id|>\n\n");
	free(f);
}

TEST(api_fmt_required_and_named_calls_are_grammars)
{
	struct api_fmt *f = fmt_new();
	struct json_doc d;
	const char *two = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[" TOOL
			  ",{\"type\":\"function\",\"function\":{\"name\":\"noop\"}}],\"tool_choice\":";
	char body[2048];

	snprintf(body, sizeof body, "%s\"required\"}", two);
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_CHATML), 0);
	CHECK(f->grammar != NULL);
	CHECK(accepts(f->grammar, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
		      "{\"city\": \"Oslo\", \"days\": 3}}\n</tool_call>"));
	CHECK(accepts(f->grammar, "<tool_call>\n{\"name\":\"noop\",\"arguments\":{}}\n</tool_call>"));
	CHECK(!accepts(f->grammar, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
		       "{\"days\": 3}}\n</tool_call>"));
	CHECK(!accepts(f->grammar, "<tool_call>\n{\"name\": \"other\", \"arguments\": {}}\n</tool_call>"));
	CHECK(!accepts(f->grammar, "{\"name\": \"noop\", \"arguments\": {}}"));
	snprintf(body, sizeof body, "%s{\"type\":\"function\",\"function\":{\"name\":\"noop\"}}}", two);
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_LLAMA3), 0);
	CHECK(f->choice == API_CHOICE_NAMED && f->grammar);
	CHECK(accepts(f->grammar, "{\"name\": \"noop\", \"parameters\": {\"any\": [1]}}"));
	CHECK(!accepts(f->grammar, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"x\"}}"));
	/* a tool's $defs: its $refs resolve (pydantic writes them so) */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
			 "{\"type\":\"function\",\"function\":{\"name\":\"p\",\"parameters\":{\"type\":"
			 "\"object\",\"properties\":{\"at\":{\"$ref\":\"#/$defs/Pt\"}},\"required\":[\"at\"],"
			 "\"$defs\":{\"Pt\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"}},"
			 "\"required\":[\"x\"]}}}}},{\"type\":\"function\",\"function\":{\"name\":\"q\","
			 "\"parameters\":{\"definitions\":{\"N\":{\"type\":\"integer\"}},\"type\":\"object\","
			 "\"properties\":{\"n\":{\"$ref\":\"#/definitions/N\"}}}}}],\"tool_choice\":\"required\"}",
			 true, CHAT_CHATML), 0);
	CHECK(f->grammar && accepts(f->grammar, "<tool_call>\n{\"name\": \"p\", \"arguments\": "
				    "{\"at\": {\"x\": 3}}}\n</tool_call>"));
	CHECK(accepts(f->grammar, "<tool_call>\n{\"name\": \"q\", \"arguments\": {\"n\": 3}}\n</tool_call>"));
	CHECK(!accepts(f->grammar, "<tool_call>\n{\"name\": \"p\", \"arguments\": "
				     "{\"at\": {\"x\": \"3\"}}}\n</tool_call>"));
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
			 "{\"type\":\"function\",\"function\":{\"name\":\"p\",\"parameters\":{\"$defs\":{\"A\":{}}}}},"
			 "{\"type\":\"function\",\"function\":{\"name\":\"q\",\"parameters\":{\"$defs\":{\"A\":{}}}}}],"
			 "\"tool_choice\":\"required\"}", true, CHAT_CHATML), -LLMK_EINVAL);
	CHECK_STR(f->param, "tools");
	/* auto: the call grammar, lazy (docs/api.md); chatml's lets calls follow */
	snprintf(body, sizeof body, "%s\"auto\"}", two);
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_CHATML), 0);
	CHECK(f->tools_on && f->grammar && f->n_triggers == 1);
	CHECK_STR(f->triggers[0], "<tool_call>");
	CHECK(accepts(f->grammar, "<tool_call>\n{\"name\":\"noop\",\"arguments\":{}}\n</tool_call>\n"
		      "<tool_call>\n{\"name\":\"noop\",\"arguments\":{}}\n</tool_call>"));
	CHECK(!accepts(f->grammar, "<tool_call>\n{\"name\":\"noop\",\"arguments\":{}}\n</tool_call>x"));
	snprintf(body, sizeof body, "%s\"auto\",\"parallel_tool_calls\":false}", two);
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_CHATML), 0);
	CHECK(!accepts(f->grammar, "<tool_call>\n{\"name\":\"noop\",\"arguments\":{}}\n</tool_call>\n"
		       "<tool_call>\n{\"name\":\"noop\",\"arguments\":{}}\n</tool_call>"));
	snprintf(body, sizeof body, "%s\"auto\"}", two);
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_LLAMA3), 0);
	CHECK(f->grammar && f->n_triggers == 2);
	CHECK_STR(f->triggers[0], "^{\"name\"");
	CHECK_STR(f->triggers[1], "^{ \"name\"");
	CHECK(accepts(f->grammar, "{ \"name\": \"noop\", \"parameters\": {}}"));
	/* a tool the converter cannot draw: auto stays free, not a 400 */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
			 "{\"type\":\"function\",\"function\":{\"name\":\"u\",\"parameters\":{"
			 "\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"array\","
			 "\"uniqueItems\":true}}}}}]}", true, CHAT_CHATML), 0);
	CHECK(f->tools_on && !f->grammar && f->n_triggers == 0 && !f->err[0]);
	free(f);
}

TEST(api_fmt_response_format_is_a_grammar)
{
	struct api_fmt *f = fmt_new();
	struct json_doc d;

	CHECK_EQ_INT(req(f, &d, "{\"prompt\":\"x\",\"response_format\":{\"type\":\"json_object\"}}",
			 false, CHAT_CHATML), 0);
	CHECK(f->grammar && accepts(f->grammar, "{\"a\": [1, {\"b\": null}]}"));
	CHECK(!accepts(f->grammar, "[1]"));
	CHECK_EQ_INT(req(f, &d, "{\"prompt\":\"x\",\"response_format\":{\"type\":\"text\"}}",
			 false, CHAT_CHATML), 0);
	CHECK(f->grammar == NULL);
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
			 "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"n\","
			 "\"strict\":true,\"schema\":{\"type\":\"object\",\"properties\":{\"ok\":"
			 "{\"type\":\"boolean\"},\"v\":{\"enum\":[0.5,\"é\"]}},\"required\":[\"ok\",\"v\"]}}}}",
			 true, CHAT_PHI3), 0);
	CHECK(f->grammar && accepts(f->grammar, "{\"ok\": true, \"v\": 0.5}"));
	CHECK(accepts(f->grammar, "{\"ok\":false,\"v\":\"é\"}"));
	CHECK(!accepts(f->grammar, "{\"ok\": true}"));
	CHECK_EQ_INT(f->n_msgs, 1);
	/* llama-server's members: grammar, json_schema, json_object's schema */
	CHECK_EQ_INT(req(f, &d, "{\"prompt\":\"x\",\"grammar\":\"root ::= \\\"yes\\\" | \\\"no\\\"\"}",
			 false, CHAT_CHATML), 0);
	CHECK(f->grammar && accepts(f->grammar, "no") && !accepts(f->grammar, "maybe"));
	CHECK_EQ_INT(req(f, &d, "{\"prompt\":\"x\",\"json_schema\":{\"type\":\"integer\"}}", false,
			 CHAT_CHATML), 0);
	CHECK(f->grammar && accepts(f->grammar, "-12") && !accepts(f->grammar, "1.5"));
	CHECK_EQ_INT(req(f, &d, "{\"prompt\":\"x\",\"response_format\":{\"type\":\"json_object\","
			 "\"schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"const\":1}},"
			 "\"required\":[\"a\"]}}}", false, CHAT_CHATML), 0);
	CHECK(f->grammar && accepts(f->grammar, "{\"a\": 1}") && !accepts(f->grammar, "{}"));
	CHECK_EQ_INT(req(f, &d, "{\"prompt\":\"x\",\"grammar\":\"root ::= [a-\"}", false,
			 CHAT_CHATML), -LLMK_EINVAL);
	CHECK_STR(f->param, "grammar");
	CHECK(strstr(f->err, "line 1, column") != NULL);
	free(f);
}

TEST(api_fmt_refusals_name_their_param)
{
	static const struct {
		const char *body;
		const char *param;
	} bad[] = {
		{"{\"response_format\":\"json\"}", "response_format"},
		{"{\"response_format\":{\"type\":\"yaml\"}}", "response_format.type"},
		{"{\"response_format\":{}}", "response_format.type"},
		{"{\"response_format\":{\"type\":\"json_schema\"}}", "response_format.json_schema"},
		{"{\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{}}}}",
		 "response_format.json_schema.name"},
		{"{\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"a b\"}}}",
		 "response_format.json_schema.name"},
		{"{\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"a\",\"strict\":1}}}",
		 "response_format.json_schema.strict"},
		{"{\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"a\",\"schema\":[]}}}",
		 "response_format.json_schema.schema"},
		{"{\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"a\",\"schema\":"
		 "{\"type\":\"object\",\"not\":{}}}}}", "response_format.json_schema.schema"},
		{"{\"tools\":{}}", "tools"},
		{"{\"tools\":[{\"type\":\"code\"}]}", "tools[0]"},
		{"{\"tools\":[{\"type\":\"function\"}]}", "tools[0].function"},
		{"{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"\"}}]}", "tools[0].function.name"},
		{"{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},"
		 "{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]}", "tools[1].function.name"},
		{"{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\",\"parameters\":1}}]}",
		 "tools[0].function.parameters"},
		{"{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],\"tool_choice\":\"any\"}",
		 "tool_choice"},
		{"{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],\"tool_choice\":"
		 "{\"type\":\"function\",\"function\":{\"name\":\"b\"}}}", "tool_choice.function.name"},
		{"{\"tool_choice\":\"required\"}", "tool_choice"},
		{"{\"parallel_tool_calls\":1}", "parallel_tool_calls"},
		{"{\"tools\":[],\"tool_choice\":\"required\"}", "tool_choice"},
		{"{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],"
		 "\"response_format\":{\"type\":\"json_object\"}}", "response_format"},
		{"{\"messages\":[]}", "messages"},
		{"{\"grammar\":\"root ::= \\\"a\\\"\",\"json_schema\":{}}", "grammar"},
		{"{\"json_schema\":{},\"response_format\":{\"type\":\"text\"}}", "json_schema"},
		{"{\"grammar\":5}", "grammar"},
		{"{\"json_schema\":[]}", "json_schema"},
		{"{\"response_format\":{\"type\":\"json_object\",\"schema\":1}}", "response_format.schema"},
		{"{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],"
		 "\"grammar\":\"root ::= \\\"a\\\"\"}", "grammar"},
		{"{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"type\":\"function\",\"function\":"
		 "{\"name\":\"a\",\"arguments\":\"{oops\"}}]}]}", "messages[0].tool_calls[0].function.arguments"},
		{"{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"type\":\"function\",\"function\":"
		 "{\"name\":\"a\",\"arguments\":\"[1]\"}}]}]}", "messages[0].tool_calls[0].function.arguments"},
		{"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"tool_calls\":[{}]}]}",
		 "messages[1].tool_calls[0]"},
		{"{\"messages\":[{\"role\":\"tool\",\"content\":\"x\",\"tool_call_id\":5}]}",
		 "messages[0].tool_call_id"},
	};
	struct api_fmt *f = fmt_new();
	char body[1024];
	struct json_doc d;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		/* a body without messages gets one, so each case fails where it means to */
		const char *b = bad[i].body;
		if (!strstr(b, "\"messages\""))
			snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],%s",
				 b + 1);
		else
			snprintf(body, sizeof body, "%s", b);
		int r = req(f, &d, body, true, CHAT_CHATML);
		CHECK(r == -LLMK_EINVAL);
		if (strcmp(f->param, bad[i].param) != 0) {
			fprintf(stderr, "  case %zu: param '%s' (%s), wanted '%s'\n", i, f->param, f->err,
				bad[i].param);
			test_failed_checks++;
		}
	}
	/* a template without a tool format refuses tools, and tools on /v1/completions */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":["
			 TOOL "]}", true, CHAT_GEMMA), -LLMK_EINVAL);
	CHECK_STR(f->param, "tools");
	CHECK(strstr(f->err, "gemma") != NULL);
	CHECK_EQ_INT(req(f, &d, "{\"prompt\":\"x\",\"tools\":[" TOOL "]}", false, CHAT_CHATML),
		     -LLMK_EINVAL);
	/* the roles the server writes for Mistral's tools are not a client's to send */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"available_tools\",\"content\":\"[]\"},"
			 "{\"role\":\"user\",\"content\":\"x\"}]}", true, CHAT_MISTRAL_V3),
		     -LLMK_EINVAL);
	CHECK_STR(f->param, "messages");
	CHECK(strstr(f->err, "available_tools") != NULL);
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
			 "{\"role\":\"tool_calls_open\",\"content\":\"\"}]}", true, CHAT_CHATML),
		     -LLMK_EINVAL);
	/* llama3 makes one call a message, and needs a user message for the tools */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"system\",\"content\":\"x\"}],\"tools\":["
			 TOOL "]}", true, CHAT_LLAMA3), -LLMK_EINVAL);
	free(f);
}

static void reply(struct api_fmt *f, const char *out)
{
	api_fmt_reply(f, out, strlen(out), "7");
}

static const char *args_of(const struct api_fmt *f, size_t i)
{
	static char b[512];
	snprintf(b, sizeof b, "%.*s", (int)f->calls[i].args_len, f->calls_text + f->calls[i].args);
	return b;
}

TEST(api_fmt_reply_calls_are_parsed)
{
	struct api_fmt *f = fmt_new();
	struct json_doc d;
	char msg[1024];
	struct json_out o;
	const char *out;

	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
			 TOOL "]}", true, CHAT_CHATML), 0);
	out = "I will look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
	      "\"Paris\", \"days\": 2}}\n</tool_call>\n<tool_call>\n{\"name\":\"get_weather\","
	      "\"arguments\":{\"city\":\"Rome\"}}\n</tool_call>";
	reply(f, out);
	CHECK_EQ_INT(f->n_calls, 2);
	CHECK_EQ_INT(f->content_len, 12);
	CHECK_STR(f->calls[0].name, "get_weather");
	CHECK_STR(f->calls[0].id, "call_7_0");
	CHECK_STR(args_of(f, 0), "{\"city\":\"Paris\",\"days\":2}");
	CHECK_STR(args_of(f, 1), "{\"city\":\"Rome\"}");
	json_out_init(&o, msg, sizeof msg);
	api_fmt_message(f, &o, out, strlen(out));
	msg[o.len] = 0;
	CHECK_STR(msg, ",\"content\":\"I will look.\",\"tool_calls\":[{\"id\":\"call_7_0\",\"type\":"
		  "\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":"
		  "\"{\\\"city\\\":\\\"Paris\\\",\\\"days\\\":2}\"}},{\"id\":\"call_7_1\",\"type\":"
		  "\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":"
		  "\"{\\\"city\\\":\\\"Rome\\\"}\"}}]");
	/* parallel_tool_calls false: the first call */
	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
			 TOOL "],\"parallel_tool_calls\":false}", true, CHAT_CHATML), 0);
	reply(f, out);
	CHECK_EQ_INT(f->n_calls, 1);
	CHECK_STR(args_of(f, 0), "{\"city\":\"Paris\",\"days\":2}");
	/* a call cut short, text after a call, arguments not an object: all content */
	static const char *const not_calls[] = {
		"<tool_call>\n{\"name\": \"get_weather\", \"argum",
		"<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call> and more",
		"<tool_call>\n{\"name\": \"a\", \"arguments\": 5}\n</tool_call>",
		"<tool_call>\n{\"name\": \"a b\", \"arguments\": {}}\n</tool_call>",
		"no calls at all",
	};
	for (size_t i = 0; i < sizeof not_calls / sizeof not_calls[0]; i++) {
		reply(f, not_calls[i]);
		CHECK_EQ_INT(f->n_calls, 0);
		CHECK_EQ_INT(f->content_len, strlen(not_calls[i]));
	}
	json_out_init(&o, msg, sizeof msg);
	api_fmt_message(f, &o, "no calls at all", 15);
	msg[o.len] = 0;
	CHECK_STR(msg, ",\"content\":\"no calls at all\"");

	CHECK_EQ_INT(req(f, &d, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
			 TOOL "]}", true, CHAT_LLAMA3), 0);
	reply(f, " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}\n");
	CHECK_EQ_INT(f->n_calls, 1);
	CHECK_EQ_INT(f->content_len, 0);
	CHECK_STR(args_of(f, 0), "{\"city\":\"Oslo\"}");
	reply(f, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {}}");
	CHECK_EQ_INT(f->n_calls, 1);
	CHECK_STR(args_of(f, 0), "{}");
	reply(f, "The weather is {\"name\": \"x\"}");
	CHECK_EQ_INT(f->n_calls, 0);
	free(f);
}

TEST(api_json_dump_writes_python_styles)
{
	static const char *const in = "{\"a\":[1,-2.5,1e-05,3.0,1e300,{}],\"b\":{\"c\":\"\\u00e9\\n\"},\"d\":[]}";
	struct json_doc d = {nodes, 4096, 0, store, sizeof store, 0, 32, 1u << 20};
	char out[512], err[128];
	struct json_out o;

	CHECK_EQ_INT(json_parse(&d, in, strlen(in), err, sizeof err), 0);
	json_out_init(&o, out, sizeof out);
	api_json_dump(&o, &d, &d.nodes[0], API_JSON_PY);
	out[o.len] = 0;
	CHECK_STR(out, "{\"a\": [1, -2.5, 1e-05, 3.0, 1e+300, {}], \"b\": {\"c\": \"\xc3\xa9\\n\"}, \"d\": []}");
	json_out_init(&o, out, sizeof out);
	api_json_dump(&o, &d, &d.nodes[0], API_JSON_COMPACT);
	out[o.len] = 0;
	CHECK_STR(out, "{\"a\":[1,-2.5,1e-05,3.0,1e+300,{}],\"b\":{\"c\":\"\xc3\xa9\\n\"},\"d\":[]}");
	json_out_init(&o, out, sizeof out);
	api_json_dump(&o, &d, &d.nodes[0], API_JSON_INDENT4);
	out[o.len] = 0;
	CHECK_STR(out, "{\n    \"a\": [\n        1,\n        -2.5,\n        1e-05,\n        3.0,\n"
		  "        1e+300,\n        {}\n    ],\n    \"b\": {\n        \"c\": \"\xc3\xa9\\n\"\n"
		  "    },\n    \"d\": []\n}");
}

/* ---- Mistral (mistral-v3: Mistral 7B Instruct v0.3; mistral-v3-tekken:
 * Nemo): each expected prompt is python3-jinja2's render (HF's tojson,
 * trim_blocks, lstrip_blocks, the calls' arguments as objects as llama.cpp
 * passes them) of the template in tests/unit/jinja_llama_cases.h (llama.cpp's
 * copies of Mistral's v3 and v3-tekken templates) for the same messages and
 * tools, the leading BOS text left out as the tokenizer adds BOS. ---- */

#define MI_TOOLS "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"," \
	"\"description\":\"Weather of a city\",\"parameters\":{\"type\":\"object\",\"properties\":" \
	"{\"city\":{\"type\":\"string\"},\"unit\":{\"type\":\"string\",\"enum\":[\"c\",\"f\"]}}," \
	"\"required\":[\"city\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"now\"," \
	"\"description\":\"The time\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}}]"
#define MI_CALL1 "{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":" \
	"\"Weather in Paris?\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":" \
	"\"abc123XYZ\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":" \
	"\"{\\\"city\\\": \\\"Paris\\\", \\\"unit\\\": \\\"c\\\"}\"}},{\"id\":\"def456uvw\",\"type\":" \
	"\"function\",\"function\":{\"name\":\"now\",\"arguments\":\"{}\"}}]}," \
	"{\"role\":\"tool\",\"tool_call_id\":\"abc123XYZ\",\"content\":\"18 C\"}," \
	"{\"role\":\"tool\",\"tool_call_id\":\"def456uvw\",\"content\":\"noon\"}"
#define MI_TOOLS_TEXT "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", " \
	"\"description\": \"Weather of a city\", \"parameters\": {\"type\": \"object\", \"properties\": " \
	"{\"city\": {\"type\": \"string\"}, \"unit\": {\"type\": \"string\", \"enum\": [\"c\", \"f\"]}}, " \
	"\"required\": [\"city\"]}}}, {\"type\": \"function\", \"function\": {\"name\": \"now\", " \
	"\"description\": \"The time\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}}]"

TEST(api_format_mistral_prompts_match_the_templates)
{
	static const char convo[] = "{\"messages\":[" MI_CALL1 ",{\"role\":\"assistant\",\"content\":"
		"\" 18 C at noon. \"},{\"role\":\"user\",\"content\":\"And Rome?\"}]," MI_TOOLS "}";
	/* a round trip: the call, its result, the prompt for the answer (the
	 * system text is left out: the last message is not the user's) */
	static const char trip[] = "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
		"{\"role\":\"user\",\"content\":\"Weather in Paris?\"},{\"role\":\"assistant\",\"content\":"
		"null,\"tool_calls\":[{\"id\":\"abc123XYZ\",\"type\":\"function\",\"function\":{\"name\":"
		"\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]},{\"role\":\"tool\","
		"\"tool_call_id\":\"abc123XYZ\",\"content\":\"{\\\"temp\\\": 18}\"}]," MI_TOOLS "}";
	struct api_fmt *f = fmt_new();
	struct json_doc d;

	CHECK_EQ_INT(req(f, &d, convo, true, CHAT_MISTRAL_V3), 0);
	CHECK(f->tools_on && f->style == API_TOOLS_MISTRAL);
	/* auto: a lazy grammar from the array at the reply's start, several calls */
	CHECK(f->grammar && f->n_triggers == 2 && strcmp(f->triggers[0], "^[{") == 0 &&
	      strcmp(f->triggers[1], "^ [{") == 0);
	if (f->grammar)
		CHECK(accepts(f->grammar, "[{\"name\": \"now\", \"arguments\": {}, \"id\": \"abcdefghi\"}, "
			      "{\"name\": \"now\", \"arguments\": {}, \"id\": \"abcdefgh2\"}]"));
	CHECK_STR(render(f, CHAT_MISTRAL_V3),
		  "[INST] Weather in Paris?[/INST][TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": "
		  "{\"city\": \"Paris\", \"unit\": \"c\"}, \"id\": \"abc123XYZ\"}, {\"name\": \"now\", "
		  "\"arguments\": {}, \"id\": \"def456uvw\"}]</s>[TOOL_RESULTS] {\"content\": 18 C, "
		  "\"call_id\": \"abc123XYZ\"}[/TOOL_RESULTS][TOOL_RESULTS] {\"content\": noon, \"call_id\": "
		  "\"def456uvw\"}[/TOOL_RESULTS] 18 C at noon.</s>[AVAILABLE_TOOLS] " MI_TOOLS_TEXT
		  "[/AVAILABLE_TOOLS][INST] Be brief.\n\nAnd Rome?[/INST]");
	CHECK_EQ_INT(req(f, &d, convo, true, CHAT_MISTRAL_V3_TEKKEN), 0);
	CHECK_STR(render(f, CHAT_MISTRAL_V3_TEKKEN),
		  "[INST]Weather in Paris?[/INST][TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": "
		  "{\"city\": \"Paris\", \"unit\": \"c\"}, \"id\": \"abc123XYZ\"}, {\"name\": \"now\", "
		  "\"arguments\": {}, \"id\": \"def456uvw\"}]</s>[TOOL_RESULTS]{\"content\": 18 C, "
		  "\"call_id\": \"abc123XYZ\"}[/TOOL_RESULTS][TOOL_RESULTS]{\"content\": noon, \"call_id\": "
		  "\"def456uvw\"}[/TOOL_RESULTS] 18 C at noon. </s>[AVAILABLE_TOOLS]" MI_TOOLS_TEXT
		  "[/AVAILABLE_TOOLS][INST]Be brief.\n\nAnd Rome?[/INST]");
	CHECK_EQ_INT(req(f, &d, trip, true, CHAT_MISTRAL_V3), 0);
	CHECK_STR(render(f, CHAT_MISTRAL_V3),
		  "[AVAILABLE_TOOLS] " MI_TOOLS_TEXT "[/AVAILABLE_TOOLS][INST] Weather in Paris?[/INST]"
		  "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": "
		  "\"abc123XYZ\"}]</s>[TOOL_RESULTS] {\"content\": {\"temp\": 18}, \"call_id\": "
		  "\"abc123XYZ\"}[/TOOL_RESULTS]");
	CHECK_EQ_INT(req(f, &d, trip, true, CHAT_MISTRAL_V3_TEKKEN), 0);
	CHECK_STR(render(f, CHAT_MISTRAL_V3_TEKKEN),
		  "[AVAILABLE_TOOLS]" MI_TOOLS_TEXT "[/AVAILABLE_TOOLS][INST]Weather in Paris?[/INST]"
		  "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": "
		  "\"abc123XYZ\"}]</s>[TOOL_RESULTS]{\"content\": {\"temp\": 18}, \"call_id\": "
		  "\"abc123XYZ\"}[/TOOL_RESULTS]");
	/* an id that is not 9 letters and digits becomes 9 derived from it,
	 * the same for the call and its result; none at all is a 400 */
	static const char other_id[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"t?\"},"
		"{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"call_x_0\",\"type\":\"function\","
		"\"function\":{\"name\":\"now\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\","
		"\"tool_call_id\":\"call_x_0\",\"content\":\"noon\"}]," MI_TOOLS "}";
	CHECK_EQ_INT(req(f, &d, other_id, true, CHAT_MISTRAL_V3_TEKKEN), 0);
	const char *p = render(f, CHAT_MISTRAL_V3_TEKKEN), *a = strstr(p, "\"id\": \""),
		   *b = strstr(p, "\"call_id\": \"");
	CHECK(a && b && memcmp(a + 7, b + 12, 9) == 0 && a[16] == '"' && b[21] == '"');
	static const char no_id[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"t?\"},"
		"{\"role\":\"assistant\",\"tool_calls\":[{\"type\":\"function\",\"function\":{\"name\":"
		"\"now\",\"arguments\":\"{}\"}}]}]," MI_TOOLS "}";
	CHECK_EQ_INT(req(f, &d, no_id, true, CHAT_MISTRAL_V3), -LLMK_EINVAL);
	CHECK_STR(f->param, "messages[1].tool_calls[0].id");
	/* mistral-v1 has no tool format */
	CHECK_EQ_INT(req(f, &d, convo, true, CHAT_MISTRAL_V1), -LLMK_EINVAL);
	CHECK_STR(f->param, "tools");
	free(f);
}

/* FNV-1a of s, 9 base-62 digits (api_format.c's id for Mistral, written
 * again here). */
static void id9_of(const char *s, char out[10])
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	for (int i = 0; i < 9; i++, h /= 62)
		out[i] = digits[h % 62];
	out[9] = 0;
}

TEST(api_format_mistral_reply_calls_and_grammar)
{
	static const char body[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"t?\"}]," MI_TOOLS "}";
	struct api_fmt *f = fmt_new();
	struct json_doc d;

	CHECK_EQ_INT(req(f, &d, body, true, CHAT_MISTRAL_V3), 0);
	/* one call: [TOOL_CALLS] is a control token, so the text is the array */
	static const char one[] = " [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]";
	api_fmt_reply(f, one, strlen(one), "r1");
	CHECK_EQ_INT(f->n_calls, 1);
	CHECK_STR(f->calls[0].name, "get_weather");
	/* no id from the model: 9 letters and digits derived from ours */
	char k[10];
	id9_of("call_r1_0", k);
	CHECK_STR(f->calls[0].id, k);
	CHECK(f->content_len == 0);
	/* two, with the model's ids; the marker spelled out, text before it */
	static const char two[] = "Sure.[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}, \"id\": "
		"\"a1b2c3d4e\"}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}, "
		"\"id\": \"zzzzzzzzz\"}]";
	api_fmt_reply(f, two, strlen(two), "r2");
	CHECK_EQ_INT(f->n_calls, 2);
	CHECK_STR(f->calls[0].id, "a1b2c3d4e");
	CHECK_STR(f->calls[1].id, "zzzzzzzzz");
	CHECK_EQ_INT(f->content_len, 5);
	CHECK(f->calls[1].args_len == strlen("{\"city\":\"Rome\"}") &&
	      memcmp(f->calls_text + f->calls[1].args, "{\"city\":\"Rome\"}", f->calls[1].args_len) == 0);
	/* text, then the calls (the control token left no text between) */
	static const char after[] = "Let me see. [{\"name\": \"now\", \"arguments\": {}}]";
	api_fmt_reply(f, after, strlen(after), "r4");
	CHECK_EQ_INT(f->n_calls, 1);
	CHECK_EQ_INT(f->content_len, 11);
	/* malformed: all content */
	static const char *const bad[] = {
		"[{\"name\": \"now\", \"arguments\": {}",           /* cut short */
		"[{\"name\": \"now\", \"arguments\": {}}, 3]",      /* not a call */
		"[{\"name\": \"now\", \"arguments\": \"{}\"}]",     /* arguments not an object */
		"It is [1, 2].",
		"[{\"name\": \"now\", \"arguments\": {}}] and more",    /* text after the calls */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		api_fmt_reply(f, bad[i], strlen(bad[i]), "r3");
		CHECK_EQ_INT(f->n_calls, 0);
		CHECK_EQ_INT(f->content_len, strlen(bad[i]));
	}
	/* required: the grammar of one call's array, with its id */
	static const char req_body[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"t?\"}]," MI_TOOLS
		",\"tool_choice\":\"required\"}";
	CHECK_EQ_INT(req(f, &d, req_body, true, CHAT_MISTRAL_V3_TEKKEN), 0);
	CHECK(f->grammar != NULL);
	/* the prompt ends with [TOOL_CALLS]: the grammar's text follows it */
	CHECK_STR(render(f, CHAT_MISTRAL_V3_TEKKEN), "[AVAILABLE_TOOLS]" MI_TOOLS_TEXT
		  "[/AVAILABLE_TOOLS][INST]t?[/INST][TOOL_CALLS]");
	CHECK_EQ_INT(req(f, &d, req_body, true, CHAT_MISTRAL_V3), 0);
	CHECK_STR(render(f, CHAT_MISTRAL_V3), "[AVAILABLE_TOOLS] " MI_TOOLS_TEXT
		  "[/AVAILABLE_TOOLS][INST] t?[/INST][TOOL_CALLS]");
	if (f->grammar) {
		CHECK(accepts(f->grammar, "[{\"name\":\"now\",\"arguments\":{},\"id\":\"abcdefghi\"}]"));
		CHECK(accepts(f->grammar, " [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P\"}, "
			      "\"id\": \"abcdefgh1\"}]"));
		CHECK(!accepts(f->grammar, "[{\"name\":\"now\",\"arguments\":{},\"id\":\"abc\"}]"));
		CHECK(!accepts(f->grammar, "[{\"name\":\"later\",\"arguments\":{},\"id\":\"abcdefghi\"}]"));
	}
	free(f);
}

/* ---- a model's own (Jinja) template: the tools, the calls and the results
 * given to it as llama.cpp's --jinja does, rendered by llm/jinja.c; the
 * expected prompts are python3-jinja2's (tests/unit/tool_templates.h) ---- */

#include "../../llm/jinja.h"
#include "tool_templates.h"

static const char *jrender(struct api_fmt *f, const char *src, struct tok_span *sp, size_t max,
			   size_t *n_sp)
{
	static char out[65536];
	char err[200];
	struct jinja_limits lim = {malloc(JINJA_ARENA_DEFAULT), JINJA_ARENA_DEFAULT,
				   JINJA_STEPS_DEFAULT};
	struct jinja_input in = {f->msgs, f->n_msgs, true, "", "</s>", f->tools_json, false, NULL,
				 f->jinja ? f->extra : NULL, false};
	struct jinja_out o = {out, sizeof out, 0, sp, max, 0};
	int r = lim.arena ? jinja_chat(src, strlen(src), &in, &lim, &o, err, sizeof err) : -1;

	free(lim.arena);
	if (n_sp)
		*n_sp = o.n_spans;
	if (r) {
		fprintf(stderr, "  jinja: %s\n", err);
		return "(jinja failed)";
	}
	return out;
}

TEST(api_format_jinja_templates_get_the_tools_calls_and_results)
{
	static const char *const src[] = {TT_QWEN25, TT_NEMO};
	static const char *const want[][2] = {{TT_QWEN25_1, TT_QWEN25_2}, {TT_NEMO_1, TT_NEMO_2}};
	static const char *const body[] = {TT_BODY1, TT_BODY2};
	static const enum api_tools style[] = {API_TOOLS_HERMES, API_TOOLS_MISTRAL};
	struct api_fmt *f = fmt_new();
	struct tok_span sp[64];
	struct json_doc d;
	size_t n_sp;

	for (int t = 0; t < 2; t++) {
		req_src = src[t];
		for (int b = 0; b < 2; b++) {
			CHECK_EQ_INT(req(f, &d, body[b], true, CHAT_JINJA), 0);
			CHECK(f->jinja && f->tools_on && f->style == style[t] && f->tools_json);
			CHECK_STR(jrender(f, src[t], sp, 64, &n_sp), want[t][b]);
		}
		/* the client's text stays text: the call's arguments, a result */
		const char *out = jrender(f, src[t], sp, 64, &n_sp);
		const char *paris = strstr(out, "\"Paris\"}"), *temp = strstr(out, "{\"temp\": 18}");
		paris = paris ? paris + 1 : NULL; /* tojson's quotes are the template's */
		bool in_p = false, in_t = false;
		for (size_t i = 0; i < n_sp && paris && temp; i++) {
			in_p |= sp[i].off <= (size_t)(paris - out) && sp[i].off + sp[i].len > (size_t)(paris - out);
			in_t |= sp[i].off <= (size_t)(temp - out) && sp[i].off + sp[i].len > (size_t)(temp - out);
		}
		CHECK(in_p);
		CHECK(in_t);
		if (!in_p || !in_t)
			for (size_t i = 0; i < n_sp; i++)
				fprintf(stderr, "  span %zu+%zu: %.*s\n", sp[i].off, sp[i].len, (int)sp[i].len,
					out + sp[i].off);
	}
	/* Nemo's own template raises on ids not of 9 letters and digits: given
	 * 9 derived from them, as the built-in format writes them */
	static const char other_id[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"t?\"},"
		"{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"call_x_0\",\"type\":\"function\","
		"\"function\":{\"name\":\"now\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\","
		"\"tool_call_id\":\"call_x_0\",\"content\":\"noon\"}]," MI_TOOLS "}";
	char k[10], want_j[160];
	id9_of("call_x_0", k);
	req_src = TT_NEMO;
	CHECK_EQ_INT(req(f, &d, other_id, true, CHAT_JINJA), 0);
	snprintf(want_j, sizeof want_j, "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}, \"id\": "
		 "\"%s\"}]</s>[TOOL_RESULTS]{\"content\": noon, \"call_id\": \"%s\"}[/TOOL_RESULTS]", k, k);
	CHECK(strstr(jrender(f, TT_NEMO, NULL, 0, NULL), want_j) != NULL);
	CHECK_EQ_INT(req(f, &d, other_id, true, CHAT_MISTRAL_V3_TEKKEN), 0);
	CHECK(strstr(render(f, CHAT_MISTRAL_V3_TEKKEN), want_j) != NULL);
	/* a template that writes the arguments as they are gets the client's text */
	req_src = "{% for m in messages %}{% for c in m.tool_calls %}{{ c.function.arguments }}|"
		  "{{ c.id }}{% endfor %}{% if m.role == 'tool' %}{{ m.name }}:{{ m.tool_call_id }}"
		  "{% endif %}{% endfor %}{{ tools | length }}";
	CHECK_EQ_INT(req(f, &d, TT_BODY1, true, CHAT_JINJA), 0);
	CHECK(f->style == API_TOOLS_LLAMA3);
	CHECK_STR(jrender(f, req_src, NULL, 0, NULL), "{\"city\": \"Paris\", \"unit\": \"c\"}|abc123XYZ"
		  "{}|def456uvwget_weather:abc123XYZnow:def456uvw2");
	/* tool_choice none: no tools given, the calls still are */
	static const char none[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"t?\"}],"
		MI_TOOLS ",\"tool_choice\":\"none\"}";
	CHECK_EQ_INT(req(f, &d, none, true, CHAT_JINJA), 0);
	CHECK(!f->tools_on && !f->tools_json);
	/* a template that never speaks of tools refuses them */
	req_src = "{% for m in messages %}{{ m.content }}{% endfor %}";
	CHECK_EQ_INT(req(f, &d, TT_BODY2, true, CHAT_JINJA), -LLMK_EINVAL);
	CHECK_STR(f->param, "tools");
	CHECK(strstr(f->err, "jinja") != NULL);
	req_src = NULL;
	free(f);
}

TEST(api_format_jinja_replies_parse_by_the_templates_form)
{
	struct api_fmt *f = fmt_new();
	struct json_doc d;
	static const char body[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"t?\"}]," MI_TOOLS "}";

	req_src = TT_QWEN25;
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_JINJA), 0);
	static const char h[] = "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
	api_fmt_reply(f, h, strlen(h), "q");
	CHECK_EQ_INT(f->n_calls, 1);
	req_src = TT_NEMO;
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_JINJA), 0);
	static const char m[] = "[{\"name\": \"now\", \"arguments\": {}, \"id\": \"a1b2c3d4e\"}]";
	api_fmt_reply(f, m, strlen(m), "n");
	CHECK_EQ_INT(f->n_calls, 1);
	CHECK_STR(f->calls[0].id, "a1b2c3d4e");
	req_src = "{% if tools %}{{ tools | tojson }}{% endif %}";
	CHECK_EQ_INT(req(f, &d, body, true, CHAT_JINJA), 0);
	CHECK(f->style == API_TOOLS_LLAMA3);
	static const char l[] = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}";
	api_fmt_reply(f, l, strlen(l), "l");
	CHECK_EQ_INT(f->n_calls, 1);
	static const char bad[] = "{\"name\": \"get_weather\", \"parameters\": ";
	api_fmt_reply(f, bad, strlen(bad), "l");
	CHECK_EQ_INT(f->n_calls, 0);
	CHECK_EQ_INT(f->content_len, strlen(bad));
	req_src = NULL;
	free(f);
}
