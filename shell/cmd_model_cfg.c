/*
 * shell/cmd_model_cfg.c — the engine's config keys (`config KEY VALUE`,
 * llmk.cfg). Model-shaping keys (threads, ctx, mem-budget, kv-type, batch)
 * apply at the next `load`; sampling defaults apply to the next run.
 */
#include "cmd_model.h"

static struct engine_config *cfg(struct shell *sh)
{
	return &shell_engine(sh)->cfg;
}

static int set_u32(struct shell *sh, const char *key, const char *v, uint64_t lo, uint64_t hi,
		   uint32_t *out)
{
	uint64_t x;
	int r = shell_arg_u64(sh, key, v, lo, hi, &x);
	if (!r)
		*out = (uint32_t)x;
	return r;
}

static int set_f32(struct shell *sh, const char *key, const char *v, double lo, double hi,
		   float *out)
{
	double x;
	int r = shell_arg_f64(sh, key, v, lo, hi, &x);
	if (!r)
		*out = (float)x;
	return r;
}

#define U32_KEY(fn, key, field, lo, hi)                                             \
	static int set_##fn(struct shell *sh, const char *v)                        \
	{                                                                           \
		return set_u32(sh, key, v, lo, hi, &cfg(sh)->field);                \
	}                                                                           \
	static void get_##fn(struct shell *sh, char *b, size_t n)                   \
	{                                                                           \
		plat_snprintf(b, n, "%u", (unsigned)cfg(sh)->field);                \
	}
#define F32_KEY(fn, key, field, lo, hi)                                             \
	static int set_##fn(struct shell *sh, const char *v)                        \
	{                                                                           \
		return set_f32(sh, key, v, lo, hi, &cfg(sh)->field);                \
	}                                                                           \
	static void get_##fn(struct shell *sh, char *b, size_t n)                   \
	{                                                                           \
		plat_snprintf(b, n, "%g", (double)cfg(sh)->field);                  \
	}

U32_KEY(ctx, "ctx", n_ctx, 0, 1u << 24)
U32_KEY(batch, "batch", n_batch, 1, 4096)
U32_KEY(npredict, "n-predict", n_predict, 0, 1u << 30)
U32_KEY(topk, "top-k", samp.top_k, 0, 1u << 30)
U32_KEY(lastn, "repeat-last-n", samp.repeat_last_n, 0, 1u << 20)
F32_KEY(temp, "temp", samp.temp, 0, 100)
F32_KEY(topp, "top-p", samp.top_p, 0, 1)
F32_KEY(minp, "min-p", samp.min_p, 0, 1)
F32_KEY(typical, "typical", samp.typical, 0, 1)
F32_KEY(rpen, "repeat-penalty", samp.repeat_penalty, 0, 100)
F32_KEY(ppen, "presence-penalty", samp.presence_penalty, -100, 100)
F32_KEY(fpen, "frequency-penalty", samp.frequency_penalty, -100, 100)

static int set_threads(struct shell *sh, const char *v)
{
	uint32_t n;
	int r = set_u32(sh, "threads", v, 0, 4096, &n);
	if (!r)
		cfg(sh)->threads = (int)n;
	return r;
}

static void get_threads(struct shell *sh, char *b, size_t n)
{
	int t = cfg(sh)->threads;
	plat_snprintf(b, n, t ? "%d" : "0 (all %d)", t ? t : plat_cpu_count());
}

static int set_budget(struct shell *sh, const char *v)
{
	uint64_t x;
	int r = shell_arg_u64(sh, "mem-budget", v, 0, ~0ull, &x);
	if (!r)
		cfg(sh)->mem_budget = x;
	return r;
}

static void get_budget(struct shell *sh, char *b, size_t n)
{
	uint64_t x = cfg(sh)->mem_budget;
	if (x)
		shell_human_size(x, b, n);
	else
		plat_snprintf(b, n, "0 (none)");
}

static int set_kvtype(struct shell *sh, const char *v)
{
	if (kv_type_parse(v, &cfg(sh)->kv_type))
		return shell_err(sh, -LLMK_EINVAL, "config kv-type: expected f16, q8_0 or f32, got '%s'", v);
	return 0;
}

static void get_kvtype(struct shell *sh, char *b, size_t n)
{
	plat_snprintf(b, n, "%s", kv_type_name(cfg(sh)->kv_type));
}

static int set_pack(struct shell *sh, const char *v)
{
	if (strcmp(v, "on") && strcmp(v, "off"))
		return shell_err(sh, -LLMK_EINVAL, "config pack: expected on or off, got '%s'", v);
	cfg(sh)->no_pack = !strcmp(v, "off");
	return 0;
}

static void get_pack(struct shell *sh, char *b, size_t n)
{
	plat_snprintf(b, n, "%s", cfg(sh)->no_pack ? "off" : "on");
}

static int set_seed(struct shell *sh, const char *v)
{
	if (!strcmp(v, "random")) {
		cfg(sh)->samp.seed = SAMPLE_SEED_RANDOM;
		return 0;
	}
	return shell_arg_u64(sh, "seed", v, 0, (1ull << 63) - 1, &cfg(sh)->samp.seed);
}

static void get_seed(struct shell *sh, char *b, size_t n)
{
	uint64_t s = cfg(sh)->samp.seed;
	if (s == SAMPLE_SEED_RANDOM)
		plat_snprintf(b, n, "random");
	else
		plat_snprintf(b, n, "%llu", (unsigned long long)s);
}

static int set_mirostat(struct shell *sh, const char *v)
{
	uint32_t m;
	int r = set_u32(sh, "mirostat", v, 0, 2, &m);
	if (r)
		return r;
	if (m == 1)
		return shell_err(sh, -LLMK_ENOTSUP, "config mirostat: only 0 (off) and 2 are supported");
	cfg(sh)->samp.mirostat = (int)m;
	return 0;
}

static void get_mirostat(struct shell *sh, char *b, size_t n)
{
	plat_snprintf(b, n, "%d", cfg(sh)->samp.mirostat);
}

static int set_tmpl(struct shell *sh, const char *v)
{
	enum chat_tmpl t = CHAT_UNKNOWN;
	if (strcmp(v, "auto") != 0 && chat_tmpl_parse(v, &t))
		return shell_err(sh, -LLMK_EINVAL, "config chat-template: expected auto, chatml, llama2, "
				 "llama3, mistral, zephyr, phi3 or gemma, got '%s'", v);
	cfg(sh)->tmpl = t;
	return 0;
}

static void get_tmpl(struct shell *sh, char *b, size_t n)
{
	enum chat_tmpl t = cfg(sh)->tmpl;
	plat_snprintf(b, n, "%s", t == CHAT_UNKNOWN ? "auto" : chat_tmpl_name(t));
}

const struct shell_config_key shell_config_model[] = {
	{"threads", "worker threads for the matmuls; 0 = every CPU (next load)", set_threads, get_threads},
	{"ctx", "context positions; 0 = the model's context_length (next load)", set_ctx, get_ctx},
	{"mem-budget", "bytes the engine may hold (K/M/G suffixes); 0 = no limit (next load)",
	 set_budget, get_budget},
	{"kv-type", "f16, q8_0 or f32: KV cache format (next load)", set_kvtype, get_kvtype},
	{"batch", "prompt tokens per forward pass (next load)", set_batch, get_batch},
	{"pack", "on or off: resident weights rearranged for the packed kernels, where "
	 "the CPU has them (next load)", set_pack, get_pack},
	{"n-predict", "default max new tokens for infer/chat", set_npredict, get_npredict},
	{"temp", "sampling temperature; 0 = greedy", set_temp, get_temp},
	{"top-k", "keep the K most likely tokens; 0 = off", set_topk, get_topk},
	{"top-p", "nucleus: keep tokens up to this probability; 1 = off", set_topp, get_topp},
	{"min-p", "drop tokens below P x the best one's probability; 0 = off", set_minp, get_minp},
	{"typical", "locally typical sampling mass; 1 = off", set_typical, get_typical},
	{"repeat-penalty", "penalty for tokens in the last N; 1 = off", set_rpen, get_rpen},
	{"repeat-last-n", "window of the penalties", set_lastn, get_lastn},
	{"presence-penalty", "subtracted once for a token in the window", set_ppen, get_ppen},
	{"frequency-penalty", "subtracted per occurrence in the window", set_fpen, get_fpen},
	{"mirostat", "0 = off, 2 = Mirostat v2", set_mirostat, get_mirostat},
	{"seed", "sampler seed, or random (a new one each run; stats shows it)", set_seed, get_seed},
	{"chat-template", "auto or chatml, llama2, llama3, mistral, zephyr, phi3, gemma",
	 set_tmpl, get_tmpl},
	{0},
};
