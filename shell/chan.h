/*
 * shell/chan.h — the confidential session's channel (docs/session.md): the
 * key schedule after an attested X25519 exchange, and one AEAD frame per
 * printable line. The guest (shell/session.c) and the host client
 * (tools/host/connect.c) share this file, as they share shell/keywrap.c.
 *
 * Keys: shared = X25519(own private, peer public) (RFC 7748 §5);
 *   S = the secret of the TPM credential the client made for the evidence's
 *       certified EK and AK (vtpm; empty for snp and tdx), which only that
 *       TPM's TPM2_ActivateCredential recovers (TPM 2.0 Part 1 §24);
 *   T = SHA-256("llmk session v2" || REPORT_DATA || client public || session public);
 *   PRK = HKDF-Extract(salt = T, IKM = shared || S) (RFC 5869);
 *   guest-to-client key = HKDF-Expand(PRK, "llmk session v2 guest to client", 32),
 *   client-to-guest key = HKDF-Expand(PRK, "llmk session v2 client to guest", 32).
 * REPORT_DATA (shell/evidence.h) already binds the client's nonce, the model
 * digest, the session public key and the build id; S binds the keys to the
 * TPM, so a quote by a software key with the AK's template gets no channel.
 *
 * Frame: the line "~S2 " + base64(ctr || ciphertext || tag) (RFC 4648 §4),
 * ctr the sender's frame counter (u64 big-endian, from 0, one per frame),
 * AES-256-GCM (NIST SP 800-38D) under the direction's key with IV = four
 * zero bytes || ctr and AAD = "llmk-s2" || direction ('g' or 'c') || ctr,
 * over a plaintext of one type byte (enum chan_type), the data's length
 * (u16 big-endian), the data, and zeros up to the smallest of the buckets
 * chan_buckets[] that holds it: a frame's size tells the host only its
 * bucket, and the length and padding are authenticated with the data.
 * A receiver accepts only the next counter of its direction; the first
 * refusal fails the channel for good (every later seal and open fails).
 *
 * Portable (BearSSL: aes_ct64 and ghash_ctmul64, constant-time integer code
 * on every target). Keys are zeroized by chan_wipe.
 */
#ifndef SHELL_CHAN_H
#define SHELL_CHAN_H

#include "../kernel/platform.h"

#include <bearssl.h>

#define CHAN_PREFIX "~S2 "
#define CHAN_PREFIX_LEN 4u
#define CHAN_DATA_MAX 4096u /* data bytes in one frame (an input line with its newline) */
#define CHAN_OVERHEAD (8u + 1u + 2u + 16u) /* counter, type, length, tag */
/* The data sizes a frame is padded to: the smallest that holds the data.
 * 64 holds a token's piece, a prompt's status, a typical command line;
 * each bucket 4x the last, so padding costs at most 4x the bytes (and 64
 * for an empty frame), and the host tells apart only these 4 sizes. */
#define CHAN_N_BUCKETS 4u
extern const uint16_t chan_buckets[CHAN_N_BUCKETS]; /* 64, 256, 1024, CHAN_DATA_MAX */
/* The frame line of a bucket (data bytes b), its NUL excluded. */
#define CHAN_LINE_LEN(b) (CHAN_PREFIX_LEN + ((b) + CHAN_OVERHEAD + 2u) / 3u * 4u)
/* The longest frame line, its NUL included. */
#define CHAN_LINE_MAX (CHAN_LINE_LEN(CHAN_DATA_MAX) + 1u)
#define CHAN_CTR_LIMIT (1ull << 48) /* frames per direction before the channel refuses */

enum chan_type {
	CHAN_OUTPUT = 'O', /* guest: console output bytes */
	CHAN_PROMPT = 'P', /* guest: ready for a command line; data = last status, i32 LE */
	CHAN_LINE = 'L',   /* guest: a command reads a line (chat) */
	CHAN_INPUT = 'I',  /* client: input bytes (a line and its newline, or Ctrl-C) */
	CHAN_CLOSE = 'C',  /* either: the session ends (the guest answers with its own) */
};

struct chan_way {
	uint8_t key[32];
	br_aes_ct64_ctr_keys aes;
	br_gcm_context gcm;
	uint64_t ctr;    /* the next frame's counter */
	char dir;        /* 'g': guest to client, 'c': client to guest */
};

struct chan {
	struct chan_way send, recv;
	bool failed;
};

/*
 * Derive both directions' keys (above) for the guest (guest = true: sends
 * 'g' frames) or the client, with the credential's secret[0..secret_n)
 * (0..64 bytes). -LLMK_EINVAL when peer_pub is of small order (no shared
 * secret) or the secret is too long; the channel is then failed. priv and
 * the secret are not kept.
 */
#define CHAN_SECRET_MAX 64u
int chan_init(struct chan *c, bool guest, const uint8_t priv[32], const uint8_t peer_pub[32],
	      const uint8_t report_data[64], const uint8_t client_pub[32],
	      const uint8_t session_pub[32], const uint8_t *secret, size_t secret_n);
/* Zeroize keys and state; the channel is failed afterwards. */
void chan_wipe(struct chan *c);

/* The bucket (padded data size) a frame of n data bytes takes; 0 for n >
 * CHAN_DATA_MAX. */
size_t chan_bucket(size_t n);

/*
 * Seal one frame of type with data[0..n) (n <= CHAN_DATA_MAX) into line,
 * padded to chan_bucket(n): NUL-terminated, no newline; returns its length
 * (CHAN_LINE_LEN of the bucket). -LLMK_EINVAL for n too
 * large, -LLMK_ERANGE for cap too small, -LLMK_EIO when the channel failed
 * or its counter reached CHAN_CTR_LIMIT (the channel then fails).
 */
long chan_seal(struct chan *c, uint8_t type, const void *data, size_t n, char *line,
	       size_t cap);

/*
 * Open the frame line[0..n) (no newline): its type and data (out holds
 * CHAN_DATA_MAX). Returns the data length, or -LLMK_EAUTH / -LLMK_EFORMAT
 * with why in err (one line, no "error:": what was wrong with which frame),
 * and the channel fails. A frame authenticates only under the sender's key
 * with its own counter in the AAD; it is accepted only with the next
 * counter, so a replayed, reordered or missing frame is refused as such;
 * and only padded to a bucket as chan_seal pads it (a length past its
 * bucket, or padding that is not zeros, is refused as malformed).
 */
long chan_open(struct chan *c, const char *line, size_t n, uint8_t *type, uint8_t *out,
	       char *err, size_t errn);

/* True when line[0..n) is shaped like a frame (the prefix): anything else on
 * the line is text outside the channel. */
bool chan_is_frame(const char *line, size_t n);

#endif
