/*
 * shell/info_stats.c — printing for `info` and `stats`: the memory plan, the
 * peak memory against the budget, and the streamer's traffic (info_stats.h).
 */
#include "info_stats.h"
#include "shell.h"

void shell_print_plan(const struct engine_plan *p)
{
	char a[32], b[32], c[32], d[32];

	if (p->streaming)
		plat_printf("  plan           streaming: %u slots of %s, token embeddings %s, kv %s, "
			    "scratch %s\n", p->n_slots, shell_human_size(p->slot_bytes, a, sizeof a),
			    shell_human_size(p->embd_bytes, d, sizeof d),
			    shell_human_size(p->kv_bytes, b, sizeof b),
			    shell_human_size(p->scratch_bytes, c, sizeof c));
	else
		plat_printf("  plan           resident: weights %s, kv %s, scratch %s\n",
			    shell_human_size(p->weight_bytes, a, sizeof a),
			    shell_human_size(p->kv_bytes, b, sizeof b),
			    shell_human_size(p->scratch_bytes, c, sizeof c));
}

const char *shell_budget(const struct engine_plan *p, char *buf, size_t n)
{
	char a[32];

	if (p->mem_budget)
		return shell_human_size(p->mem_budget, buf, n);
	if (!p->plan_budget)
		return "no budget";
	plat_snprintf(buf, n, "%s (the free memory; no mem-budget)", shell_human_size(p->plan_budget, a, sizeof a));
	return buf;
}

void shell_print_stats(const struct engine_stats *st, const struct engine_plan *p)
{
	const struct wt_io_stats *io = &st->io;
	struct plat_disk_info di;
	uint64_t run = st->run.prompt_ns + st->run.gen_ns;
	uint64_t wait, compute;
	char a[32], b[32], bud[48];

	plat_printf("  memory      peak %s of %s (now %s)\n",
		    shell_human_size(st->mem_peak, a, sizeof a),
		    shell_budget(p, bud, sizeof bud),
		    shell_human_size(st->mem_used, b + 16, 16));
	if (!st->streaming)
		return;
	/* waiting for a slot and decrypting (or checking) happen inside the forward pass:
	 * the rest of it is computation */
	wait = io->wait_ns < run ? io->wait_ns : run;
	compute = run - wait - (io->decrypt_ns < run - wait ? io->decrypt_ns : run - wait);
	plat_printf("  disk        read %s in %llu requests, %.2f GB/s over the run; %llu misses\n",
		    shell_human_size(io->bytes_read, a, sizeof a), (unsigned long long)io->reads,
		    run ? (double)io->bytes_read / (double)run : 0.0, (unsigned long long)io->misses);
	if (plat_disk_info(st->disk, &di) == 0 && di.reads[0])
		plat_printf("  reads       %s\n", di.reads);
	plat_printf("  time        compute %.1f ms, waiting on the disk %.1f ms, %s %.1f ms: "
		    "overlap %.0f%% (share of the run not waiting)\n",
		    (double)compute / 1e6, (double)wait / 1e6,
		    st->sealed ? "decrypt" : "checking blocks", (double)io->decrypt_ns / 1e6,
		    run ? 100.0 * (double)(run - wait) / (double)run : 0.0);
}
