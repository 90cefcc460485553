/*
 * llm/tok.c — building a tokenizer from GGUF metadata (llm/tok.h).
 *
 * The defaults and overrides follow llama.cpp's llama_vocab::impl::load
 * (src/llama-vocab.cpp) so that a vocabulary behaves as it does there:
 * per-model default special ids, per-pre-tokenizer flags, token types to
 * attributes, EOT/EOG detection by token text.
 */
#include "tok_int.h"

#define KEY "tokenizer.ggml."

/* GGUF token_type values (gguf.md, tokenizer.ggml.token_type) */
enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5, TT_BYTE = 6 };

struct pre_name {
	const char *name;
	enum tok_pre pre;
	bool ignore_merges, add_bos, keep_spaces;
};

/* tokenizer.ggml.pre names llama.cpp maps to the pre-tokenizers we have. */
static const struct pre_name pre_names[] = {
	{"default", TOK_PRE_DEFAULT, false, false, false},
	{"llama3", TOK_PRE_LLAMA3, true, true, false},
	{"llama-v3", TOK_PRE_LLAMA3, true, true, false},
	{"llama-bpe", TOK_PRE_LLAMA3, true, true, false},
	{"falcon3", TOK_PRE_LLAMA3, true, true, false},
	{"pixtral", TOK_PRE_LLAMA3, true, true, false},
	{"dbrx", TOK_PRE_LLAMA3, false, false, false},
	{"smaug-bpe", TOK_PRE_LLAMA3, false, false, false},
	{"deepseek-llm", TOK_PRE_DEEPSEEK_LLM, false, false, true},
	{"deepseek-coder", TOK_PRE_DEEPSEEK_CODER, false, false, true},
	{"falcon", TOK_PRE_FALCON, false, false, false},
	{"starcoder", TOK_PRE_STARCODER, false, false, false},
	{"refact", TOK_PRE_STARCODER, false, false, false},
	{"command-r", TOK_PRE_STARCODER, false, false, true},
	{"smollm", TOK_PRE_STARCODER, false, false, true},
	{"codeshell", TOK_PRE_STARCODER, false, false, false},
	{"exaone", TOK_PRE_STARCODER, false, false, false},
	{"minerva-7b", TOK_PRE_STARCODER, false, false, false},
	{"gpt-2", TOK_PRE_GPT2, false, false, false},
	{"phi-2", TOK_PRE_GPT2, false, false, false},
	{"mpt", TOK_PRE_GPT2, false, false, false},
	{"olmo", TOK_PRE_GPT2, false, false, false},
	{"jais", TOK_PRE_GPT2, false, false, false},
	{"jina-es", TOK_PRE_GPT2, false, false, false},
	{"jina-de", TOK_PRE_GPT2, false, false, false},
	{"gigachat", TOK_PRE_GPT2, false, false, false},
	{"exaone4", TOK_PRE_GPT2, false, false, false},
	{"tekken", TOK_PRE_TEKKEN, true, true, true},
	{"qwen2", TOK_PRE_QWEN2, false, false, true},
	{"deepseek-r1-qwen", TOK_PRE_QWEN2, false, false, true},
	{"stablelm2", TOK_PRE_QWEN2, false, false, false},
	{"megrez", TOK_PRE_QWEN2, false, false, false},
};

static const char *const pre_display[TOK_PRE_COUNT] = {
	[TOK_PRE_DEFAULT] = "default", [TOK_PRE_GPT2] = "gpt-2", [TOK_PRE_LLAMA3] = "llama3",
	[TOK_PRE_QWEN2] = "qwen2", [TOK_PRE_FALCON] = "falcon", [TOK_PRE_STARCODER] = "starcoder",
	[TOK_PRE_DEEPSEEK_LLM] = "deepseek-llm", [TOK_PRE_DEEPSEEK_CODER] = "deepseek-coder",
	[TOK_PRE_TEKKEN] = "tekken",
};

const char *tok_pre_name(enum tok_pre pre)
{
	return pre < TOK_PRE_COUNT ? pre_display[pre] : "?";
}

/* Token texts llama.cpp treats as end-of-generation (and forces to CONTROL). */
static const char *const eog_texts[] = {
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
	"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>", /* DeepSeek */
};
/* The subset that may serve as EOT when tokenizer.ggml.eot_token_id is absent. */
static const char *const eot_texts[] = {
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<end_of_utterance>",
	"<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>",
};
/* gpt-oss's tokens llama.cpp always renders: forced to USER_DEFINED. */
static const char *const shown_texts[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

static bool text_is(const struct tok_token *tk, const char *s)
{
	size_t n = strlen(s);

	return tk->len == n && memcmp(tk->text, s, n) == 0;
}

static bool text_in(const struct tok_token *tk, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (text_is(tk, list[i]))
			return true;
	return false;
}

#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

int32_t tok_find(const struct tok *t, const char *s, size_t len)
{
	uint32_t i = tok_hash(TOK_FNV0, s, len) & t->tok_hash_mask;

	for (;; i = (i + 1) & t->tok_hash_mask) {
		int32_t id = t->tok_hash[i];
		if (id == TOK_NULL)
			return TOK_NULL;
		if (t->tokens[id].len == len && memcmp(t->tokens[id].text, s, len) == 0)
			return id;
	}
}

int32_t tok_merge_rank(const struct tok *t, const char *l, size_t ll, const char *r, size_t rl)
{
	uint32_t h, i;

	if (!t->n_merges)
		return -1;
	h = tok_hash(tok_hash(tok_hash(TOK_FNV0, l, ll), " ", 1), r, rl);
	for (i = h & t->merge_hash_mask;; i = (i + 1) & t->merge_hash_mask) {
		int32_t m = t->merge_hash[i];
		const struct tok_merge *e;
		if (m < 0)
			return -1;
		e = &t->merges[m];
		if (e->split == ll && e->len == ll + 1 + rl && memcmp(e->line, l, ll) == 0 &&
		    memcmp(e->line + ll + 1, r, rl) == 0)
			return m;
	}
}

bool tok_is_eog(const struct tok *t, int32_t id)
{
	return id >= 0 && (uint32_t)id < t->n_vocab && (t->tokens[id].attr & TOK_ATTR_EOG);
}

static uint32_t table_size(uint64_t n)
{
	uint32_t s = 16;

	while (s < 2 * n)
		s <<= 1;
	return s;
}

static int32_t *new_table(struct tok *t, uint32_t size)
{
	int32_t *h = llm_arena_alloc(&t->arena, (size_t)size * sizeof *h, 4);

	if (h)
		memset(h, 0xff, (size_t)size * sizeof *h); /* TOK_NULL */
	return h;
}

/* Array of n elements of type ty, n >= min_n; NULL (no error) if the key is absent. */
static int get_array(const struct gguf_file *g, const char *key, uint32_t ty, uint32_t ty2,
		     uint64_t min_n, const struct gguf_array **out, char *err, size_t errlen)
{
	int rc = gguf_get_arr(g, key, out);

	if (rc == -LLMK_ENOENT) {
		*out = NULL;
		return 0;
	}
	if (rc < 0 || ((*out)->type != ty && (*out)->type != ty2)) {
		plat_snprintf(err, errlen, "tok: %s is not an array of %s", key, gguf_vtype_name(ty));
		return -LLMK_EFORMAT;
	}
	if ((*out)->n < min_n) {
		plat_snprintf(err, errlen, "tok: %s has %llu entries, vocabulary has %llu", key,
			      (unsigned long long)(*out)->n, (unsigned long long)min_n);
		return -LLMK_EFORMAT;
	}
	return 0;
}

static int load_kind(struct tok *t, const struct gguf_file *g, char *err, size_t errlen)
{
	const struct gguf_str *s;

	if (gguf_get_str(g, KEY "model", &s) < 0) {
		plat_snprintf(err, errlen, "tok: no %smodel string in the file", KEY);
		return -LLMK_ENOENT;
	}
	plat_snprintf(t->model, sizeof t->model, "%s", s->s);
	if (strcmp(s->s, "llama") == 0) {
		/* SPM defaults (llama_vocab::impl::load) */
		t->kind = TOK_SPM;
		t->bos = 1, t->eos = 2, t->unk = 0;
		t->add_space_prefix = true;
		t->add_bos = true;
		return 0;
	}
	if (strcmp(s->s, "gpt2") != 0) {
		char nm[64];
		gguf_safe_name(nm, sizeof nm, s->s, s->len);
		plat_snprintf(err, errlen, "tok: unsupported tokenizer model '%s' (%smodel)", nm, KEY);
		return -LLMK_ENOTSUP;
	}
	t->kind = TOK_BPE;
	t->bos = 11, t->eos = 11;
	t->clean_spaces = true;
	if (gguf_get_str(g, KEY "pre", &s) < 0) {
		t->pre = TOK_PRE_DEFAULT; /* llama.cpp warns: quality degraded */
		plat_snprintf(t->pre_name, sizeof t->pre_name, "default");
		return 0;
	}
	plat_snprintf(t->pre_name, sizeof t->pre_name, "%s", s->s);
	for (size_t i = 0; i < ARRAY_N(pre_names); i++) {
		const struct pre_name *p = &pre_names[i];
		if (strcmp(p->name, s->s) != 0)
			continue;
		t->pre = p->pre;
		t->ignore_merges = p->ignore_merges;
		t->add_bos = p->add_bos;
		t->clean_spaces = !p->keep_spaces;
		return 0;
	}
	gguf_safe_name(t->pre_name, sizeof t->pre_name, s->s, s->len);
	plat_snprintf(err, errlen, "tok: unsupported pre-tokenizer '%s' (%spre)", t->pre_name, KEY);
	return -LLMK_ENOTSUP;
}

static uint32_t attr_of_type(int32_t tt)
{
	switch (tt) {
	case TT_NORMAL: return TOK_ATTR_NORMAL;
	case TT_UNKNOWN: return TOK_ATTR_UNKNOWN;
	case TT_CONTROL: return TOK_ATTR_CONTROL;
	case TT_USER_DEFINED: return TOK_ATTR_USER_DEFINED;
	case TT_UNUSED: return TOK_ATTR_UNUSED;
	case TT_BYTE: return TOK_ATTR_BYTE;
	default: return 0; /* undefined */
	}
}

static int load_tokens(struct tok *t, const struct gguf_file *g, char *err, size_t errlen)
{
	const struct gguf_array *toks, *scores, *types;
	const struct gguf_str *strs;
	uint32_t n;
	int rc;

	if ((rc = get_array(g, KEY "tokens", GGUF_VT_STRING, GGUF_VT_STRING, 1, &toks, err, errlen)))
		return rc;
	if (!toks) {
		plat_snprintf(err, errlen, "tok: no %stokens array in the file", KEY);
		return -LLMK_ENOENT;
	}
	if (toks->n >= INT32_MAX) {
		plat_snprintf(err, errlen, "tok: %llu tokens is too many", (unsigned long long)toks->n);
		return -LLMK_ERANGE;
	}
	n = t->n_vocab = (uint32_t)toks->n;
	if ((rc = get_array(g, KEY "scores", GGUF_VT_FLOAT32, GGUF_VT_INT32, n, &scores, err, errlen)) ||
	    (rc = get_array(g, KEY "token_type", GGUF_VT_INT32, GGUF_VT_INT32, n, &types, err, errlen)))
		return rc;
	t->tokens = llm_arena_alloc(&t->arena, (size_t)n * sizeof *t->tokens, 8);
	t->tok_hash_mask = table_size(n) - 1;
	t->tok_hash = new_table(t, t->tok_hash_mask + 1);
	if (!t->tokens || !t->tok_hash)
		return -LLMK_ENOMEM;
	strs = toks->data;
	for (uint32_t i = 0; i < n; i++) {
		struct tok_token *tk = &t->tokens[i];
		char empty[32];
		const char *s = strs[i].s;
		size_t len = strs[i].len;
		uint32_t h;

		if (len == 0) { /* as llama.cpp: an empty token gets a placeholder text */
			len = (size_t)plat_snprintf(empty, sizeof empty, "[EMPTY_%u]", i);
			s = empty;
		}
		if (len >= UINT32_MAX || !(tk->text = llm_arena_strndup(&t->arena, s, len)))
			return -LLMK_ENOMEM;
		tk->len = (uint32_t)len;
		if (tok_find(t, s, len) != TOK_NULL) {
			char nm[64];
			gguf_safe_name(nm, sizeof nm, s, len);
			plat_snprintf(err, errlen, "tok: duplicate token '%s' (ids %d and %u)", nm,
				      (int)tok_find(t, s, len), i);
			return -LLMK_EFORMAT;
		}
		for (h = tok_hash(TOK_FNV0, s, len) & t->tok_hash_mask; t->tok_hash[h] != TOK_NULL;)
			h = (h + 1) & t->tok_hash_mask;
		t->tok_hash[h] = (int32_t)i;
		if (scores && scores->type == GGUF_VT_FLOAT32) {
			memcpy(&tk->score, (const uint8_t *)scores->data + 4 * (size_t)i, 4);
		} else if (scores) {
			int32_t v;
			memcpy(&v, (const uint8_t *)scores->data + 4 * (size_t)i, 4);
			tk->score = (float)v;
		}
		if (types) {
			int32_t v;
			memcpy(&v, (const uint8_t *)types->data + 4 * (size_t)i, 4);
			tk->attr = attr_of_type(v);
		} else {
			tk->attr = TOK_ATTR_NORMAL;
		}
	}
	return 0;
}

static const char *find_space(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == ' ')
			return s + i;
	return NULL;
}

/* "left right": llama.cpp splits at the first space after the first byte. */
static int load_merges(struct tok *t, const struct gguf_file *g, char *err, size_t errlen)
{
	const struct gguf_array *arr;
	const struct gguf_str *strs;
	int rc;

	if ((rc = get_array(g, KEY "merges", GGUF_VT_STRING, GGUF_VT_STRING, 0, &arr, err, errlen)))
		return rc;
	if (!arr) {
		plat_snprintf(err, errlen, "tok: BPE vocabulary without %smerges", KEY);
		return -LLMK_ENOENT;
	}
	if (arr->n >= INT32_MAX) {
		plat_snprintf(err, errlen, "tok: %llu merges is too many", (unsigned long long)arr->n);
		return -LLMK_ERANGE;
	}
	t->merges = llm_arena_alloc(&t->arena, (size_t)arr->n * sizeof *t->merges + 1, 8);
	t->merge_hash_mask = table_size(arr->n) - 1;
	t->merge_hash = new_table(t, t->merge_hash_mask + 1);
	if (!t->merges || !t->merge_hash)
		return -LLMK_ENOMEM;
	strs = arr->data;
	for (uint64_t i = 0; i < arr->n; i++) {
		const struct gguf_str *s = &strs[i];
		struct tok_merge *m = &t->merges[t->n_merges];
		const char *sp = s->len > 1 ? find_space(s->s + 1, s->len - 1) : NULL;
		uint32_t h;

		/* A line without a separator can never match a pair: keep its rank
		 * slot (ranks are indices) but do not index it. */
		m->line = "";
		t->n_merges++;
		if (!sp || s->len >= UINT32_MAX)
			continue;
		m->split = (uint32_t)(sp - s->s);
		if (tok_merge_rank(t, s->s, m->split, sp + 1, s->len - m->split - 1) >= 0)
			continue; /* duplicate pair: the first (lowest rank) wins */
		if (!(m->line = llm_arena_strndup(&t->arena, s->s, s->len)))
			return -LLMK_ENOMEM;
		m->len = (uint32_t)s->len;
		for (h = tok_hash(TOK_FNV0, s->s, s->len) & t->merge_hash_mask; t->merge_hash[h] >= 0;)
			h = (h + 1) & t->merge_hash_mask;
		t->merge_hash[h] = (int32_t)i;
	}
	return 0;
}

static void load_special_ids(struct tok *t, const struct gguf_file *g)
{
	static const char *const keys[] = {
		KEY "bos_token_id", KEY "eos_token_id", KEY "eot_token_id", KEY "eom_token_id",
		KEY "unknown_token_id", KEY "padding_token_id",
	};
	int32_t *ids[] = {&t->bos, &t->eos, &t->eot, &t->eom, &t->unk, &t->pad};

	for (size_t i = 0; i < ARRAY_N(keys); i++) {
		uint32_t v;
		if (*ids[i] >= 0 && (uint32_t)*ids[i] >= t->n_vocab)
			*ids[i] = TOK_NULL; /* default out of range: disabled */
		/* an id outside the vocabulary is ignored (llama.cpp warns) */
		if (gguf_get_u32(g, keys[i], &v) == 0 && v < t->n_vocab)
			*ids[i] = (int32_t)v;
	}
}

/* The EOG token with text s, or TOK_NULL. */
static int32_t eog_with_text(const struct tok *t, const char *s)
{
	int32_t id = tok_find(t, s, strlen(s));

	return id != TOK_NULL && (t->tokens[id].attr & TOK_ATTR_EOG) ? id : TOK_NULL;
}

/*
 * llama.cpp's two exceptions to the EOG texts: where <|return|> and <|call|>
 * (o200k_harmony) or <|calls|> and <|flush|> (solar-open) end generation,
 * <|end|> does not (it becomes USER_DEFINED); where <|tool_response> does
 * (gemma4), </s> is plain text (NORMAL).
 */
static void unmark_eog(struct tok *t)
{
	int32_t end = eog_with_text(t, "<|end|>"), s = eog_with_text(t, "</s>");
	bool call = eog_with_text(t, "<|call|>") != TOK_NULL || eog_with_text(t, "<|calls|>") != TOK_NULL;

	if (end != TOK_NULL && call &&
	    (eog_with_text(t, "<|return|>") != TOK_NULL || eog_with_text(t, "<|flush|>") != TOK_NULL))
		t->tokens[end].attr = TOK_ATTR_USER_DEFINED;
	if (s != TOK_NULL && eog_with_text(t, "<|tool_response>") != TOK_NULL)
		t->tokens[s].attr = TOK_ATTR_NORMAL;
}

/*
 * Fill-in-the-middle tokens: the id from the key (or its older name), else the
 * first token, in id order, with one of the texts, forced to CONTROL. Pad,
 * repo and file-separator end generation. (Where several texts of a kind are
 * present llama.cpp takes the first of its hash map's order; id order here.)
 */
#define FIM_TEXTS 6
static const struct fim_kind {
	const char *key, *old_key;
	bool eog;
	const char *texts[FIM_TEXTS];
} fim_kinds[] = {
	{KEY "fim_pre_token_id", KEY "prefix_token_id", false,
	 {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "<|code_prefix|>", "<|prefix|>"}},
	{KEY "fim_suf_token_id", KEY "suffix_token_id", false,
	 {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "<|code_suffix|>", "<|suffix|>"}},
	{KEY "fim_mid_token_id", KEY "middle_token_id", false,
	 {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "<|code_middle|>", "<|middle|>"}},
	{KEY "fim_pad_token_id", NULL, true, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
	{KEY "fim_rep_token_id", NULL, true,
	 {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
	{KEY "fim_sep_token_id", NULL, true, {"<|file_sep|>"}},
};

static int32_t fim_id(const struct tok *t, const struct gguf_file *g, const struct fim_kind *k)
{
	uint32_t v;

	if ((gguf_get_u32(g, k->key, &v) == 0 || (k->old_key && gguf_get_u32(g, k->old_key, &v) == 0)) &&
	    v < t->n_vocab)
		return (int32_t)v;
	for (uint32_t i = 0; i < t->n_vocab; i++)
		for (size_t j = 0; j < FIM_TEXTS && k->texts[j]; j++)
			if (text_is(&t->tokens[i], k->texts[j])) {
				t->tokens[i].attr |= TOK_ATTR_CONTROL;
				return (int32_t)i;
			}
	return TOK_NULL;
}

/* EOT/EOM detection and the EOG set, by token text (llama_vocab::impl::load). */
static void mark_eog(struct tok *t, const struct gguf_file *g)
{
	for (size_t k = 0; k < ARRAY_N(fim_kinds); k++) {
		int32_t id = fim_id(t, g, &fim_kinds[k]);
		if (id != TOK_NULL && fim_kinds[k].eog)
			t->tokens[id].attr |= TOK_ATTR_EOG;
	}
	for (uint32_t i = 0; i < t->n_vocab; i++) {
		struct tok_token *tk = &t->tokens[i];

		if (t->eot == TOK_NULL && text_in(tk, eot_texts, ARRAY_N(eot_texts))) {
			t->eot = (int32_t)i;
			tk->attr |= TOK_ATTR_CONTROL;
		}
		if (t->eom == TOK_NULL && text_is(tk, "<|eom_id|>")) {
			t->eom = (int32_t)i;
			tk->attr |= TOK_ATTR_CONTROL;
		}
		if (text_in(tk, eog_texts, ARRAY_N(eog_texts)))
			tk->attr |= TOK_ATTR_EOG | TOK_ATTR_CONTROL;
	}
	if (t->eos != TOK_NULL)
		t->tokens[t->eos].attr |= TOK_ATTR_EOG;
	if (t->eot != TOK_NULL)
		t->tokens[t->eot].attr |= TOK_ATTR_EOG;
	if (t->eom != TOK_NULL)
		t->tokens[t->eom].attr |= TOK_ATTR_EOG;
	for (uint32_t i = 0; i < t->n_vocab; i++)
		if (text_in(&t->tokens[i], shown_texts, ARRAY_N(shown_texts)))
			t->tokens[i].attr = TOK_ATTR_USER_DEFINED | (t->tokens[i].attr & TOK_ATTR_EOG);
	unmark_eog(t);
}

/*
 * Tokens matched as text before tokenizing (control, user-defined, unknown),
 * longest first so that a longer token wins over its prefix. Counting sort by
 * length keeps ids ascending among equal lengths.
 */
static int build_special(struct tok *t)
{
	uint32_t max_len = 0, *start;
	const uint32_t want = TOK_ATTR_CONTROL | TOK_ATTR_USER_DEFINED | TOK_ATTR_UNKNOWN;

	for (uint32_t i = 0; i < t->n_vocab; i++) {
		if (!(t->tokens[i].attr & want))
			continue;
		t->n_special++;
		if (t->tokens[i].len > max_len)
			max_len = t->tokens[i].len;
	}
	if (!t->n_special)
		return 0;
	t->special = llm_arena_alloc(&t->arena, t->n_special * sizeof *t->special, 4);
	start = llm_arena_alloc(&t->arena, ((size_t)max_len + 2) * sizeof *start, 4);
	if (!t->special || !start)
		return -LLMK_ENOMEM;
	/* start[max_len - len + 1] counts tokens of length len, then prefix sums */
	for (uint32_t i = 0; i < t->n_vocab; i++)
		if (t->tokens[i].attr & want)
			start[max_len - t->tokens[i].len + 1]++;
	for (uint32_t l = 1; l <= max_len + 1; l++)
		start[l] += start[l - 1];
	for (uint32_t i = 0; i < t->n_vocab; i++)
		if (t->tokens[i].attr & want)
			t->special[start[max_len - t->tokens[i].len]++] = (int32_t)i;
	return 0;
}

/* Index special[] by the first two bytes of the text (tokens of one byte are
 * not indexed: tok_text.c always searches for those). */
static int index_special(struct tok *t)
{
	uint32_t *at;

	t->special_at2 = at = llm_arena_alloc(&t->arena, 65537 * sizeof *at, 4);
	t->special_by2 = llm_arena_alloc(&t->arena, ((size_t)t->n_special + 1) * sizeof *at, 4);
	if (!at || !t->special_by2)
		return -LLMK_ENOMEM;
	memset(at, 0, 65537 * sizeof *at);
	for (uint32_t s = 0; s < t->n_special; s++) {
		const struct tok_token *tk = &t->tokens[t->special[s]];
		if (tk->len >= 2)
			at[((uint8_t)tk->text[0] << 8 | (uint8_t)tk->text[1]) + 1]++;
	}
	for (uint32_t k = 1; k <= 65536; k++)
		at[k] += at[k - 1];
	for (uint32_t s = 0; s < t->n_special; s++) {
		const struct tok_token *tk = &t->tokens[t->special[s]];
		if (tk->len >= 2)
			t->special_by2[at[(uint8_t)tk->text[0] << 8 | (uint8_t)tk->text[1]]++] = s;
	}
	/* the placement moved every start to the next group's: shift back */
	for (uint32_t k = 65536; k > 0; k--)
		at[k] = at[k - 1];
	at[0] = 0;
	return 0;
}

/*
 * llama.cpp sets these by general.name: Phi-3's special tokens swallow the
 * whitespace after them, except <unk>, <s> and <|endoftext|>.
 */
static void phi3_rstrip(struct tok *t, const struct gguf_file *g)
{
	const struct gguf_str *name;
	char low[64];
	size_t n;
	int32_t id;

	if (gguf_get_str(g, "general.name", &name) < 0)
		return;
	n = name->len < sizeof low - 1 ? name->len : sizeof low - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (name->s[i] >= 'A' && name->s[i] <= 'Z') ? name->s[i] + 32 : name->s[i];
	low[n] = 0;
	bool phi3 = false;
	for (size_t i = 0; i + 3 < n && !phi3; i++)
		phi3 = strncmp(low + i, "phi-3", 5) == 0 || strncmp(low + i, "phi3", 4) == 0;
	if (!phi3)
		return;
	for (uint32_t i = 0; i < t->n_special; i++)
		t->tokens[t->special[i]].attr |= TOK_ATTR_RSTRIP;
	if ((id = tok_find(t, "</s>", 4)) != TOK_NULL)
		t->tokens[id].attr |= TOK_ATTR_RSTRIP;
	if ((id = tok_find(t, "<unk>", 5)) != TOK_NULL)
		t->tokens[id].attr &= ~TOK_ATTR_RSTRIP;
	if ((id = tok_find(t, "<s>", 3)) != TOK_NULL)
		t->tokens[id].attr &= ~TOK_ATTR_RSTRIP;
	if ((id = tok_find(t, "<|endoftext|>", 13)) != TOK_NULL)
		t->tokens[id].attr &= ~TOK_ATTR_RSTRIP;
}

/* Raw byte b as a token: SPM "<0xXX>" (else the byte itself), BPE GPT-2's char. */
static void build_bytes(struct tok *t)
{
	static const char hex[] = "0123456789ABCDEF";

	for (int b = 0; b < 256; b++) {
		char s[7] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0};
		char c = (char)b;

		t->byte_cp_len[b] = (uint8_t)uni_utf8_encode(uni_byte_to_cp((uint8_t)b), t->byte_cp[b]);
		if (t->kind == TOK_SPM) {
			t->byte_tok[b] = tok_find(t, s, 6);
			if (t->byte_tok[b] == TOK_NULL)
				t->byte_tok[b] = tok_find(t, &c, 1);
		} else {
			t->byte_tok[b] = tok_find(t, t->byte_cp[b], t->byte_cp_len[b]);
		}
	}
}

static int load_flags(struct tok *t, const struct gguf_file *g, char *err, size_t errlen)
{
	bool b;

	if (gguf_get_bool(g, KEY "add_space_prefix", &b) == 0)
		t->add_space_prefix = b;
	if (gguf_get_bool(g, KEY "add_bos_token", &b) == 0)
		t->add_bos = b;
	if (gguf_get_bool(g, KEY "add_eos_token", &b) == 0)
		t->add_eos = b;
	if (t->add_bos && t->bos == TOK_NULL) {
		plat_snprintf(err, errlen, "tok: %sadd_bos_token is true but there is no BOS token", KEY);
		return -LLMK_EFORMAT;
	}
	if (t->add_eos && t->eos == TOK_NULL) {
		plat_snprintf(err, errlen, "tok: %sadd_eos_token is true but there is no EOS token", KEY);
		return -LLMK_EFORMAT;
	}
	return 0;
}

int tok_init(struct tok *t, const struct gguf_file *g, struct llm_mem *mem, char *err, size_t errlen)
{
	int rc;

	memset(t, 0, sizeof *t);
	t->mem = mem;
	llm_arena_init(&t->arena, mem);
	t->bos = t->eos = t->eot = t->eom = t->unk = t->pad = t->nl = TOK_NULL;
	if (err && errlen)
		err[0] = 0;
	if ((rc = load_kind(t, g, err, errlen)) || (rc = load_tokens(t, g, err, errlen)) ||
	    (t->kind == TOK_BPE && (rc = load_merges(t, g, err, errlen))))
		goto fail;
	load_special_ids(t, g);
	if ((rc = load_flags(t, g, err, errlen)))
		goto fail;
	mark_eog(t, g);
	if ((rc = build_special(t)) || (rc = index_special(t)))
		goto fail;
	phi3_rstrip(t, g);
	build_bytes(t);
	if (t->kind == TOK_SPM) {
		t->nl = t->byte_tok['\n'];
	} else {
		size_t n = 0;
		int32_t id = TOK_NULL;
		if ((rc = tok_encode(t, "\n", 1, false, false, &id, 1, &n)) && rc != -LLMK_ERANGE)
			goto fail;
		t->nl = n ? id : t->pad;
	}
	return 0;
fail:
	if (err && errlen && !err[0])
		plat_snprintf(err, errlen, "tok: building the vocabulary: %s", plat_strerror(rc));
	tok_free(t);
	return rc;
}

void tok_free(struct tok *t)
{
	llm_arena_free(&t->arena);
	memset(t, 0, sizeof *t);
}
