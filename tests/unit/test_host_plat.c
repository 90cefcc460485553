/* tests/unit/test_host_plat.c — the Linux platform: disks, async reads, pool. */
#include "test.h"
#include "../../llm/kv.h"
#include "../../tools/host/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int make_file(const char *path, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++)
		fputc((int)((i * 131 + (i >> 9)) & 0xff), f);
	fclose(f);
	return 0;
}

TEST(host_disk_reads_are_bounded_and_complete_out_of_order)
{
	char path[512];
	snprintf(path, sizeof path, "%s/plat_disk.bin", test_tmpdir());
	CHECK(make_file(path, 70000) == 0);
	host_remove_disks();
	int d = host_add_disk(path);
	CHECK_EQ_INT(d, 0);
	struct plat_disk_info info;
	CHECK_EQ_INT(plat_disk_info(d, &info), 0);
	CHECK_EQ_INT(info.capacity, 70000);
	uint8_t buf[100];
	CHECK_EQ_INT(plat_disk_read(d, 69950, buf, 50), 0);
	for (int i = 0; i < 50; i++)
		CHECK_EQ_INT(buf[i], ((69950 + i) * 131 + ((69950 + i) >> 9)) & 0xff);
	CHECK_EQ_INT(plat_disk_read(d, 69950, buf, 51), -LLMK_ERANGE);
	CHECK_EQ_INT(plat_disk_read(5, 0, buf, 1), -LLMK_ENOENT);

	/* Many async requests in flight, completed out of order or not. */
	enum { N = 16 };
	struct plat_io io[N];
	uint8_t *big = plat_alloc(N * 4096, 4096);
	for (int i = 0; i < N; i++)
		CHECK_EQ_INT(plat_disk_read_async(d, (uint64_t)i * 4096, big + i * 4096, 4096, &io[i]), 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ_INT(plat_io_wait(&io[i]), 0);
	int bad = 0;
	for (size_t i = 0; i < N * 4096; i++)
		bad += big[i] != ((i * 131 + (i >> 9)) & 0xff);
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(plat_disk_read_async(d, 1, big, 512, &io[0]), -LLMK_EINVAL);
	plat_free(big, N * 4096);
	host_remove_disks();
}

/* The first n bytes of disk d read three ways (synchronous aligned and not,
 * asynchronous) against the file's own bytes. */
static int reads_match(int d, size_t n)
{
	uint8_t *buf = plat_alloc(n + 4096, 4096);
	struct plat_io io;
	int bad = 0;

	bad |= plat_disk_read(d, 0, buf, n) != 0;
	for (size_t i = 0; i < n; i++)
		bad |= buf[i] != ((i * 131 + (i >> 9)) & 0xff);
	bad |= plat_disk_read(d, 1, buf + 1, n - 1) != 0;
	for (size_t i = 1; i < n; i++)
		bad |= buf[i] != ((i * 131 + (i >> 9)) & 0xff);
	memset(buf, 0, n);
	bad |= plat_disk_read_async(d, 0, buf, n, &io) != 0 || plat_io_wait(&io) != 0;
	for (size_t i = 0; i < n; i++)
		bad |= buf[i] != ((i * 131 + (i >> 9)) & 0xff);
	plat_free(buf, n + 4096);
	return !bad;
}

static bool reads_are(int d, const char *prefix)
{
	struct plat_disk_info info;

	return plat_disk_info(d, &info) == 0 && strncmp(info.reads, prefix, strlen(prefix)) == 0;
}

static bool reads_say(int d, const char *prefix)
{
	struct plat_disk_info info;

	if (reads_are(d, prefix))
		return true;
	if (plat_disk_info(d, &info) == 0)
		fprintf(stderr, "  reads '%s', want '%s...'\n", info.reads, prefix);
	return false;
}

/* While the engine streams from a disk, the host reads it round the page
 * cache (O_DIRECT) unless told otherwise, and says so; the bytes are the
 * same either way. */
TEST(host_disk_streaming_reads_round_the_page_cache_by_default)
{
	char path[512];
	snprintf(path, sizeof path, "%s/plat_direct.bin", test_tmpdir());
	CHECK(make_file(path, 3 * 4096) == 0);
	host_remove_disks();
	host_set_direct(HOST_DIRECT_AUTO);
	int d = host_add_disk(path);
	CHECK_EQ_INT(d, 0);
	CHECK(reads_say(d, "page cache (not streaming)"));
	CHECK_EQ_INT(plat_disk_stream(d, true), 0);
	if (reads_are(d, "page cache (the filesystem refused O_DIRECT")) {
		/* (the scratch directory's filesystem: the fallback, below) */
		CHECK(reads_match(d, 3 * 4096));
		host_remove_disks();
		return;
	}
	CHECK(reads_say(d, "direct (O_DIRECT, the default while streaming)"));
	CHECK(reads_match(d, 3 * 4096));
	CHECK_EQ_INT(plat_disk_stream(d, false), 0);
	CHECK(reads_say(d, "page cache (not streaming)"));
	CHECK(reads_match(d, 3 * 4096));
	host_set_direct(HOST_DIRECT_OFF); /* --no-direct */
	CHECK_EQ_INT(plat_disk_stream(d, true), 0);
	CHECK(reads_say(d, "page cache (--no-direct)"));
	CHECK(reads_match(d, 3 * 4096));
	host_set_direct(HOST_DIRECT_ON); /* --direct: streaming or not */
	CHECK_EQ_INT(plat_disk_stream(d, false), 0);
	CHECK(reads_say(d, "direct (O_DIRECT, --direct)"));
	CHECK(reads_match(d, 3 * 4096));
	CHECK_EQ_INT(plat_disk_stream(7, true), -LLMK_ENOENT);
	host_set_direct(HOST_DIRECT_AUTO);
	host_remove_disks();
}

/* A filesystem that refuses O_DIRECT (sysfs, procfs; tmpfs before Linux
 * 6.6): a streaming disk there is read through the page cache, and its
 * reads line says why. */
TEST(host_disk_falls_back_where_the_filesystem_refuses_o_direct)
{
	const char *cand[] = {"/sys/kernel/uevent_seqnum", "/proc/self/stat"};
	int d = -1;

	host_remove_disks();
	host_set_direct(HOST_DIRECT_AUTO);
	for (size_t i = 0; i < sizeof cand / sizeof cand[0] && d < 0; i++)
		d = host_add_disk(cand[i]);
	if (d < 0)
		SKIP("no sysfs or procfs file to attach");
	CHECK_EQ_INT(plat_disk_stream(d, true), 0);
	CHECK(reads_say(d, "page cache (the filesystem refused O_DIRECT: Invalid argument)"));
	struct plat_disk_info info;
	CHECK_EQ_INT(plat_disk_info(d, &info), 0);
	if (info.capacity >= 2) {
		uint8_t b[2];
		CHECK_EQ_INT(plat_disk_read(d, 0, b, 2), 0);
	}
	/* and asking again does not try again */
	CHECK_EQ_INT(plat_disk_stream(d, false), 0);
	CHECK_EQ_INT(plat_disk_stream(d, true), 0);
	CHECK(reads_say(d, "page cache (the filesystem refused O_DIRECT"));
	host_remove_disks();
}

/* A FIFO is refused at once (no writer would block a plain open), named
 * as what it is; so is a directory; a regular file is still a disk. */
TEST(host_disk_refuses_a_fifo_or_a_directory_without_waiting)
{
	char fifo[512], why[128];

	snprintf(fifo, sizeof fifo, "%s/plat.fifo", test_tmpdir());
	unlink(fifo);
	CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk_why(fifo, why, sizeof why), -LLMK_EINVAL);
	CHECK_STR(why, "a FIFO, not a regular file or a block device");
	CHECK_EQ_INT(host_add_disk_why(test_tmpdir(), why, sizeof why), -LLMK_EINVAL);
	CHECK_STR(why, "a directory, not a regular file or a block device");
	CHECK_EQ_INT(plat_disk_count(), 0);
	unlink(fifo);
}

/* Files read by name (the boot volume's, on the host the file system's):
 * a regular file that fits, else an error, as the kernel's. */
TEST(host_boot_file_reads_regular_files_that_fit)
{
	char path[512], fifo[512];
	uint8_t buf[16];

	snprintf(path, sizeof path, "%s/plat_boot.txt", test_tmpdir());
	snprintf(fifo, sizeof fifo, "%s/plat_boot.fifo", test_tmpdir());
	CHECK(make_file(path, 16) == 0);
	CHECK_EQ_INT(plat_boot_file(path, buf, 16), 16);
	CHECK_EQ_INT(buf[15], (15 * 131) & 0xff);
	CHECK_EQ_INT(plat_boot_file(path, buf, 15), -LLMK_ERANGE);
	unlink(fifo);
	CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
	CHECK_EQ_INT(plat_boot_file(fifo, buf, sizeof buf), -LLMK_EINVAL);
	CHECK_EQ_INT(plat_boot_file(test_tmpdir(), buf, sizeof buf), -LLMK_EINVAL);
	CHECK_EQ_INT(plat_boot_file("/nonexistent/file", buf, sizeof buf), -LLMK_ENOENT);
	unlink(fifo);
}

struct sum_job {
	long parts[64];
	long n;
};

static void sum_task(void *arg, int i, int n)
{
	struct sum_job *j = arg;
	long s = 0;
	for (long k = i; k < j->n; k += n)
		s += k;
	j->parts[i] = s;
}

TEST(host_parallel_pool_runs_every_part_once)
{
	for (int round = 0; round < 200; round++) {
		struct sum_job j = {.n = 1000 + round};
		int n = plat_cpu_count() < 64 ? plat_cpu_count() : 64;
		plat_parallel(sum_task, &j, n);
		long s = 0;
		for (int i = 0; i < n; i++)
			s += j.parts[i];
		CHECK_EQ_INT(s, j.n * (j.n - 1) / 2);
	}
}

struct count_job {
	int runs[64];
};

static void count_task(void *arg, int i, int n)
{
	struct count_job *j = arg;
	(void)n;
	__atomic_fetch_add(&j->runs[i], 1, __ATOMIC_RELAXED);
}

/* A worker the OS does not run (a busy host; in the kernel, a vCPU the
 * hypervisor holds) holds nothing up: the caller runs the tasks no worker
 * took, each exactly once. Before task claiming this call never returned. */
TEST(host_parallel_pool_does_not_wait_for_a_worker_that_never_runs)
{
	int n = plat_cpu_count() < 64 ? plat_cpu_count() : 64;
	if (n < 2) {
		SKIP_CPU("a second CPU", "no worker to hold");
	}
	host_pool_hold(true);
	alarm(60); /* the old pool waits for the held worker forever */
	for (int round = 0; round < 50; round++) {
		struct count_job j = {{0}};
		plat_parallel(count_task, &j, n);
		for (int i = 0; i < n; i++)
			CHECK_EQ_INT(j.runs[i], 1);
	}
	alarm(0);
	host_pool_hold(false);
	/* and with the workers back, every task still runs once */
	for (int round = 0; round < 200; round++) {
		struct count_job j = {{0}};
		plat_parallel(count_task, &j, n);
		for (int i = 0; i < n; i++)
			CHECK_EQ_INT(j.runs[i], 1);
	}
}

struct bg_job {
	int runs, started, release;
	long sum;
};

static void bg_task(void *arg)
{
	struct bg_job *j = arg;

	__atomic_store_n(&j->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&j->release, __ATOMIC_ACQUIRE))
		;
	for (long k = 0; k < 1000; k++)
		j->sum += k;
	__atomic_fetch_add(&j->runs, 1, __ATOMIC_RELAXED);
}

/* plat_background: the task runs once, beside the caller, and its writes
 * are seen after the wait; plat_parallel meanwhile runs every task (the
 * caller takes the busy worker's); with the workers held the wait runs the
 * task itself. */
TEST(host_background_task_runs_once_beside_the_caller)
{
	int n = plat_cpu_count() < 64 ? plat_cpu_count() : 64;
	if (n < 2) {
		SKIP_CPU("a second CPU", "nothing to run beside the caller");
	}
	alarm(60);
	for (int round = 0; round < 20; round++) {
		struct bg_job b = {0};
		plat_background(bg_task, &b);
		/* a worker takes it and spins until released */
		while (!__atomic_load_n(&b.started, __ATOMIC_ACQUIRE))
			;
		struct count_job j = {{0}};
		plat_parallel(count_task, &j, n);
		for (int i = 0; i < n; i++)
			CHECK_EQ_INT(j.runs[i], 1);
		__atomic_store_n(&b.release, 1, __ATOMIC_RELEASE);
		plat_background_wait();
		CHECK_EQ_INT(b.runs, 1);
		CHECK(b.sum == 1000L * 999 / 2);
	}
	plat_background_wait(); /* nothing started: returns */
	host_pool_hold(true);
	struct bg_job h = {.release = 1};
	plat_background(bg_task, &h);
	plat_background_wait();
	CHECK_EQ_INT(h.runs, 1);
	host_pool_hold(false);
	alarm(0);
}

TEST(host_alloc_aligned_zeroed)
{
	struct plat_mem_stats a, b;
	plat_mem_stats(&a);
	uint8_t *p = plat_alloc(3 << 20, 2 << 20);
	CHECK(p != NULL);
	CHECK(((uintptr_t)p & ((2 << 20) - 1)) == 0);
	CHECK(p[0] == 0 && p[(3 << 20) - 1] == 0);
	plat_mem_stats(&b);
	CHECK(b.used >= a.used + (3 << 20));
	plat_free(p, 3 << 20);
}

static long resident_pages(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f && fscanf(f, "%ld %ld", &size, &res) != 2)
		res = 0;
	if (f)
		fclose(f);
	return res;
}

/* Large allocations start on a 2 MiB boundary (for huge pages) and are
 * faulted in at once, not on first use. Sparse ones are backed page by
 * page as they are touched: the KV cache of a long context, of which a
 * short run stores a few rows. */
TEST(host_alloc_large_prefaulted_sparse_on_first_touch)
{
	for (int sparse = 0; sparse < 2; sparse++) {
		size_t n = ((size_t)(sparse ? 32 : 8) << 20) + 4096;
		long before = resident_pages();
		uint8_t *p = sparse ? plat_alloc_sparse(n, 64) : plat_alloc(n, 64);
		long after = resident_pages();
		CHECK(p != NULL && before > 0);
		CHECK(((uintptr_t)p & (sparse ? 63 : (2 << 20) - 1)) == 0);
		/* (a sixteenth: qemu-user's own tables for a mapping take some) */
		if (sparse)
			CHECK(after - before < (long)(n / 4096 / 16));
		else
			CHECK(after - before >= (long)(n / 4096));
		CHECK(p[0] == 0 && p[n - 1] == 0);
		for (size_t o = 0; sparse && o < n / 2; o += 4096)
			p[o] = 1;
		if (sparse)
			CHECK(resident_pages() - before >= (long)(n / 2 / 4096));
		plat_free(p, n);
	}
}

/* The KV cache is such: a 7B's at context 452 was 226 MiB, all faulted in
 * at load, for the 12 rows a short run stores. */
TEST(host_kv_cache_backs_only_the_rows_stored)
{
	struct llm_mem mem;
	struct kv_cache c;
	static float k[4096], v[4096];

	for (int i = 0; i < 4096; i++)
		k[i] = v[i] = (float)i / 4096.0f;
	llm_mem_init(&mem, 0);
	/* the code's own pages first (and under qemu-user the translation of
	 * it, which the emulator's resident count includes) */
	CHECK(kv_init(&c, &mem, GGML_TYPE_F16, 8, 16, 4096) == 0);
	kv_store(&c, 0, 0, k, v);
	kv_free(&c);
	long before = resident_pages();
	CHECK(kv_init(&c, &mem, GGML_TYPE_F16, 8, 1024, 4096) == 0);
	CHECK(resident_pages() - before < (long)(c.bytes * 2 / 4096 / 16));
	kv_store(&c, 0, 0, k, v);
	before = resident_pages();
	for (uint32_t l = 0; l < 8; l++)
		for (uint32_t pos = 0; pos < 4; pos++)
			kv_store(&c, l, pos, k, v);
	/* 4 rows of 8 KiB a layer, K and V: 8 pages each of 16 (but the 2
	 * of layer 0's first row, stored above), the whole cache 4096; the
	 * kernel's resident count is approximate by some tens of pages */
	long used = resident_pages() - before;
	CHECK(used >= 96 && used < 256);
	kv_free(&c);
	CHECK(mem.used == 0);
}
