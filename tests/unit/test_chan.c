/*
 * tests/unit/test_chan.c — shell/chan.c, the session's channel: frames
 * round trip in both directions, and each way a frame can go wrong on the
 * serial line is refused with its own reason and fails the channel for
 * good: an altered character anywhere, a replayed, reordered or dropped
 * frame, a truncated line, a frame sent back to its sender, a frame made
 * under another transcript (a substituted key), a small-order peer key;
 * frames padded to 4 sizes, their padding checked.
 */
#include "test.h"

#include "../../shell/chan.h"
#include "../../shell/evidence.h"
#include "../../shell/keywrap.h"

struct pair {
	struct chan guest, client;
	uint8_t gpriv[32], gpub[32], cpriv[32], cpub[32], rd[64];
};

/* Both ends of one session, keyed as session open and the client do. */
static void pair_init(struct pair *p)
{
	for (int i = 0; i < 32; i++) {
		p->gpriv[i] = (uint8_t)(0x11 + 5 * i);
		p->cpriv[i] = (uint8_t)(0x80 ^ (3 * i));
	}
	for (int i = 0; i < 64; i++)
		p->rd[i] = (uint8_t)(i * 9);
	CHECK_EQ_INT(keywrap_public(p->gpriv, p->gpub), 0);
	CHECK_EQ_INT(keywrap_public(p->cpriv, p->cpub), 0);
	CHECK_EQ_INT(chan_init(&p->guest, true, p->gpriv, p->cpub, p->rd, p->cpub, p->gpub, NULL, 0),
		     0);
	CHECK_EQ_INT(chan_init(&p->client, false, p->cpriv, p->gpub, p->rd, p->cpub, p->gpub, NULL,
			       0), 0);
}

static long seal_str(struct chan *c, uint8_t type, const char *s, char *line)
{
	return chan_seal(c, type, s, strlen(s), line, CHAN_LINE_MAX);
}

static long open_line(struct chan *c, const char *line, uint8_t *type, uint8_t *out, char *err)
{
	return chan_open(c, line, strlen(line), type, out, err, 240);
}

TEST(chan_frames_round_trip_in_both_directions)
{
	struct pair p;
	char line[CHAN_LINE_MAX], err[240];
	uint8_t out[CHAN_DATA_MAX], type;

	pair_init(&p);
	for (int i = 0; i < 3; i++) {
		CHECK(seal_str(&p.guest, CHAN_OUTPUT, "Once upon a time\n", line) > 0);
		CHECK(chan_is_frame(line, strlen(line)));
		CHECK(strstr(line, "Once") == NULL);
		CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), 17);
		CHECK_EQ_INT(type, CHAN_OUTPUT);
		CHECK(memcmp(out, "Once upon a time\n", 17) == 0);
		CHECK(seal_str(&p.client, CHAN_INPUT, "version\n", line) > 0);
		CHECK_EQ_INT(open_line(&p.guest, line, &type, out, err), 8);
		CHECK_EQ_INT(type, CHAN_INPUT);
	}
	/* an empty frame, and the largest one fits CHAN_LINE_MAX */
	CHECK(chan_seal(&p.guest, CHAN_LINE, NULL, 0, line, sizeof line) > 0);
	CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), 0);
	CHECK_EQ_INT(type, CHAN_LINE);
	static uint8_t big[CHAN_DATA_MAX];
	memset(big, 'x', sizeof big);
	long k = chan_seal(&p.guest, CHAN_OUTPUT, big, sizeof big, line, sizeof line);
	CHECK(k > 0 && (size_t)k < CHAN_LINE_MAX);
	CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), CHAN_DATA_MAX);
	CHECK_EQ_INT(chan_seal(&p.guest, CHAN_OUTPUT, big, sizeof big + 1, line, sizeof line),
		     -LLMK_EINVAL);
	CHECK_EQ_INT(p.guest.send.ctr, 5);
	CHECK_EQ_INT(p.client.recv.ctr, 5);
}

/* Issue 27: a frame's size tells the host the bucket of its data, not its
 * length: every length from 0 to CHAN_DATA_MAX seals into one of 4 line
 * lengths, a token's piece and a longer line of the same bucket alike, and
 * each opens to its own length. */
TEST(chan_frames_are_padded_to_four_sizes)
{
	static uint8_t data[CHAN_DATA_MAX], out[CHAN_DATA_MAX];
	struct pair p;
	char line[CHAN_LINE_MAX], err[240];
	long sizes[8] = {0}, a, b;
	int n_sizes = 0;
	uint8_t type;

	pair_init(&p);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	for (size_t n = 0; n <= CHAN_DATA_MAX; n += n < 300 ? 1 : 37) {
		long k = chan_seal(&p.guest, CHAN_OUTPUT, data, n, line, sizeof line);
		int j = 0;
		CHECK(k > 0);
		while (j < n_sizes && sizes[j] != k)
			j++;
		if (j == n_sizes && n_sizes < 8)
			sizes[n_sizes++] = k;
		CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), (long)n);
		CHECK(memcmp(out, data, n) == 0);
	}
	if (n_sizes != 4)
		fprintf(stderr, "  %d line sizes (4 wanted)\n", n_sizes);
	CHECK_EQ_INT(n_sizes, 4);
	a = seal_str(&p.guest, CHAN_OUTPUT, " a", line);
	b = seal_str(&p.guest, CHAN_OUTPUT, " once upon a time there was a girl\n", line);
	CHECK(a > 0 && a == b);
}

/* A frame made with the guest's key around the plaintext pt[0..n) as it
 * stands (type, length, data, padding): what only a broken sender makes. */
static void seal_raw(struct chan *c, const uint8_t *pt, size_t n, char *line)
{
	uint8_t f[CHAN_DATA_MAX + CHAN_OVERHEAD], iv[12] = {0}, aad[16] = "llmk-s2g";
	struct chan_way *w = &c->send;

	for (int i = 0; i < 8; i++)
		f[i] = aad[8 + i] = iv[4 + i] = (uint8_t)(w->ctr >> (56 - 8 * i));
	memcpy(f + 8, pt, n);
	br_gcm_reset(&w->gcm, iv, sizeof iv);
	br_gcm_aad_inject(&w->gcm, aad, sizeof aad);
	br_gcm_flip(&w->gcm);
	br_gcm_run(&w->gcm, 1, f + 8, n);
	br_gcm_get_tag(&w->gcm, f + 8 + n);
	w->ctr++;
	memcpy(line, CHAN_PREFIX, CHAN_PREFIX_LEN);
	CHECK(b64_encode(f, n + 24, line + CHAN_PREFIX_LEN, CHAN_LINE_MAX - 4) > 0);
}

/* The length and the padding are inside the authenticated plaintext, and a
 * frame whose padding is not as chan_seal makes it is refused. */
TEST(chan_refuses_frames_not_padded_as_sealed)
{
	static const struct {
		size_t n, len;
		uint8_t last;
	} bad[] = {
		{3 + 64, 65, 0},  /* a length past its bucket */
		{3 + 64, 3, 1},   /* padding not zero */
		{3 + 100, 3, 0},  /* no bucket's size */
		{3 + 256, 10, 0}, /* a bucket larger than the length takes */
	};
	uint8_t pt[3 + CHAN_DATA_MAX] = {0}, out[CHAN_DATA_MAX], type;
	char line[CHAN_LINE_MAX], err[240];
	struct pair p;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pair_init(&p);
		memset(pt, 0, sizeof pt);
		pt[0] = CHAN_OUTPUT;
		pt[1] = (uint8_t)(bad[i].len >> 8);
		pt[2] = (uint8_t)bad[i].len;
		memset(pt + 3, 'a', bad[i].len < bad[i].n - 3 ? bad[i].len : bad[i].n - 3);
		pt[bad[i].n - 1] |= bad[i].last;
		seal_raw(&p.guest, pt, bad[i].n, line);
		CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), -LLMK_EFORMAT);
		CHECK(strstr(err, "is not padded as a frame is") != NULL);
		CHECK(p.client.failed);
	}
	/* and the same hand made as chan_seal makes it opens */
	pair_init(&p);
	memset(pt, 0, sizeof pt);
	pt[0] = CHAN_OUTPUT;
	pt[2] = 3;
	memcpy(pt + 3, "abc", 3);
	seal_raw(&p.guest, pt, 3 + 64, line);
	CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), 3);
}

TEST(chan_refuses_any_altered_character)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct pair p;
	char good[CHAN_LINE_MAX], line[CHAN_LINE_MAX], err[240];
	uint8_t out[CHAN_DATA_MAX], type;
	int refused = 0, n;

	pair_init(&p);
	n = (int)seal_str(&p.guest, CHAN_OUTPUT, "the answer is 42\n", good);
	for (int i = 0; i < n; i++) {
		memcpy(line, good, (size_t)n + 1);
		if (good[i] == '=')
			continue; /* padding: a change there is a change of length */
		/* another character of the same class: prefix, or base64 */
		if (i < (int)CHAN_PREFIX_LEN)
			line[i] = good[i] == 'X' ? 'Y' : 'X';
		else
			line[i] = alpha[(strchr(alpha, good[i]) - alpha + 1) % 64];
		pair_init(&p);
		long r = open_line(&p.client, line, &type, out, err);
		refused += r < 0;
		if (r >= 0)
			fprintf(stderr, "  character %d changed and still accepted: %s\n", i, line);
		CHECK(p.client.failed);
	}
	CHECK_EQ_INT(refused, n - (int)(strchr(good, '=') ? strlen(strchr(good, '=')) : 0));
}

TEST(chan_refuses_replayed_reordered_dropped_and_truncated_frames)
{
	struct pair p;
	char f0[CHAN_LINE_MAX], f1[CHAN_LINE_MAX], f2[CHAN_LINE_MAX], err[240];
	uint8_t out[CHAN_DATA_MAX], type;

	pair_init(&p);
	seal_str(&p.client, CHAN_INPUT, "infer \"secret\"\n", f0);
	seal_str(&p.client, CHAN_INPUT, "unseal 00\n", f1);
	seal_str(&p.client, CHAN_INPUT, "chat\n", f2);
	CHECK(open_line(&p.guest, f0, &type, out, err) > 0);
	CHECK_EQ_INT(open_line(&p.guest, f0, &type, out, err), -LLMK_EAUTH);
	CHECK(strstr(err, "frame 0 from the client was replayed") != NULL);
	/* failed for good: the next good frame and any seal are refused */
	CHECK(open_line(&p.guest, f1, &type, out, err) < 0);
	CHECK(strstr(err, "failed before") != NULL);
	CHECK_EQ_INT(seal_str(&p.guest, CHAN_OUTPUT, "x", f2), -LLMK_EIO);

	pair_init(&p);
	seal_str(&p.client, CHAN_INPUT, "a\n", f0);
	seal_str(&p.client, CHAN_INPUT, "b\n", f1);
	CHECK_EQ_INT(open_line(&p.guest, f1, &type, out, err), -LLMK_EAUTH);
	CHECK(strstr(err, "frame 1 from the client arrived where frame 0 was due") != NULL);

	pair_init(&p);
	seal_str(&p.client, CHAN_INPUT, "a\n", f0);
	seal_str(&p.client, CHAN_INPUT, "b\n", f1);
	seal_str(&p.client, CHAN_INPUT, "c\n", f2);
	CHECK(open_line(&p.guest, f0, &type, out, err) > 0);
	CHECK_EQ_INT(open_line(&p.guest, f2, &type, out, err), -LLMK_EAUTH); /* f1 dropped */
	CHECK(strstr(err, "dropped or reordered") != NULL);

	for (size_t cut = 1; cut < strlen(f0); cut += 3) {
		pair_init(&p);
		seal_str(&p.client, CHAN_INPUT, "a\n", f0);
		CHECK(chan_open(&p.guest, f0, strlen(f0) - cut, &type, out, err, sizeof err) < 0);
	}
}

TEST(chan_directions_and_transcripts_do_not_mix)
{
	struct pair p, q;
	char line[CHAN_LINE_MAX], err[240];
	uint8_t out[CHAN_DATA_MAX], type;

	/* the guest's own frame reflected back to it */
	pair_init(&p);
	seal_str(&p.guest, CHAN_OUTPUT, "hello\n", line);
	CHECK_EQ_INT(open_line(&p.guest, line, &type, out, err), -LLMK_EAUTH);
	CHECK(strstr(err, "does not authenticate") != NULL);

	/* a client keyed with another report data (other evidence) */
	pair_init(&p);
	q = p;
	q.rd[5] ^= 1;
	CHECK_EQ_INT(chan_init(&q.client, false, q.cpriv, q.gpub, q.rd, q.cpub, q.gpub, NULL, 0), 0);
	seal_str(&p.guest, CHAN_PROMPT, "", line);
	CHECK_EQ_INT(open_line(&q.client, line, &type, out, err), -LLMK_EAUTH);

	/* a relay that gave the guest its own key in place of the client's:
	 * the guest's frames do not open at the client */
	pair_init(&p);
	uint8_t rpriv[32] = {7}, rpub[32];
	CHECK_EQ_INT(keywrap_public(rpriv, rpub), 0);
	CHECK_EQ_INT(chan_init(&p.guest, true, p.gpriv, rpub, p.rd, rpub, p.gpub, NULL, 0), 0);
	seal_str(&p.guest, CHAN_PROMPT, "", line);
	CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), -LLMK_EAUTH);

	/* the credential's secret is part of the keys: a client that has the
	 * X25519 keys but not the secret (a relay that forged the quote with a
	 * software AK) gets frames that do not open, and sends none that do */
	pair_init(&p);
	uint8_t sec[32] = {1, 2, 3};
	CHECK_EQ_INT(chan_init(&p.guest, true, p.gpriv, p.cpub, p.rd, p.cpub, p.gpub, sec, 32), 0);
	seal_str(&p.guest, CHAN_PROMPT, "", line);
	CHECK_EQ_INT(open_line(&p.client, line, &type, out, err), -LLMK_EAUTH);
	q = p;
	CHECK_EQ_INT(chan_init(&q.client, false, q.cpriv, q.gpub, q.rd, q.cpub, q.gpub, sec, 32), 0);
	pair_init(&p);
	CHECK_EQ_INT(chan_init(&p.guest, true, p.gpriv, p.cpub, p.rd, p.cpub, p.gpub, sec, 32), 0);
	seal_str(&p.guest, CHAN_PROMPT, "", line);
	CHECK(open_line(&q.client, line, &type, out, err) >= 0);

	/* a peer key of small order gives no shared secret */
	uint8_t zero[32] = {0};
	CHECK_EQ_INT(chan_init(&p.guest, true, p.gpriv, zero, p.rd, zero, p.gpub, NULL, 0),
		     -LLMK_EINVAL);
	CHECK(p.guest.failed);
	CHECK_EQ_INT(seal_str(&p.guest, CHAN_OUTPUT, "x", line), -LLMK_EIO);

	/* text that is not a frame */
	pair_init(&p);
	CHECK_EQ_INT(open_line(&p.guest, "load 0", &type, out, err), -LLMK_EFORMAT);
	CHECK(strstr(err, "not a frame") != NULL);
}

TEST(chan_wipe_zeroizes_the_keys)
{
	struct pair p;
	static const uint8_t zero[sizeof(struct chan)];

	pair_init(&p);
	CHECK(memcmp(p.guest.send.key, zero, 32) != 0);
	chan_wipe(&p.guest);
	CHECK(p.guest.failed);
	CHECK(memcmp(p.guest.send.key, zero, 32) == 0 && memcmp(p.guest.recv.key, zero, 32) == 0);
	CHECK(memcmp(&p.guest.send.aes, zero, sizeof p.guest.send.aes) == 0);
}
