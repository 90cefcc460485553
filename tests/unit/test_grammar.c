/*
 * tests/unit/test_grammar.c — llm/grammar.c and grammar_match.c: the cases
 * of llama.cpp's tests/test-grammar-parser.cpp (which grammars parse and
 * which are refused) and test-grammar-integration.cpp (which strings each
 * grammar accepts), written down again here as tables, and the bounds.
 */
#include "test.h"
#include "../../llm/grammar.h"

static struct gram_state st[2];

struct gcase {
	const char *grammar;
	const char *pass[24];
	const char *fail[24];
};

static int parse(struct gram *g, struct llm_mem *m, const char *text, char *err, size_t n)
{
	llm_mem_init(m, 0);
	return gram_parse(g, m, text, strlen(text), err, n);
}

static int run_cases(const struct gcase *c, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		struct llm_mem m;
		struct gram g;
		char err[160];
		if (parse(&g, &m, c[i].grammar, err, sizeof err)) {
			fprintf(stderr, "  grammar %zu refused: %s\n", i, err);
			bad++;
			continue;
		}
		for (int k = 0; c[i].pass[k]; k++)
			if (!gram_accepts(&g, c[i].pass[k], strlen(c[i].pass[k]), st)) {
				fprintf(stderr, "  grammar %zu refused \"%s\"\n", i, c[i].pass[k]);
				bad++;
			}
		for (int k = 0; c[i].fail[k]; k++)
			if (gram_accepts(&g, c[i].fail[k], strlen(c[i].fail[k]), st)) {
				fprintf(stderr, "  grammar %zu accepted \"%s\"\n", i, c[i].fail[k]);
				bad++;
			}
		gram_free(&g);
		CHECK_EQ_INT(m.used, 0);
	}
	return bad;
}

/* test-grammar-integration.cpp's grammar cases (those without token
 * references <[id]>, which our format does not have yet). */
static const struct gcase integration[] = {
	{"root ::= expr\nexpr ::= term (\"+\" term)*\nterm ::= number\nnumber ::= [0-9]+",
	 {"42", "1+2+3+4+5", "123+456"}, {"+", "/ 3", "1+2+3+4+5+", "12a45"}},
	{"root ::= expression\n"
	 "expression ::= term ws ((\"+\"|\"-\") ws term)*\n"
	 "term ::= factor ws ((\"*\"|\"/\") ws factor)*\n"
	 "factor ::= number | variable | \"(\" expression \")\" | function-call\n"
	 "number ::= [0-9]+\n"
	 "variable ::= [a-zA-Z_][a-zA-Z0-9_]*\n"
	 "function-call ::= variable ws \"(\" (expression (\",\" ws expression)*)? \")\"\n"
	 "ws ::= [ \\t\\n\\r]?",
	 {"42", "1*2*3*4*5", "x", "x+10", "x1+y2", "(a+b)*(c-d)", "func()", "func(x,y+2)",
	  "a*(b+c)-d/e", "f(g(x),h(y,z))", "x + 10", "x1 + y2", "(a + b) * (c - d)",
	  "func(x, y + 2)", "a * (b + c) - d / e", "f(g(x), h(y, z))", "123+456",
	  "123*456*789-123/456+789*123",
	  "123+456*789-123/456+789*123-456/789+123*456-789/123+456*789-123/456+789*123-456"},
	 {"+", "/ 3x", "x + + y", "a * / b", "func(,)", "func(x y)", "(a + b", "x + y)",
	  "a + b * (c - d", "42 +", "x +", "x + 10 +", "(a + b) * (c - d", "func(",
	  "func(x, y + 2", "a * (b + c) - d /", "f(g(x), h(y, z)",
	  "123+456*789-123/456+789*123-456/789+123*456-789/123+456*789-123/456+789*123-456/"}},
	{"root ::= ... \"abc\" ...",
	 {"abcabcabc", "aaaabcccc", "\xf0\x9f\x94\xb5\xf0\x9f\x9f\xa0\xe2\x9c\x85" "abc"
	  "\xe2\x9d\x8c\xf0\x9f\x9f\xa0\xf0\x9f\x94\xb5"},
	 {"aaabcccc", "aaaaabcccc", "aaaabccc", "aaaabccccc",
	  "\xf0\x9f\x94\xb5\xf0\x9f\x9f\xa0\xe2\x9c\x85\xe2\x9d\x8c" "abc"
	  "\xe2\x9d\x8c\xe2\x9c\x85\xf0\x9f\x9f\xa0\xf0\x9f\x94\xb5",
	  "\xf0\x9f\x94\xb5\xf0\x9f\x9f\xa0" "abc" "\xf0\x9f\x9f\xa0\xf0\x9f\x94\xb5"}},
	{"root ::= \"a\"*", {"", "a", "aaaaa", "aaaaaaaaaaaaaaaaaa"}, {"b", "ab", "aab", "ba"}},
	{"root ::= \"a\"+", {"a", "aaaaa", "aaaaaaaaaaaaaaaaaa"}, {"", "b", "ab", "aab", "ba"}},
	{"root ::= \"a\"?", {"", "a"}, {"b", "ab", "aa", "ba"}},
	{"root ::= cons+ vowel* cons? (vowel cons)*\nvowel ::= [aeiouy]\n"
	 "cons ::= [bcdfghjklmnpqrstvwxyz]",
	 {"yes", "no", "noyes", "crwth", "four", "bryyyy"}, {"yess", "yesno", "forty", "catyyy"}},
	{"root ::= [ab]{4}", {"aaaa", "bbbb", "abab"}, {"a", "b", "aaaaa"}},
	{"root ::= [ab]{4,}", {"aaaa", "aaaaab", "bbbb", "ababab"}, {"", "aba"}},
	{"root ::= [ab]{0,4}", {"", "a", "aa", "aaa", "aaab"}, {"aaaaa"}},
	{"root ::= (\"0x\" [A-F0-9]{2} \" \"?){3,5}",
	 {"0xFF 0x12 0xAB", "0xFF 0x12 0xAB 0x00 0x00"},
	 {"", "0xFF", "0xFF 0x12", "0xFF 0x12 0xAB 0x00 0x00 0x00"}},
	{"root ::= ( [x]* )*", {"", "x", "xx"}, {"y", "yy"}},
	/* ours: UTF-8 as RFC 3629 has it, no overlong forms or surrogates */
	{"root ::= \"{\" [^a]*", {"{\xc3\xa9\xf0\x9f\x94\xb5"},
	 {"\xc1\xbb", "{\xe0\x81\xbb", "{\xed\xa0\x80", "{\xed\xa2", "{\xf4\x90\x80\x80", "{\xc3"}},
};

TEST(grammar_accepts_and_refuses_the_strings_of_llama_cpps_integration_cases)
{
	CHECK_EQ_INT(run_cases(integration, sizeof integration / sizeof *integration), 0);
}

/* Grammars of test-grammar-parser.cpp that parse, with strings of their
 * language (the test compares element dumps; we compare languages). */
static const struct gcase parser_ok[] = {
	{"root ::= \"a\"{0,5000}", {"", "a", "aaaaaaaaaa"}, {"b"}},
	{"root ::= \"a\"{3,5000}", {"aaa", "aaaaaaa"}, {"", "aa"}},
	{"root  ::= \"a\"", {"a"}, {"", "aa"}},
	{"root  ::= \"a\" | [bdx-z] | [^1-3]", {"a", "b", "d", "y", "4", "q"}, {"1", "3", ""}},
	{"root  ::= a+\na     ::= \"a\"", {"a", "aa"}, {""}},
	{"root  ::= a?\na     ::= \"a\"", {"", "a"}, {"aa"}},
	{"root  ::= a*\na     ::= \"a\"", {"", "aaa"}, {"b"}},
	{"root  ::= \"a\"{2}", {"aa"}, {"a", "aaa"}},
	{"root  ::= \"a\"{2,}", {"aa", "aaaa"}, {"a"}},
	{"root  ::= \"a\"{ 4}", {"aaaa"}, {"aaa"}},
	{"root  ::= \"a\"{2,4}", {"aa", "aaa", "aaaa"}, {"a", "aaaaa"}},
	{"root  ::= (expr \"=\" term \"\\n\")+\nexpr  ::= term ([-+*/] term)*\nterm  ::= [0-9]+",
	 {"1+2=3\n", "1=1\n22*3=66\n"}, {"1+2=3", "=3\n", "1+=3\n"}},
	{"root  ::= (expr \"=\" ws term \"\\n\")+\nexpr  ::= term ([-+*/] term)*\n"
	 "term  ::= ident | num | \"(\" ws expr \")\" ws\nident ::= [a-z] [a-z0-9_]* ws\n"
	 "num   ::= [0-9]+ ws\nws    ::= [ \\t\\n]*",
	 {"a=b\n", "(x1+2)*y=  3\n", "a = b\n"}, {"a=\n", "1a=2\n"}},
	/* escapes, comments, newlines inside groups, alternation after '|' */
	{"# a comment\nroot ::= \"\\x41\\u00e9\\t\" | # here too\n  ( \"b\"\n \"c\" ) [\\]\\-]",
	 {"A\xc3\xa9\t", "bc]", "bc-"}, {"A", "bc"}},
};

TEST(grammar_parses_llama_cpps_parser_cases_into_the_same_languages)
{
	CHECK_EQ_INT(run_cases(parser_ok, sizeof parser_ok / sizeof *parser_ok), 0);
}

TEST(grammar_refuses_what_llama_cpp_refuses_with_one_line_naming_line_and_column)
{
	static const char *const bad[] = {
		/* test-grammar-parser.cpp's failures */
		"\n        root ::= \"a\"{,}\"\n    ",
		"\n        root ::= (((((([^x]*){0,99}){0,99}){0,99}){0,99}){0,99}){0,99}\n    ",
		"\n        root ::= \"a\"{,10}\"\n    ",
		"\n        root ::= \"a\"{5000}\n    ",
		"\n        root ::= \"a\"{5000,}\n    ",
		"\n        root ::= \"a\"{5000,6000}\n    ",
		/* test-grammar-integration.cpp's: missing root, missing reference,
		 * left recursion */
		"rot ::= expr\nexpr ::= term (\"+\" term)*\nterm ::= number\nnumber ::= [0-9]+",
		"root ::= expr\nexpr ::= term (\"+\" term)*\nterm ::= numero\nnumber ::= [0-9]+",
		"root ::= \"a\" | root \"a\"",
		"root ::= asdf\nasdf ::= \"a\" | asdf \"a\"",
		"root ::= asdf\nasdf ::= \"a\" | foo \"b\"\nfoo ::= \"c\" | asdf \"d\" | \"e\"",
		"root ::= asdf\nasdf ::= \"a\" | foo \"b\"\nfoo ::= \"c\" | empty asdf \"d\" | \"e\"\n"
		"empty ::= \"blah\" | ",
		/* ours: syntax, and a language with no finite string */
		"root ::= \"abc", "root ::= [a-", "root ::= (\"a\"", "root ::= \"\\q\"",
		"root = \"a\"", "root ::= *", "root ::= \"a\" )", "root ::= [z-a]",
		"root ::= \"a\" root", "root ::= x\nx ::= \"a\" x",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct llm_mem m;
		struct gram g;
		char err[160] = "";
		int r = parse(&g, &m, bad[i], err, sizeof err);
		if (r == 0) {
			fprintf(stderr, "  parsed: %s\n", bad[i]);
			gram_free(&g);
		}
		CHECK(r == -LLMK_EFORMAT || r == -LLMK_ERANGE);
		CHECK(!strncmp(err, "line ", 5));
		CHECK(!strchr(err, '\n'));
		CHECK_EQ_INT(m.used, 0);
	}
}

TEST(grammar_error_names_the_line_and_column_of_the_fault)
{
	struct llm_mem m;
	struct gram g;
	char err[160];

	CHECK_EQ_INT(parse(&g, &m, "root ::= a\na ::= \"x\" | [b-", err, sizeof err),
		     -LLMK_EFORMAT);
	CHECK_STR(err, "line 2, column 16: unexpected end of input in a character class");
	CHECK_EQ_INT(parse(&g, &m, "root ::= a b\na ::= \"x\"", err, sizeof err), -LLMK_EFORMAT);
	CHECK_STR(err, "line 1, column 12: undefined rule 'b'");
	CHECK_EQ_INT(parse(&g, &m, "root ::= \"a\"\nx ::= x \"b\"", err, sizeof err),
		     -LLMK_EFORMAT);
	CHECK_STR(err, "line 2, column 1: left recursion in rule 'x'");
}

/* A JSON grammar (after llama.cpp's grammars/json.gbnf, written anew). */
static const char json_gbnf[] =
	"root   ::= object\n"
	"value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
	"object ::= \"{\" ws ( string \":\" ws value (\",\" ws string \":\" ws value)* )? \"}\" ws\n"
	"array  ::= \"[\" ws ( value (\",\" ws value)* )? \"]\" ws\n"
	"string ::= \"\\\"\" ( [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4}) )* \"\\\"\" ws\n"
	"number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws\n"
	"ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

TEST(grammar_matches_json_objects_and_refuses_broken_ones)
{
	static const struct gcase c[] = {
		{json_gbnf,
		 {"{}", "{\"a\": 1}", "{\"a\": [1, 2.5, -3e4, true, null], \"b\": {\"c\": \"d\\u00e9\"}}",
		  "{\"\xc3\xa9\": \"\xe2\x9c\x85\"}"},
		 {"", "[]", "{", "{\"a\"}", "{\"a\": 01}", "{\"a\": \"\x01\"}", "{a: 1}",
		  "{\"a\": 1,}"}},
	};
	CHECK_EQ_INT(run_cases(c, 1), 0);
}

TEST(grammar_bounds_a_hostile_grammar_to_a_refusal_not_a_hang)
{
	struct llm_mem m;
	struct gram g;
	char err[160];
	char deep[400];
	size_t n = 0;

	/* groups nested past GRAM_MAX_NESTING */
	n += (size_t)snprintf(deep, sizeof deep, "root ::= ");
	for (int i = 0; i < 100; i++)
		deep[n++] = '(';
	deep[n++] = '"';
	deep[n++] = 'a';
	deep[n++] = '"';
	for (int i = 0; i < 100; i++)
		deep[n++] = ')';
	deep[n] = 0;
	CHECK_EQ_INT(parse(&g, &m, deep, err, sizeof err), -LLMK_ERANGE);
	/* recursion deeper than the stacks hold: refused at that depth */
	CHECK_EQ_INT(parse(&g, &m, "root ::= \"(\" root \")\" | \"x\"", err, sizeof err), 0);
	char s[600];
	for (int i = 0; i < 300; i++)
		s[i] = '(';
	s[300] = 0;
	CHECK(!gram_accepts(&g, s, 300, st));
	CHECK(gram_accepts(&g, "((x))", 5, st));
	gram_free(&g);
}

/* test-grammar-integration.cpp's schema cases (those the converter draws),
 * and test-json-schema-to-grammar.cpp's kinds, by strings. */
struct scase {
	const char *schema;
	const char *pass[16];
	const char *fail[16];
};

static const struct scase schemas[] = {
	/* pattern: test-json-schema-to-grammar.cpp's regexp cases, and the shorthands ours adds */
	{"{\"type\": \"string\", \"pattern\": \"^abc?d*efg+(hij)?kl$\"}",
	 {"\"abdefgkl\"", "\"abcddddefgggghijkl\"", "\"abcefgkl\" "},
	 {"\"abcdefkl\"", "\"abc\"", "\"abdefgklm\"", "abdefgkl"}},
	{"{\"type\": \"string\", \"pattern\": \"^\\\\[\\\\]\\\\{\\\\}\\\\(\\\\)\\\\|\\\\+\\\\*\\\\?$\"}",
	 {"\"[]{}()|+*?\""}, {"\"[]\"", "\"\\\\[]{}()|+*?\""}},
	{"{\"type\": \"string\", \"pattern\": \"^(\\\\([0-9]{1,3}\\\\))?[0-9]{3}-[0-9]{4} a{3,4}$\"}",
	 {"\"(123)456-7890 aaa\"", "\"456-7890 aaaa\"", "\"(1)456-7890 aaa\""},
	 {"\"(1234)456-7890 aaa\"", "\"456-7890 aa\"", "\"456-7890 aaaaa\"", "\"()456-7890 aaa\""}},
	{"{\"type\": \"string\", \"pattern\": \"^[a-z]+@\\\\w+\\\\.(?:com|org)$\"}",
	 {"\"me@x1.com\"", "\"a@B_.org\""}, {"\"me@x.net\"", "\"@x.com\"", "\"me@x1com\""}},
	{"{\"type\": \"string\", \"pattern\": \"^x.y\\\\d{2,}$\"}", {"\"x-y12\"", "\"x y123\""},
	 {"\"x\ny12\"", "\"xy12\"", "\"x-y1\""}},
	{"{\"type\": \"string\", \"pattern\": \"^[\\\\-a\\\\]]\\\\s[^0-9]$\"}", {"\"- b\"", "\"]\tx\"", "\"a\n-\""},
	 {"\"b b\"", "\"a 1\"", "\"a\""}},
	/* allOf: test-json-schema-to-grammar.cpp's "allOf with $ref and anyOf" */
	{"{\"allOf\": [{\"$ref\": \"#/definitions/foo\"}, {\"$ref\": \"#/definitions/bar\"}, "
	 "{\"anyOf\": [{\"$ref\": \"#/definitions/baz\"}, {\"$ref\": \"#/definitions/bam\"}]}], "
	 "\"definitions\": {\"foo\": {\"properties\": {\"a\": {\"type\": \"number\"}}}, "
	 "\"bar\": {\"properties\": {\"b\": {\"type\": \"number\"}}}, "
	 "\"bam\": {\"properties\": {\"c\": {\"type\": \"number\"}}}, "
	 "\"baz\": {\"properties\": {\"d\": {\"type\": \"number\"}}}}}",
	 {"{\"a\": 1, \"b\": 2}", "{\"a\": 1, \"b\": 2, \"d\": 3}", "{\"a\": 1, \"b\": 2, \"c\": 3}",
	  "{\"a\": 1, \"b\": 2, \"d\": 3, \"c\": 4}"},
	 {"{\"a\": 1}", "{\"b\": 2, \"a\": 1}", "{\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}",
	  "{\"a\": 1, \"b\": 2, \"e\": 5}"}},
	{"{\"allOf\": [{\"properties\": {\"x\": {\"const\": 1}}, \"required\": []}, "
	 "{\"type\": \"object\", \"properties\": {\"y\": {\"type\": \"boolean\"}}}]}",
	 {"{\"x\": 1, \"y\": true}"}, {"{\"x\": 1}", "{\"y\": true}", "{\"x\": 2, \"y\": true}"}},
	{"{\"pattern\": \"^\\u00e9+$\"}", {"\"\xc3\xa9\xc3\xa9\""}, {"\"e\"", "\"\""}},
	{"{}", {"{}", "{\"foo\": \"bar\"}"}, {"", "[]", "null", "\"\"", "true"}},
	{"{\"type\": \"string\"}", {"\"foo\"", "\"bar\"", "\"\""}, {"{}", "\"foo\": \"bar\""}},
	{"{\"type\": \"string\", \"minLength\": 1}", {"\"foo\"", "\"bar\""}, {"\"\"", "{}"}},
	{"{\"type\": \"string\", \"minLength\": 3}", {"\"foo\"", "\"foobar\""}, {"\"\"", "\"f\"", "\"fo\""}},
	{"{\"type\": \"string\", \"maxLength\": 3}", {"\"foo\"", "\"\"", "\"f\"", "\"fo\""}, {"\"foobar\""}},
	{"{\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4}", {"\"foo\"", "\"f\"", "\"barf\""},
	 {"\"\"", "\"barfo\"", "\"foobar\""}},
	{"{\"type\": \"boolean\"}", {"true", "false"}, {"\"\"", "\"true\"", "True", "FALSE"}},
	{"{\"type\": \"integer\"}", {"0", "12345", "1234567890123456"},
	 {"", "01", "007", "12345678901234567  "}},
	{"{\"const\": \"foo\"}", {"\"foo\""}, {"foo", "\"bar\""}},
	{"{\"const\": true}", {"true"}, {"", "foo", "\"true\""}},
	{"{\"enum\": [\"red\", \"amber\", \"green\", null, 42, [\"foo\"]]}",
	 {"\"red\"", "null", "42", "[\"foo\"]"}, {"", "420", "true", "foo"}},
	{"{\"type\": [\"array\", \"null\"], \"items\": {\"type\": \"string\"}}",
	 {"null", "[]", "[\"123\"]", "[\"foo\", \"bar\"]"}, {"", "[123]", "\"foo\"", "[\"foo\", 42]"}},
	{"{\"items\": {\"type\": [\"number\", \"integer\"]}, \"minItems\": 3, \"maxItems\": 5}",
	 {"[1, 2, 3]", "[1, 2, 3, 4]", "[1, 2, 3, 4, 5]"}, {"[1, 2]", "[1, 2, 3, 4, 5, 6]", "1"}},
	{"{\"type\": \"object\", \"properties\": {\"number\": {\"type\": \"number\"}, "
	 "\"street_name\": {\"type\": \"string\"}, \"street_type\": {\"enum\": [\"Street\", "
	 "\"Avenue\", \"Boulevard\"]}}}",
	 {"{ \"number\": 1600, \"street_name\": \"Pennsylvania\", \"street_type\":\"Avenue\"}",
	  "{ \"street_name\": \"Pennsylvania\" }", "{ \"number\": 1600, \"street_name\": \"Pennsylvania\" }",
	  "{}"},
	 {"{ \"number\": \"1600\", \"street_name\": \"Pennsylvania\" }",
	  "{ \"street_name\": \"Pennsylvania\", \"number\": 1600 }",
	  "{ \"number\": 1600, \"street_name\": \"Pennsylvania\", \"street_type\":\"Avenue\", \"direction\":\"NW\"}"}},
	{"{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, \"b\": {\"type\": \"string\"}},"
	 " \"required\": [\"b\"], \"additionalProperties\": false}",
	 /* required first, then the optional ones (llama.cpp's order) */
	 {"{\"b\": \"x\"}", "{\"b\": \"x\", \"a\": 1}"},
	 {"{}", "{\"a\": 1}", "{\"a\": 1, \"b\": \"x\"}", "{\"b\": \"x\", \"c\": 1}"}},
	{"{\"$defs\": {\"n\": {\"type\": \"object\", \"properties\": {\"next\": {\"$ref\": \"#/$defs/n\"}}}},"
	 " \"$ref\": \"#/$defs/n\"}",
	 {"{}", "{\"next\": {}}", "{\"next\": {\"next\": {}}}"}, {"{\"next\": 1}"}},
	{"{\"prefixItems\": [{\"type\": \"integer\"}, {\"type\": \"string\"}]}",
	 {"[1, \"a\"]"}, {"[1]", "[\"a\", 1]"}},
	{"{\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"null\"}]}", {"1", "null"}, {"\"1\""}},
	{"{\"items\": [{\"format\": \"date\"}, {\"format\": \"uuid\"}, {\"format\": \"time\"}, "
	 "{\"format\": \"date-time\"}]}",
	 {"[\"2012-04-23\", \"12345678-1234-1234-1234-1234567890ab\", \"18:25:43.511Z\", "
	  "\"2012-04-23T18:25:43.511Z\"]"},
	 {"[\"foo\", \"bar\"]", "[\"12345678-1234-1234-1234-1234567890ab\"]"}},
	{"{\"type\": \"array\", \"prefixItems\": {\"type\": \"string\"}}",
	 {"[]", "[\"a\", \"b\"]"}, {"[1]"}},
	{"{\"items\": {\"type\": \"boolean\"}, \"maxItems\": 0}", {"[]"}, {"[true]"}},
	{"{\"items\": {\"type\": \"boolean\"}, \"maxItems\": 2}", {"[]", "[true, false]"},
	 {"[true, true, true]"}},
	{"{\"items\": {\"type\": \"boolean\"}, \"minItems\": 2}", {"[true, false]", "[true,true,true]"},
	 {"[]", "[true]"}},
	{"{\"type\": \"object\", \"additionalProperties\": false}", {"{}", "{ }"}, {"{\"a\": 1}"}},
	{"{\"type\": \"object\", \"additionalProperties\": {\"type\": \"array\", \"items\": "
	 "{\"type\": \"number\"}}}", {"{}", "{\"x\": [1, 2.5]}", "{\"x\": [], \"y\": [3]}"},
	 {"{\"x\": 1}", "{\"x\": [\"a\"]}"}},
	{"{\"properties\": {\"a\": {\"type\": \"string\"}, \"b\": {\"type\": \"string\"}, "
	 "\"c\": {\"type\": \"string\"}}, \"additionalProperties\": false}",
	 {"{}", "{\"a\": \"\"}", "{\"b\": \"\", \"c\": \"\"}", "{\"a\": \"\", \"c\": \"\"}"},
	 {"{\"c\": \"\", \"a\": \"\"}", "{\"d\": \"\"}"}},
	{"{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"number\"}}, \"required\": [\"a\"], "
	 "\"additionalProperties\": {\"type\": \"string\"}}",
	 {"{\"a\": 1}", "{\"a\": 1, \"b\": \"x\"}"}, {"{\"b\": \"x\"}", "{\"a\": 1, \"b\": 2}"}},
	{"{\"type\": \"string\"}", {"\"a\"\n\n  "}, {"\"a\"\n\n\n"}},
	/* integers with bounds: test-grammar-integration.cpp's cases */
	{"{\"type\": \"integer\", \"minimum\": 0}", {"0", "10", "12", "10000"},
	 {"-1", "-10", "-10000", "-100000000000000000000000000000000",
	  "100000000000000000000000000000000", "00", "01", "-0"}},
	{"{\"type\": \"integer\", \"minimum\": 2}", {"2", "3", "4", "10", "20", "1234567890000000"},
	 {"0", "1", "-1", "-100", "01", "02", "12345678900000000"}},
	{"{\"type\": \"integer\", \"minimum\": 456}", {"456", "4560", "457", "460", "500"},
	 {"455", "356", "50", "050", "-1", "-456"}},
	{"{\"type\": \"integer\", \"minimum\": -123}",
	 {"-123", "-122", "-11", "-1", "0", "1", "123", "1234", "2345"}, {"-1234", "-124"}},
	{"{\"type\": \"integer\", \"maximum\": 9999}", {"-99999", "0", "9999"}, {"10000", "99991"}},
	{"{\"type\": \"integer\", \"maximum\": -9999}", {"-10000", "-9999"}, {"-9998", "0", "9999"}},
	{"{\"type\": \"integer\", \"minimum\": 5, \"maximum\": 30}", {"5", "10", "30"},
	 {"05", "4", "-1", "31", "123", "0123"}},
	{"{\"type\": \"integer\", \"exclusiveMinimum\": 0, \"maximum\": 900719925474091}",
	 {"1", "2", "10", "900719925474090", "900719925474091"},
	 {"0", "01", "900719925474092", "9007199254740910"}},
	{"{\"type\": \"integer\", \"minimum\": -1, \"maximum\": 1}", {"-1", "0", "1"},
	 {"-11", "-10", "-2", "2", "10", "11"}},
	{"{\"type\": \"integer\", \"minimum\": -123, \"maximum\": 42}",
	 {"-123", "-122", "-13", "-11", "-2", "-1", "0", "1", "5", "10", "39", "40", "42"},
	 {"-0123", "-124", "-1123", "-200", "43", "123", "0123"}},
	{"{\"type\": \"integer\", \"exclusiveMinimum\": 0, \"exclusiveMaximum\": 10000}",
	 {"1", "9999"}, {"0", "01", "10000", "99999"}},
};

TEST(grammar_schema_draws_the_language_llama_cpp_draws_for_each_schema)
{
	static char out[GRAM_SCHEMA_OUT];
	int bad = 0;

	for (size_t i = 0; i < sizeof schemas / sizeof *schemas; i++) {
		struct llm_mem m;
		struct gram g;
		char err[160];
		llm_mem_init(&m, 0);
		if (gram_schema(schemas[i].schema, strlen(schemas[i].schema), out, sizeof out, &m,
				err, sizeof err) ||
		    gram_parse(&g, &m, out, strlen(out), err, sizeof err)) {
			fprintf(stderr, "  schema %zu: %s\n%s", i, err, out);
			bad++;
			continue;
		}
		for (int k = 0; schemas[i].pass[k]; k++)
			if (!gram_accepts(&g, schemas[i].pass[k], strlen(schemas[i].pass[k]), st)) {
				fprintf(stderr, "  schema %zu refused %s\n", i, schemas[i].pass[k]);
				bad++;
			}
		for (int k = 0; schemas[i].fail[k]; k++)
			if (gram_accepts(&g, schemas[i].fail[k], strlen(schemas[i].fail[k]), st)) {
				fprintf(stderr, "  schema %zu accepted %s\n", i, schemas[i].fail[k]);
				bad++;
			}
		gram_free(&g);
		CHECK_EQ_INT(m.used, 0);
	}
	CHECK_EQ_INT(bad, 0);
}

TEST(grammar_schema_refuses_what_it_cannot_draw_with_one_line)
{
	static char out[4096];
	static const char *const bad[] = {
		"{\"type\": \"string\", \"pattern\": \"^(?=a)a$\"}", "{\"pattern\": \"a$\"}",
		"{\"pattern\": \"^a{3$\"}", "{\"pattern\": \"^(a$\"}", "{\"pattern\": \"^a)$\"}",
		"{\"pattern\": \"^*a$\"}", "{\"pattern\": \"^[ab$\"}", "{\"pattern\": \"^\\\\bx$\"}",
		"{\"pattern\": \"^a{3,1}$\"}", "{\"pattern\": 5}", "{\"allOf\": 5}", "{\"allOf\": [1]}",
		"{\"$defs\": {\"a\": {\"$ref\": \"#/$defs/a\"}}, \"allOf\": [{\"$ref\": \"#/$defs/a\"}]}",
		"{\"allOf\": [{\"$ref\": \"#/$defs/none\"}]}", "{\"$ref\": \"#/$defs/none\"}",
		"{\"type\": \"strin\"}", "{\"type\": ", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
		"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct llm_mem m;
		char err[160] = "";
		llm_mem_init(&m, 0);
		CHECK(gram_schema(bad[i], strlen(bad[i]), out, sizeof out, &m, err, sizeof err) < 0);
		CHECK(!strncmp(err, "json schema: ", 13));
		CHECK_EQ_INT(m.used, 0);
	}
}
