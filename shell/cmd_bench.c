/*
 * shell/cmd_bench.c — `bench` (kernel and model benchmarks) and `selftest`
 * (SIMD rows against scalar rows on this machine).
 */
#include "shell.h"

#include "../llm/bench.h"
#include "../llm/selftest.h"

/* Every weight type, in the order the tables print them. */
static const uint32_t bench_types[] = {
	GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0,
	GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
	GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
};
#define N_BENCH_TYPES (sizeof bench_types / sizeof bench_types[0])

struct bench_opts {
	uint64_t pp, tg, reps, threads;
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
		if (!v && o->kernels && argv[i][0] != '-') {
			for (uint32_t k = 0; k < N_BENCH_TYPES; k++)
				if (!strcmp(argv[i], quant_name(bench_types[k])))
					o->only = bench_types[k];
			if (o->only != GGML_TYPE_COUNT)
				continue;
			return shell_err(sh, -LLMK_EINVAL, "bench: unknown type '%s'", argv[i]);
		}
		if (!v)
			return shell_err(sh, -LLMK_EINVAL, "bench: unknown option '%s' (usage: %s)",
					 argv[i], "bench [-p N] [-n N] [-r R] [-t T] [--json] [--kernels [TYPE]]");
		if (i + 1 == argc)
			return shell_err(sh, -LLMK_EINVAL, "bench: %s needs a value", argv[i]);
		err = shell_arg_u64(sh, argv[i], argv[i + 1], v == &o->pp || v == &o->tg ? 0 : 1,
				    hi, v);
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

	quant_init(plat_cpu_features());
	llm_mem_init(&mem, 0);
	err = bench_mem_read(&mem, (int)o->threads, 256u << 20, 300000000ull, &bw);
	if (err)
		return shell_err(sh, err, "bench: memory bandwidth buffer (256 MiB): %s",
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
	for (uint32_t k = 0, n = 0; k < N_BENCH_TYPES; k++) {
		struct bench_kernel r;
		uint32_t t = bench_types[k];
		if (o->only != GGML_TYPE_COUNT && t != o->only)
			continue;
		if (shell_poll_cancel(sh)) {
			err = -LLMK_ECANCEL;
			break;
		}
		err = bench_kernel_run(&c, t, plat_emulated() ? 8u << 20 : 96u << 20, 64,
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

/* The model benchmark needs the engine (llm/engine.h), which is not in this
 * build yet: say so instead of printing numbers. */
static int bench_model(struct shell *sh, const struct bench_opts *o)
{
	return shell_err(sh, -LLMK_ENOTSUP, "bench: model benchmark needs the engine, not in this build "
			 "(bench --kernels measures the matmul kernels)");
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
	quant_init(plat_cpu_features());
	err = selftest_quant(&r, plat_time_ns(), true);
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
	{"bench", "bench [-p N] [-n N] [-r R] [-t T] [--json]\nbench --kernels [TYPE] [-t T] [--json]",
	 "model pp/tg tok/s and memory bandwidth; or matmul kernels per quant type", cmd_bench},
	{"selftest", "selftest", "check the SIMD kernels against the scalar reference here",
	 cmd_selftest},
	{0},
};
