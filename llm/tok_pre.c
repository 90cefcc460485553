/*
 * llm/tok_pre.c — BPE pre-tokenizers: the regexes of llama.cpp's
 * llm_tokenizer_bpe (src/llama-vocab.cpp), written out as matchers.
 *
 * llama.cpp applies a pre-tokenizer's regexes one after another; each one
 * splits every current chunk into its matches and the unmatched gaps between
 * them (unicode_regex_split in src/unicode.cpp, std::regex_iterator
 * semantics: leftmost match, then search on after it). A matcher here
 * answers "how long is the match starting exactly at pos" (0 = none); the
 * search loop in split_stage() turns that into the same leftmost-match scan.
 *
 * Classes follow llama.cpp's tables: \s is White_Space, \p{L} \p{N} \p{P} the
 * general category groups. Where llama.cpp runs a regex without \p{..} on
 * wide characters, it first replaces non-ASCII whitespace by U+000B; mcp()
 * does the same before testing the literal ranges of those regexes.
 */
#include "tok_int.h"

struct pre_text {
	const uint32_t *cp;
	const uint8_t *cls;
	size_t end; /* end of the current chunk */
};

typedef size_t (*pre_match_fn)(const struct pre_text *x, size_t pos);

static bool is_ws(const struct pre_text *x, size_t i) { return uni_is_ws(x->cls[i]); }
static bool is_l(const struct pre_text *x, size_t i) { return uni_is_letter(x->cls[i]); }
static bool is_n(const struct pre_text *x, size_t i) { return uni_is_number(x->cls[i]); }
static bool is_p(const struct pre_text *x, size_t i) { return uni_is_punct(x->cls[i]); }
/* [^\s\p{L}\p{N}] */
static bool is_other(const struct pre_text *x, size_t i)
{
	return !is_ws(x, i) && !is_l(x, i) && !is_n(x, i);
}
static bool is_crlf(const struct pre_text *x, size_t i)
{
	return x->cp[i] == '\r' || x->cp[i] == '\n';
}

static uint32_t mcp(const struct pre_text *x, size_t i)
{
	return (x->cp[i] > 0x7f && is_ws(x, i)) ? 0x0b : x->cp[i];
}

typedef bool (*pre_class_fn)(const struct pre_text *x, size_t i);

/* Length of the run of class c starting at pos. */
static size_t run(const struct pre_text *x, size_t pos, pre_class_fn c)
{
	size_t i = pos;

	while (i < x->end && c(x, i))
		i++;
	return i - pos;
}

/* "<lead>?<c>+" where lead and c are disjoint: the optional lead is taken
 * only if a c follows it. */
static size_t opt_lead_run(const struct pre_text *x, size_t pos, pre_class_fn lead, pre_class_fn c)
{
	if (c(x, pos))
		return run(x, pos, c);
	if (lead(x, pos) && pos + 1 < x->end && c(x, pos + 1))
		return 1 + run(x, pos + 1, c);
	return 0;
}

static bool is_space(const struct pre_text *x, size_t i) { return x->cp[i] == ' '; }

/* 's|'t|'re|'ve|'m|'ll|'d, case-folded (ASCII) when fold is set */
static size_t contraction(const struct pre_text *x, size_t pos, bool fold)
{
	uint32_t a, b;

	if (x->cp[pos] != '\'' || pos + 1 >= x->end)
		return 0;
	a = x->cp[pos + 1];
	if (fold && a >= 'A' && a <= 'Z')
		a += 32;
	if (a == 's' || a == 't' || a == 'm' || a == 'd')
		return 2;
	if (pos + 2 >= x->end)
		return 0;
	b = x->cp[pos + 2];
	if (fold && b >= 'A' && b <= 'Z')
		b += 32;
	if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
		return 3;
	return 0;
}

/*
 * \s+(?!\S): the whitespace run, minus its last character when a non-space
 * follows (that one goes with the next word). A single space before a word
 * does not match (0).
 */
static size_t ws_not_before_word(const struct pre_text *x, size_t pos)
{
	size_t n = run(x, pos, is_ws);

	if (n == 0 || pos + n == x->end)
		return n;
	return n - 1;
}

/* GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S) */
static size_t m_gpt2(const struct pre_text *x, size_t pos)
{
	size_t k;

	if ((k = contraction(x, pos, false)))
		return k;
	if ((k = opt_lead_run(x, pos, is_space, is_l)))
		return k;
	if ((k = opt_lead_run(x, pos, is_space, is_n)))
		return k;
	if ((k = opt_lead_run(x, pos, is_space, is_other)))
		return k;
	return ws_not_before_word(x, pos);
}

/* [^\r\n\p{L}\p{N}] */
static bool is_word_lead(const struct pre_text *x, size_t i)
{
	return !is_crlf(x, i) && !is_l(x, i) && !is_n(x, i);
}

/*
 * Llama 3 (max_digits 3) and Qwen2 (max_digits 1):
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 */
static size_t m_llama3_like(const struct pre_text *x, size_t pos, size_t max_digits)
{
	size_t k, n, i, last_nl;

	if ((k = contraction(x, pos, true)))
		return k;
	if ((k = opt_lead_run(x, pos, is_word_lead, is_l)))
		return k;
	if ((k = run(x, pos, is_n)))
		return k < max_digits ? k : max_digits;
	if ((k = opt_lead_run(x, pos, is_space, is_other)))
		return k + run(x, pos + k, is_crlf);
	/* \s*[\r\n]+ ends after the last CR/LF of the whitespace run */
	n = run(x, pos, is_ws);
	last_nl = 0;
	for (i = 0; i < n; i++)
		if (is_crlf(x, pos + i))
			last_nl = i + 1;
	if (last_nl)
		return last_nl;
	if (n == 1)
		return 1; /* \s+ */
	return ws_not_before_word(x, pos);
}

static size_t m_llama3(const struct pre_text *x, size_t pos) { return m_llama3_like(x, pos, 3); }
static size_t m_qwen2(const struct pre_text *x, size_t pos) { return m_llama3_like(x, pos, 1); }

/* Tekken's letter classes: U = (?=\p{L})[^a-z], W = (?=\p{L})[^A-Z] */
static bool is_tk_upper(const struct pre_text *x, size_t i)
{
	return is_l(x, i) && !(x->cp[i] >= 'a' && x->cp[i] <= 'z');
}
static bool is_tk_lower(const struct pre_text *x, size_t i)
{
	return is_l(x, i) && !(x->cp[i] >= 'A' && x->cp[i] <= 'Z');
}

/*
 * U*W+ at q with the backtracking of the regex: U* takes its longest run,
 * then gives characters back until W+ can start (a letter that is both U and
 * W, i.e. not ASCII, or the lowercase letter after the run).
 */
static size_t tk_upper_then_lower(const struct pre_text *x, size_t q)
{
	size_t k = run(x, q, is_tk_upper);

	for (;;) {
		if (q + k < x->end && is_tk_lower(x, q + k))
			return k + run(x, q + k, is_tk_lower);
		if (k == 0)
			return 0;
		k--;
	}
}

/*
 * Tekken (Mistral Nemo):
 * [^\r\n\p{L}\p{N}]?U*W+|[^\r\n\p{L}\p{N}]?U+W*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|
 * \s*[\r\n]+|\s+(?!\S)|\s+
 */
static size_t m_tekken(const struct pre_text *x, size_t pos)
{
	size_t lead = is_word_lead(x, pos) ? 1 : 0, q = pos + lead, k, n, i, last_nl;

	if (q < x->end && (k = tk_upper_then_lower(x, q)))
		return lead + k;
	if (q < x->end && (k = run(x, q, is_tk_upper)))
		return lead + k + run(x, q + k, is_tk_lower);
	if (is_n(x, pos))
		return 1;
	if ((k = opt_lead_run(x, pos, is_space, is_other))) {
		while (pos + k < x->end && (is_crlf(x, pos + k) || x->cp[pos + k] == '/'))
			k++;
		return k;
	}
	n = run(x, pos, is_ws);
	last_nl = 0;
	for (i = 0; i < n; i++)
		if (is_crlf(x, pos + i))
			last_nl = i + 1;
	if (last_nl)
		return last_nl;
	if (n == 1)
		return 1;
	return ws_not_before_word(x, pos);
}

/* [\p{P}\$\+<=>\^~\|]+ (default) and the same with ` (falcon) */
static bool is_p_default(const struct pre_text *x, size_t i)
{
	uint32_t c = x->cp[i];

	return is_p(x, i) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' ||
	       c == '^' || c == '~' || c == '|';
}
static bool is_p_falcon(const struct pre_text *x, size_t i)
{
	return is_p_default(x, i) || x->cp[i] == '`';
}
static size_t m_punct_default(const struct pre_text *x, size_t pos) { return run(x, pos, is_p_default); }
static size_t m_punct_falcon(const struct pre_text *x, size_t pos) { return run(x, pos, is_p_falcon); }

/* [0-9][0-9][0-9] */
static size_t m_3digits(const struct pre_text *x, size_t pos)
{
	for (size_t i = 0; i < 3; i++)
		if (pos + i >= x->end || x->cp[pos + i] < '0' || x->cp[pos + i] > '9')
			return 0;
	return 3;
}

static size_t m_num1(const struct pre_text *x, size_t pos) { return is_n(x, pos) ? 1 : 0; }
static size_t m_num_run(const struct pre_text *x, size_t pos) { return run(x, pos, is_n); }
static size_t m_crlf(const struct pre_text *x, size_t pos) { return is_crlf(x, pos) ? 1 : 0; }
/* \s?\p{L}+ and \s?\p{P}+ */
static size_t m_ws_letters(const struct pre_text *x, size_t pos) { return opt_lead_run(x, pos, is_ws, is_l); }
static size_t m_ws_punct(const struct pre_text *x, size_t pos) { return opt_lead_run(x, pos, is_ws, is_p); }

/* \s+$ */
static size_t m_ws_at_end(const struct pre_text *x, size_t pos)
{
	size_t n = run(x, pos, is_ws);

	return pos + n == x->end ? n : 0;
}

static bool in_ranges(uint32_t c, const uint32_t (*r)[2], size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c < r[mid][0])
			hi = mid;
		else if (c > r[mid][1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* [一-龥ࠀ-一가-퟿]+ : U+4E00..U+9FA5, U+0800..U+4E00, U+AC00..U+D7FF */
static bool is_cjk(const struct pre_text *x, size_t i)
{
	uint32_t c = mcp(x, i);

	return (c >= 0x0800 && c <= 0x9fa5) || (c >= 0xac00 && c <= 0xd7ff);
}
static size_t m_cjk(const struct pre_text *x, size_t pos) { return run(x, pos, is_cjk); }

/* deepseek-llm's letter class, transcribed range by range from its regex
 * (\s?[A-Za-zµÀ-ÖØ-öø-ƺ...𞤀-𞥃]+). */
static const uint32_t dsllm_letters[][2] = {
	{0x00041, 0x0005A}, {0x00061, 0x0007A}, {0x000B5, 0x000B5}, {0x000C0, 0x000D6},
	{0x000D8, 0x000F6}, {0x000F8, 0x001BA}, {0x001BC, 0x001BF}, {0x001C4, 0x00293},
	{0x00295, 0x002AF}, {0x00370, 0x00373}, {0x00376, 0x00377}, {0x0037B, 0x0037D},
	{0x0037F, 0x0037F}, {0x00386, 0x00386}, {0x00388, 0x0038A}, {0x0038C, 0x0038C},
	{0x0038E, 0x003A1}, {0x003A3, 0x003F5}, {0x003F7, 0x00481}, {0x0048A, 0x0052F},
	{0x00531, 0x00556}, {0x010A0, 0x010C5}, {0x013A0, 0x013F5}, {0x013F8, 0x013FD},
	{0x01C90, 0x01CBA}, {0x01CBD, 0x01CBF}, {0x01D00, 0x01D2B}, {0x01D6B, 0x01D77},
	{0x01D79, 0x01D9A}, {0x01E00, 0x01F15}, {0x01F18, 0x01F1D}, {0x01F20, 0x01F45},
	{0x01F48, 0x01F4D}, {0x01F50, 0x01F57}, {0x01F59, 0x01F59}, {0x01F5B, 0x01F5B},
	{0x01F5D, 0x01F5D}, {0x01F5F, 0x01F7D}, {0x01F80, 0x01FB4}, {0x01FB6, 0x01FBC},
	{0x01FBE, 0x01FBE}, {0x01FC2, 0x01FC4}, {0x01FC6, 0x01FCC}, {0x01FD0, 0x01FD3},
	{0x01FD6, 0x01FDB}, {0x01FE0, 0x01FEC}, {0x01FF2, 0x01FF4}, {0x01FF6, 0x01FFC},
	{0x02102, 0x02102}, {0x02107, 0x02107}, {0x0210A, 0x02113}, {0x02115, 0x02115},
	{0x02119, 0x0211D}, {0x02124, 0x02124}, {0x02126, 0x02126}, {0x02128, 0x02128},
	{0x0212A, 0x0212D}, {0x0212F, 0x02134}, {0x02139, 0x02139}, {0x0213C, 0x0213F},
	{0x02145, 0x02149}, {0x0214E, 0x0214E}, {0x02183, 0x02184}, {0x02C00, 0x02C7B},
	{0x02C7E, 0x02CE4}, {0x02CEB, 0x02CEE}, {0x02CF2, 0x02CF3}, {0x0A640, 0x0A66D},
	{0x0A680, 0x0A69B}, {0x0A722, 0x0A76F}, {0x0A771, 0x0A787}, {0x0A78B, 0x0A78E},
	{0x0AB70, 0x0ABBF}, {0x0FB00, 0x0FB06}, {0x0FB13, 0x0FB17}, {0x0FF21, 0x0FF3A},
	{0x0FF41, 0x0FF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
	{0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

static bool is_dsllm_letter(const struct pre_text *x, size_t i)
{
	return in_ranges(mcp(x, i), dsllm_letters, sizeof dsllm_letters / sizeof dsllm_letters[0]);
}

/* [!-/:-~！-／：-～‘-‟　-。] */
static bool is_dsllm_punct(const struct pre_text *x, size_t i)
{
	static const uint32_t r[][2] = {
		{0x21, 0x2f}, {0x3a, 0x7e}, {0x2018, 0x201f}, {0x3000, 0x3002},
		{0xff01, 0xff0f}, {0xff1a, 0xff5e},
	};
	return in_ranges(mcp(x, i), r, sizeof r / sizeof r[0]);
}

static size_t m_dsllm_letters(const struct pre_text *x, size_t pos) { return opt_lead_run(x, pos, is_ws, is_dsllm_letter); }
static size_t m_dsllm_punct(const struct pre_text *x, size_t pos) { return opt_lead_run(x, pos, is_ws, is_dsllm_punct); }

#define PRE_MAX_STAGES 6
struct pre_def {
	uint8_t n;
	pre_match_fn stage[PRE_MAX_STAGES];
};

/* The regex lists of llm_tokenizer_bpe's constructor, per pre-tokenizer. */
static const struct pre_def pre_defs[TOK_PRE_COUNT] = {
	[TOK_PRE_DEFAULT] = {4, {m_punct_default, m_gpt2, m_num_run, m_3digits}},
	[TOK_PRE_GPT2] = {1, {m_gpt2}},
	[TOK_PRE_LLAMA3] = {1, {m_llama3}},
	[TOK_PRE_QWEN2] = {1, {m_qwen2}},
	[TOK_PRE_FALCON] = {3, {m_punct_falcon, m_gpt2, m_3digits}},
	[TOK_PRE_STARCODER] = {2, {m_num1, m_gpt2}},
	[TOK_PRE_DEEPSEEK_LLM] = {6, {m_crlf, m_dsllm_letters, m_dsllm_punct, m_ws_at_end, m_cjk, m_num_run}},
	[TOK_PRE_DEEPSEEK_CODER] = {5, {m_crlf, m_ws_letters, m_ws_punct, m_cjk, m_num1}},
	[TOK_PRE_TEKKEN] = {1, {m_tekken}},
};

/* One regex over every chunk: matches and the gaps between them become chunks. */
static size_t split_stage(pre_match_fn m, const uint32_t *cp, const uint8_t *cls,
			  const uint32_t *in, size_t n_in, uint32_t *out)
{
	struct pre_text x = {cp, cls, 0};
	size_t start = 0, n_out = 0;

	for (size_t c = 0; c < n_in; c++) {
		size_t pos = start, gap = start;

		x.end = start + in[c];
		while (pos < x.end) {
			size_t k = m(&x, pos);
			if (k == 0) {
				pos++;
				continue;
			}
			if (pos > gap)
				out[n_out++] = (uint32_t)(pos - gap);
			out[n_out++] = (uint32_t)k;
			pos += k;
			gap = pos;
		}
		if (x.end > gap)
			out[n_out++] = (uint32_t)(x.end - gap);
		start = x.end;
	}
	return n_out;
}

size_t tok_pre_split(enum tok_pre pre, const uint32_t *cp, const uint8_t *cls, size_t n,
		     uint32_t *len, uint32_t *tmp, uint32_t **words)
{
	const struct pre_def *d = &pre_defs[pre < TOK_PRE_COUNT ? pre : TOK_PRE_DEFAULT];
	uint32_t *a = len, *b = tmp, *sw;
	size_t cnt = 0;

	if (n == 0) {
		*words = len;
		return 0;
	}
	a[cnt++] = (uint32_t)n;
	for (size_t s = 0; s < d->n; s++) {
		cnt = split_stage(d->stage[s], cp, cls, a, cnt, b);
		sw = a;
		a = b;
		b = sw;
	}
	*words = a;
	return cnt;
}
