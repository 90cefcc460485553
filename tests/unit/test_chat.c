/* tests/unit/test_chat.c — template detection and rendering (expected strings
 * as the models' own Jinja templates render them). */
#include "test.h"
#include "../../llm/chat.h"

static const struct chat_msg conv[] = {
	{"system", "You are helpful."},
	{"user", "Hello"},
	{"assistant", "Hi there"},
	{"user", "Who are you"},
};

static void expect(enum chat_tmpl t, const char *want)
{
	char buf[1024];
	size_t n = 0;

	CHECK_EQ_INT(chat_format(t, conv, 4, true, buf, sizeof buf, &n), 0);
	CHECK_STR(buf, want);
	CHECK_EQ_INT(n, strlen(want));
}

TEST(chat_detect_templates)
{
	CHECK_EQ_INT(chat_detect("{% for m in messages %}<|im_start|>{{m.role}}"), CHAT_CHATML);
	CHECK_EQ_INT(chat_detect("{{ bos_token + '[INST] ' + '<<SYS>>\\n' }}"), CHAT_LLAMA2_SYS_BOS);
	CHECK_EQ_INT(chat_detect("{{ '[INST] <<SYS>>\\n' + content }}"), CHAT_LLAMA2_SYS);
	CHECK_EQ_INT(chat_detect("{{ '[INST] ' + message['content'] + ' [/INST]' }}"), CHAT_LLAMA2);
	CHECK_EQ_INT(chat_detect("<|start_header_id|>' + role + '<|end_header_id|>"), CHAT_LLAMA3);
	CHECK_EQ_INT(chat_detect("'<|user|>' + '\\n' + content + '<|end|>' + '<|assistant|>'"),
		     CHAT_PHI3);
	CHECK_EQ_INT(chat_detect("'<|user|>\\n' + message['content'] + '<|endoftext|>'"), CHAT_ZEPHYR);
	/* a name is a template too (llama.cpp: llm_chat_template_from_str) */
	CHECK_EQ_INT(chat_detect("mistral-v7-tekken"), CHAT_MISTRAL_V7_TEKKEN);
	CHECK_EQ_INT(chat_detect("gemma"), CHAT_GEMMA);
	CHECK_EQ_INT(chat_detect("<start_of_turn>' + role + '\\n'"), CHAT_GEMMA);
	CHECK_EQ_INT(chat_detect("{{ messages }}"), CHAT_UNKNOWN);
	CHECK_EQ_INT(chat_detect(NULL), CHAT_UNKNOWN);
}

TEST(chat_names_round_trip)
{
	for (int t = 1; t < CHAT_N; t++) {
		enum chat_tmpl back;
		if (t == CHAT_GLMEDGE_V)
			continue; /* a second way to detect glmedge, no name of its own */
		CHECK_EQ_INT(chat_tmpl_parse(chat_tmpl_name((enum chat_tmpl)t), &back), 0);
		CHECK_EQ_INT(back, t);
	}
	enum chat_tmpl x;
	CHECK_EQ_INT(chat_tmpl_parse("jinja", &x), 0);
	CHECK_EQ_INT(x, CHAT_JINJA);
	CHECK_STR(chat_tmpl_name(CHAT_JINJA), "jinja");
	CHECK_EQ_INT(chat_tmpl_parse("jinja2", &x), -LLMK_EINVAL);
	/* the list the shell prints fits its 768 bytes, and names them all */
	char names[768];
	size_t len = chat_tmpl_list(names, sizeof names);
	CHECK(len < sizeof names && strlen(names) == len);
	CHECK(strstr(names, "chatml, ") == names + strlen("phi4, smolvlm, "));
	CHECK(strstr(names, ", mistral-v7-tekken, jinja") == names + len - strlen(", mistral-v7-tekken, jinja"));
}

TEST(chat_render_each_template)
{
	expect(CHAT_CHATML, "<|im_start|>system\nYou are helpful.<|im_end|>\n"
			    "<|im_start|>user\nHello<|im_end|>\n"
			    "<|im_start|>assistant\nHi there<|im_end|>\n"
			    "<|im_start|>user\nWho are you<|im_end|>\n"
			    "<|im_start|>assistant\n");
	expect(CHAT_LLAMA2_SYS, "[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHello [/INST]Hi there"
				"</s>[INST] Who are you [/INST]");
	expect(CHAT_LLAMA2, "[INST] You are helpful.\nHello [/INST]Hi there</s>"
			    "[INST] Who are you [/INST]");
	expect(CHAT_LLAMA3, "<|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
			    "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
			    "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
			    "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
			    "<|start_header_id|>assistant<|end_header_id|>\n\n");
	expect(CHAT_ZEPHYR, "<|system|>\nYou are helpful.<|endoftext|>\n<|user|>\nHello<|endoftext|>\n"
			    "<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n"
			    "<|assistant|>\n");
	expect(CHAT_PHI3, "<|system|>\nYou are helpful.<|end|>\n<|user|>\nHello<|end|>\n"
			  "<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n"
			  "<|assistant|>\n");
	expect(CHAT_GEMMA, "<start_of_turn>user\nYou are helpful.\n\nHello<end_of_turn>\n"
			   "<start_of_turn>model\nHi there<end_of_turn>\n"
			   "<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\n");
}

/* A rendered conversation is a prefix of the next one: what lets chat
 * reuse the cache of earlier turns. */
TEST(chat_history_is_a_prefix_of_the_next_turn)
{
	for (int t = 1; t < CHAT_N; t++) {
		if (t == CHAT_GLMEDGE_V)
			continue;
		char a[1024], b[1024];
		size_t na, nb;
		CHECK_EQ_INT(chat_format((enum chat_tmpl)t, conv, 3, false, a, sizeof a, &na), 0);
		CHECK_EQ_INT(chat_format((enum chat_tmpl)t, conv, 4, true, b, sizeof b, &nb), 0);
		CHECK(nb > na && memcmp(a, b, na) == 0);
	}
}

TEST(chat_format_refuses_a_small_buffer_a_bad_role_and_no_template)
{
	char buf[16];
	size_t n;
	struct chat_msg bad = {"user\n", "x"};

	CHECK_EQ_INT(chat_format(CHAT_CHATML, conv, 4, true, buf, sizeof buf, &n), -LLMK_ERANGE);
	CHECK_EQ_INT(chat_format(CHAT_CHATML, &bad, 1, true, buf, sizeof buf, &n), -LLMK_EINVAL);
	CHECK_EQ_INT(chat_format(CHAT_UNKNOWN, conv, 1, true, buf, sizeof buf, &n), -LLMK_EINVAL);
}

/* Every template: each message's content is where its span says, the
 * spans in order and outside every marker; gemma's system text rides in
 * the first user turn and still has its span. */
TEST(chat_spans_locate_each_message_text)
{
	for (int t = 1; t < CHAT_N; t++) {
		char buf[1024];
		struct tok_span sp[8];
		size_t n = 0, ns = 0, skip = t == CHAT_YANDEX; /* yandex leaves the system text out */

		if (t == CHAT_GLMEDGE_V)
			continue;
		CHECK_EQ_INT(chat_format_spans((enum chat_tmpl)t, conv, 4, true, buf, sizeof buf, &n,
					       sp, 8, &ns), 0);
		CHECK_EQ_INT(ns, 4 - skip);
		for (size_t i = 0; i < ns; i++) {
			const char *want = conv[i + skip].content;
			CHECK(sp[i].off + sp[i].len <= n);
			CHECK(i == 0 || sp[i].off >= sp[i - 1].off + sp[i - 1].len);
			CHECK_EQ_INT(sp[i].len, strlen(want));
			CHECK(memcmp(buf + sp[i].off, want, sp[i].len) == 0);
		}
		/* too few spans is "does not fit", never a message left unmarked */
		CHECK_EQ_INT(chat_format_spans((enum chat_tmpl)t, conv, 4, true, buf, sizeof buf, &n,
					       sp, 3 - skip, &ns), -LLMK_ERANGE);
	}
}
