/*
 * drivers/tpm2_marshal.h — the writer and reader tpm2*.c build commands and
 * take responses apart with (TPM 2.0 Part 2 §4: big-endian integers, a
 * TPM2B is a u16 size and that many bytes). The writer never writes past
 * its buffer and the reader never reads past its bytes: each records the
 * failure (over / the first field that did not fit) and callers check once.
 * Private to drivers/tpm2*.c.
 */
#ifndef LLMK_TPM2_MARSHAL_H
#define LLMK_TPM2_MARSHAL_H

#include "tpm2.h"

struct wr {
	uint8_t *b;
	size_t n, cap;
	bool over;
};

static inline void w_bytes(struct wr *w, const void *p, size_t n)
{
	if (w->over || n > w->cap - w->n) {
		w->over = true;
		return;
	}
	if (n)
		memcpy(w->b + w->n, p, n);
	w->n += n;
}

static inline void w_u8(struct wr *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

static inline void w_u16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	w_bytes(w, b, 2);
}

static inline void w_u32(struct wr *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	w_bytes(w, b, 4);
}

/* A TPM2B: u16 size, then the bytes. */
static inline void w_2b(struct wr *w, const void *p, size_t n)
{
	if (n > 0xffff) {
		w->over = true;
		return;
	}
	w_u16(w, (uint16_t)n);
	w_bytes(w, p, n);
}

/* Part 2 §10.9.7 TPML_PCR_SELECTION with one SHA-256 TPMS_PCR_SELECTION
 * (§10.6.2: sizeofSelect 3 covers PCRs 0-23, bit i of byte i/8). */
static inline void w_pcr_sel(struct wr *w, uint32_t mask)
{
	w_u32(w, 1);
	w_u16(w, TPM2_ALG_SHA256);
	w_u8(w, 3);
	w_u8(w, (uint8_t)mask);
	w_u8(w, (uint8_t)(mask >> 8));
	w_u8(w, (uint8_t)(mask >> 16));
}

struct rd {
	const uint8_t *b;
	size_t n, off;
	const char *field;  /* what is being read now */
	const char *failed; /* the first field that did not fit */
};

static inline bool r_take(struct rd *r, size_t k, const uint8_t **p)
{
	if (r->failed || k > r->n - r->off) {
		if (!r->failed)
			r->failed = r->field;
		*p = NULL;
		return false;
	}
	*p = r->b + r->off;
	r->off += k;
	return true;
}

static inline uint8_t r_u8(struct rd *r)
{
	const uint8_t *p;
	return r_take(r, 1, &p) ? p[0] : 0;
}

static inline uint16_t r_u16(struct rd *r)
{
	const uint8_t *p;
	return r_take(r, 2, &p) ? (uint16_t)(p[0] << 8 | p[1]) : 0;
}

static inline uint32_t r_u32(struct rd *r)
{
	const uint8_t *p;
	return r_take(r, 4, &p) ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
					  (uint32_t)p[2] << 8 | p[3]
				: 0;
}

/* A TPM2B's contents (NULL, *len 0 if it does not fit). */
static inline const uint8_t *r_2b(struct rd *r, uint16_t *len)
{
	const uint8_t *p;
	uint16_t n = r_u16(r);
	if (!r_take(r, n, &p)) {
		*len = 0;
		return NULL;
	}
	*len = n;
	return p;
}

#endif
