/*
 * shell/cmd_bench.c — `bench` (kernel and model benchmarks) and `selftest`
 * (SIMD rows against scalar rows on this machine).
 */
#include "shell.h"

#include "../llm/bench.h"
#include "../llm/engine.h"
#include "../llm/math.h"
#include "../llm/selftest.h"

struct bench_opts {
	uint64_t pp, tg, reps, threads;
	uint64_t batch;         /* --batch B: B sequences decode together (tg) */
	uint64_t depth;         /* -d N: the tests run after N tokens in the cache */
	bool json, kernels;
	uint32_t only;          /* --kernels TYPE: one type; GGML_TYPE_COUNT = all */
};

static const char *bench_emulated(void)
{
	return plat_emulated() ? " (emulated)" : "";
}

static int bench_parse(struct shell *sh, int argc, char **argv, struct bench_opts *o)
{
	o->pp = 128;
	o->tg = 64;
	o->reps = 3;
	o->batch = 1;
	o->depth = 0;
	o->threads = (uint64_t)plat_cpu_count();
	o->json = o->kernels = false;
	o->only = GGML_TYPE_COUNT;
	for (int i = 1; i < argc; i++) {
		uint64_t *v = NULL;
		uint64_t hi = 1 << 20;
		int err;
		if (!strcmp(argv[i], "--json")) {
			o->json = true;
			continue;
		}
		if (!strcmp(argv[i], "--kernels")) {
			o->kernels = true;
			continue;
		}
		if (!strcmp(argv[i], "-p"))
			v = &o->pp;
		else if (!strcmp(argv[i], "-n"))
			v = &o->tg;
		else if (!strcmp(argv[i], "-r"))
			v = &o->reps, hi = 1000;
		else if (!strcmp(argv[i], "-t"))
			v = &o->threads, hi = (uint64_t)plat_cpu_count();
		else if (!strcmp(argv[i], "--batch"))
			v = &o->batch, hi = 1024;
		else if (!strcmp(argv[i], "-d"))
			v = &o->depth;
		if (!v && o->kernels && argv[i][0] != '-') {
			for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++)
				if (quant_is_weight(t) && !strcmp(argv[i], quant_name(t)))
					o->only = t;
			if (o->only != GGML_TYPE_COUNT)
				continue;
			return shell_err(sh, -LLMK_EINVAL, "bench: unknown type '%s'", argv[i]);
		}
		if (!v)
			return shell_err(sh, -LLMK_EINVAL, "bench: unknown option '%s' (usage: %s)",
					 argv[i], "bench [-p N] [-n N] [-d N] [-r R] [-t T] [--batch B] [--json] [--kernels [TYPE]]");
		if (i + 1 == argc)
			return shell_err(sh, -LLMK_EINVAL, "bench: %s needs a value", argv[i]);
		char what[16];
		plat_snprintf(what, sizeof what, "bench %s", argv[i]);
		err = shell_arg_u64(sh, what, argv[i + 1],
				    v == &o->pp || v == &o->tg || v == &o->depth ? 0 : 1, hi, v);
		if (err)
			return err;
		i++;
	}
	return 0;
}

/* bench --kernels: per type, decode GB/s and prefill GOP/s, SIMD and scalar. */
static int bench_kernels(struct shell *sh, const struct bench_opts *o)
{
	struct llm_mem mem;
	struct mm_ctx c;
	double bw = 0;
	int err;

	llm_mem_init(&mem, 0);
	err = bench_mem_read(&mem, (int)o->threads, 300000000ull, &bw);
	if (err)
		return shell_err(sh, err, "bench: memory bandwidth buffer (256 MiB at least): %s",
				 plat_strerror(err));
	mm_init(&c, &mem, (int)o->threads);
	if (o->json)
		plat_printf("{\"machine\": \"%s%s\", \"threads\": %d, \"mem_read_gbs\": %.2f, \"kernels\": [",
			    plat_machine(), bench_emulated(), (int)o->threads, bw);
	else
		plat_printf("kernels on %s%s, %d threads; memory read %.1f GB/s\n"
			    "| type | impl       | tg GB/s | scalar | speedup | of mem bw | pp GOP/s | scalar | speedup |\n"
			    "| ---- | ---------- | ------- | ------ | ------- | --------- | -------- | ------ | ------- |\n",
			    plat_machine(), bench_emulated(), (int)o->threads, bw);
	for (uint32_t t = 0, n = 0; t < GGML_TYPE_COUNT; t++) {
		struct bench_kernel r;
		if (!quant_is_weight(t) || (o->only != GGML_TYPE_COUNT && t != o->only))
			continue;
		if (shell_poll_cancel(sh)) {
			err = -LLMK_ECANCEL;
			break;
		}
		err = bench_kernel_run(&c, t, plat_emulated() ? 8u << 20 : 96u << 20, plat_emulated() ? 8 : 64,
				       plat_emulated() ? 10000000ull : 200000000ull, &r);
		if (err) {
			shell_err(sh, err, "bench: %s kernel: %s", quant_name(t), plat_strerror(err));
			break;
		}
		if (o->json)
			plat_printf("%s{\"type\": \"%s\", \"impl\": \"%s\", \"tg_gbs\": %.3f, \"tg_gbs_scalar\": %.3f, "
				    "\"pp_gops\": %.3f, \"pp_gops_scalar\": %.3f, \"pp_batch\": %u}",
				    n++ ? ", " : "", quant_name(t), r.impl, r.tg_gbs[0], r.tg_gbs[1],
				    r.pp_gops[0], r.pp_gops[1], r.pp_batch);
		else
			plat_printf("| %-4s | %-10s | %7.2f | %6.2f | %6.1fx | %8.0f%% | %8.1f | %6.2f | %6.1fx |\n",
				    quant_name(t), r.impl, r.tg_gbs[0], r.tg_gbs[1],
				    r.tg_gbs[0] / r.tg_gbs[1], 100.0 * r.tg_gbs[0] / bw, r.pp_gops[0],
				    r.pp_gops[1], r.pp_gops[0] / r.pp_gops[1]);
	}
	if (o->json)
		plat_printf("]}\n");
	mm_free(&c);
	return err;
}

/* llama.cpp's general.file_type names (llama_ftype), for the quant column. */
static const char *bench_ftype(const struct engine *e)
{
	static const struct {
		uint32_t ft;
		const char *name;
	} names[] = {
		{0, "F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"},
		{9, "Q5_1"}, {10, "Q2_K"}, {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"},
		{14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},
		{32, "BF16"},
	};
	const struct gguf_tensor *t = gguf_find_tensor(&e->g, "blk.0.ffn_gate.weight");
	uint32_t ft;

	if (gguf_get_u32(&e->g, "general.file_type", &ft) == 0)
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (names[i].ft == ft)
				return names[i].name;
	return t ? quant_name(t->type) : "?";
}

/* Weight bytes one generated token reads: every tensor but the embedding
 * table (one row of it), unless the head reuses it. */
static uint64_t bench_token_bytes(const struct engine *e)
{
	const struct gguf_tensor *emb = gguf_find_tensor(&e->g, "token_embd.weight");
	uint64_t bytes = 0;

	for (uint64_t i = 0; i < e->g.n_tensors; i++)
		bytes += e->g.tensors[i].size;
	if (emb && !e->model.hp.tied_output)
		bytes -= emb->size - emb->size / (emb->ne[1] ? emb->ne[1] : 1);
	return bytes;
}

struct bench_stat {
	double mean, sd;
};

static struct bench_stat bench_stats(const double *v, uint32_t n)
{
	struct bench_stat st = {0, 0};
	double ss = 0;

	for (uint32_t i = 0; i < n; i++)
		st.mean += v[i] / n;
	for (uint32_t i = 0; i < n; i++)
		ss += (v[i] - st.mean) * (v[i] - st.mean);
	st.sd = n > 1 ? math_sqrtf((float)(ss / (n - 1))) : 0;
	return st;
}

/* A random token id (a 64-bit LCG's high bits), as llama-bench feeds. */
static int32_t bench_token(const struct engine *e, uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return (int32_t)((*seed >> 33) % e->model.hp.n_vocab);
}

/*
 * tg steps of nseq sequences decoding together: sequence i in cache rows
 * from i * (n_ctx / nseq), one random token each per step, every row's
 * logits computed (into lg, nseq x n_vocab): each step is one pass over the
 * weights for nseq tokens.
 */
static int bench_run_seqs(struct engine *e, uint32_t nseq, uint32_t tg, float *lg, uint64_t *seed,
			  uint64_t *ns)
{
	uint32_t base[ENGINE_BENCH_MAX_SEQS], pos[ENGINE_BENCH_MAX_SEQS];
	int32_t tok[ENGINE_BENCH_MAX_SEQS];
	uint64_t t0;
	int r = 0;

	for (uint32_t i = 0; i < nseq; i++)
		base[i] = i * (e->n_ctx / nseq);
	e->n_past = 0; /* the cache no longer holds a conversation */
	t0 = plat_time_ns();
	for (uint32_t k = 0; k < tg && !r; k++) {
		for (uint32_t i = 0; i < nseq; i++) {
			tok[i] = bench_token(e, seed);
			pos[i] = k;
		}
		r = model_forward_seqs(&e->model, &e->s, &e->mm, &e->kv, tok, base, pos, nseq, lg);
	}
	*ns = plat_time_ns() - t0;
	return r;
}

/* One timed run: pp > 0 evaluates pp tokens as prompt batches from position
 * d; else tg tokens one at a time from d (the cache's rows before d hold
 * bench_fill's tokens). Random token ids, as llama-bench. */
static int bench_run(struct engine *e, uint32_t pp, uint32_t tg, uint32_t d, uint64_t *seed,
		     uint64_t *ns)
{
	uint32_t n = pp ? pp : tg;
	int32_t *tok = e->tok_buf;
	uint64_t t0;
	int r = 0;

	for (uint32_t i = 0; i < n; i++)
		tok[i] = bench_token(e, seed);
	e->n_past = 0; /* the cache no longer holds a conversation */
	t0 = plat_time_ns();
	if (pp)
		r = model_forward(&e->model, &e->s, &e->mm, &e->kv, tok, pp, d, true);
	for (uint32_t i = 0; !pp && i < tg && !r; i++)
		r = model_forward(&e->model, &e->s, &e->mm, &e->kv, &tok[i], 1, d + i, true);
	*ns = plat_time_ns() - t0;
	return r;
}

/* -d N: N random tokens into the cache (untimed), which the runs then attend
 * to, as llama-bench's depth. */
static int bench_fill(struct engine *e, uint32_t d, uint64_t *seed)
{
	int32_t *tok = e->tok_buf;

	if (!d)
		return 0;
	for (uint32_t i = 0; i < d; i++)
		tok[i] = bench_token(e, seed);
	e->n_past = 0;
	return model_forward(&e->model, &e->s, &e->mm, &e->kv, tok, d, 0, false);
}

/* The read-bandwidth probe before each decode repetition: the machine's
 * bandwidth drifts (other tenants), so each repetition is set against what
 * the memory gave just before it. */
struct bench_probe {
	void *buf;
	size_t bytes;
	int threads;
	uint64_t min_ns;
	double gbs[1000];      /* per repetition */
};

static double bench_median(const double *v, uint32_t n)
{
	double s[1000];

	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = i;
		for (; k > 0 && s[k - 1] > v[i]; k--)
			s[k] = s[k - 1];
		s[k] = v[i];
	}
	return n ? (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : 0;
}

static int bench_test(struct shell *sh, struct engine *e, const struct bench_opts *o, bool pp,
		      float *lg, struct bench_stat *st, struct bench_probe *pr, double *v)
{
	uint64_t seed = 1, ns;
	uint32_t n = (uint32_t)(pp ? o->pp : o->tg), nseq = pp ? 1 : (uint32_t)o->batch;
	uint32_t d = (uint32_t)o->depth;
	int r;

	if ((r = bench_fill(e, d, &seed)))
		return r;
	/* warm-up run (page in the weights, wake the workers), not counted */
	r = nseq > 1 ? bench_run_seqs(e, nseq, 1, lg, &seed, &ns)
		     : bench_run(e, pp ? (n < 16 ? n : 16) : 0, pp ? 0 : 1, d, &seed, &ns);
	if (r)
		return r;
	for (uint64_t i = 0; i < o->reps; i++) {
		if (shell_poll_cancel(sh))
			return -LLMK_ECANCEL;
		if (pr)
			bench_mem_read_buf(pr->buf, pr->bytes, pr->threads, pr->min_ns, &pr->gbs[i]);
		r = nseq > 1 ? bench_run_seqs(e, nseq, n, lg, &seed, &ns)
			     : bench_run(e, pp ? n : 0, pp ? 0 : n, d, &seed, &ns);
		if (r)
			return r;
		/* tokens of every sequence */
		v[i] = (double)n * nseq * 1e9 / (double)(ns ? ns : 1);
	}
	*st = bench_stats(v, (uint32_t)o->reps);
	return 0;
}

static int bench_model(struct shell *sh, const struct bench_opts *o)
{
	struct engine *e = sh->engine;
	struct bench_stat pp = {0, 0}, tg = {0, 0};
	struct llm_mem bwmem;
	struct bench_probe *pr = NULL;
	uint64_t tok_bytes;
	double bw = 0, eff, n_params, frac = 0, flo = 0, fhi = 0, ppv[1000], tgv[1000];
	char size[32], params[32], at[32] = "";
	const char *name;
	int threads, r;
	float *lg = NULL;
	size_t lg_bytes = 0, probe_mib = 0;

	if (!e || !e->loaded || e->vocab_only)
		return shell_err(sh, -LLMK_EINVAL, "bench: no model loaded (load N first; "
				 "bench --kernels needs none)");
	if (o->depth + o->pp > e->n_ctx || o->depth + o->tg > e->n_ctx)
		return shell_err(sh, -LLMK_ERANGE, "bench: -d %llu with -p %llu / -n %llu exceeds "
				 "the context (%u)", (unsigned long long)o->depth,
				 (unsigned long long)o->pp, (unsigned long long)o->tg, e->n_ctx);
	if (o->depth && o->batch > 1)
		return shell_err(sh, -LLMK_EINVAL, "bench: -d and --batch do not go together "
				 "(each sequence starts empty)");
	if (o->batch > e->s.n_batch || o->batch > ENGINE_BENCH_MAX_SEQS)
		return shell_err(sh, -LLMK_ERANGE, "bench: --batch %llu: at most %u sequences "
				 "(config batch, then load again, for more)",
				 (unsigned long long)o->batch,
				 e->s.n_batch < ENGINE_BENCH_MAX_SEQS ? e->s.n_batch
								       : ENGINE_BENCH_MAX_SEQS);
	if (o->batch > 1 && o->tg > e->n_ctx / o->batch)
		return shell_err(sh, -LLMK_ERANGE, "bench: --batch %llu -n %llu: each sequence gets "
				 "%llu of the %u context positions",
				 (unsigned long long)o->batch, (unsigned long long)o->tg,
				 (unsigned long long)(e->n_ctx / o->batch), e->n_ctx);
	if (o->batch > 1 && o->tg) {
		int err = 0;
		lg_bytes = (size_t)o->batch * e->model.hp.n_vocab * sizeof(float);
		lg = llm_mem_alloc(&e->mem, lg_bytes, &err);
		if (!lg)
			return shell_err(sh, err ? err : -LLMK_ENOMEM, "bench: --batch %llu: no memory "
					 "for the logits (%llu bytes)", (unsigned long long)o->batch,
					 (unsigned long long)lg_bytes);
	}
	threads = e->mm.n_threads;
	e->mm.n_threads = (int)o->threads;
	llm_mem_init(&bwmem, 0);
	r = 0;
	if ((pr = llm_mem_alloc(&bwmem, sizeof *pr, &r))) {
		pr->threads = (int)o->threads;
		pr->min_ns = plat_emulated() ? 0 : 100000000ull;
		if (!(pr->buf = bench_mem_buf(&bwmem, &pr->bytes, &r)))
			r = r ? r : -LLMK_ENOMEM;
	}
	if (!r && o->pp)
		r = bench_test(sh, e, o, true, NULL, &pp, NULL, ppv);
	if (!r && o->tg)
		r = bench_test(sh, e, o, false, lg, &tg, pr, tgv);
	if (!r && !o->tg) /* the bandwidth alone, for the JSON */
		bench_mem_read_buf(pr->buf, pr->bytes, pr->threads, pr->min_ns, &pr->gbs[0]);
	if (pr && pr->buf) {
		uint32_t reps = o->tg ? (uint32_t)o->reps : 1;
		double f[1000];
		tok_bytes = bench_token_bytes(e);
		bw = bench_median(pr->gbs, reps);
		for (uint32_t i = 0; o->tg && i < reps; i++) {
			/* this repetition's effective GB/s over the probe before it */
			f[i] = (double)tok_bytes * tgv[i] / (double)o->batch * 1e-9 / pr->gbs[i];
			flo = i == 0 || f[i] < flo ? f[i] : flo;
			fhi = i == 0 || f[i] > fhi ? f[i] : fhi;
		}
		frac = o->tg ? bench_median(f, reps) : 0;
		probe_mib = pr->bytes >> 20;
		llm_mem_free(&bwmem, pr->buf, pr->bytes);
	}
	if (pr)
		llm_mem_free(&bwmem, pr, sizeof *pr);
	if (lg)
		llm_mem_free(&e->mem, lg, lg_bytes);
	e->mm.n_threads = threads;
	e->n_past = 0;
	if (r)
		return shell_err(sh, r, "bench: %s", plat_strerror(r));
	name = e->model.hp.name[0] ? e->model.hp.name : e->model.hp.arch_name;
	tok_bytes = bench_token_bytes(e);
	eff = (double)tok_bytes * tg.mean / (double)o->batch * 1e-9; /* a pass per step */
	shell_human_size(e->weight_bytes, size, sizeof size);
	if (o->json) {
		plat_printf("{\"model\": \"%s\", \"size\": %llu, \"params\": %llu, \"quant\": \"%s\", "
			    "\"threads\": %d, \"machine\": \"%s%s\", \"pp\": %llu, \"pp_ts\": %.3f, "
			    "\"pp_sd\": %.3f, \"tg\": %llu, \"tg_ts\": %.3f, \"tg_sd\": %.3f, "
			    "\"token_bytes\": %llu, \"eff_gbs\": %.3f, \"mem_read_gbs\": %.3f, "
			    "\"probe_mib\": %llu, \"bw_fraction\": %.4f, \"reps\": %llu, \"batch\": %llu, \"depth\": %llu}\n",
			    name, (unsigned long long)e->weight_bytes,
			    (unsigned long long)e->model.hp.n_params, bench_ftype(e), (int)o->threads,
			    plat_machine(), bench_emulated(), (unsigned long long)o->pp, pp.mean, pp.sd,
			    (unsigned long long)o->tg, tg.mean, tg.sd, (unsigned long long)tok_bytes, eff,
			    bw, (unsigned long long)probe_mib, frac, (unsigned long long)o->reps,
			    (unsigned long long)o->batch, (unsigned long long)o->depth);
		return 0;
	}
	plat_printf("| model | size | params | quant | threads | test | t/s |\n"
		    "| ----- | ---- | ------ | ----- | ------- | ---- | --- |\n");
	n_params = (double)e->model.hp.n_params;
	plat_snprintf(params, sizeof params, n_params >= 1e9 ? "%.2f B" : "%.2f M",
		      n_params >= 1e9 ? n_params * 1e-9 : n_params * 1e-6);
	if (o->depth) /* llama-bench's "pp512 @ d4096" */
		plat_snprintf(at, sizeof at, " @ d%llu", (unsigned long long)o->depth);
	if (o->pp)
		plat_printf("| %s | %s | %s | %s | %d | pp%llu%s | %.2f ± %.2f |\n", name, size,
			    params, bench_ftype(e), (int)o->threads, (unsigned long long)o->pp, at,
			    pp.mean, pp.sd);
	if (o->tg && o->batch > 1)
		plat_printf("| %s | %s | %s | %s | %d | tg%llu x%llu seqs | %.2f ± %.2f |\n", name, size,
			    params, bench_ftype(e), (int)o->threads, (unsigned long long)o->tg,
			    (unsigned long long)o->batch, tg.mean, tg.sd);
	else if (o->tg)
		plat_printf("| %s | %s | %s | %s | %d | tg%llu%s | %.2f ± %.2f |\n", name, size,
			    params, bench_ftype(e), (int)o->threads, (unsigned long long)o->tg, at,
			    tg.mean, tg.sd);
	plat_printf("%s%s, %llu repetitions, kernels %s\n", plat_machine(), bench_emulated(),
		    (unsigned long long)o->reps, quant_get(GGML_TYPE_Q8_0)->impl);
	if (o->tg && o->batch > 1)
		plat_printf("decode: %llu sequences share each pass: %.1f MB of weights per pass, "
			    "%.2f passes/s, %.2f GB/s effective; ",
			    (unsigned long long)o->batch, (double)tok_bytes * 1e-6,
			    tg.mean / (double)o->batch, eff);
	else if (o->tg)
		plat_printf("decode: %.1f MB of weights per token, %.2f GB/s effective; ",
			    (double)tok_bytes * 1e-6, eff);
	if (o->tg)
		plat_printf("memory read %.2f GB/s (%d threads, %llu MiB, median of the probes "
			    "before each repetition): %.0f%% of the bandwidth limit (median of the "
			    "repetitions; %.0f-%.0f%%)\n",
			    bw, (int)o->threads, (unsigned long long)probe_mib,
			    100.0 * frac, 100.0 * flo, 100.0 * fhi);
	return 0;
}

static int cmd_bench(struct shell *sh, int argc, char **argv)
{
	struct bench_opts o;
	int err = bench_parse(sh, argc, argv, &o);

	if (err)
		return err;
	if (o.kernels)
		return bench_kernels(sh, &o);
	return bench_model(sh, &o);
}

static int cmd_selftest(struct shell *sh, int argc, char **argv)
{
	struct selftest_report r;
	int err = shell_check_argc(sh, argc, argv, 1, 1);

	if (err)
		return err;
	err = selftest_quant(&r, quant_cpu(), plat_time_ns(), true);
	if (err == -LLMK_ENOMEM)
		return shell_err(sh, err, "selftest: no memory for the test blocks");
	for (uint32_t i = 0; i < r.n_types; i++)
		plat_printf("  %-5s %-12s %4u checks %s (worst error %.3f of bound)\n",
			    quant_name(r.types[i].type), r.types[i].impl, r.types[i].checks,
			    r.types[i].failures ? "FAILED" : "ok", (double)r.types[i].worst);
	if (err)
		return shell_err(sh, err, "selftest: %u of %u checks failed", r.failures, r.checks);
	plat_printf("selftest: %u checks passed on %s%s\n", r.checks, plat_machine(), bench_emulated());
	return 0;
}

const struct shell_cmd shell_cmds_bench[] = {
	{"bench", "bench [-p N] [-n N] [-d N] [-r R] [-t T] [--batch B] [--json]\n"
		  "bench --kernels [TYPE] [-t T] [--json]",
	 "model pp/tg tok/s and memory bandwidth (-d N: after N tokens in the cache; "
	 "--batch B: B sequences decode together, sharing each pass); or matmul kernels "
	 "per quant type", cmd_bench},
	{"selftest", "selftest", "check the SIMD kernels against the scalar reference here",
	 cmd_selftest},
	{0},
};
