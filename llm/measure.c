/*
 * llm/measure.c — a plain model's measurement (measure.h).
 */
#include "measure.h"

void measure_reset(struct llm_measure *m)
{
	memset(m, 0, sizeof *m);
}

/* The header copy in front of the disk: the parser reads the header from
 * the bytes hashed; bytes past it that its buffer reads come from the disk
 * (it uses none of them). */
struct prefix_rd {
	const uint8_t *p;
	uint64_t n;
	const struct llm_reader *disk;
};

static int prefix_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct prefix_rd *pr = ctx;
	uint8_t *b = buf;

	if (off < pr->n) {
		size_t k = n < pr->n - off ? n : (size_t)(pr->n - off);
		memcpy(b, pr->p + off, k);
		b += k;
		off += k;
		n -= k;
	}
	return n ? pr->disk->read(pr->disk->ctx, off, b, n) : 0;
}

int measure_header(struct llm_measure *m, struct gguf_file *g, const struct llm_reader *rd,
		   struct llm_mem *mem, char *err, size_t errlen)
{
	const uint64_t piece = 1u << 20;
	uint64_t n = g->data_offset;
	struct prefix_rd pr;
	struct llm_reader prd;
	uint8_t *buf;
	int r = 0;

	measure_reset(m);
	if (n > g->extent) /* no tensor data */
		return 0;
	if (!(buf = llm_mem_alloc(mem, n ? (size_t)n : 1, &r))) {
		plat_snprintf(err, errlen, "engine: holding the %llu-byte header to measure it: %s",
			      (unsigned long long)n, plat_strerror(r));
		gguf_close(g);
		return r;
	}
	for (uint64_t off = 0; off < n && !r; off += piece)
		r = rd->read(rd->ctx, off, buf + off, (size_t)(n - off < piece ? n - off : piece));
	if (r) {
		plat_snprintf(err, errlen, "engine: reading the header again to measure it: %s",
			      plat_strerror(r));
		gguf_close(g);
		goto out;
	}
	llm_sha256_init(&m->sha);
	llm_sha256_update(&m->sha, buf, (size_t)n);
	m->fed = n;
	m->tail_len = (size_t)(n % MEASURE_TAIL_MAX);
	memcpy(m->tail, buf + n - m->tail_len, m->tail_len);
	gguf_close(g);
	pr = (struct prefix_rd){buf, n, rd};
	prd = (struct llm_reader){prefix_read, &pr, rd->size};
	if ((r = gguf_open(g, &prd, mem, err, errlen)))
		gguf_close(g); /* (idempotent) */
	else
		m->on = true;
out:
	llm_mem_free(mem, buf, n ? (size_t)n : 1);
	return r;
}

void measure_update(struct llm_measure *m, const void *p, size_t n)
{
	if (m->on && !m->done) {
		llm_sha256_update(&m->sha, p, n);
		m->fed += n;
	}
}

static void report(struct llm_measure *m)
{
	if (m->done && m->armed && !m->reported) {
		m->reported = true;
		if (m->report)
			m->report(m->report_ctx, m->digest);
	}
}

void measure_complete(struct llm_measure *m)
{
	if (!m->on || m->done)
		return;
	llm_sha256_out(&m->sha, m->digest);
	m->done = true;
	report(m);
}

void measure_arm(struct llm_measure *m, void (*fn)(void *ctx, const uint8_t digest[32]),
		 void *ctx)
{
	m->report = fn;
	m->report_ctx = ctx;
	m->armed = true;
	report(m);
}
