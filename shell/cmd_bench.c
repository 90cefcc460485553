/*
 * shell/cmd_bench.c — `bench` and `selftest`: parse the flags, run
 * llm/bench.c's kernel or model benchmark (or llm/selftest.c), print
 * llama-bench's table or JSON.
 */
#include "shell.h"

#include "../llm/bench.h"
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
			v = &o->reps, hi = BENCH_MAX_REPS;
		else if (!strcmp(argv[i], "-t") || !strcmp(argv[i], "--threads"))
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
					 argv[i], "bench [-p N] [-n N] [-d N] [-r R] [-t|--threads T] [--batch B] [--json] [--kernels [TYPE]]");
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

static bool bench_cancel(void *sh)
{
	return shell_poll_cancel(sh);
}

/* The checks that name the flags; llm/bench.c checks the same again. */
static int bench_model_check(struct shell *sh, const struct bench_opts *o,
			     const struct engine_plan *p)
{
	uint32_t most = p->n_batch < BENCH_MAX_SEQS ? p->n_batch : BENCH_MAX_SEQS;

	if (o->depth + o->pp > p->n_ctx || o->depth + o->tg > p->n_ctx)
		return shell_err(sh, -LLMK_ERANGE, "bench: -d %llu with -p %llu / -n %llu exceeds "
				 "the context (%u)", (unsigned long long)o->depth,
				 (unsigned long long)o->pp, (unsigned long long)o->tg, p->n_ctx);
	if (o->depth && o->batch > 1)
		return shell_err(sh, -LLMK_EINVAL, "bench: -d and --batch do not go together "
				 "(each sequence starts empty)");
	if (o->batch > most)
		return shell_err(sh, -LLMK_ERANGE, "bench: --batch %llu: at most %u sequences "
				 "(config batch, then load again, for more)",
				 (unsigned long long)o->batch, most);
	if (o->batch > 1 && o->tg > p->n_ctx / o->batch)
		return shell_err(sh, -LLMK_ERANGE, "bench: --batch %llu -n %llu: each sequence gets "
				 "%llu of the %u context positions",
				 (unsigned long long)o->batch, (unsigned long long)o->tg,
				 (unsigned long long)(p->n_ctx / o->batch), p->n_ctx);
	return 0;
}

static int bench_model(struct shell *sh, const struct bench_opts *o)
{
	struct bench_model_opts mo = {
		.pp = (uint32_t)o->pp, .tg = (uint32_t)o->tg, .reps = (uint32_t)o->reps,
		.depth = (uint32_t)o->depth, .batch = (uint32_t)o->batch, .threads = (int)o->threads,
		.cancel = bench_cancel, .ctx = sh,
	};
	struct bench_model r;
	struct engine_plan plan;
	double n_params;
	char size[32], params[32], at[32] = "", err[160], name[96];
	int rc;

	if (!sh->engine || engine_get_plan(sh->engine, &plan))
		return shell_err(sh, -LLMK_EINVAL, "bench: no model loaded (load N first; "
				 "bench --kernels needs none)");
	if ((rc = bench_model_check(sh, o, &plan)))
		return rc;
	rc = bench_model_run(sh->engine, &mo, &r, err, sizeof err);
	if (rc)
		return shell_err(sh, rc, "bench: %s", err);
	shell_human_size(r.size, size, sizeof size);
	/* the model's name is the file's: printable, and no quote to end the
	 * JSON string early */
	shell_clean(r.name, strlen(r.name), name, sizeof name);
	for (char *c = name; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '?';
	if (o->json) {
		plat_printf("{\"model\": \"%s\", \"size\": %llu, \"params\": %llu, \"quant\": \"%s\", "
			    "\"threads\": %d, \"machine\": \"%s%s\", \"pp\": %llu, \"pp_ts\": %.3f, "
			    "\"pp_sd\": %.3f, \"tg\": %llu, \"tg_ts\": %.3f, \"tg_sd\": %.3f, "
			    "\"token_bytes\": %llu, \"eff_gbs\": %.3f, \"mem_read_gbs\": %.3f, "
			    "\"probe_mib\": %llu, \"bw_fraction\": %.4f, \"reps\": %llu, \"batch\": %llu, \"depth\": %llu}\n",
			    name, (unsigned long long)r.size, (unsigned long long)r.n_params, r.quant,
			    (int)o->threads, plat_machine(), bench_emulated(), (unsigned long long)o->pp,
			    r.pp_mean, r.pp_sd, (unsigned long long)o->tg, r.tg_mean, r.tg_sd,
			    (unsigned long long)r.token_bytes, r.eff_gbs, r.mem_gbs,
			    (unsigned long long)r.probe_mib, r.frac, (unsigned long long)o->reps,
			    (unsigned long long)o->batch, (unsigned long long)o->depth);
		return 0;
	}
	plat_printf("| model | size | params | quant | threads | test | t/s |\n"
		    "| ----- | ---- | ------ | ----- | ------- | ---- | --- |\n");
	n_params = (double)r.n_params;
	plat_snprintf(params, sizeof params, n_params >= 1e9 ? "%.2f B" : "%.2f M",
		      n_params >= 1e9 ? n_params * 1e-9 : n_params * 1e-6);
	if (o->depth) /* llama-bench's "pp512 @ d4096" */
		plat_snprintf(at, sizeof at, " @ d%llu", (unsigned long long)o->depth);
	if (o->pp)
		plat_printf("| %s | %s | %s | %s | %d | pp%llu%s | %.2f ± %.2f |\n", name, size,
			    params, r.quant, (int)o->threads, (unsigned long long)o->pp, at,
			    r.pp_mean, r.pp_sd);
	if (o->tg && o->batch > 1)
		plat_printf("| %s | %s | %s | %s | %d | tg%llu x%llu seqs | %.2f ± %.2f |\n", name,
			    size, params, r.quant, (int)o->threads, (unsigned long long)o->tg,
			    (unsigned long long)o->batch, r.tg_mean, r.tg_sd);
	else if (o->tg)
		plat_printf("| %s | %s | %s | %s | %d | tg%llu%s | %.2f ± %.2f |\n", name, size,
			    params, r.quant, (int)o->threads, (unsigned long long)o->tg, at,
			    r.tg_mean, r.tg_sd);
	plat_printf("%s%s, %llu repetitions, kernels %s\n", plat_machine(), bench_emulated(),
		    (unsigned long long)o->reps, r.kernels);
	if (o->tg && o->batch > 1)
		plat_printf("decode: %llu sequences share each pass: %.1f MB of weights per pass, "
			    "%.2f passes/s, %.2f GB/s effective; ",
			    (unsigned long long)o->batch, (double)r.token_bytes * 1e-6,
			    r.tg_mean / (double)o->batch, r.eff_gbs);
	else if (o->tg)
		plat_printf("decode: %.1f MB of weights per token, %.2f GB/s effective; ",
			    (double)r.token_bytes * 1e-6, r.eff_gbs);
	if (o->tg)
		plat_printf("memory read %.2f GB/s (%d threads, %llu MiB, median of the probes "
			    "before each repetition): %.0f%% of the bandwidth limit (median of the "
			    "repetitions; %.0f-%.0f%%)\n",
			    r.mem_gbs, (int)o->threads, (unsigned long long)r.probe_mib,
			    100.0 * r.frac, 100.0 * r.frac_lo, 100.0 * r.frac_hi);
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
	{"bench", "bench [-p N] [-n N] [-d N] [-r R] [-t|--threads T] [--batch B] [--json]\n"
		  "bench --kernels [TYPE] [-t T] [--json]",
	 "model pp/tg tok/s and memory bandwidth (-d N: after N tokens in the cache; "
	 "--batch B: B sequences decode together, sharing each pass); or matmul kernels "
	 "per quant type", cmd_bench},
	{"selftest", "selftest", "check the SIMD kernels against the scalar reference here",
	 cmd_selftest},
	{0},
};
