/*
 * tools/host/plat_pool.c — kernel/platform.h's CPUs on Linux: the features
 * and count, the persistent pthread pool plat_parallel runs on, and the one
 * background task.
 */
#define _GNU_SOURCE
#include "host.h"
#include "../../kernel/cpu_features.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- CPUs ---- */
uint32_t plat_cpu_features(void)
{
	uint32_t f = 0;
#if defined(__x86_64__)
	/* the words kernel/cpu_features.c decodes, as the kernel reads them;
	 * XGETBV is allowed in user mode once the OS has set CR4.OSXSAVE */
	struct cpuid_words w = {0};
	unsigned a, b, c, d, max;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	max = a;
	w.l0_ebx = b;
	w.l0_ecx = c;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	w.l1_ecx = c;
	if (c & (1u << 27)) {
		uint32_t lo, hi;
		__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		w.xcr0 = (uint64_t)hi << 32 | lo;
	}
	if (max >= 7) {
		__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
		w.l7_ebx = b;
		w.l7_ecx = c;
		if (a >= 1) {
			__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(1));
			w.l71_eax = a;
		}
	}
	f = cpuid_features(&w);
#elif defined(__aarch64__)
	f |= PLAT_CPU_NEON;
#if defined(__ARM_FEATURE_DOTPROD)
	f |= PLAT_CPU_DOTPROD;
#endif
#endif
	/* LLMK_CPU_MASK=hex limits features (tests of the scalar and AVX2 paths). */
	const char *mask = getenv("LLMK_CPU_MASK");
	if (mask && *mask)
		f &= (uint32_t)strtoul(mask, NULL, 16);
	return f;
}

const char *plat_arch(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#else
	return "unknown";
#endif
}

const char *plat_machine(void)
{
	return "Linux host";
}

bool plat_emulated(void)
{
	return false;
}

/*
 * The worker pool: n_cpus - 1 threads, created once, that wait for a new
 * job number in one word (the job's number and its next task index) and
 * then claim the job's tasks from it until none is left; the caller
 * runs task 0 and then claims too. So a worker the OS has not run yet (a
 * host busy with other work) holds nothing up: its task runs on the
 * caller, and the worker, when it runs, finds nothing left. Workers spin
 * briefly before sleeping so back-to-back matmuls in decode do not pay a
 * wake-up each.
 *
 * A claim is a compare-and-swap of the word from (job, i) to (job, i + 1)
 * with i < n. The caller writes the job's fields before it stores the word
 * (release) and writes the next job's only after every task of this one
 * has finished, so fields read after an acquire load of (job, i) and
 * before a successful swap are that job's.
 */
static int n_cpus;
static pthread_once_t pool_fork_once = PTHREAD_ONCE_INIT;
static void pool_fork_register(void);
static pthread_t *pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static _Atomic uint64_t pool_claim;  /* job << 32 | the next unclaimed task; a new job
					wakes the workers */
static _Atomic int pool_left;        /* claimed or not, tasks 1..n-1 not finished */
static _Atomic(plat_task_fn) pool_fn;
static _Atomic(void *) pool_arg;
static _Atomic int pool_n;
static _Atomic bool pool_hold;       /* tests: the workers take no task */
static uint32_t pool_job;

void host_set_cpus(int n)
{
	if (!pool && n > 0)
		n_cpus = n;
}

void host_pool_hold(bool on)
{
	atomic_store(&pool_hold, on);
}

int plat_cpu_count(void)
{
	if (!n_cpus) {
		const char *e = getenv("LLMK_CPUS");
		n_cpus = e && atoi(e) > 0 ? atoi(e) : (int)sysconf(_SC_NPROCESSORS_ONLN);
		if (n_cpus < 1)
			n_cpus = 1;
	}
	return n_cpus;
}

/* The spin-wait hint: PAUSE on x86, YIELD on arm64 (this file builds on both). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Claim and run the current job's tasks until none is left. */
static void pool_take_tasks(void)
{
	uint64_t w = atomic_load_explicit(&pool_claim, memory_order_acquire);

	for (;;) {
		plat_task_fn fn = atomic_load_explicit(&pool_fn, memory_order_relaxed);
		void *arg = atomic_load_explicit(&pool_arg, memory_order_relaxed);
		int n = atomic_load_explicit(&pool_n, memory_order_relaxed);
		uint32_t i = (uint32_t)w;

		if ((int64_t)i >= n)
			return;
		if (!atomic_compare_exchange_weak_explicit(&pool_claim, &w, w + 1,
							   memory_order_acq_rel,
							   memory_order_acquire))
			continue;
		fn(arg, (int)i, n);
		atomic_fetch_sub_explicit(&pool_left, 1, memory_order_release);
		w = atomic_load_explicit(&pool_claim, memory_order_acquire);
	}
}

static uint64_t pool_current_job(void)
{
	return atomic_load(&pool_claim) >> 32;
}

/* plat_background: BG_NONE -> BG_POSTED (the caller) -> BG_RUNNING (who
 * takes it, by compare-and-swap) -> BG_DONE -> BG_NONE (the caller's wait) */
enum { BG_NONE, BG_POSTED, BG_RUNNING, BG_DONE };
static _Atomic int pool_bg;
static void (*bg_fn)(void *);
static void *bg_arg;

static void take_background(void)
{
	int want = BG_POSTED;

	if (!atomic_compare_exchange_strong(&pool_bg, &want, BG_RUNNING))
		return;
	bg_fn(bg_arg);
	atomic_store_explicit(&pool_bg, BG_DONE, memory_order_release);
}

static bool pool_idle(uint64_t seen)
{
	return pool_current_job() == seen && atomic_load(&pool_bg) != BG_POSTED;
}

static void *pool_worker(void *arg)
{
	uint64_t seen = 0;

	(void)arg;
	for (;;) {
		uint64_t g;
		int spins = 0;
		while (pool_idle(seen) && spins < 20000) {
			cpu_relax();
			spins++;
		}
		if (pool_idle(seen)) {
			pthread_mutex_lock(&pool_lock);
			while (pool_idle(seen))
				pthread_cond_wait(&pool_cond, &pool_lock);
			pthread_mutex_unlock(&pool_lock);
		}
		g = pool_current_job();
		bool hold = atomic_load(&pool_hold); /* tests: no task taken */
		if (hold)
			cpu_relax();
		else
			take_background();
		if (g != seen) {
			seen = g;
			if (!hold)
				pool_take_tasks();
		}
	}
	return NULL;
}

static void pool_start(int cpus)
{
	if (!pool) {
		pthread_once(&pool_fork_once, pool_fork_register);
		pool = calloc((size_t)cpus, sizeof *pool);
		for (int i = 1; i < cpus; i++)
			pthread_create(&pool[i], NULL, pool_worker, NULL);
	}
}

static void pool_wake(void)
{
	/* under the lock: a worker that found nothing new waits on the
	 * condition before this broadcast, or sees what is new */
	pthread_mutex_lock(&pool_lock);
	pthread_cond_broadcast(&pool_cond);
	pthread_mutex_unlock(&pool_lock);
}

void plat_background(void (*fn)(void *arg), void *arg)
{
	plat_background_wait(); /* one at a time */
	bg_fn = fn;
	bg_arg = arg;
	atomic_store_explicit(&pool_bg, BG_POSTED, memory_order_release);
	if (plat_cpu_count() < 2) {
		take_background();
		return;
	}
	pool_start(plat_cpu_count());
	pool_wake();
}

void plat_background_wait(void)
{
	take_background(); /* not taken yet: here */
	for (int spins = 0; atomic_load_explicit(&pool_bg, memory_order_acquire) == BG_RUNNING;
	     spins++) {
		if (spins < 4000)
			cpu_relax();
		else
			sched_yield();
	}
	atomic_store_explicit(&pool_bg, BG_NONE, memory_order_relaxed);
}

void plat_parallel(plat_task_fn fn, void *arg, int n)
{
	int cpus = plat_cpu_count();
	if (n > cpus)
		n = cpus;
	if (n <= 1) {
		fn(arg, 0, 1);
		return;
	}
	pool_start(cpus);
	atomic_store_explicit(&pool_fn, fn, memory_order_relaxed);
	atomic_store_explicit(&pool_arg, arg, memory_order_relaxed);
	atomic_store_explicit(&pool_n, n, memory_order_relaxed);
	atomic_store_explicit(&pool_left, n - 1, memory_order_relaxed);
	if (!++pool_job) /* 0 is the job a worker has seen before the first */
		pool_job = 1;
	atomic_store_explicit(&pool_claim, (uint64_t)pool_job << 32 | 1, memory_order_release);
	pool_wake();
	fn(arg, 0, n);
	pool_take_tasks();
	/* a task still out is one a worker claimed and runs; past a short spin
	 * give it the CPU (docs/perf.md, "Matmul scheduling and memory") */
	for (int spins = 0; atomic_load_explicit(&pool_left, memory_order_acquire) > 0; spins++) {
		if (spins < 4000)
			cpu_relax();
		else
			sched_yield();
	}
}

/*
 * A child of fork() has only the thread that forked: the pool's threads are
 * gone, and pool_lock may be held by a thread that no longer exists. The
 * child starts the pool afresh on first use (plat_disk.c does the same for
 * the I/O threads).
 */
static void pool_fork_child(void)
{
	pthread_mutex_init(&pool_lock, NULL);
	pthread_cond_init(&pool_cond, NULL);
	pool = NULL; /* the parent's array; its threads are not ours */
	atomic_store(&pool_claim, 0);
	pool_job = 0;
	atomic_store(&pool_left, 0);
	atomic_store(&pool_n, 0);
}

static void pool_fork_register(void)
{
	pthread_atfork(NULL, NULL, pool_fork_child);
}
