/*
 * shell/attest_measure.c — the loaded model's measurement as the shell
 * keeps it (shell/cmd_attest.h): the engine owns the digest (llm/measure.h)
 * and reports it once it exists (engine_config.on_measured, set at `load`);
 * here it is extended into the attestation service ("llmk model <hex>")
 * and kept for `attest`. The disks' own digests (`attest --disk N`, a GGUF
 * with no tensor data, a sealed disk before any load) are read here.
 */
#include "attest_state.h"
#include "cmd_attest.h"
#include "../kernel/attest.h"
#include "cmd_model.h"

#include "../llm/seal.h"
#include "../llm/sha256.h"

static void hash_consume(void *ctx, const void *p, size_t n)
{
	llm_sha256_update(ctx, p, n);
}

/* SHA-256 of disk's bytes [0, len), read in order with requests in flight
 * while the bytes before them are hashed: read one chunk at a time, the
 * disk and the hash took turns, and a streamed 7B model's load spent most
 * of its time here (docs/perf.md, "Streaming reads"). The ring is small, as
 * the process beside a streamed model must stay near its budget
 * (test_stream), and one buffer of 2 MiB: the host build puts it on a 2
 * MiB page, which a device reads into as fast as into the engine's. */
#define HASH_CHUNK (256u << 10)
#define HASH_DEPTH 8
static int hash_disk(struct shell *sh, int disk, uint64_t len, uint8_t out[32])
{
	struct llm_sha256 c;
	uint64_t done = 0;
	int e;

	llm_sha256_init(&c);
	e = shell_disk_stream_ring(sh, disk, 0, len, HASH_CHUNK, HASH_DEPTH, hash_consume, &c, &done);
	if (!e && done != len)
		e = -LLMK_EIO;
	if (!e)
		llm_sha256_out(&c, out);
	return e;
}

/* What disk holds: a sealed image (its header's plaintext digest, no key
 * needed) or a GGUF (SHA-256 of its bytes up to the file's own extent). */
static int disk_digest(struct shell *sh, int disk, uint8_t out[32], char *src, size_t srcn,
		       char *err, size_t errn)
{
	struct plat_disk_info in;
	struct seal_header h;
	struct llm_mem mem;
	struct llm_reader rd;
	struct gguf_file g;
	uint8_t head[512];
	char why[200];
	int e;

	if ((e = plat_disk_info(disk, &in)))
		return e;
	size_t n = in.capacity < sizeof head ? (size_t)in.capacity : sizeof head;
	if ((e = plat_disk_read(disk, 0, head, n))) {
		plat_snprintf(err, errn, "disk %d: %s", disk, plat_strerror(e));
		return e;
	}
	e = seal_header_parse(head, n, &h, why, sizeof why);
	if (e == 0) {
		memcpy(out, h.plain_sha256, 32);
		plat_snprintf(src, srcn, "disk %d: sealed image header", disk);
		return 0;
	}
	if (e != -LLMK_ENOENT) {
		plat_snprintf(err, errn, "disk %d: sealed image header refused: %s", disk, why);
		return e;
	}
	llm_mem_init(&mem, 0);
	llm_reader_disk(&rd, disk);
	if ((e = gguf_open(&g, &rd, &mem, why, sizeof why))) {
		plat_snprintf(err, errn, "disk %d holds neither a sealed image nor a readable GGUF (%s)",
			      disk, why);
		return e;
	}
	uint64_t extent = g.extent;
	gguf_close(&g);
	if ((e = hash_disk(sh, disk, extent, out))) {
		plat_snprintf(err, errn, "disk %d: reading its %llu bytes: %s", disk,
			      (unsigned long long)extent, plat_strerror(e));
		return e;
	}
	plat_snprintf(src, srcn, "disk %d: SHA-256 of the GGUF's %llu bytes", disk,
		      (unsigned long long)extent);
	return 0;
}

/* A model's digest into the measurements; kept for `attest` if it went in. */
static int extend_model(struct shell *sh, struct attest_shell *s, int disk,
			const uint8_t digest[32], const char *who)
{
	char what[96], hex[65], err[240];
	int r;

	memcpy(s->digest, digest, 32);
	plat_snprintf(what, sizeof what, "llmk model %s", seal_hex(s->digest, 32, hex));
	if ((r = plat_attest_extend(what, s->digest))) {
		plat_snprintf(err, sizeof err, "%s", plat_attest_error());
		return shell_err(sh, r, "%s: measuring the model: %s", who,
				 err[0] ? err : plat_strerror(r));
	}
	s->measured = true;
	s->disk = disk;
	return 0;
}

/* engine_config.on_measured: at load (a sealed header, a resident model),
 * or when the streamer completed the digest (the first pass, or
 * engine_measure for `attest`). */
static void on_measured(void *ctx, const struct engine_measurement *m)
{
	struct shell *sh = ctx;
	struct attest_shell *s = sh->attest;
	const char *who = s->loading ? "load" : sh->argv[0] ? sh->argv[0] : "measure";

	if (m->sealed)
		plat_snprintf(s->source, sizeof s->source, "loaded model, disk %d: sealed image header",
			      m->disk);
	else /* the digest of the bytes the engine read once and uses (resident),
	      * or read once and checks every later read against (streaming) */
		plat_snprintf(s->source, sizeof s->source,
			      "loaded model, disk %d: SHA-256 of the GGUF's %llu bytes as loaded",
			      m->disk, (unsigned long long)m->extent);
	s->extend_err = extend_model(sh, s, m->disk, m->digest, who);
}

int shell_attest_model_loading(struct shell *sh, struct engine_config *cfg)
{
	struct attest_shell *s = shell_attest_state(sh);

	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "load: no memory for the attestation state");
	s->measured = false;
	s->extend_err = 0;
	s->loading = true;
	cfg->on_measured = on_measured;
	cfg->on_measured_ctx = sh;
	return 0;
}

int shell_attest_measure_model(struct shell *sh)
{
	struct attest_shell *s = sh->attest;
	struct engine_info info;
	int r;

	s->loading = false;
	if (s->extend_err) /* (its line printed) */
		return s->extend_err;
	if (engine_get_info(sh->engine, &info))
		return shell_err(sh, -LLMK_ENOENT, "load: no model to measure");
	if (info.sealed || info.digest_as_loaded) /* the engine's: reported, or to come */
		return 0;
	/* a GGUF with no tensor data to measure as it loads */
	if ((r = hash_disk(sh, info.disk, info.extent, info.plain_sha256)))
		return shell_err(sh, r, "load: measuring disk %d: %s", info.disk, plat_strerror(r));
	plat_snprintf(s->source, sizeof s->source,
		      "loaded model, disk %d: SHA-256 of the GGUF's %llu bytes", info.disk,
		      (unsigned long long)info.extent);
	return extend_model(sh, s, info.disk, info.plain_sha256, "load");
}

int shell_attest_model_digest(struct shell *sh, int disk, uint8_t out[32], char *src, size_t srcn)
{
	struct attest_shell *s = sh->attest;
	struct engine_info info;
	char err[240];
	int r;

	if (disk >= 0) {
		if ((r = disk_digest(sh, disk, out, src, srcn, err, sizeof err)))
			return shell_err(sh, r, "attest: --disk %d: %s", disk, err);
		return 0;
	}
	/* no answer before its model's digest exists and is in the measurements */
	if (sh->engine && engine_get_info(sh->engine, &info) == 0 && info.measure_pending) {
		if ((r = engine_measure(sh->engine, err, sizeof err)))
			return shell_err(sh, r, "attest: measuring the model: %s", err);
		if (engine_get_info(sh->engine, &info) || info.measure_pending)
			return shell_err(sh, -LLMK_EIO, "attest: measuring the model: not completed");
		if (s->extend_err) /* (its line printed) */
			return s->extend_err;
	}
	if (sh->engine && engine_get_info(sh->engine, &info) == 0 && !info.vocab_only &&
	    s->measured && s->disk == info.disk) {
		memcpy(out, s->digest, 32);
		plat_snprintf(src, srcn, "%s", s->source);
		return 0;
	}
	for (int d = 0; d < plat_disk_count(); d++) {
		struct seal_header h;
		struct plat_disk_info in;
		uint8_t head[512];
		if (plat_disk_info(d, &in) || in.capacity < sizeof head ||
		    plat_disk_read(d, 0, head, sizeof head) ||
		    seal_header_parse(head, sizeof head, &h, err, sizeof err))
			continue;
		memcpy(out, h.plain_sha256, 32);
		plat_snprintf(src, srcn, "disk %d: sealed image header (no model loaded)", d);
		return 0;
	}
	memset(out, 0, 32);
	plat_snprintf(src, srcn, "none: no model loaded and no sealed disk (zeros)");
	return 0;
}
