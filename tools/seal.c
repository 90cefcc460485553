/*
 * tools/seal.c — build/host/seal: make, inspect and (on a trusted host) open
 * sealed model images (docs/sealed-format.md). Host program: libc is fine
 * here; the format itself lives in llm/seal.c, shared with the engine.
 *
 *   seal keygen KEYFILE
 *   seal seal    [--chunk-size N] [--force] KEY IN.gguf OUT.sealed
 *   seal inspect [KEY] IMAGE
 *   seal unseal  [--force] KEY IMAGE OUT.gguf
 *
 * KEY is --key-file FILE (64 hex digits) or --key HEX. An existing output is
 * replaced only with --force (a mistyped name must not cost a model).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer/seal_write.h"

#define IO_BUF (4u << 20)

static const char usage[] =
	"usage: seal keygen KEYFILE\n"
	"       seal seal [--chunk-size N] [--force] KEY IN.gguf OUT.sealed\n"
	"       seal inspect [KEY] IMAGE\n"
	"       seal unseal [--force] KEY IMAGE OUT.gguf\n"
	"  KEY: --key-file FILE (64 hex digits) or --key HEX\n"
	"  --force: replace OUT if it exists (else it is never overwritten)\n"
	"  --chunk-size: bytes per chunk, a power of two in [4096, 16777216] (default 65536)\n";

struct opts {
	const char *key_file, *key_hex;
	uint32_t chunk_size;
	bool force;             /* replace an existing output */
	const char *pos[3];
	int npos;
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof *o);
	o->chunk_size = SEAL_CHUNK_DEFAULT;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		if (!strcmp(a, "--key-file") && has_val) {
			o->key_file = argv[++i];
		} else if (!strcmp(a, "--key") && has_val) {
			o->key_hex = argv[++i];
		} else if (!strcmp(a, "--chunk-size") && has_val) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 0);
			if (*end || v > UINT32_MAX)
				return fail("--chunk-size: bad number '%s'", argv[i]);
			o->chunk_size = (uint32_t)v;
		} else if (!strcmp(a, "--force")) {
			o->force = true;
		} else if (a[0] == '-' && a[1]) {
			return fail("unknown option or missing value: '%s'\n%s", a, usage);
		} else if (o->npos < 3) {
			o->pos[o->npos++] = a;
		} else {
			return fail("too many arguments\n%s", usage);
		}
	}
	return 0;
}

/* The key from --key-file or --key; 1 on error (printed). */
static int get_key(const struct opts *o, uint8_t key[SEAL_KEY_SIZE])
{
	char text[256];
	size_t n;

	if (o->key_hex) {
		if (seal_key_parse_hex(o->key_hex, strlen(o->key_hex), key))
			return fail("--key: want 64 hex digits (a 256-bit key)");
		return 0;
	}
	if (!o->key_file)
		return fail("no key: give --key-file FILE or --key HEX");
	FILE *f = fopen(o->key_file, "rb");
	if (!f)
		return fail("key file '%s': %s", o->key_file, strerror(errno));
	n = fread(text, 1, sizeof text, f);
	fclose(f);
	int e = seal_key_parse_hex(text, n, key);
	seal_zeroize(text, sizeof text);
	if (e)
		return fail("key file '%s': want 64 hex digits (a 256-bit key), then only "
			    "whitespace", o->key_file);
	return 0;
}

/* ---- an llm_reader over a file (pread) ---- */
static int fd_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	int fd = (int)(intptr_t)ctx;
	uint8_t *p = buf;
	while (n) {
		ssize_t k = pread(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -LLMK_EIO;
		p += k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

static int open_reader(const char *path, struct llm_reader *r)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fail("'%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	r->read = fd_read;
	r->ctx = (void *)(intptr_t)fd;
	r->size = (uint64_t)st.st_size;
	return fd;
}

static int write_all(int fd, uint64_t off, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t k = pwrite(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

/* ---- keygen ---- */
static int cmd_keygen(const struct opts *o)
{
	uint8_t key[SEAL_KEY_SIZE], id[SEAL_KEY_ID_SIZE];
	char hex[2 * SEAL_KEY_SIZE + 2];

	if (o->npos != 1)
		return fail("keygen: want one KEYFILE\n%s", usage);
	if (plat_entropy(key, sizeof key))
		return fail("keygen: no entropy from the OS");
	int fd = open(o->pos[0], O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		seal_zeroize(key, sizeof key);
		return fail("keygen: '%s': %s (an existing key is never overwritten)", o->pos[0],
			    strerror(errno));
	}
	/* The key is secret: hex it without a table lookup, into a buffer we
	 * zeroize. 'a' - '0' - 10 = 39 is added for nibbles above 9. */
	for (size_t i = 0; i < 2 * sizeof key; i++) {
		int v = (key[i / 2] >> (i % 2 ? 0 : 4)) & 15;
		hex[i] = (char)('0' + v + (((9 - v) >> 8) & 39));
	}
	hex[2 * SEAL_KEY_SIZE] = '\n';
	int e = write_all(fd, 0, hex, 2 * SEAL_KEY_SIZE + 1);
	seal_key_id(key, id);
	seal_zeroize(key, sizeof key);
	seal_zeroize(hex, sizeof hex);
	if (close(fd) || e)
		return fail("keygen: writing '%s' failed", o->pos[0]);
	printf("wrote a 256-bit key to %s (mode 0600), key id %s\n", o->pos[0],
	       seal_hex(id, sizeof id, hex));
	return 0;
}

/* ---- seal ---- */
/* SHA-256 of the whole input; also checks it is a GGUF. */
static int hash_input(const struct llm_reader *in, uint8_t *buf, uint8_t sha[32], const char *p)
{
	struct llm_sha256 s;

	if (in->size < 4 || in->read(in->ctx, 0, buf, 4) || memcmp(buf, "GGUF", 4) != 0)
		return fail("'%s' is not a GGUF file (no \"GGUF\" magic)", p);
	llm_sha256_init(&s);
	for (uint64_t off = 0; off < in->size;) {
		size_t n = in->size - off < IO_BUF ? (size_t)(in->size - off) : IO_BUF;
		if (in->read(in->ctx, off, buf, n))
			return fail("reading '%s' at %llu failed", p, (unsigned long long)off);
		llm_sha256_update(&s, buf, n);
		off += n;
	}
	llm_sha256_out(&s, sha);
	return 0;
}

/* Encrypt every chunk into out; tags into region. Re-hashes the input so a
 * file that changed since hash_input is refused. */
static int write_chunks(struct seal_ctx *c, const struct llm_reader *in, int out, uint8_t *buf,
			uint8_t *region, const char *p)
{
	const struct seal_header *h = &c->hdr;
	struct llm_sha256 s;
	uint8_t sha[32];

	llm_sha256_init(&s);
	for (uint64_t i = 0; i < h->n_chunks; i++) {
		uint64_t off = i * h->chunk_size, left = h->plain_size - off;
		size_t n = left < h->chunk_size ? (size_t)left : h->chunk_size;
		memset(buf + n, 0, h->chunk_size - n);
		if (in->read(in->ctx, off, buf, n))
			return fail("reading '%s' at %llu failed", p, (unsigned long long)off);
		llm_sha256_update(&s, buf, n);
		seal_encrypt_chunk(c, i, buf, region + i * SEAL_TAG_SIZE);
		if (write_all(out, seal_chunk_offset(c, i), buf, h->chunk_size))
			return fail("writing chunk %llu failed: %s", (unsigned long long)i,
				    strerror(errno));
	}
	llm_sha256_out(&s, sha);
	if (memcmp(sha, h->plain_sha256, 32) != 0)
		return fail("'%s' changed while it was being sealed", p);
	return 0;
}

static int do_seal(struct seal_ctx *c, const struct opts *o, const struct llm_reader *in,
		   int out, uint8_t *buf)
{
	uint8_t key[SEAL_KEY_SIZE], sha[32], rnd[SEAL_RANDOM_SIZE], hdr[SEAL_HEADER_SIZE];
	char err[256];

	if (get_key(o, key) || hash_input(in, buf, sha, o->pos[0]))
		return 1;
	if (plat_entropy(rnd, sizeof rnd))
		return fail("no entropy from the OS");
	int e = seal_create(c, key, in->size, sha, o->chunk_size, rnd, err, sizeof err);
	seal_zeroize(key, sizeof key);
	if (e)
		return fail("%s", err);
	size_t rlen = (size_t)(c->hdr.data_off - SEAL_HEADER_SIZE);
	uint8_t *region = calloc(1, rlen);
	if (!region)
		return fail("out of memory for the tag table (%zu bytes)", rlen);
	e = write_chunks(c, in, out, buf, region, o->pos[0]);
	if (!e) {
		seal_finish(c, region, rlen, hdr);
		if (write_all(out, SEAL_HEADER_SIZE, region, rlen) ||
		    write_all(out, 0, hdr, sizeof hdr) || ftruncate(out, (off_t)c->hdr.image_size))
			e = fail("writing '%s' failed: %s", o->pos[1], strerror(errno));
	}
	free(region);
	return e;
}

/* Open path for the output: a new file, or with --force a replacement.
 * The descriptor, or -1 with the error printed. */
static int open_output(const struct opts *o, const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | (o->force ? O_TRUNC : O_EXCL), mode);

	if (fd < 0 && errno == EEXIST)
		fail("'%s' exists: not overwriting it (--force replaces it)", path);
	else if (fd < 0)
		fail("'%s': %s", path, strerror(errno));
	return fd;
}

/* True if path names the file open as fd (sealing or unsealing onto the
 * input would destroy it before it is read). */
static bool same_file(int fd, const char *path)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static int cmd_seal(const struct opts *o)
{
	struct llm_reader in;
	struct seal_ctx c;
	char sha[65];

	memset(&c, 0, sizeof c);
	if (o->npos != 2)
		return fail("seal: want IN.gguf and OUT.sealed\n%s", usage);
	int fd = open_reader(o->pos[0], &in);
	if (fd < 0)
		return 1;
	if (same_file(fd, o->pos[1])) {
		close(fd);
		return fail("'%s' is the input file too: not overwriting it", o->pos[1]);
	}
	int out = open_output(o, o->pos[1], 0644);
	if (out < 0) {
		close(fd);
		return 1;
	}
	uint8_t *buf = malloc(IO_BUF > o->chunk_size ? IO_BUF : o->chunk_size);
	int e = buf ? do_seal(&c, o, &in, out, buf) : fail("out of memory");
	if (buf) {
		seal_zeroize(buf, IO_BUF > o->chunk_size ? IO_BUF : o->chunk_size);
		free(buf);
	}
	close(fd);
	if (close(out) || e) {
		unlink(o->pos[1]);
		seal_close(&c);
		return e ? e : fail("closing '%s' failed", o->pos[1]);
	}
	printf("sealed %s -> %s: %llu bytes in %llu chunks of %u, image %llu bytes, "
	       "sha256 %s\n",
	       o->pos[0], o->pos[1], (unsigned long long)c.hdr.plain_size,
	       (unsigned long long)c.hdr.n_chunks, c.hdr.chunk_size,
	       (unsigned long long)c.hdr.image_size, seal_hex(c.hdr.plain_sha256, 32, sha));
	seal_close(&c);
	return 0;
}

/* ---- inspect ---- */
static void print_header(const char *path, const struct seal_header *h, uint64_t size)
{
	char a[65];

	printf("%s: sealed model image v%u\n", path, h->version);
	printf("  image size   %llu bytes (file is %llu: %s)\n", (unsigned long long)h->image_size,
	       (unsigned long long)size,
	       size == h->image_size ? "exact" : size < h->image_size ? "TRUNCATED" : "DATA APPENDED");
	printf("  plaintext    %llu bytes, sha256 %s\n", (unsigned long long)h->plain_size,
	       seal_hex(h->plain_sha256, 32, a));
	printf("  chunks       %llu x %u bytes at offset %llu\n", (unsigned long long)h->n_chunks,
	       h->chunk_size, (unsigned long long)h->data_off);
	printf("  tag table    %llu x %u bytes at offset %llu\n", (unsigned long long)h->n_chunks,
	       SEAL_TAG_SIZE, (unsigned long long)h->tag_off);
	printf("  cipher       AES-256-GCM, key = HKDF-SHA256(key, salt, info || image id)\n");
	printf("  key id       %s\n", seal_hex(h->key_id, SEAL_KEY_ID_SIZE, a));
	printf("  image id     %s\n", seal_hex(h->image_id, SEAL_IMAGE_ID_SIZE, a));
	printf("  kdf salt     %s\n", seal_hex(h->kdf_salt, SEAL_SALT_SIZE, a));
	printf("  nonce base   %s\n", seal_hex(h->nonce_base, SEAL_NONCE_BASE_SIZE, a));
	printf("  header tag   %s\n", seal_hex(h->header_tag, SEAL_TAG_SIZE, a));
}

/* Open path as a sealed image with the options' key; 0, else 1 (printed). */
static int open_sealed(const struct opts *o, const char *path, struct llm_mem *mem,
		       struct seal_ctx *c, int *fd)
{
	struct llm_reader r;
	struct seal_keysrc ks;
	uint8_t key[SEAL_KEY_SIZE];
	char err[256];

	if (get_key(o, key))
		return 1;
	*fd = open_reader(path, &r);
	if (*fd < 0) {
		seal_zeroize(key, sizeof key);
		return 1;
	}
	seal_keysrc_raw(&ks, key, o->key_file ? o->key_file : "the --key key", true);
	int e = seal_open(c, &r, &ks, mem, err, sizeof err);
	seal_zeroize(key, sizeof key);
	if (e) {
		close(*fd);
		return fail("%s: %s", path, err);
	}
	return 0;
}

static int cmd_inspect(const struct opts *o)
{
	struct llm_reader r;
	struct seal_header h;
	struct llm_mem mem;
	struct seal_ctx c;
	uint8_t b[SEAL_HEADER_SIZE];
	char err[256];

	if (o->npos != 1)
		return fail("inspect: want one IMAGE\n%s", usage);
	int fd = open_reader(o->pos[0], &r);
	if (fd < 0)
		return 1;
	size_t n = r.size < sizeof b ? (size_t)r.size : sizeof b;
	int e = fd_read(r.ctx, 0, b, n);
	close(fd);
	if (e)
		return fail("%s: reading the header failed", o->pos[0]);
	e = seal_header_parse(b, n, &h, err, sizeof err);
	if (e)
		return fail("%s: %s", o->pos[0], err);
	print_header(o->pos[0], &h, r.size);
	if (r.size != h.image_size)
		return fail("%s: the file is %llu bytes but its header says %llu (%s)", o->pos[0],
			    (unsigned long long)r.size, (unsigned long long)h.image_size,
			    r.size < h.image_size ? "truncated" : "bytes appended");
	if (!o->key_file && !o->key_hex)
		return 0;
	llm_mem_init(&mem, 0);
	if (open_sealed(o, o->pos[0], &mem, &c, &fd))
		return 1;
	uint64_t t0 = plat_time_ns();
	e = seal_verify_all(&c, NULL, NULL, err, sizeof err);
	uint64_t t1 = plat_time_ns();
	if (!e)
		printf("  verified     key matches; all %llu chunks authenticate; plaintext "
		       "sha256 matches (%.1f MB/s, %s + %s)\n",
		       (unsigned long long)c.hdr.n_chunks,
		       (double)c.hdr.plain_size / 1e6 / ((double)(t1 - t0 + 1) / 1e9), c.aes_impl,
		       c.ghash_impl);
	seal_close(&c);
	close(fd);
	return e ? fail("%s: %s", o->pos[0], err) : 0;
}

/* ---- unseal ---- */
static int write_plain(struct seal_ctx *c, int out, const char *path)
{
	struct llm_reader r;
	uint64_t step = IO_BUF / c->hdr.chunk_size * c->hdr.chunk_size;
	uint8_t *buf = malloc(step);
	int e = 0;

	if (!buf)
		return fail("out of memory");
	seal_reader(c, &r);
	for (uint64_t off = 0; !e && off < r.size; off += step) {
		size_t n = r.size - off < step ? (size_t)(r.size - off) : (size_t)step;
		if (r.read(r.ctx, off, buf, n))
			e = fail("%s", seal_error(c));
		else if (write_all(out, off, buf, n))
			e = fail("writing failed: %s", strerror(errno));
	}
	seal_zeroize(buf, step);
	free(buf);
	(void)path;
	return e;
}

static int cmd_unseal(const struct opts *o)
{
	struct llm_mem mem;
	struct seal_ctx c;
	int fd;

	if (o->npos != 2)
		return fail("unseal: want IMAGE and OUT.gguf\n%s", usage);
	llm_mem_init(&mem, 0);
	if (open_sealed(o, o->pos[0], &mem, &c, &fd))
		return 1;
	if (same_file(fd, o->pos[1])) {
		seal_close(&c);
		close(fd);
		return fail("'%s' is the input file too: not overwriting it", o->pos[1]);
	}
	int out = open_output(o, o->pos[1], 0600);
	if (out < 0) {
		seal_close(&c);
		close(fd);
		return 1;
	}
	int e = write_plain(&c, out, o->pos[1]);
	if (close(out) && !e)
		e = fail("closing '%s' failed: %s", o->pos[1], strerror(errno));
	if (e)
		unlink(o->pos[1]);
	else
		printf("unsealed %s -> %s: %llu bytes, sha256 verified\n", o->pos[0], o->pos[1],
		       (unsigned long long)c.hdr.plain_size);
	seal_close(&c);
	close(fd);
	return e;
}

int main(int argc, char **argv)
{
	struct opts o;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (parse_opts(argc, argv, &o))
		return 2;
	if (!strcmp(argv[1], "keygen"))
		return cmd_keygen(&o);
	if (!strcmp(argv[1], "seal"))
		return cmd_seal(&o);
	if (!strcmp(argv[1], "inspect"))
		return cmd_inspect(&o);
	if (!strcmp(argv[1], "unseal"))
		return cmd_unseal(&o);
	fail("unknown command '%s'\n%s", argv[1], usage);
	return 2;
}
