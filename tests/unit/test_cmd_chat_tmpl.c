/*
 * tests/unit/test_cmd_chat_tmpl.c — chat says which template it uses
 * (shell/cmd_model.c, llm/engine_chat.c): info and the first turn name it;
 * a template none of the built-in formats knows runs as itself (jinja), and
 * a template that fails is one error, never chatml without a word; --show-prompt prints the turn's prompt, and with
 * --messages a whole conversation's, running nothing.
 */
#include "test.h"
#include "shell_fixture.h"
#include "../../llm/engine.h"
#include "../../shell/shell.h"
#include "../../tools/writer/mkmodel.h"

static void tmpl_open(struct shell_fixture *f, const char *tmpl, bool chatml, const char *file)
{
	char path[600], err[256];
	struct mkm_spec s;
	int st;

	mkm_defaults(&s);
	s.chatml = chatml;
	s.chat_template = tmpl;
	snprintf(path, sizeof path, "%s/%s", test_tmpdir(), file);
	CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
	CHECK_EQ_INT(fixture_open(f, (const char *[]){path, NULL}, NULL), 0);
	fixture_run(f, "load 0", &st);
	CHECK_EQ_INT(st, 0);
}

TEST(cmd_chat_names_its_template_on_the_first_turn_and_in_info)
{
	struct shell_fixture f;
	const char *out;
	int st;

	tmpl_open(&f, NULL, true, "tmpl_chatml.gguf");
	CHECK(strstr(fixture_run(&f, "info", &st),
		     "chat template  chatml (from tokenizer.chat_template)"));
	out = fixture_run(&f, "chat \"hi\" -n 1 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "chat: template chatml (from tokenizer.chat_template)\n") == out);
	out = fixture_run(&f, "chat \"again\" -n 1 --temp 0", &st);
	CHECK(!strstr(out, "template"));
	fixture_close(&f);
}

TEST(cmd_chat_runs_a_template_it_does_not_know_as_jinja)
{
	struct shell_fixture f;
	const char *out;
	int st;

	tmpl_open(&f, "{% for m in messages %}[{{ m.role | upper }}]{{ m.content }}{% endfor %}"
		  "{% if add_generation_prompt %}[BOT]{% endif %}", false, "tmpl_odd.gguf");
	CHECK(strstr(fixture_run(&f, "info", &st), "chat template  jinja (the model's own template)"));
	out = fixture_run(&f, "chat \"hi\" -n 1 --temp 0 --show-prompt", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "chat: template jinja (the model's own template)\n") == out);
	CHECK(strstr(out, "[USER]hi[BOT]"));
	fixture_run(&f, "chat --reset", &st);
	out = fixture_run(&f, "chat \"hi\" -n 1 --temp 0 --chat-template zephyr", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "chat: template zephyr (--chat-template)\n") == out);
	/* a name that is no template lists the names, then one error */
	out = fixture_run(&f, "chat \"hi\" --chat-template zephyrr", &st);
	CHECK(st != 0);
	CHECK(strstr(out, "templates: ") == out && strstr(out, "llama3, "));
	CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	/* the config key chooses it for every chat */
	fixture_run(&f, "chat --reset", &st);
	fixture_run(&f, "config chat-template gemma", &st);
	CHECK_EQ_INT(st, 0);
	fixture_run(&f, "unload", &st);
	fixture_run(&f, "load 0", &st);
	CHECK(strstr(fixture_run(&f, "info", &st), "chat template  gemma (configured)"));
	fixture_close(&f);
}

/* The template's bos_token and eos_token are the vocabulary's texts; a
 * leading BOS text goes, as llama.cpp drops it, since the tokenizer adds BOS
 * (mkmodel's vocabulary: add_bos_token, ids 1 and 2). */
TEST(cmd_chat_jinja_gets_the_vocabularys_bos_and_eos)
{
	struct shell_fixture f;
	const char *out;
	int st;

	tmpl_open(&f, "{{ bos_token }}{% for m in messages %}{{ bos_token }}{{ m.content }}"
		  "{{ eos_token }}{% endfor %}", false, "tmpl_bos.gguf");
	out = fixture_run(&f, "chat --show-prompt --messages \"[{\\\"role\\\": \\\"user\\\", "
			  "\\\"content\\\": \\\"hi\\\"}]\"", &st);
	CHECK_EQ_INT(st, 0);
	const struct tok *t = engine_tok(f.sh->engine);
	char bos[32], eos[32], want[200];
	int nb = tok_piece(t, t->bos, TOK_PIECE_SPECIAL, bos, sizeof bos - 1);
	int ne = tok_piece(t, t->eos, TOK_PIECE_SPECIAL, eos, sizeof eos - 1);
	CHECK(nb > 0 && ne > 0);
	bos[nb > 0 ? nb : 0] = eos[ne > 0 ? ne : 0] = 0;
	snprintf(want, sizeof want, "chat: prompt (%zu bytes):\n%shi%s\n", strlen(bos) + 2 + strlen(eos),
		 bos, eos);
	CHECK_STR(out, want);
	fixture_close(&f);
}

/* A hostile template from the disk: one error line, the shell goes on. */
TEST(cmd_chat_a_failing_jinja_template_is_one_error)
{
	struct shell_fixture f;
	const char *out;
	int st;

	tmpl_open(&f, "{% for i in range(1000000000) %}x{% endfor %}", false, "tmpl_loop.gguf");
	out = fixture_run(&f, "chat \"hi\" -n 1", &st);
	CHECK(st != 0);
	CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	CHECK(strstr(out, "chat template (jinja)"));
	CHECK(strstr(out, "step budget"));
	/* --chat-template jinja runs a built-in template's own text instead */
	fixture_close(&f);
	tmpl_open(&f, NULL, true, "tmpl_chatml_j.gguf");
	out = fixture_run(&f, "chat \"hi\" -n 1 --temp 0 --show-prompt --chat-template jinja", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "chat: template jinja (--chat-template)\n") == out);
	fixture_close(&f);
	/* and a model without a template has none to run */
	tmpl_open(&f, NULL, false, "tmpl_none_j.gguf");
	out = fixture_run(&f, "chat \"hi\" -n 1 --chat-template jinja", &st);
	CHECK(st != 0);
	CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	CHECK(strstr(out, "no tokenizer.chat_template to run"));
	fixture_close(&f);
}

/* --chat-template-file: a template from a file (the host's; the kernel's boot
 * volume), for --messages and for a turn; a file that is not there is one error. */
TEST(cmd_chat_template_file_runs_that_template)
{
	struct shell_fixture f;
	char path[600], line[900];
	const char *out;
	FILE *fp;
	int st;

	snprintf(path, sizeof path, "%s/tmpl_file.jinja", test_tmpdir());
	CHECK((fp = fopen(path, "w")) != NULL);
	if (!fp)
		return;
	fputs("{%- for m in messages %}<{{ m.role }}>{{ m.content | trim }}\n{% endfor %}"
	      "{%- if add_generation_prompt %}<bot>{% endif %}", fp);
	fclose(fp);
	tmpl_open(&f, NULL, true, "tmpl_file.gguf");
	snprintf(line, sizeof line, "chat --show-prompt --chat-template-file %s --messages "
		 "\"[{\\\"role\\\": \\\"user\\\", \\\"content\\\": \\\" hi \\\"}]\"", path);
	out = fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);
	CHECK_STR(out, "chat: prompt (14 bytes):\n<user>hi\n<bot>\n");
	snprintf(line, sizeof line, "chat \"yo\" -n 1 --temp 0 --chat-template-file %s", path);
	out = fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "chat: template jinja (--chat-template-file)\n") == out);
	out = fixture_run(&f, "chat \"yo\" --chat-template-file /nonexistent/t.jinja", &st);
	CHECK(st != 0);
	CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	fixture_close(&f);
}

TEST(cmd_chat_show_prompt_prints_the_formatted_turn)
{
	struct shell_fixture f;
	const char *out;
	int st;

	tmpl_open(&f, NULL, true, "tmpl_show.gguf");
	out = fixture_run(&f, "chat \"hi\" -n 1 --temp 0 --system \"be brief\" --show-prompt", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "chat: prompt (90 bytes):\n<|im_start|>system\nbe brief<|im_end|>\n"
		     "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n\n"));
	fixture_close(&f);
}

TEST(cmd_chat_messages_prints_a_conversation_and_runs_nothing)
{
	/* the shell's quotes: \" is a quote, \\ a backslash (shell/args.c) */
	static const char cmd[] = "chat --show-prompt --messages \"[{\\\"role\\\": \\\"system\\\", "
		"\\\"content\\\": \\\"Be brief\\\"}, {\\\"role\\\": \\\"user\\\", \\\"content\\\": "
		"\\\"caf\\\\u00e9?\\\"}]\"";
	struct shell_fixture f;
	char line[400];
	const char *out;
	int st;

	tmpl_open(&f, NULL, true, "tmpl_msgs.gguf");
	out = fixture_run(&f, cmd, &st);
	CHECK_EQ_INT(st, 0);
	CHECK_STR(out, "chat: prompt (94 bytes):\n<|im_start|>system\nBe brief<|im_end|>\n"
		  "<|im_start|>user\ncaf\xc3\xa9?<|im_end|>\n<|im_start|>assistant\n\n");
	CHECK(strstr(fixture_run(&f, "stats", &st), "no run yet"));
	/* another template for this one */
	snprintf(line, sizeof line, "%s --chat-template llama3", cmd);
	CHECK(strstr(fixture_run(&f, line, &st), "<|start_header_id|>system<|end_header_id|>\n\n"
		     "Be brief<|eot_id|>"));
	/* malformed: one error line */
	out = fixture_run(&f, "chat --show-prompt --messages \"[{\\\"role\\\": \\\"user\\\"}]\"", &st);
	CHECK(st != 0);
	CHECK_STR(out, "error: chat: --messages: a message needs \"role\" and \"content\" at byte 17\n");
	out = fixture_run(&f, "chat --messages []", &st);
	CHECK(st != 0 && fixture_count(out, "error: ") == 1);
	fixture_close(&f);
}
