/*
 * kernel/smp.c — the persistent worker pool behind plat_parallel().
 *
 * The arch layer starts the other CPUs (x86_64 INIT-SIPI-SIPI, aarch64 PSCI
 * CPU_ON) and sends each into smp_ap_main() with its pool index. Workers
 * never sleep and take no interrupts: each spins with the arch's pause hint
 * on a "go" word of its own cache line. A job is published by writing the
 * job fields and then, with release order, each participant's go word; the
 * participant reads it with acquire order, runs fn and counts itself out of
 * `pending` with release order, which the caller reads with acquire order.
 * So everything a worker wrote is visible to the caller when plat_parallel
 * returns, and the job fields never change while a worker may read them.
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
	plat_task_fn fn; /* the current job, stable until pending is 0 */
	void *arg;
	int n;
	int ncpu;        /* CPUs in the pool, the caller's included */
	uint32_t pending __attribute__((aligned(LINE)));
} pool = { .ncpu = 1 };

void smp_ap_main(int cpu)
{
	struct smp_worker *w = &pool.w[cpu];
	uint32_t seen = __atomic_load_n(&w->go, __ATOMIC_ACQUIRE);

	__atomic_store_n(&w->online, 1, __ATOMIC_RELEASE);
	for (;;) {
		uint32_t g;

		while ((g = __atomic_load_n(&w->go, __ATOMIC_ACQUIRE)) == seen)
			arch_relax();
		seen = g;
		pool.fn(pool.arg, cpu, pool.n);
		__atomic_fetch_sub(&pool.pending, 1, __ATOMIC_RELEASE);
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
	pool.fn = fn;
	pool.arg = arg;
	pool.n = n;
	__atomic_store_n(&pool.pending, (uint32_t)(n - 1), __ATOMIC_RELAXED);
	for (int i = 1; i < n; i++)
		__atomic_store_n(&pool.w[i].go, pool.w[i].go + 1, __ATOMIC_RELEASE);
	fn(arg, 0, n);
	while (__atomic_load_n(&pool.pending, __ATOMIC_ACQUIRE))
		arch_relax();
}
