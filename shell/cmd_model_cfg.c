/*
 * shell/cmd_model_cfg.c — the engine's settings: one table, shell_config_model,
 * that is at once the `config` keys (and llmk.cfg's), the per-run flags of
 * infer and chat (a row with a flag is also "--<key> VALUE"), and what `help`
 * and `config` say about them. Model-shaping keys (threads, ctx, mem-budget,
 * kv-type, batch, pack) apply at the next `load`; the rest to the next run.
 *
 * A typed row (struct param) names its value's type, range and field of
 * struct engine_config; the same parser fills the engine's configuration
 * (config) or the one run's copy of it (a flag).
 */
#include "cmd_model_cfg.h"

#include <stddef.h>

enum param_type {
	PARAM_U32,
	PARAM_F32,
	PARAM_SEED,     /* u64 below 2^63, or "random" / -1 (SAMPLE_SEED_RANDOM) */
	PARAM_INT,      /* a signed int field (mirostat 0..2, dry-penalty-last-n -1..) */
	PARAM_SAMPLERS, /* the chain's order: llama.cpp's --samplers (sample_order_parse) */
	PARAM_F32_POS,  /* F32 above lo (lo itself excluded) */
	PARAM_NPREDICT, /* U32, or -1: to the end of the context (ENGINE_PREDICT_ALL) */
};

struct param {
	enum param_type type;
	double lo, hi;
	size_t off; /* of the field in struct engine_config */
};

#define FIELD(f) offsetof(struct engine_config, f)

static int param_int(struct shell *sh, const char *what, const char *v, const struct param *p,
		     int *field)
{
	int64_t x;
	int r = shell_parse_i64(v, &x);

	if (r == -LLMK_EINVAL)
		return shell_err(sh, r, "%s: bad number '%s'", what, v);
	if (r || x < (int64_t)p->lo || x > (int64_t)p->hi)
		return shell_err(sh, -LLMK_ERANGE, "%s: %s is out of range [%lld, %lld]", what, v,
				 (long long)p->lo, (long long)p->hi);
	*field = (int)x;
	return 0;
}

/* The chain's order: one error names the item that is not a sampler. */
static int param_samplers(struct shell *sh, const char *what, const char *v,
			  struct sample_params *sp)
{
	const char *bad;
	size_t n;
	int r = sample_order_parse(sp, v, &bad, &n);

	if (r == -LLMK_ERANGE)
		return shell_err(sh, r, "%s: more than %d samplers in '%s'", what, SAMPLE_MAX_ORDER, v);
	if (r)
		return shell_err(sh, r, "%s: unknown sampler '%.*s' (expected names separated by ';' "
				 "from penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, "
				 "temperature, or their letters edskypmxt)", what, (int)n, bad);
	return 0;
}

/* Parse v into c as k's row says; what names the key or the flag in
 * errors, config says which. */
static int param_parse(struct shell *sh, const struct shell_config_key *k, const char *what,
		       const char *v, struct engine_config *c, bool config)
{
	const struct param *p = k->arg;
	void *field = (char *)c + p->off;
	uint64_t u;
	double d;
	int r;

	switch (p->type) {
	case PARAM_NPREDICT:
		/* llama.cpp's -n -1: until the context is full or an end token */
		if (!strcmp(v, "-1")) {
			*(uint32_t *)field = ENGINE_PREDICT_ALL;
			return 0;
		}
		/* fall through */
	case PARAM_U32:
		if ((r = shell_arg_u64(sh, what, v, (uint64_t)p->lo, (uint64_t)p->hi, &u)))
			return r;
		*(uint32_t *)field = (uint32_t)u;
		return 0;
	case PARAM_INT:
		return param_int(sh, what, v, p, (int *)field);
	case PARAM_SAMPLERS:
		return param_samplers(sh, what, v, (struct sample_params *)field);
	case PARAM_F32:
	case PARAM_F32_POS:
		if ((r = shell_arg_f64(sh, what, v, p->lo, p->hi, &d)))
			return r;
		if (p->type == PARAM_F32_POS && d <= p->lo)
			return shell_err(sh, -LLMK_ERANGE, "%s: %s is out of range (%g, %g]", what, v,
					 p->lo, p->hi);
		*(float *)field = (float)d;
		return 0;
	case PARAM_SEED:
		/* llama.cpp's --seed -1: a new random seed each run */
		if (!strcmp(v, "random") || !strcmp(v, "-1")) {
			*(uint64_t *)field = SAMPLE_SEED_RANDOM;
			return 0;
		}
		return shell_arg_u64(sh, what, v, 0, (1ull << 63) - 1, (uint64_t *)field);
	}
	return -LLMK_EINVAL;
}

static int param_set(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	struct engine *e = shell_engine(sh);
	struct engine_config c;
	int r;

	engine_get_config(e, &c);
	if (!(r = param_parse(sh, k, k->name, v, &c, true)))
		engine_set_config(e, &c);
	return r;
}

static void param_get(struct shell *sh, const struct shell_config_key *k, char *b, size_t n)
{
	const struct param *p = k->arg;
	struct engine_config c;
	const void *field;

	engine_get_config(shell_engine(sh), &c);
	field = (const char *)&c + p->off;
	switch (p->type) {
	case PARAM_NPREDICT:
		if (*(const uint32_t *)field == ENGINE_PREDICT_ALL) {
			plat_snprintf(b, n, "-1");
			break;
		}
		/* fall through */
	case PARAM_U32:
		plat_snprintf(b, n, "%u", (unsigned)*(const uint32_t *)field);
		break;
	case PARAM_INT:
		plat_snprintf(b, n, "%d", *(const int *)field);
		break;
	case PARAM_SAMPLERS:
		sample_order_format((const struct sample_params *)field, b, n);
		break;
	case PARAM_F32:
	case PARAM_F32_POS:
		plat_snprintf(b, n, "%g", (double)*(const float *)field);
		break;
	case PARAM_SEED:
		if (*(const uint64_t *)field == SAMPLE_SEED_RANDOM)
			plat_snprintf(b, n, "random");
		else
			plat_snprintf(b, n, "%llu", (unsigned long long)*(const uint64_t *)field);
		break;
	}
}

const struct shell_config_key *shell_model_flag_key(const char *flag)
{
	const char *name = !strcmp(flag, "-n") ? "n-predict" : flag + 2;

	if (strncmp(flag, "--", 2) && strcmp(flag, "-n"))
		return NULL;
	for (const struct shell_config_key *k = shell_config_model; k->name; k++)
		if (k->flag && !strcmp(k->name, name))
			return k;
	return NULL;
}

int shell_model_flag_parse(struct shell *sh, const struct shell_config_key *k, const char *flag,
			   const char *value, struct engine_config *run)
{
	return param_parse(sh, k, flag, value, run, false);
}

/* ---- keys with a value of their own kind ---- */
static int set_threads(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	struct engine *e = shell_engine(sh);
	struct engine_config c;
	uint64_t x;
	int r = shell_arg_u64(sh, "threads", v, 0, 4096, &x);

	if (!r) {
		engine_get_config(e, &c);
		c.threads = (int)x;
		engine_set_config(e, &c);
	}
	return r;
}

static void get_threads(struct shell *sh, const struct shell_config_key *k, char *b, size_t n)
{
	struct engine_config c;

	engine_get_config(shell_engine(sh), &c);
	plat_snprintf(b, n, c.threads ? "%d" : "0 (all %d)", c.threads ? c.threads : plat_cpu_count());
}

static int set_budget(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	struct engine *e = shell_engine(sh);
	struct engine_config c;
	uint64_t x;
	int r = shell_arg_u64(sh, "mem-budget", v, 0, ~0ull, &x);

	if (!r) {
		engine_get_config(e, &c);
		c.mem_budget = x;
		engine_set_config(e, &c);
	}
	return r;
}

static void get_budget(struct shell *sh, const struct shell_config_key *k, char *b, size_t n)
{
	struct engine_config c;

	engine_get_config(shell_engine(sh), &c);
	if (c.mem_budget)
		shell_human_size(c.mem_budget, b, n);
	else
		plat_snprintf(b, n, "0 (none)");
}

static int set_kvtype(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	struct engine *e = shell_engine(sh);
	struct engine_config c;

	engine_get_config(e, &c);
	if (kv_type_parse(v, &c.kv_type))
		return shell_err(sh, -LLMK_EINVAL, "config kv-type: expected f16, q8_0 or f32, got '%s'", v);
	engine_set_config(e, &c);
	return 0;
}

static void get_kvtype(struct shell *sh, const struct shell_config_key *k, char *b, size_t n)
{
	struct engine_config c;

	engine_get_config(shell_engine(sh), &c);
	plat_snprintf(b, n, "%s", kv_type_name(c.kv_type));
}

static int set_pack(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	struct engine *e = shell_engine(sh);
	struct engine_config c;

	if (strcmp(v, "on") && strcmp(v, "off"))
		return shell_err(sh, -LLMK_EINVAL, "config pack: expected on or off, got '%s'", v);
	engine_get_config(e, &c);
	c.no_pack = !strcmp(v, "off");
	engine_set_config(e, &c);
	return 0;
}

static void get_pack(struct shell *sh, const struct shell_config_key *k, char *b, size_t n)
{
	struct engine_config c;

	engine_get_config(shell_engine(sh), &c);
	plat_snprintf(b, n, "%s", c.no_pack ? "off" : "on");
}

static int set_tmpl(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	struct engine *e = shell_engine(sh);
	struct engine_config c;
	enum chat_tmpl t = CHAT_UNKNOWN;

	if (strcmp(v, "auto") != 0 && chat_tmpl_parse(v, &t)) {
		char names[768];
		chat_tmpl_list(names, sizeof names);
		plat_printf("templates: %s\n", names);
		return shell_err(sh, -LLMK_EINVAL, "config chat-template: expected auto or one of the "
				 "templates above, got '%s'", v);
	}
	engine_get_config(e, &c);
	c.tmpl = t;
	engine_set_config(e, &c);
	return 0;
}

static void get_tmpl(struct shell *sh, const struct shell_config_key *k, char *b, size_t n)
{
	struct engine_config c;

	engine_get_config(shell_engine(sh), &c);
	plat_snprintf(b, n, "%s", c.tmpl == CHAT_UNKNOWN ? "auto" : chat_tmpl_name(c.tmpl));
}

/* A typed row: its value's type, range and field. */
#define P(type, lo, hi, field) (&(const struct param){PARAM_##type, lo, hi, FIELD(field)})

const struct shell_config_key shell_config_model[] = {
	{"threads", "worker threads for the matmuls; 0 = every CPU (next load)", set_threads,
	 get_threads, NULL, NULL},
	{"ctx", "context positions; 0 = the model's context_length, at most 4096 (next load)", param_set,
	 param_get, NULL, P(U32, 0, ENGINE_MAX_CTX, n_ctx)},
	{"mem-budget", "bytes the engine may hold (K/M/G suffixes); 0 = no limit (next load)",
	 set_budget, get_budget, NULL, NULL},
	{"kv-type", "f16, q8_0 or f32: KV cache format (next load)", set_kvtype, get_kvtype, NULL,
	 NULL},
	{"batch", "prompt tokens per forward pass (next load)", param_set, param_get, NULL,
	 P(U32, 1, 4096, n_batch)},
	{"pack", "on or off: resident weights rearranged for the packed kernels, where "
	 "the CPU has them (next load)", set_pack, get_pack, NULL, NULL},
	{"n-predict", "default max new tokens for infer/chat; -1 = to the end of the context",
	 param_set, param_get, "N", P(NPREDICT, 0, 1u << 30, n_predict)},
	{"lookup", "prompt lookup: up to N tokens that followed the last ones earlier in the "
	 "context checked in the same pass as the next (the text is the same); 0 = off, "
	 "-1 = 8 while streaming, else off", param_set, param_get, "N",
	 P(INT, -1, ENGINE_LOOKUP_MAX, lookup)},
	{"temp", "sampling temperature; 0 = greedy", param_set, param_get, "T",
	 P(F32, 0, 100, samp.temp)},
	{"top-k", "keep the K most likely tokens; 0 = off", param_set, param_get, "K",
	 P(U32, 0, 1u << 30, samp.top_k)},
	{"top-p", "nucleus: keep tokens up to this probability; 1 = off", param_set, param_get,
	 "P", P(F32, 0, 1, samp.top_p)},
	{"min-p", "drop tokens below P x the best one's probability; 0 = off", param_set,
	 param_get, "P", P(F32, 0, 1, samp.min_p)},
	{"typical", "locally typical sampling mass; 1 = off", param_set, param_get, "P",
	 P(F32, 0, 1, samp.typical)},
	{"repeat-penalty", "penalty for tokens in the last N; 1 = off, above 0", param_set,
	 param_get, "R", P(F32_POS, 0, 100, samp.repeat_penalty)},
	{"repeat-last-n", "window of the penalties", param_set, param_get, "N",
	 P(U32, 0, 1u << 20, samp.repeat_last_n)},
	{"presence-penalty", "subtracted once for a token in the window", param_set, param_get,
	 "P", P(F32, -100, 100, samp.presence_penalty)},
	{"frequency-penalty", "subtracted per occurrence in the window", param_set, param_get,
	 "P", P(F32, -100, 100, samp.frequency_penalty)},
	{"top-nsigma", "keep logits >= max - N x their standard deviation; <= 0 = off",
	 param_set, param_get, "N", P(F32, -1, 100, samp.top_nsigma)},
	{"xtc-probability", "chance XTC removes the likeliest tokens; 0 = off", param_set,
	 param_get, "P", P(F32, 0, 1, samp.xtc_probability)},
	{"xtc-threshold", "XTC removes tokens above this but the least likely; > 0.5 = off",
	 param_set, param_get, "P", P(F32, 0, 1, samp.xtc_threshold)},
	{"dynatemp-range", "dynamic temperature: temp +- this by the entropy; 0 = off",
	 param_set, param_get, "R", P(F32, 0, 100, samp.dynatemp_range)},
	{"dynatemp-exp", "dynamic temperature exponent", param_set, param_get, "E",
	 P(F32, 0, 100, samp.dynatemp_exp)},
	{"dry-multiplier", "DRY: penalty for extending a repeat; 0 = off", param_set, param_get,
	 "M", P(F32, 0, 100, samp.dry_multiplier)},
	{"dry-base", "DRY: penalty x base^(repeat length - allowed length)", param_set,
	 param_get, "B", P(F32, 1, 100, samp.dry_base)},
	{"dry-allowed-length", "DRY: repeats this long are not penalised", param_set, param_get,
	 "N", P(U32, 0, 1u << 20, samp.dry_allowed_length)},
	{"dry-penalty-last-n", "DRY: window of tokens; -1 = the context, 0 = off", param_set,
	 param_get, "N", P(INT, -1, 1 << 24, samp.dry_last_n)},
	{"samplers", "order of the steps, ';'-separated names or letters (edskypmxt)",
	 param_set, param_get, "LIST", P(SAMPLERS, 0, 0, samp)},
	{"mirostat", "0 = off, 1 = Mirostat, 2 = Mirostat v2 (replace the samplers)", param_set,
	 param_get, "N", P(INT, 0, 2, samp.mirostat)},
	{"mirostat-lr", "Mirostat learning rate (eta)", param_set, param_get, "ETA",
	 P(F32, 0, 1, samp.mirostat_eta)},
	{"mirostat-ent", "Mirostat target surprise (tau, bits)", param_set, param_get, "TAU",
	 P(F32, 0, 100, samp.mirostat_tau)},
	{"seed", "sampler seed, or random / -1 (a new one each run; stats shows it)", param_set,
	 param_get, "S", P(SEED, 0, 0, samp.seed)},
	{"chat-template", "auto (from the model) or one of llama.cpp's built-in templates: "
	 "chatml, llama3, gemma, mistral-v7, phi4, ... (a wrong one lists them all), or jinja "
	 "(the model's own template, run)",
	 set_tmpl, get_tmpl, NULL, NULL},
	{0},
};
