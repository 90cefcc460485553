/*
 * kernel/smp.c — the persistent worker pool behind plat_parallel().
 *
 * The arch layer starts the other CPUs (x86_64 INIT-SIPI-SIPI, aarch64 PSCI
 * CPU_ON) and sends each into smp_ap_main() with its pool index. Workers
 * never sleep and take no interrupts: each spins with the arch's pause hint
 * on a "go" word of its own cache line. A job is published by writing the
 * job fields, then the claim word (the job's number and its next task
 * index) with release order, then each participant's go word. Woken, a
 * participant claims tasks by compare-and-swap of the claim word from
 * (job, i) to (job, i + 1), i < n, runs them, and counts each out of
 * `left` with release order; the caller runs task 0, claims what is left,
 * and reads `left` with acquire order. So a vCPU the hypervisor has not
 * run yet holds nothing up (its task runs on the caller; when it runs it
 * finds none left), everything a task wrote is visible to the caller when
 * plat_parallel returns, and the job fields never change while a claim of
 * that job can still succeed. plat_background posts one task in a word of
 * its own; a worker spinning for work takes it by compare-and-swap before
 * its next job's tasks (a job meanwhile runs on the caller and the other
 * workers), and the caller's wait takes it itself if no worker has.
 * Arch-neutral: C11 memory model via the GCC __atomic builtins.
 */
#include "kernel.h"
#include "arch.h"

#define LINE 64

struct smp_worker {
	uint32_t go;     /* written by the caller only: bumped once per job */
	uint32_t online; /* set by the worker when it spins on go */
} __attribute__((aligned(LINE)));

static struct {
	struct smp_worker w[SMP_MAX_CPUS];
	plat_task_fn fn; /* the current job, stable while a claim of it can succeed */
	void *arg;
	int n;
	int ncpu;        /* CPUs in the pool, the caller's included */
	uint32_t job;    /* written by the caller only */
	uint64_t claim __attribute__((aligned(LINE))); /* job << 32 | next task */
	uint32_t left __attribute__((aligned(LINE)));  /* tasks 1..n-1 not finished */
	/* plat_background: BG_NONE -> BG_POSTED (the caller) -> BG_RUNNING (who
	 * takes it, by compare-and-swap) -> BG_DONE -> BG_NONE (the caller's wait) */
	uint32_t bg __attribute__((aligned(LINE)));
	void (*bg_fn)(void *);
	void *bg_arg;
} pool = { .ncpu = 1 };

enum { BG_NONE, BG_POSTED, BG_RUNNING, BG_DONE };

/* Run the posted background task if nobody has taken it. */
static void take_background(void)
{
	uint32_t want = BG_POSTED;

	if (!__atomic_compare_exchange_n(&pool.bg, &want, BG_RUNNING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	pool.bg_fn(pool.bg_arg);
	__atomic_store_n(&pool.bg, BG_DONE, __ATOMIC_RELEASE);
}

/* Claim and run the current job's tasks until none is left. */
static void take_tasks(void)
{
	uint64_t w = __atomic_load_n(&pool.claim, __ATOMIC_ACQUIRE);

	for (;;) {
		plat_task_fn fn = __atomic_load_n(&pool.fn, __ATOMIC_RELAXED);
		void *arg = __atomic_load_n(&pool.arg, __ATOMIC_RELAXED);
		int n = __atomic_load_n(&pool.n, __ATOMIC_RELAXED);
		uint32_t i = (uint32_t)w;

		if ((int64_t)i >= n)
			return;
		if (!__atomic_compare_exchange_n(&pool.claim, &w, w + 1, true, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		fn(arg, (int)i, n);
		__atomic_fetch_sub(&pool.left, 1, __ATOMIC_RELEASE);
		w = __atomic_load_n(&pool.claim, __ATOMIC_ACQUIRE);
	}
}

void smp_ap_main(int cpu)
{
	struct smp_worker *w = &pool.w[cpu];
	uint32_t seen = __atomic_load_n(&w->go, __ATOMIC_ACQUIRE);

	__atomic_store_n(&w->online, 1, __ATOMIC_RELEASE);
	for (;;) {
		uint32_t g;

		while ((g = __atomic_load_n(&w->go, __ATOMIC_ACQUIRE)) == seen &&
		       __atomic_load_n(&pool.bg, __ATOMIC_ACQUIRE) != BG_POSTED)
			arch_relax();
		take_background();
		if (g != seen) {
			seen = g;
			take_tasks();
		}
	}
}

bool smp_ap_wait(int cpu, uint64_t ns)
{
	uint64_t t0 = arch_counter(), hz = time_counter_hz();
	uint64_t ticks = hz ? ns / 1000 * (hz / 1000000) : ns;

	while (!__atomic_load_n(&pool.w[cpu].online, __ATOMIC_ACQUIRE)) {
		if (arch_counter() - t0 > ticks)
			return false;
		arch_relax();
	}
	return true;
}

void smp_init(void)
{
	uint64_t t0 = arch_counter();
	int n = arch_start_cpus(SMP_MAX_CPUS);

	if (n < 1)
		n = 1;
	pool.ncpu = n;
	plat_printf("smp: %d CPU%s in the worker pool (%llu ms to start)\n", n, n == 1 ? "" : "s",
		    (unsigned long long)(time_counter_to_ns(arch_counter() - t0) / 1000000));
}

int plat_cpu_count(void)
{
	return pool.ncpu;
}

void plat_parallel(plat_task_fn fn, void *arg, int n)
{
	if (n > pool.ncpu)
		n = pool.ncpu;
	if (n <= 1) {
		fn(arg, 0, 1);
		return;
	}
	__atomic_store_n(&pool.fn, fn, __ATOMIC_RELAXED);
	__atomic_store_n(&pool.arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&pool.n, n, __ATOMIC_RELAXED);
	__atomic_store_n(&pool.left, (uint32_t)(n - 1), __ATOMIC_RELAXED);
	__atomic_store_n(&pool.claim, (uint64_t)++pool.job << 32 | 1, __ATOMIC_RELEASE);
	for (int i = 1; i < n; i++)
		__atomic_store_n(&pool.w[i].go, pool.w[i].go + 1, __ATOMIC_RELEASE);
	fn(arg, 0, n);
	take_tasks();
	while (__atomic_load_n(&pool.left, __ATOMIC_ACQUIRE))
		arch_relax();
}

void plat_background(void (*fn)(void *arg), void *arg)
{
	plat_background_wait(); /* one at a time */
	pool.bg_fn = fn;
	pool.bg_arg = arg;
	__atomic_store_n(&pool.bg, BG_POSTED, __ATOMIC_RELEASE);
	if (pool.ncpu < 2)
		take_background();
}

void plat_background_wait(void)
{
	take_background(); /* not taken yet: here */
	while (__atomic_load_n(&pool.bg, __ATOMIC_ACQUIRE) == BG_RUNNING)
		arch_relax();
	__atomic_store_n(&pool.bg, BG_NONE, __ATOMIC_RELAXED);
}
