/*
 * shell/chan.c — the session channel of shell/chan.h: the key schedule
 * (X25519, SHA-256, HKDF-SHA-256) and AES-256-GCM frames, all BearSSL.
 * aes_ct64 + ghash_ctmul64, as shell/keywrap.c: frames are a line of text
 * each, so speed hardly matters, and no CPU feature test is needed here.
 */
#include "chan.h"
#include "evidence.h"
#include "keywrap.h"
#include "../llm/seal.h" /* seal_zeroize */

static const char chan_label[] = "llmk session v2";
static const char chan_info_g2c[] = "llmk session v2 guest to client";
static const char chan_info_c2g[] = "llmk session v2 client to guest";
static const char chan_aad_tag[7] = "llmk-s2";

const uint16_t chan_buckets[CHAN_N_BUCKETS] = {64, 256, 1024, CHAN_DATA_MAX};

size_t chan_bucket(size_t n)
{
	for (unsigned i = 0; i < CHAN_N_BUCKETS; i++)
		if (n <= chan_buckets[i])
			return chan_buckets[i];
	return 0;
}

static void way_init(struct chan_way *w, const uint8_t key[32], char dir)
{
	memcpy(w->key, key, 32);
	br_aes_ct64_ctr_init(&w->aes, w->key, 32);
	br_gcm_init(&w->gcm, &w->aes.vtable, br_ghash_ctmul64);
	w->ctr = 0;
	w->dir = dir;
}

int chan_init(struct chan *c, bool guest, const uint8_t priv[32], const uint8_t peer_pub[32],
	      const uint8_t report_data[64], const uint8_t client_pub[32],
	      const uint8_t session_pub[32], const uint8_t *secret, size_t secret_n)
{
	uint8_t shared[32], t[32], kg[32], kc[32];
	br_sha256_context s;
	br_hkdf_context h, h2;
	int r;

	memset(c, 0, sizeof *c);
	c->failed = true;
	if (secret_n > CHAN_SECRET_MAX) {
		r = -LLMK_EINVAL;
		goto out;
	}
	if ((r = keywrap_x25519(shared, priv, peer_pub)) < 0)
		goto out;
	/* the transcript: what the evidence bound, and both public keys */
	br_sha256_init(&s);
	br_sha256_update(&s, chan_label, sizeof chan_label - 1);
	br_sha256_update(&s, report_data, 64);
	br_sha256_update(&s, client_pub, 32);
	br_sha256_update(&s, session_pub, 32);
	br_sha256_out(&s, t);
	br_hkdf_init(&h, &br_sha256_vtable, t, sizeof t);
	br_hkdf_inject(&h, shared, sizeof shared);
	if (secret_n)
		br_hkdf_inject(&h, secret, secret_n);
	br_hkdf_flip(&h);
	/* BearSSL's expand takes one info per context: a copy per direction */
	h2 = h;
	br_hkdf_produce(&h, chan_info_g2c, sizeof chan_info_g2c - 1, kg, sizeof kg);
	br_hkdf_produce(&h2, chan_info_c2g, sizeof chan_info_c2g - 1, kc, sizeof kc);
	way_init(&c->send, guest ? kg : kc, guest ? 'g' : 'c');
	way_init(&c->recv, guest ? kc : kg, guest ? 'c' : 'g');
	c->failed = false;
out:
	seal_zeroize(shared, sizeof shared);
	seal_zeroize(kg, sizeof kg);
	seal_zeroize(kc, sizeof kc);
	seal_zeroize(&h, sizeof h);
	seal_zeroize(&h2, sizeof h2);
	seal_zeroize(&s, sizeof s);
	return r;
}

void chan_wipe(struct chan *c)
{
	seal_zeroize(c, sizeof *c);
	c->failed = true;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* IV = 0^32 || ctr and AAD = "llmk-s1" || dir || ctr, then run over buf. */
static void way_run(struct chan_way *w, uint64_t ctr, int encrypt, uint8_t *buf, size_t n)
{
	uint8_t iv[12] = {0}, aad[sizeof chan_aad_tag + 1 + 8];

	put_be64(iv + 4, ctr);
	memcpy(aad, chan_aad_tag, sizeof chan_aad_tag);
	aad[sizeof chan_aad_tag] = (uint8_t)w->dir;
	put_be64(aad + sizeof chan_aad_tag + 1, ctr);
	br_gcm_reset(&w->gcm, iv, sizeof iv);
	br_gcm_aad_inject(&w->gcm, aad, sizeof aad);
	br_gcm_flip(&w->gcm);
	br_gcm_run(&w->gcm, encrypt, buf, n);
}

long chan_seal(struct chan *c, uint8_t type, const void *data, size_t n, char *line, size_t cap)
{
	uint8_t frame[CHAN_DATA_MAX + CHAN_OVERHEAD];
	size_t b = chan_bucket(n);

	if (n > CHAN_DATA_MAX)
		return -LLMK_EINVAL;
	if (cap < CHAN_LINE_LEN(b) + 1)
		return -LLMK_ERANGE;
	if (c->failed || c->send.ctr >= CHAN_CTR_LIMIT) {
		c->failed = true;
		return -LLMK_EIO;
	}
	put_be64(frame, c->send.ctr);
	frame[8] = type;
	frame[9] = (uint8_t)(n >> 8);
	frame[10] = (uint8_t)n;
	if (n)
		memcpy(frame + 11, data, n);
	memset(frame + 11 + n, 0, b - n);
	way_run(&c->send, c->send.ctr, 1, frame + 8, 3 + b);
	br_gcm_get_tag(&c->send.gcm, frame + 11 + b);
	c->send.ctr++;
	memcpy(line, CHAN_PREFIX, CHAN_PREFIX_LEN);
	long k = b64_encode(frame, b + CHAN_OVERHEAD, line + CHAN_PREFIX_LEN,
				     cap - CHAN_PREFIX_LEN);
	seal_zeroize(frame, sizeof frame);
	return k < 0 ? k : (long)CHAN_PREFIX_LEN + k;
}

bool chan_is_frame(const char *line, size_t n)
{
	return n >= CHAN_PREFIX_LEN && memcmp(line, CHAN_PREFIX, CHAN_PREFIX_LEN) == 0;
}

static long refuse(struct chan *c, long code, char *err, size_t errn, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static long refuse(struct chan *c, long code, char *err, size_t errn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	plat_vsnprintf(err, errn, fmt, ap);
	va_end(ap);
	c->failed = true;
	return code;
}

long chan_open(struct chan *c, const char *line, size_t n, uint8_t *type, uint8_t *out,
	       char *err, size_t errn)
{
	uint8_t frame[CHAN_DATA_MAX + CHAN_OVERHEAD];
	const char *who = c->recv.dir == 'g' ? "guest" : "client";
	uint64_t want = c->recv.ctr;
	long r;

	if (c->failed)
		return refuse(c, -LLMK_EAUTH, err, errn, "the session failed before this frame");
	if (!chan_is_frame(line, n))
		return refuse(c, -LLMK_EFORMAT, err, errn, "a line from the %s that is not a frame "
			      "(no \"%s\" prefix)", who, CHAN_PREFIX);
	long k = b64_decode(line + CHAN_PREFIX_LEN, n - CHAN_PREFIX_LEN, frame,
				     sizeof frame);
	if (k < (long)CHAN_OVERHEAD)
		return refuse(c, -LLMK_EFORMAT, err, errn, "frame %llu from the %s is malformed "
			      "(%s; truncated?)", (unsigned long long)want, who,
			      k < 0 ? "not base64 of a frame" : "shorter than a frame");
	uint64_t ctr = get_be64(frame);
	size_t body = (size_t)k - 8 - 16;
	/* authenticated under the frame's own counter, so a replayed or
	 * reordered frame is told apart from an altered one */
	way_run(&c->recv, ctr, 0, frame + 8, body);
	if (!br_gcm_check_tag(&c->recv.gcm, frame + 8 + body)) { /* constant-time inside */
		seal_zeroize(frame, sizeof frame);
		return refuse(c, -LLMK_EAUTH, err, errn, "frame %llu from the %s does not "
			      "authenticate (altered on the way, or made with other keys)",
			      (unsigned long long)want, who);
	}
	if (ctr != want) {
		seal_zeroize(frame, sizeof frame);
		if (ctr < want)
			return refuse(c, -LLMK_EAUTH, err, errn, "frame %llu from the %s was replayed "
				      "(expected frame %llu)", (unsigned long long)ctr, who,
				      (unsigned long long)want);
		return refuse(c, -LLMK_EAUTH, err, errn, "frame %llu from the %s arrived where frame "
			      "%llu was due (frames dropped or reordered)", (unsigned long long)ctr,
			      who, (unsigned long long)want);
	}
	/* authentic and in order: padded as chan_seal pads, or refused (only
	 * a sender with the key could have made it otherwise) */
	size_t len = body >= 3 ? (size_t)frame[9] << 8 | frame[10] : 0;
	uint8_t pad = 0;
	if (body >= 3 && chan_bucket(len) == body - 3)
		for (size_t i = 11 + len; i < 8 + body; i++)
			pad |= frame[i];
	if (body < 3 || chan_bucket(len) != body - 3 || pad) {
		seal_zeroize(frame, sizeof frame);
		return refuse(c, -LLMK_EFORMAT, err, errn, "frame %llu from the %s is not padded "
			      "as a frame is (data length %zu in %zu bytes)", (unsigned long long)want,
			      who, len, body >= 3 ? body - 3 : 0);
	}
	c->recv.ctr++;
	*type = frame[8];
	r = (long)len;
	if (r)
		memcpy(out, frame + 11, (size_t)r);
	seal_zeroize(frame, sizeof frame);
	return r;
}
