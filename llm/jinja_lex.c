/*
 * llm/jinja_lex.c — the chat template's text to tokens (jinja_int.h), with
 * Jinja's whitespace rules as HF's apply_chat_template sets them:
 * `{%-`/`-%}` (and the same on {{ }} and {# #}) strip all whitespace on that
 * side; trim_blocks drops the first newline after a block or comment tag;
 * lstrip_blocks drops the spaces and tabs between a line's start and a block
 * or comment tag (`{%+` keeps them). Comments go here. Strings are
 * unescaped into the arena; inside a tag, braces nest, so a dict literal's
 * `}}` does not end it.
 */
#include "jinja_int.h"

static bool strchr_c(const char *set, char c)
{
	for (; *set; set++)
		if (*set == c)
			return true;
	return false;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_id0(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_dig(char c)
{
	return c >= '0' && c <= '9';
}

static struct jj_tok *emit(struct jj_ps *p, uint8_t t, uint32_t pos, const char *s, uint32_t n)
{
	if (p->nt == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 256;
		struct jj_tok *nt = jj_alloc(p->j, (size_t)cap * sizeof *nt);
		if (!nt)
			return NULL;
		if (p->nt)
			memcpy(nt, p->t, p->nt * sizeof *nt);
		p->t = nt;
		p->cap = cap;
	}
	struct jj_tok *k = &p->t[p->nt++];
	*k = (struct jj_tok){.t = t, .pos = pos, .s = s, .n = n};
	return k;
}

static size_t find2(const char *s, size_t from, size_t len, char a, char b)
{
	for (size_t i = from; i + 1 < len; i++)
		if (s[i] == a && s[i + 1] == b)
			return i;
	return len;
}

/* The next tag's opening at or after from: "{{", "{%" or "{#". */
static size_t next_tag(const char *s, size_t from, size_t len)
{
	for (size_t i = from; i + 1 < len; i++)
		if (s[i] == '{' && (s[i + 1] == '{' || s[i + 1] == '%' || s[i + 1] == '#'))
			return i;
	return len;
}

/* A quoted string: its text (escapes undone) into the arena. */
static bool lex_string(struct jj_ps *p, const char *s, size_t len, size_t *i)
{
	char q = s[*i];
	size_t start = *i, k = *i + 1, n = 0;
	char *out;

	while (k < len && s[k] != q) /* bound the copy first */
		k += (s[k] == '\\' && k + 1 < len) ? 2 : 1;
	if (k >= len) {
		jj_fail(p->j, -LLMK_EFORMAT, (uint32_t)start, "a string is not closed");
		return false;
	}
	if (!(out = jj_alloc(p->j, k - start)))
		return false;
	for (size_t m = start + 1; m < k; m++) {
		char c = s[m];
		if (c == '\\') {
			c = s[++m];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '0': c = 0; break;
			default: break; /* \\ \' \" and any other: the character itself */
			}
		}
		out[n++] = c;
	}
	if (!emit(p, T_STR, (uint32_t)start, out, (uint32_t)n))
		return false;
	*i = k + 1;
	return true;
}

/* The inside of a tag from *i to its closer ("}}" or "%}", maybe "-"
 * before it); returns whether the closer had the dash. */
static bool lex_tag(struct jj_ps *p, const char *s, size_t len, size_t *i, char close, bool *dash)
{
	int brace = 0;
	static const char *const two[] = {"==", "!=", "<=", ">=", "//", "**"};

	for (;;) {
		size_t k = *i;
		while (k < len && is_ws(s[k]))
			k++;
		*i = k;
		if (k >= len) {
			jj_fail(p->j, -LLMK_EFORMAT, (uint32_t)k, "a tag is not closed");
			return false;
		}
		if (brace == 0 && s[k] == '-' && k + 2 < len && s[k + 1] == close && s[k + 2] == '}') {
			*dash = true;
			*i = k + 3;
			return true;
		}
		if (brace == 0 && s[k] == close && k + 1 < len && s[k + 1] == '}') {
			*dash = false;
			*i = k + 2;
			return true;
		}
		if (p->j->err)
			return false;
		if (is_id0(s[k])) {
			size_t e = k;
			while (e < len && (is_id0(s[e]) || is_dig(s[e])))
				e++;
			if (!emit(p, T_NAME, (uint32_t)k, s + k, (uint32_t)(e - k)))
				return false;
			*i = e;
		} else if (is_dig(s[k])) {
			size_t e = k;
			int64_t v = 0;
			while (e < len && is_dig(s[e])) {
				if (v > (INT64_MAX - 9) / 10) {
					jj_fail(p->j, -LLMK_EFORMAT, (uint32_t)k, "a number is too large");
					return false;
				}
				v = v * 10 + (s[e++] - '0');
			}
			uint8_t t = T_INT;
			if (e + 1 < len && s[e] == '.' && is_dig(s[e + 1])) {
				t = T_FLOAT;
				for (e++; e < len && is_dig(s[e]); e++)
					;
			}
			struct jj_tok *tk = emit(p, t, (uint32_t)k, s + k, (uint32_t)(e - k));
			if (!tk)
				return false;
			tk->i = v;
			*i = e;
		} else if (s[k] == '\'' || s[k] == '"') {
			if (!lex_string(p, s, len, i))
				return false;
		} else {
			uint32_t n = 1;
			for (size_t o = 0; o < sizeof two / sizeof two[0]; o++)
				if (k + 1 < len && s[k] == two[o][0] && s[k + 1] == two[o][1])
					n = 2;
			if (n == 1 && !strchr_c("+-*/%~<>=()[]{}.,:|!", s[k])) {
				jj_fail(p->j, -LLMK_EFORMAT, (uint32_t)k, "unexpected character 0x%02x",
					(unsigned char)s[k]);
				return false;
			}
			if (s[k] == '{' || s[k] == '[' || s[k] == '(')
				brace++;
			if ((s[k] == '}' || s[k] == ']' || s[k] == ')') && brace > 0)
				brace--;
			if (!emit(p, T_OP, (uint32_t)k, s + k, n))
				return false;
			*i = k + n;
		}
	}
}

/* Text between tags with the whitespace rules applied; left: 0 keep, 1 the
 * first newline goes (trim_blocks), 2 all leading whitespace goes. */
static bool lex_text(struct jj_ps *p, const char *s, size_t from, size_t at, size_t len, int left)
{
	size_t a = from, b = at;

	if (left == 2)
		while (a < b && is_ws(s[a]))
			a++;
	else if (left == 1 && a < b && s[a] == '\n')
		a++;
	else if (left == 1 && a + 1 < b && s[a] == '\r' && s[a + 1] == '\n')
		a += 2;
	if (at < len) {
		char c = s[at + 1], m = at + 2 < len ? s[at + 2] : 0;
		if (m == '-') {
			while (b > a && is_ws(s[b - 1]))
				b--;
		} else if ((c == '%' || c == '#') && m != '+') {
			size_t k = b;
			while (k > a && (s[k - 1] == ' ' || s[k - 1] == '\t'))
				k--;
			/* only spaces between the line's start (in the source: a
			 * newline trim_blocks took still starts the line) and the tag */
			if (k == 0 || s[k - 1] == '\n')
				b = k;
		}
	}
	if (b > a && !emit(p, T_TEXT, (uint32_t)a, s + a, (uint32_t)(b - a)))
		return false;
	return true;
}

bool jj_lex(struct jj_ps *p)
{
	const char *s = p->j->src;
	size_t len = p->j->srclen, i = 0;
	int left = 0;

	while (i <= len && !p->j->err) {
		size_t at = next_tag(s, i, len);
		if (!lex_text(p, s, i, at, len, left))
			return false;
		if (at >= len)
			break;
		char c = s[at + 1];
		bool open_dash = at + 2 < len && (s[at + 2] == '-' || s[at + 2] == '+');
		if (c == '#') {
			size_t e = find2(s, at + 2, len, '#', '}');
			if (e >= len) {
				jj_fail(p->j, -LLMK_EFORMAT, (uint32_t)at, "a comment is not closed");
				return false;
			}
			left = (e > at + 2 && s[e - 1] == '-') ? 2 : 1;
			i = e + 2;
			continue;
		}
		if (!emit(p, c == '{' ? T_VO : T_BO, (uint32_t)at, s + at, 2))
			return false;
		i = at + 2 + (open_dash ? 1 : 0);
		bool dash;
		if (!lex_tag(p, s, len, &i, c == '{' ? '}' : '%', &dash))
			return false;
		if (!emit(p, c == '{' ? T_VC : T_BC, (uint32_t)i, s + i - 2, 2))
			return false;
		left = dash ? 2 : (c == '%' ? 1 : 0);
	}
	return emit(p, T_EOF, (uint32_t)len, s + len, 0) != NULL;
}

