/*
 * tests/unit/gguf_edit.c — rewrite a GGUF with edits (gguf_edit.h).
 *
 * Writes ggml docs/gguf.md's layout: header, metadata key/values, tensor
 * infos, padding to the alignment, tensor data (each tensor at the next
 * multiple of the alignment, the first after ed->lead bytes).
 */
#include "gguf_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "../../llm/gguf.h"

struct out {
	FILE *f;
	uint64_t n;
};

static void put(struct out *o, const void *p, size_t n)
{
	fwrite(p, 1, n, o->f);
	o->n += n;
}

static void put_u32(struct out *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(struct out *o, uint64_t v) { put(o, &v, 8); }

static void put_zeros(struct out *o, uint64_t n)
{
	static const uint8_t z[256];

	while (n) {
		size_t k = n < sizeof z ? (size_t)n : sizeof z;
		put(o, z, k);
		n -= k;
	}
}

static void put_str(struct out *o, const char *s, uint64_t len)
{
	put_u64(o, len);
	put(o, s, (size_t)len);
}

static size_t scalar_size(uint32_t t)
{
	static const uint8_t sz[GGUF_VT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
	return t < GGUF_VT_COUNT ? sz[t] : 0;
}

static void put_array(struct out *o, const struct gguf_array *a)
{
	put_u32(o, a->type);
	put_u64(o, a->n);
	if (a->type == GGUF_VT_STRING) {
		const struct gguf_str *s = a->data;
		for (uint64_t i = 0; i < a->n; i++)
			put_str(o, s[i].s, s[i].len);
	} else if (a->type == GGUF_VT_ARRAY) {
		const struct gguf_array *sub = a->data;
		for (uint64_t i = 0; i < a->n; i++)
			put_array(o, &sub[i]);
	} else {
		put(o, a->data, (size_t)(a->n * scalar_size(a->type)));
	}
}

/* A parsed value back into its encoding (gguf.md gguf_metadata_value_t). */
static void put_value(struct out *o, const struct gguf_value *v)
{
	uint8_t b[8];

	put_u32(o, v->type);
	switch (v->type) {
	case GGUF_VT_STRING:
		put_str(o, v->v.str.s, v->v.str.len);
		return;
	case GGUF_VT_ARRAY:
		put_array(o, &v->v.arr);
		return;
	case GGUF_VT_FLOAT32: {
		float f = (float)v->v.f;
		put(o, &f, 4);
		return;
	}
	case GGUF_VT_FLOAT64:
		put(o, &v->v.f, 8);
		return;
	case GGUF_VT_BOOL:
		b[0] = v->v.b;
		put(o, b, 1);
		return;
	default: /* integers: the low bytes, little-endian */
		memcpy(b, &v->v.u, 8);
		put(o, b, scalar_size(v->type));
	}
}

static void put_edit(struct out *o, const struct gedit_kv *k)
{
	struct gguf_value v = {.type = k->type};

	if (k->type == GGUF_VT_STRING) {
		v.v.str.s = k->s;
		v.v.str.len = strlen(k->s);
	} else if (k->type == GGUF_VT_FLOAT32 || k->type == GGUF_VT_FLOAT64) {
		v.v.f = k->f;
	} else {
		v.v.u = k->u;
	}
	put_str(o, k->key, strlen(k->key));
	put_value(o, &v);
}

static const struct gedit_kv *kv_edit(const struct gedit *ed, const struct gguf_str *key)
{
	for (size_t i = 0; i < ed->n_kv; i++)
		if (strlen(ed->kv[i].key) == key->len && !memcmp(ed->kv[i].key, key->s, key->len))
			return &ed->kv[i];
	return NULL;
}

static bool in_file(const struct gguf_file *g, const char *key)
{
	return gguf_find(g, key) != NULL;
}

/* The metadata: edited keys replaced or dropped, new ones appended, and
 * general.alignment when ed sets one. */
static void put_metadata(struct out *o, const struct gguf_file *g, const struct gedit *ed)
{
	struct gedit_kv align = {"general.alignment", GGUF_VT_UINT32, ed->alignment, 0, NULL};
	struct gedit ed2 = *ed;
	struct gedit_kv all[64];
	uint64_t n = 0;

	if (ed->n_kv + 1 > sizeof all / sizeof all[0])
		return;
	if (ed->n_kv)
		memcpy(all, ed->kv, ed->n_kv * sizeof *all);
	ed2.kv = all;
	if (ed->alignment)
		all[ed2.n_kv++] = align;
	for (uint64_t i = 0; i < g->n_kv; i++) {
		const struct gedit_kv *k = kv_edit(&ed2, &g->kv[i].key);
		n += !k || k->type != GEDIT_REMOVE;
	}
	for (size_t i = 0; i < ed2.n_kv; i++)
		n += !in_file(g, all[i].key) && all[i].type != GEDIT_REMOVE;
	put_u64(o, n);
	for (uint64_t i = 0; i < g->n_kv; i++) {
		const struct gedit_kv *k = kv_edit(&ed2, &g->kv[i].key);
		if (k && k->type == GEDIT_REMOVE)
			continue;
		if (k) {
			put_edit(o, k);
		} else {
			put_str(o, g->kv[i].key.s, g->kv[i].key.len);
			put_value(o, &g->kv[i].val);
		}
	}
	for (size_t i = 0; i < ed2.n_kv; i++)
		if (!in_file(g, all[i].key) && all[i].type != GEDIT_REMOVE)
			put_edit(o, &all[i]);
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

/* The tensors written: the source's, then the edits that name none of them. */
struct wt {
	const char *name;
	uint32_t type, n_dims;
	uint64_t ne[4];
	const uint8_t *data;
	uint64_t have; /* bytes of data */
};

static uint64_t bytes_of(const struct wt *t)
{
	uint32_t blck, bytes;
	uint64_t n = 1;

	for (uint32_t d = 0; d < 4; d++)
		n *= t->ne[d];
	if (gguf_type_geometry(t->type, &blck, &bytes))
		return 0;
	return n / blck * bytes;
}

static void set_shape(struct wt *w, const struct gedit_tensor *e)
{
	w->n_dims = e->n_dims;
	for (uint32_t d = 0; d < 4; d++)
		w->ne[d] = d < e->n_dims ? e->ne[d] : 1;
}

static size_t tensor_list(const struct gguf_file *g, const uint8_t *file, const struct gedit *ed,
			  struct wt *out)
{
	size_t n = 0;

	for (uint64_t i = 0; i < g->n_tensors; i++, n++) {
		const struct gguf_tensor *t = &g->tensors[i];
		out[n] = (struct wt){t->name, t->type, t->n_dims, {t->ne[0], t->ne[1], t->ne[2], t->ne[3]},
				     file + t->offset, t->size};
		for (size_t k = 0; k < ed->n_t; k++)
			if (!strcmp(ed->t[k].name, t->name))
				set_shape(&out[n], &ed->t[k]);
	}
	for (size_t k = 0; k < ed->n_t; k++)
		if (!gguf_find_tensor(g, ed->t[k].name)) {
			out[n] = (struct wt){ed->t[k].name, ed->t[k].type, 0, {0}, ed->t[k].data, 0};
			set_shape(&out[n], &ed->t[k]);
			out[n].have = bytes_of(&out[n]);
			n++;
		}
	return n;
}

int gedit_rewrite(const char *src, const char *dst, const struct gedit *ed)
{
	struct llm_membuf mb;
	struct llm_reader rd;
	struct llm_mem mem;
	struct gguf_file g;
	struct out o = {0};
	struct wt *ts;
	char err[256];
	size_t len, n;
	uint8_t *file = test_read_file(src, &len);
	uint64_t a, off, base;

	if (!file) {
		fprintf(stderr, "  gedit: cannot read %s\n", src);
		return -1;
	}
	llm_mem_init(&mem, 0);
	llm_reader_mem(&rd, &mb, file, len);
	if (gguf_open(&g, &rd, &mem, err, sizeof err)) {
		fprintf(stderr, "  gedit: %s: %s\n", src, err);
		free(file);
		return -1;
	}
	ts = calloc(g.n_tensors + ed->n_t, sizeof *ts);
	if (!ts || !(o.f = fopen(dst, "wb"))) {
		fprintf(stderr, "  gedit: cannot write %s\n", dst);
		free(ts);
		gguf_close(&g);
		free(file);
		return -1;
	}
	n = tensor_list(&g, file, ed, ts);
	a = ed->alignment ? ed->alignment : g.alignment;
	put(&o, "GGUF", 4);
	put_u32(&o, 3);
	put_u64(&o, n);
	put_metadata(&o, &g, ed);
	off = ed->lead;
	for (size_t i = 0; i < n; i++) {
		off = align_up(off, a);
		put_str(&o, ts[i].name, strlen(ts[i].name));
		put_u32(&o, ts[i].n_dims);
		for (uint32_t d = 0; d < ts[i].n_dims; d++)
			put_u64(&o, ts[i].ne[d]);
		put_u32(&o, ts[i].type);
		put_u64(&o, off);
		off += bytes_of(&ts[i]);
	}
	put_zeros(&o, align_up(o.n, a) - o.n);
	base = o.n;
	off = ed->lead;
	for (size_t i = 0; i < n; i++) {
		uint64_t size = bytes_of(&ts[i]), keep = size < ts[i].have ? size : ts[i].have;
		off = align_up(off, a);
		put_zeros(&o, base + off - o.n);
		put(&o, ts[i].data, (size_t)keep);
		put_zeros(&o, size - keep);
		off += size;
	}
	fclose(o.f);
	free(ts);
	gguf_close(&g);
	free(file);
	return 0;
}
