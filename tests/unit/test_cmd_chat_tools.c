/*
 * tests/unit/test_cmd_chat_tools.c — chat --show-prompt --messages JSON
 * --tools FILE (shell/cmd_model.c): the conversation printed with the
 * tools written in as the API writes them (shell/http/api_format.c),
 * running nothing; the misuses are one error line each.
 */
#include "test.h"
#include "shell_fixture.h"
#include "../../tools/writer/mkmodel.h"

#define TOOLS "[{\"type\": \"function\", \"function\": {\"name\": \"now\", \"parameters\": " \
	"{\"type\": \"object\", \"properties\": {}}}}]"

TEST(cmd_chat_tools_prints_the_tool_prompt_and_refuses_misuse)
{
	static const char msgs[] = "--messages \"[{\\\"role\\\": \\\"user\\\", \\\"content\\\": \\\"t?\\\"}, "
		"{\\\"role\\\": \\\"assistant\\\", \\\"content\\\": null, \\\"tool_calls\\\": [{\\\"type\\\": "
		"\\\"function\\\", \\\"function\\\": {\\\"name\\\": \\\"now\\\", \\\"arguments\\\": \\\"{}\\\"}}]}, "
		"{\\\"role\\\": \\\"tool\\\", \\\"tool_call_id\\\": \\\"c\\\", \\\"content\\\": \\\"noon\\\"}]\"";
	char path[600], tools[640], line[2048], err[256];
	struct shell_fixture f;
	struct mkm_spec s;
	const char *out;
	FILE *fp;
	int st;

	mkm_defaults(&s);
	s.chatml = true;
	snprintf(path, sizeof path, "%s/%s", test_tmpdir(), "tools_chatml.gguf");
	CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
	snprintf(tools, sizeof tools, "%s/%s", test_tmpdir(), "tools.json");
	CHECK((fp = fopen(tools, "w")) != NULL);
	if (!fp)
		return;
	fputs(TOOLS, fp);
	fclose(fp);
	CHECK_EQ_INT(fixture_open(&f, (const char *[]){path, NULL}, NULL), 0);
	fixture_run(&f, "load 0", &st);
	CHECK_EQ_INT(st, 0);

	snprintf(line, sizeof line, "chat --show-prompt --tools %s %s", tools, msgs);
	out = fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "<|im_start|>system\n# Tools\n\n") != NULL);
	CHECK(strstr(out, "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"now\", "
		     "\"parameters\": {\"type\": \"object\", \"properties\": {}}}}\n</tools>") != NULL);
	CHECK(strstr(out, "<|im_start|>user\nt?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
		     "{\"name\": \"now\", \"arguments\": {}}\n</tool_call><|im_end|>\n<|im_start|>user\n"
		     "<tool_response>\nnoon\n</tool_response><|im_end|>\n<|im_start|>assistant\n") != NULL);
	CHECK(strstr(fixture_run(&f, "stats", &st), "no run yet"));
	/* llama3's format for the same */
	snprintf(line, sizeof line, "chat --show-prompt --chat-template llama3 --tools %s %s", tools, msgs);
	out = fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "{\"name\": \"now\", \"parameters\": {}}<|eot_id|>"
		     "<|start_header_id|>ipython<|end_header_id|>\n\n\"noon\"<|eot_id|>") != NULL);
	/* Mistral's (v3: Mistral 7B v0.3), the call with its id */
	static const char mmsgs[] = "--messages \"[{\\\"role\\\": \\\"user\\\", \\\"content\\\": "
		"\\\"t?\\\"}, {\\\"role\\\": \\\"assistant\\\", \\\"tool_calls\\\": [{\\\"id\\\": "
		"\\\"a1b2c3d4e\\\", \\\"type\\\": \\\"function\\\", \\\"function\\\": {\\\"name\\\": "
		"\\\"now\\\", \\\"arguments\\\": \\\"{}\\\"}}]}, {\\\"role\\\": \\\"tool\\\", "
		"\\\"tool_call_id\\\": \\\"a1b2c3d4e\\\", \\\"content\\\": \\\"noon\\\"}]\"";
	snprintf(line, sizeof line, "chat --show-prompt --chat-template mistral-v3 --tools %s %s", tools,
		 mmsgs);
	out = fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "[AVAILABLE_TOOLS] [{\"type\": \"function\", \"function\": {\"name\": \"now\", "
		     "\"description\": \"\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}}]"
		     "[/AVAILABLE_TOOLS][INST] t?[/INST][TOOL_CALLS] [{\"name\": \"now\", \"arguments\": {}, "
		     "\"id\": \"a1b2c3d4e\"}]</s>[TOOL_RESULTS] {\"content\": noon, \"call_id\": "
		     "\"a1b2c3d4e\"}[/TOOL_RESULTS]") != NULL);
	/* a Jinja template of its own gets the tools, the call and the result */
	char tmpl[640];
	snprintf(tmpl, sizeof tmpl, "%s/%s", test_tmpdir(), "tools.jinja");
	CHECK((fp = fopen(tmpl, "w")) != NULL);
	if (!fp)
		return;
	fputs("{% for t in tools %}<{{ t.function.name }}>{% endfor %}{% for m in messages %}"
	      "{% for c in m.tool_calls %}[{{ c.function.name }} {{ c.function.arguments | tojson }} "
	      "{{ c.id }}]{% endfor %}{% if m.role == 'tool' %}({{ m.tool_call_id }}: {{ m.content }})"
	      "{% endif %}{% endfor %}", fp);
	fclose(fp);
	snprintf(line, sizeof line, "chat --show-prompt --chat-template-file %s --tools %s %s", tmpl,
		 tools, mmsgs);
	out = fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "<now>[now {} a1b2c3d4e](a1b2c3d4e: noon)") != NULL);
	/* misuse: one error line each */
	static const char *const bad[] = {
		"chat --show-prompt --chat-template gemma --tools %s " "--messages []",
		"chat --tools %s \"hi\"",
		"infer \"x\" --tools %s",
		"chat --show-prompt --tools %s/none.json --messages []",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(line, sizeof line, bad[i], i == 3 ? test_tmpdir() : tools);
		out = fixture_run(&f, line, &st);
		CHECK(st != 0);
		CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	}
	fixture_close(&f);
}
