/*
 * tests/unit/test_json_msgs.c — chat --messages' reader (shell/json_msgs.c):
 * RFC 8259 strings and values as written, every malformed input one error
 * with its byte, and the bounds (messages, text, depth) kept.
 */
#include "test.h"
#include "../../shell/json_msgs.h"

static int parse(const char *j, struct chat_msg *m, size_t *n, char *err)
{
	static char store[256];

	return json_msgs_parse(j, m, 4, n, store, sizeof store, err, 128);
}

TEST(json_msgs_reads_roles_contents_and_escapes)
{
	struct chat_msg m[4];
	char err[128];
	size_t n;

	CHECK_EQ_INT(parse(" [ {\"role\":\"system\",\"content\":\"a\\\"b\\\\c\\/\\n\\t\"} ,\n"
			   "{\"content\": \"\\u00e9\\u20ac\\ud83d\\ude00\", \"name\": {\"x\": [1, -2.5e+3, "
			   "true, false, null, \"s\"]}, \"role\": \"user\"} ] ", m, &n, err), 0);
	CHECK_EQ_INT(n, 2);
	CHECK_STR(m[0].role, "system");
	CHECK_STR(m[0].content, "a\"b\\c/\n\t");
	CHECK_STR(m[1].role, "user");
	CHECK_STR(m[1].content, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	CHECK_EQ_INT(parse("[]", m, &n, err), 0);
	CHECK_EQ_INT(n, 0);
}

TEST(json_msgs_refuses_malformed_input_with_one_message)
{
	static const char *const bad[] = {
		"", "{}", "[", "[{}]", "[{\"role\":\"user\"}]", "[{\"role\":\"user\",\"content\":1}]",
		"[{\"role\":\"user\",\"content\":\"x\"},]", "[{\"role\":\"user\",\"content\":\"x\"}] x",
		"[{\"role\":\"user\",\"role\":\"user\",\"content\":\"x\"}]",
		"[{\"role\":\"user\",\"content\":\"\\x\"}]", "[{\"role\":\"user\",\"content\":\"\\u12\"}]",
		"[{\"role\":\"user\",\"content\":\"\\ud800\"}]", "[{\"role\":\"user\",\"content\":\"\\udc00\"}]",
		"[{\"role\":\"user\",\"content\":\"\\u0000\"}]", "[{\"role\":\"user\",\"content\":\"a\nb\"}]",
		"[{\"role\":\"user\",\"content\":\"x\",\"n\":01}]", "[{\"role\":\"user\",\"content\":\"x\",\"n\":1.}]",
		"[{\"role\":\"user\",\"content\":\"x\",\"n\":tru}]", "[{\"role\":\"user\",\"content\":\"x",
		"[{'role':'user','content':'x'}]", "[{\"role\" \"user\",\"content\":\"x\"}]",
	};
	struct chat_msg m[4];
	size_t n;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[128] = "";
		CHECK_EQ_INT(parse(bad[i], m, &n, err), -LLMK_EINVAL);
		CHECK(strstr(err, " at byte ") != NULL);
	}
}

TEST(json_msgs_keeps_its_bounds)
{
	struct chat_msg m[4];
	char err[128], deep[128], big[400];
	size_t n, k = 0;

	/* a fifth message */
	CHECK_EQ_INT(parse("[{\"role\":\"a\",\"content\":\"\"},{\"role\":\"a\",\"content\":\"\"},"
			   "{\"role\":\"a\",\"content\":\"\"},{\"role\":\"a\",\"content\":\"\"},"
			   "{\"role\":\"a\",\"content\":\"\"}]", m, &n, err), -LLMK_ERANGE);
	/* nesting past JSON_MSGS_DEPTH in a skipped value */
	k = (size_t)snprintf(deep, sizeof deep, "[{\"role\":\"a\",\"content\":\"\",\"x\":");
	for (int i = 0; i < JSON_MSGS_DEPTH; i++)
		deep[k++] = '[';
	deep[k] = 0;
	CHECK_EQ_INT(parse(deep, m, &n, err), -LLMK_ERANGE);
	/* text past the store */
	memset(big, 'x', sizeof big);
	memcpy(big, "[{\"role\":\"a\",\"content\":\"", 24);
	memcpy(big + sizeof big - 5, "\"}]", 4);
	CHECK_EQ_INT(parse(big, m, &n, err), -LLMK_ERANGE);
}
