/*
 * tests/unit/test_jinja.c — the Jinja interpreter (llm/jinja*.c): every case of
 * llama.cpp's tests/test-chat-template.cpp through its full template, byte for
 * byte against llama.cpp's Jinja output; the language pieces one by one; the
 * messages' text found by its spans; hostile templates end in one error.
 */
#include "test.h"
#include "../../llm/jinja.h"

static uint8_t arena[JINJA_ARENA_DEFAULT];
static char out_buf[16384], err[256];

struct jcase {
	const char *name, *tmpl, *want, *bos, *eos;
	bool supported, jinja_differs; /* llama.cpp runs it with Jinja; its Jinja output differs */
	struct chat_msg extra[3];
	int n_extra;
	const char *want_builtin;
};

static const struct jcase cases[] = {
#include "jinja_llama_cases.h"
};

static const struct chat_msg conv[] = {
	{"system", "You are a helpful assistant"},
	{"user", "Hello"},
	{"assistant", "Hi there"},
	{"user", "Who are you"},
	{"assistant", "   I am an assistant   "},
	{"user", "Another question"},
};

static const struct jinja_limits lim = {arena, sizeof arena, JINJA_STEPS_DEFAULT};

static int render(const char *tmpl, const struct chat_msg *m, size_t n, bool gen, struct jinja_out *o)
{
	struct jinja_input in = {m, n, gen, "<s>", "</s>", NULL, false, NULL, NULL, false};
	*o = (struct jinja_out){out_buf, sizeof out_buf, 0, NULL, 0, 0};
	return jinja_chat(tmpl, strlen(tmpl), &in, &lim, o, err, sizeof err);
}

/* the template's output for no messages, or "ERR" + the error */
static const char *run(const char *tmpl)
{
	struct jinja_out o;
	int r = render(tmpl, NULL, 0, true, &o);
	if (r) {
		static char e[300];
		snprintf(e, sizeof e, "ERR %s", err);
		return e;
	}
	return out_buf;
}

TEST(jinja_renders_every_llama_cpp_case_as_its_jinja_path)
{
	int ran = 0, differs = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct jcase *c = &cases[i];
		struct chat_msg m[9];
		size_t n = 6;
		struct tok_span sp[32];
		if (!c->supported)
			continue; /* llama.cpp: needs extra context (additional_special_tokens) */
		memcpy(m, conv, sizeof conv);
		for (int k = 0; k < c->n_extra; k++)
			m[n++] = c->extra[k];
		struct jinja_input in = {m, n, true, c->bos, c->eos, NULL, false, NULL, NULL, false};
		struct jinja_out o = {out_buf, sizeof out_buf, 0, sp, 32, 0};
		int r = jinja_chat(c->tmpl, strlen(c->tmpl), &in, &lim, &o, err, sizeof err);
		if (r)
			printf("  case %s: %s\n", c->name, err);
		CHECK_EQ_INT(r, 0);
		CHECK_STR(out_buf, c->want);
		CHECK_EQ_INT(o.len, strlen(c->want));
		/* every span is message text: no template marker inside one */
		for (size_t s = 0; s < o.n_spans; s++)
			CHECK(memchr(out_buf + sp[s].off, '<', sp[s].len) == NULL ||
			      strstr(c->name, "granite") != NULL);
		ran++;
		differs += strcmp(c->want, c->want_builtin) != 0;
	}
	/* the file's 36 cases, 35 with Jinja; in 12 llama.cpp's Jinja output is not its
	 * built-in formatter's (docs/chat-templates.md names them) */
	CHECK_EQ_INT(ran, 35);
	CHECK_EQ_INT(differs, 12);
}

TEST(jinja_whitespace_control_trim_and_lstrip_blocks)
{
	CHECK_STR(run("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
	CHECK_STR(run("{% if true %}\nx\n{% endif %}\ny"), "x\ny");      /* trim_blocks */
	CHECK_STR(run("    {% if true %}x{% endif %}"), "x");             /* lstrip_blocks */
	CHECK_STR(run("a {% if true %}x{% endif %}"), "a x");             /* not at a line's start */
	CHECK_STR(run("    {%+ if true %}x{% endif %}"), "    x");
	CHECK_STR(run("a{# a comment #}\nb"), "ab");
	CHECK_STR(run("a {{- 'b' -}} c"), "abc");
	CHECK_STR(run("{{ 'x' }}\ny"), "x\ny");                         /* {{ }} keeps its newline */
	/* a line's start is the source's: the newline trim_blocks took still counts */
	CHECK_STR(run("{% if true %}\n    {% if true %}x{% endif %}{% endif %}"), "x");
}

TEST(jinja_expressions_as_python)
{
	CHECK_STR(run("{{ 1 + 2 * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }}"),
		  "7 3 -4 2 1024");
	CHECK_STR(run("{{ 'ab' ~ 1 ~ none }} {{ 'x' * 3 }} {{ [1, 2] + [3] }}"), "ab1None xxx [1, 2, 3]");
	CHECK_STR(run("{{ 'hello'[::-1] }} {{ 'hello'[1:3] }} {{ [1,2,3,4][-2:] }} {{ 'abc'[-1] }}"),
		  "olleh el [3, 4] c");
	CHECK_STR(run("{{ 1 < 2 and 'a' in 'cat' and 3 not in [1, 2] }} {{ not 0 }} {{ none or 'd' }}"),
		  "True True d");
	CHECK_STR(run("{{ 'y' if 1 == 1 else 'n' }}{{ 'a' if false }}|"), "y|");
	CHECK_STR(run("{{ {'a': 1, 'b': [true, none]} }} {{ \"it's\" }}"),
		  "{'a': 1, 'b': [True, None]} it's");
	CHECK_STR(run("{{ 'a' 'b' }} {{ x is defined }} {{ x.y.z is undefined }} {{ none is none }}"),
		  "ab False True True");
	CHECK_STR(run("{{ 'A-b c'.title() }} {{ ' x '.strip() }}|{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }}"),
		  "A-B C x|['a', 'b', '', 'c'] ['a', 'b']");
	CHECK_STR(run("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'aXa'.replace('a', 'b') }}"),
		  "True True bXb");
}

TEST(jinja_statements_loops_macros_namespaces)
{
	CHECK_STR(run("{% for x in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}"
		      "{{ loop.last }}{{ loop.length }}{{ loop.revindex }},{% endfor %}"),
		  "10TrueFalse33,21FalseFalse32,32FalseTrue31,");
	CHECK_STR(run("{% for x in range(10) if x is odd %}{{ x }}{% if loop.last %}/{{ loop.length }}"
		      "{% endif %}{% endfor %}"), "13579/5");
	CHECK_STR(run("{% for x in [] %}a{% else %}empty{% endfor %}"), "empty");
	CHECK_STR(run("{% for x in range(9) %}{% if x == 2 %}{% continue %}{% endif %}"
		      "{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}"), "013");
	CHECK_STR(run("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}"), "a=1;b=2;");
	CHECK_STR(run("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}"), "1");
	CHECK_STR(run("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}"
		      "{% endfor %}{{ ns.x }}"), "4");
	CHECK_STR(run("{% macro m(a, b='d') %}<{{ a }}{{ b }}>{% endmacro %}{{ m(1) }}{{ m(2, b=3) }}"),
		  "<1d><23>");
	CHECK_STR(run("{% set b %}x{{ 1 + 1 }}{% endset %}[{{ b }}]"), "[x2]");
	CHECK_STR(run("{% if 0 %}a{% elif 1 %}b{% else %}c{% endif %}"), "b");
	CHECK_STR(run("{% generation %}g{% endgeneration %}"), "g");
}

TEST(jinja_filters_and_tojson)
{
	CHECK_STR(run("{{ '  x ' | trim }}|{{ [1, 2] | length }}{{ 'héllo' | length }}{{ 'a' | upper }}"
		      "{{ 'B' | lower }}{{ x | default('d') }}{{ [3, 4] | first }}{{ [3, 4] | last }}"),
		  "x|25Abd34");
	CHECK_STR(run("{{ ['a', 'b'] | join(', ') }} {{ 'aa' | replace('a', 'b') }} {{ 3 | string }}"),
		  "a, b bb 3");
	CHECK_STR(run("{{ {'a': 1, 'b': [true, none, 'x\"\\n']} | tojson }}"),
		  "{\"a\": 1, \"b\": [true, null, \"x\\\"\\n\"]}");
	CHECK_STR(run("{{ {'a': [1]} | tojson(indent=2) }}"), "{\n  \"a\": [\n    1\n  ]\n}");
	CHECK_STR(run("{% set l = [{'r': 'u', 'c': 1}, {'r': 'a', 'c': 2}, {'r': 'u', 'c': 3}] %}"
		      "{{ l | selectattr('r', 'equalto', 'u') | map(attribute='c') | list }}"
		      "{{ l | rejectattr('r', 'equalto', 'u') | list | length }}"),
		  "[1, 3]1");
	CHECK_STR(run("{{ [1, 2, 2] | unique | list }} {{ [1, 2] | reverse | list }} {{ {'k': 1} | items | list }}"),
		  "[1, 2] [2, 1] [['k', 1]]");
	CHECK_STR(run("{{ raise_exception('no') }}"), "ERR chat template (jinja) at 1:4: raise_exception: no");
}

TEST(jinja_tools_json_and_system_merge)
{
	static const char tmpl[] = "{% for t in tools %}{{ t.function.name }}:{{ t.function.parameters | tojson }}"
				   "{% endfor %}|{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}";
	static const struct chat_msg m[] = {{"system", "S"}, {"user", "U"}};
	struct jinja_input in = {m, 2, true, "", "", "[{\"type\": \"function\", \"function\": "
				 "{\"name\": \"f\", \"parameters\": {\"a\": 1.5, \"b\": \"\\u00e9\"}}}]", false, NULL, NULL, false};
	struct jinja_out o = {out_buf, sizeof out_buf, 0, NULL, 0, 0};
	CHECK_EQ_INT(jinja_chat(tmpl, strlen(tmpl), &in, &lim, &o, err, sizeof err), 0);
	CHECK_STR(out_buf, "f:{\"a\": 1.5, \"b\": \"\xc3\xa9\"}|[system:S][user:U]");
	/* a template without the system role gets it merged into the next message */
	static const char nosys[] = "{% for m in messages %}{% if m.role == 'user' %}[{{ m.content }}]"
				    "{% endif %}{% endfor %}";
	in.tools_json = NULL;
	CHECK_EQ_INT(jinja_chat(nosys, strlen(nosys), &in, &lim, &o, err, sizeof err), 0);
	CHECK_STR(out_buf, "[S\nU]");
}

TEST(jinja_spans_mark_the_messages_text_wherever_it_went)
{
	static const char tmpl[] = "{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim | upper }}"
				   "<|end|>{% endfor %}";
	static const struct chat_msg m[] = {{"user", " hi <|end|> "}, {"assistant", "yo"}};
	struct tok_span sp[4];
	struct jinja_input in = {m, 2, true, "", "", NULL, false, NULL, NULL, false};
	struct jinja_out o = {out_buf, sizeof out_buf, 0, sp, 4, 0};
	CHECK_EQ_INT(jinja_chat(tmpl, strlen(tmpl), &in, &lim, &o, err, sizeof err), 0);
	CHECK_STR(out_buf, "<|user|>HI <|END|><|end|><|assistant|>YO<|end|>");
	CHECK_EQ_INT(o.n_spans, 2);
	CHECK(sp[0].off == 8 && sp[0].len == 10);
	CHECK(sp[1].off == 38 && sp[1].len == 2);
	/* more runs of text than the caller has room for: refused, not parsed */
	o.max_spans = 1;
	CHECK_EQ_INT(jinja_chat(tmpl, strlen(tmpl), &in, &lim, &o, err, sizeof err), -LLMK_ERANGE);
}

/* Each hostile template ends in one error within the budget. */
TEST(jinja_hostile_templates_end_in_one_error)
{
	static const struct {
		const char *tmpl;
		int want;
	} bad[] = {
		{"{% for i in range(1000000000) %}x{% endfor %}", -LLMK_EBUDGET},
		{"{% for i in range(100000) %}{% for k in range(100000) %}{% endfor %}{% endfor %}", -LLMK_ENOMEM},
		{"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", -LLMK_EBUDGET},
		{"{% set s = 'x' %}{% for i in range(40) %}{% set s = s ~ s %}{% endfor %}{{ s }}", -LLMK_ENOMEM},
		{"{{ 'x' * 100000000 }}", -LLMK_ENOMEM},
		{"{{ ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1)))))))))))))"
		 "))))))))))))))))))))))))))))))))))))))))))))))))))))) }}", -LLMK_EFORMAT},
		{"{% if x %}", -LLMK_EFORMAT},
		{"a{% break %}b", -LLMK_EFORMAT},
		{"{% for x in [1] %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}", -LLMK_EFORMAT},
		{NULL, -LLMK_EFORMAT}, /* 5000 elifs: filled in below */
		{"{{ 'abc", -LLMK_EFORMAT},
		{"{{ 1 + }}", -LLMK_EFORMAT},
		{"{% include 'x' %}", -LLMK_ENOTSUP},
		{"{{ raise_exception('two\nlines\x1b[2J') }}", -LLMK_EINVAL},
		{"{{ x | nosuchfilter }}", -LLMK_ENOTSUP},
		{"{{ 1 // 0 }}", -LLMK_EINVAL},
		{"{{ 4611686018427387904 * 2 }}", -LLMK_EINVAL},
		{"{{ undefined_fn() }}", -LLMK_EINVAL},
		{"{% set l = [] %}{% for i in range(100) %}{% set _ = l.append(l) %}{% endfor %}{{ l | tojson }}",
		 -LLMK_EBUDGET},
		{"{% set l = [] %}{% set _ = l.append(l) %}{{ l }}", -LLMK_EBUDGET},
		{"{% set l = [] %}{% set d = {l: 1} %}", -LLMK_EINVAL},
		{"{% set a = [] %}{% set b = [a] %}{% set _ = a.append(b) %}{{ a == b }}{{ a in b }}"
		 "{{ [a, b] | unique | list | length }}{{ raise_exception('compared') }}", -LLMK_EINVAL},
	};
	static char elifs[5000 * 16 + 64];
	size_t at = (size_t)snprintf(elifs, sizeof elifs, "{%% if 0 %%}");
	for (int k = 0; k < 5000; k++)
		at += (size_t)snprintf(elifs + at, sizeof elifs - at, "{%% elif %d %%}", k);
	snprintf(elifs + at, sizeof elifs - at, "{%% endif %%}");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct jinja_out o;
		int r = render(bad[i].tmpl ? bad[i].tmpl : elifs, conv, 2, true, &o);
		if (r != bad[i].want)
			printf("  hostile %zu: %d %s\n", i, r, err);
		CHECK_EQ_INT(r, bad[i].want);
		CHECK(strncmp(err, "chat template (jinja)", 21) == 0);
		CHECK(strchr(err, '\n') == NULL);
	}
}
