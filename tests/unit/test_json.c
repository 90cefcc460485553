/*
 * tests/unit/test_json.c — the API's JSON reader and writer
 * (shell/http/json.c): RFC 8259 values read as written, every malformed
 * or out-of-bounds input refused with its byte, strings written back
 * escaped so the reader returns them unchanged.
 */
#include "test.h"
#include "../../shell/http/json.h"

static struct json_node nodes[64];
static char store[256];

static int parse(struct json_doc *d, const char *j, char *err)
{
	*d = (struct json_doc){nodes, 64, 0, store, sizeof store, 0, 4, 1024};
	return json_parse(d, j, strlen(j), err, 128);
}

TEST(json_reads_objects_arrays_strings_and_numbers)
{
	struct json_doc d;
	char err[128];
	const struct json_node *n;

	CHECK_EQ_INT(parse(&d, " {\"a\": [1, -2.5e3, 0.125, true, false, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\","
			       " \"big\": 12345678901234567890, \"i\": -42} ", err), 0);
	n = json_get(&d, &d.nodes[0], "a");
	CHECK(n && n->type == JSON_ARRAY && n->count == 6);
	n = json_first(&d, n);
	CHECK(n && n->type == JSON_NUMBER && n->is_int && n->i == 1);
	n = json_next(&d, n);
	CHECK(n && n->num == -2500.0 && !n->is_int);
	n = json_next(&d, n);
	CHECK(n && n->num == 0.125);
	CHECK(json_next(&d, n)->type == JSON_TRUE);
	n = json_get(&d, &d.nodes[0], "s");
	CHECK(n && n->type == JSON_STRING && n->len == 8);
	CHECK_STR(n->str, "x\xc3\xa9\xf0\x9f\x98\x80\n");
	n = json_get(&d, &d.nodes[0], "big");
	CHECK(n && !n->is_int && n->num > 1.2e19 && n->num < 1.3e19);
	n = json_get(&d, &d.nodes[0], "i");
	CHECK(n && n->is_int && n->i == -42);
	CHECK(json_get(&d, &d.nodes[0], "none") == NULL);
}

TEST(json_refuses_malformed_input_naming_the_byte)
{
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[01]", "[1.]", "[.5]", "[1e]",
		"[-]", "[+1]", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\u0000\"",
		"\"a\nb\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "[1] x", "tru", "nul",
		"{\"a\":1,\"a\":2}", "[NaN]", "[Infinity]", "'a'", "\"abc",
	};
	struct json_doc d;
	char err[128];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = 0;
		int r = parse(&d, bad[i], err);
		if (r != -LLMK_EFORMAT)
			fprintf(stderr, "  input %zu '%s': %d\n", i, bad[i], r);
		CHECK_EQ_INT(r, -LLMK_EFORMAT);
		CHECK(strstr(err, "at byte") != NULL);
	}
}

TEST(json_keeps_its_bounds_on_depth_size_nodes_store_and_numbers)
{
	struct json_doc d;
	char err[128], big[2048];

	CHECK_EQ_INT(parse(&d, "[[[[[1]]]]]", err), -LLMK_ERANGE); /* 5 arrays deep > 4 */
	CHECK_EQ_INT(parse(&d, "[[[[1]]]]", err), 0);
	CHECK_EQ_INT(parse(&d, "[1e400]", err), -LLMK_ERANGE);
	CHECK_EQ_INT(parse(&d, "[1e-400]", err), -LLMK_ERANGE);
	CHECK_EQ_INT(parse(&d, "[1.7976931348623157e308]", err), 0);
	memset(big, ' ', sizeof big - 1);
	big[0] = '1';
	big[sizeof big - 1] = 0;
	CHECK_EQ_INT(parse(&d, big, err), -LLMK_ERANGE);          /* 2047 > 1024 bytes */
	char many[400] = "[";
	for (int i = 0; i < 70; i++)
		strcat(many, "0,");
	strcat(many, "0]");
	CHECK_EQ_INT(parse(&d, many, err), -LLMK_ERANGE);         /* 72 nodes > 64 */
	char s[400] = "[\"";
	memset(s + 2, 'a', 300);
	strcpy(s + 302, "\"]");
	CHECK_EQ_INT(parse(&d, s, err), -LLMK_ERANGE);            /* 300 bytes > the store */
	/* an empty string takes its NUL too: past the store, refused, not written */
	char empties[1200] = "{";
	for (int i = 0; i < 30; i++)
		sprintf(empties + strlen(empties), "%s\"%c\":\"\"", i ? "," : "", 'A' + i);
	strcat(empties, "}");
	*&d = (struct json_doc){nodes, 64, 0, store, 64, 0, 4, 1024};
	CHECK_EQ_INT(json_parse(&d, empties, strlen(empties), err, sizeof err), -LLMK_ERANGE);
	CHECK(d.store_len <= 64);
}

TEST(json_writes_strings_the_reader_returns_unchanged)
{
	static const char text[] = "q\"b\\s/\n\r\t\x01\x7f \xc3\xa9 \xf0\x9f\x98\x80";
	char buf[256], err[128];
	struct json_out o;
	struct json_doc d;

	json_out_init(&o, buf, sizeof buf);
	json_out_str(&o, text, sizeof text - 1);
	CHECK(!o.overflow);
	CHECK_EQ_INT(parse(&d, buf, err), 0);
	CHECK_EQ_INT(d.nodes[0].len, sizeof text - 1);
	CHECK(memcmp(d.nodes[0].str, text, sizeof text - 1) == 0);
	json_out_init(&o, buf, sizeof buf);
	json_out_str(&o, "a\xff" "b\xe2\x82", 5);                  /* not UTF-8: U+FFFD each */
	CHECK_STR(buf, "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\"");
	json_out_init(&o, buf, 4);
	json_out_cstr(&o, "abcdef");
	CHECK(o.overflow);
}

TEST(json_utf8_whole_holds_back_an_unfinished_sequence)
{
	CHECK_EQ_INT(json_utf8_whole("ab\xf0\x9f\x98", 5), 2);
	CHECK_EQ_INT(json_utf8_whole("ab\xf0\x9f\x98\x80", 6), 6);
	CHECK_EQ_INT(json_utf8_whole("a\xc3", 2), 1);
	CHECK_EQ_INT(json_utf8_whole("abc", 3), 3);
}
