/*
 * shell/disk.c — streaming a byte range of a disk (for `disks hash` and
 * `disks bench`) and saying what a disk holds (for `disks`).
 */
#include "shell.h"
#include "../llm/gguf.h"

/* Bytes of [off, end) that the async path may not take: it wants 512-byte
 * offsets and lengths (platform.h, plat_disk_read_async). */
static void aligned_span(uint64_t off, uint64_t end, uint64_t *a0, uint64_t *a1)
{
	*a0 = off % 512 ? off + (512 - off % 512) : off;
	if (*a0 > end || *a0 < off)
		*a0 = end;
	*a1 = end - end % 512;
	if (*a1 < *a0)
		*a1 = *a0;
}

struct stream {
	struct shell *sh;
	int disk;
	uint8_t *buf;
	void (*consume)(void *ctx, const void *p, size_t n);
	void *ctx;
	uint64_t *done;
	size_t chunk;   /* bytes per request */
	int depth;      /* requests in flight, <= SHELL_DISK_DEPTH */
};

/* A synchronous piece (the unaligned head or tail). */
static int stream_sync(struct stream *s, uint64_t off, uint64_t len)
{
	int r = plat_disk_read(s->disk, off, s->buf, (size_t)len);
	if (r)
		return r;
	if (s->consume)
		s->consume(s->ctx, s->buf, (size_t)len);
	*s->done += len;
	return 0;
}

/*
 * The aligned middle: a ring of s->depth buffers, each in flight as
 * one request; completed in order, consumed, resubmitted further on. After
 * an error, a cancel or the deadline nothing new is submitted, but every
 * request in flight is waited for before the buffers go back.
 */
static int stream_async(struct stream *s, uint64_t a0, uint64_t a1, uint64_t deadline,
			bool *stopped)
{
	struct plat_io io[SHELL_DISK_DEPTH];
	size_t lens[SHELL_DISK_DEPTH];
	uint64_t next = a0;
	int head = 0, n = 0, r = 0;

	for (;;) {
		while (!r && !*stopped && n < s->depth && next < a1) {
			int slot = (head + n) % s->depth;
			size_t l = a1 - next < s->chunk ? (size_t)(a1 - next) : s->chunk;
			r = plat_disk_read_async(s->disk, next, s->buf + (size_t)slot * s->chunk, l,
						 &io[slot]);
			if (r)
				break;
			lens[slot] = l;
			next += l;
			n++;
		}
		if (!n)
			return r;
		int st = plat_io_wait(&io[head]);
		if (st && !r)
			r = st;
		if (!r && !*stopped) {
			if (s->consume)
				s->consume(s->ctx, s->buf + (size_t)head * s->chunk, lens[head]);
			*s->done += lens[head];
			if (deadline && plat_time_ns() >= deadline)
				*stopped = true;
			else if (shell_poll_cancel(s->sh))
				r = -LLMK_ECANCEL;
		}
		head = (head + 1) % s->depth;
		n--;
	}
}

static int stream_range(struct stream *s, uint64_t off, uint64_t len, uint64_t deadline_ns,
			bool *stopped)
{
	uint64_t end = off + len, a0, a1;
	int r = 0;

	if (end < off)
		return -LLMK_ERANGE;
	aligned_span(off, end, &a0, &a1);
	if (a0 > off)
		r = stream_sync(s, off, a0 - off);
	if (!r && a1 > a0)
		r = stream_async(s, a0, a1, deadline_ns, stopped);
	if (!r && !*stopped && end > a1)
		r = stream_sync(s, a1, end - a1);
	return r;
}

#define STREAM_BYTES ((size_t)SHELL_DISK_CHUNK * SHELL_DISK_DEPTH)

int shell_disk_stream_ring(struct shell *sh, int disk, uint64_t off, uint64_t len, size_t chunk,
			   int depth, void (*consume)(void *ctx, const void *p, size_t n), void *ctx,
			   uint64_t *done)
{
	struct stream s = {sh, disk, NULL, consume, ctx, done, chunk, depth};
	bool stopped = false;

	*done = 0;
	if (!chunk || chunk % 512 || depth < 1 || depth > SHELL_DISK_DEPTH)
		return -LLMK_EINVAL;
	s.buf = plat_alloc(chunk * (size_t)depth, 4096);
	if (!s.buf)
		return -LLMK_ENOMEM;
	int r = stream_range(&s, off, len, 0, &stopped);
	plat_free(s.buf, chunk * (size_t)depth);
	return r;
}

int shell_disk_stream(struct shell *sh, int disk, uint64_t off, uint64_t len,
		      uint64_t deadline_ns, void (*consume)(void *ctx, const void *p, size_t n),
		      void *ctx, uint64_t *done)
{
	struct stream s = {sh, disk, NULL, consume, ctx, done, SHELL_DISK_CHUNK, SHELL_DISK_DEPTH};
	bool stopped = false;

	*done = 0;
	s.buf = plat_alloc(STREAM_BYTES, 4096);
	if (!s.buf)
		return -LLMK_ENOMEM;
	int r = stream_range(&s, off, len, deadline_ns, &stopped);
	plat_free(s.buf, STREAM_BYTES);
	return r;
}

int shell_disk_bench(struct shell *sh, int disk, uint64_t max_bytes, uint64_t max_ns,
		     uint64_t *bytes, uint64_t *ns)
{
	struct plat_disk_info in;
	struct stream s = {sh, disk, NULL, NULL, NULL, bytes, SHELL_DISK_CHUNK, SHELL_DISK_DEPTH};
	bool stopped = false;
	int r;

	*bytes = *ns = 0;
	if ((r = plat_disk_info(disk, &in)))
		return r;
	if (!in.capacity)
		return -LLMK_ERANGE;
	s.buf = plat_alloc(STREAM_BYTES, 4096);
	if (!s.buf)
		return -LLMK_ENOMEM;
	uint64_t t0 = plat_time_ns();
	/* Whole passes from byte 0 until either bound; a small disk is read
	 * many times so the figure is not one request's latency. */
	while (!r && !stopped && *bytes < max_bytes) {
		uint64_t len = in.capacity < max_bytes - *bytes ? in.capacity : max_bytes - *bytes;
		r = stream_range(&s, 0, len, t0 + max_ns, &stopped);
		if (plat_time_ns() - t0 >= max_ns)
			stopped = true;
		if (!r && !stopped && shell_poll_cancel(sh))
			r = -LLMK_ECANCEL;
	}
	*ns = plat_time_ns() - t0;
	plat_free(s.buf, STREAM_BYTES);
	return r;
}

/* A GGUF string value for printing: "(none)" if absent, cleaned (text.c). */
static const char *gguf_text(const struct gguf_file *g, const char *key, char *buf, size_t n)
{
	const struct gguf_str *st;

	if (gguf_get_str(g, key, &st) != 0)
		return "(none)";
	return shell_clean(st->s, st->len, buf, n);
}

/* A disk that says GGUF but does not parse is bad input: an error line. */
static int describe_gguf(struct shell *sh, int disk, const struct plat_disk_info *in)
{
	struct llm_mem mem;
	struct llm_reader rd;
	struct gguf_file g;
	char err[256], name[96], arch[48];

	llm_mem_init(&mem, 0);
	llm_reader_disk(&rd, disk);
	int r = gguf_open(&g, &rd, &mem, err, sizeof err);
	if (r)
		return shell_err(sh, r, "disks: disk %d: GGUF header, but not readable: %s", disk,
				 err);
	plat_printf("  GGUF v%u: %llu tensors, %llu metadata keys, name '%s', architecture '%s'\n",
		    g.version, (unsigned long long)g.n_tensors, (unsigned long long)g.n_kv,
		    gguf_text(&g, "general.name", name, sizeof name),
		    gguf_text(&g, "general.architecture", arch, sizeof arch));
	/* The engine uses the file's own extent; the rest is the disk's padding. */
	plat_printf("  contents end at byte %llu (%llu bytes of padding after)\n",
		    (unsigned long long)g.extent, (unsigned long long)(in->capacity - g.extent));
	gguf_close(&g);
	return 0;
}

int shell_disk_describe(struct shell *sh, int disk, const struct plat_disk_info *in)
{
	uint8_t h[512];
	size_t n = in->capacity < sizeof h ? (size_t)in->capacity : sizeof h;

	int r = plat_disk_read(disk, 0, h, n);
	if (r) {
		plat_printf("  holds: unknown (reading the first %zu bytes failed: %s)\n", n,
			    plat_strerror(r));
		return 0;
	}
	if (shell_describe_sealed(sh, disk, in, h, n))
		return 0;
	/* gguf.md: the file starts with the magic "GGUF". */
	if (n >= 4 && memcmp(h, "GGUF", 4) == 0)
		return describe_gguf(sh, disk, in);
	if (n < 4) {
		plat_printf("  holds: nothing recognised (%zu bytes)\n", n);
		return 0;
	}
	plat_printf("  holds: nothing recognised (first bytes %02x %02x %02x %02x)\n", h[0], h[1],
		    h[2], h[3]);
	return 0;
}
