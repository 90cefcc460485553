/*
 * llm/gguf.c — GGUF v2/v3 reader (llm/gguf.h).
 *
 * Format: ggml docs/gguf.md. The file is read front to back through a small
 * buffer (vocabularies can be several MB of metadata); nothing is trusted:
 * every length is compared with the bytes left before anything is allocated
 * or read, so a hostile file costs at most a few times its own size in arena
 * memory and fails with one line naming the field and value.
 */
#include "gguf.h"

#include "quant.h"

#include <float.h>

#define GGUF_MAGIC 0x46554747u /* "GGUF" read as a little-endian u32 */
#define GGUF_DEFAULT_ALIGNMENT 32u
#define GGUF_MAX_NEST 8        /* arrays of arrays deeper than this are refused */
#define GGUF_BUF_SIZE (64u << 10)

struct gguf_parse {
	const struct llm_reader *r;
	struct gguf_file *g;
	struct llm_mem *mem;
	uint8_t *buf;
	size_t buf_cap;
	uint64_t buf_off;  /* file offset of buf[0] */
	size_t buf_len;    /* valid bytes in buf */
	uint64_t pos;      /* next file offset to parse */
	char ctx[96];      /* "key 'general.name'", "tensor 3 'output.weight'" */
	char *err;
	size_t errlen;
};

/* ---- ggml type geometry: llm/quant_blocks.h's GGML_TYPES, by id (zero
 * marks removed / unknown enum values) ---- */
#define GEOM_ROW(T, id, b, n) [id] = {b, n, #T},
static const struct { uint16_t blck, bytes; const char *name; } ggml_geom[GGML_TYPE_COUNT] = {
	GGML_TYPES(GEOM_ROW)
};

int gguf_type_geometry(uint32_t t, uint32_t *blck, uint32_t *bytes)
{
	if (t >= GGML_TYPE_COUNT || !ggml_geom[t].blck)
		return -LLMK_ENOENT;
	*blck = ggml_geom[t].blck;
	*bytes = ggml_geom[t].bytes;
	return 0;
}

const char *gguf_type_name(uint32_t t)
{
	if (t >= GGML_TYPE_COUNT || !ggml_geom[t].blck)
		return "?";
	return ggml_geom[t].name;
}

/* ---- metadata value types (gguf.md gguf_metadata_value_type) ---- */
static const char *const vt_names[GGUF_VT_COUNT] = {
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
};
/* Bytes of a scalar; for strings and arrays the smallest encoding
 * (u64 length; u32 type + u64 count) so counts can be checked up front. */
static const uint8_t vt_min_size[GGUF_VT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 8, 12, 8, 8, 8};

const char *gguf_vtype_name(uint32_t t)
{
	return t < GGUF_VT_COUNT ? vt_names[t] : "?";
}

/* ---- errors ---- */

static int perr(struct gguf_parse *p, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct gguf_parse *p, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->err || !p->errlen)
		return code;
	n = plat_snprintf(p->err, p->errlen, "gguf: %s%s", p->ctx, p->ctx[0] ? ": " : "");
	if (n < 0 || (size_t)n >= p->errlen)
		return code;
	va_start(ap, fmt);
	plat_vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

void gguf_safe_name(char *dst, size_t cap, const char *s, uint64_t len)
{
	size_t n = 0;

	for (uint64_t i = 0; i < len && n + 4 < cap; i++) {
		char c = s[i];
		dst[n++] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	if (len > n && n + 4 <= cap) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = 0;
}

static void set_ctx(struct gguf_parse *p, const char *what, const struct gguf_str *name)
{
	char nm[64];

	gguf_safe_name(nm, sizeof nm, name->s, name->len);
	plat_snprintf(p->ctx, sizeof p->ctx, "%s '%s'", what, nm);
}

/* The arena says only NULL: tell the budget apart from the machine. */
static int alloc_err(struct gguf_parse *p, uint64_t size, const char *what)
{
	const struct llm_mem *m = p->mem;
	uint64_t need = size > p->g->arena.chunk_size ? size : p->g->arena.chunk_size;

	if (m->budget && (need > m->budget || m->used > m->budget - need))
		return perr(p, -LLMK_EBUDGET,
			    "%s of %llu bytes exceeds the memory budget (%llu of %llu bytes in use)",
			    what, (unsigned long long)size, (unsigned long long)m->used,
			    (unsigned long long)m->budget);
	return perr(p, -LLMK_ENOMEM, "out of memory for %s of %llu bytes", what,
		    (unsigned long long)size);
}

/* ---- buffered reading ---- */

static uint64_t left(const struct gguf_parse *p)
{
	return p->pos <= p->r->size ? p->r->size - p->pos : 0;
}

static int rd(struct gguf_parse *p, void *dst, uint64_t n, const char *what)
{
	int rc;

	if (n > left(p))
		return perr(p, -LLMK_EFORMAT,
			    "truncated: %s at offset %llu needs %llu bytes, file has %llu",
			    what, (unsigned long long)p->pos, (unsigned long long)n,
			    (unsigned long long)p->r->size);
	if (n >= p->buf_cap) {
		rc = p->r->read(p->r->ctx, p->pos, dst, (size_t)n);
		if (rc < 0)
			return perr(p, rc, "read error at offset %llu (%s)",
				    (unsigned long long)p->pos, plat_strerror(rc));
		p->pos += n;
		return 0;
	}
	if (p->pos < p->buf_off || p->pos + n > p->buf_off + p->buf_len) {
		uint64_t len = left(p) < p->buf_cap ? left(p) : p->buf_cap;

		rc = p->r->read(p->r->ctx, p->pos, p->buf, (size_t)len);
		if (rc < 0)
			return perr(p, rc, "read error at offset %llu (%s)",
				    (unsigned long long)p->pos, plat_strerror(rc));
		p->buf_off = p->pos;
		p->buf_len = (size_t)len;
	}
	memcpy(dst, p->buf + (p->pos - p->buf_off), (size_t)n);
	p->pos += n;
	return 0;
}

static int rd_u32(struct gguf_parse *p, uint32_t *v, const char *what)
{
	return rd(p, v, 4, what); /* GGUF is little-endian, like every target */
}

static int rd_u64(struct gguf_parse *p, uint64_t *v, const char *what)
{
	return rd(p, v, 8, what);
}

/* gguf.md gguf_string_t: u64 len, then len bytes (not NUL-terminated). */
static int rd_str(struct gguf_parse *p, struct gguf_str *out, const char *what)
{
	uint64_t len;
	char *s;
	int rc;

	if ((rc = rd_u64(p, &len, what)) < 0)
		return rc;
	if (len > left(p))
		return perr(p, -LLMK_EFORMAT,
			    "%s length %llu at offset %llu runs past end of file (%llu bytes)",
			    what, (unsigned long long)len, (unsigned long long)(p->pos - 8),
			    (unsigned long long)p->r->size);
	s = llm_arena_alloc(&p->g->arena, (size_t)len + 1, 1);
	if (!s)
		return alloc_err(p, len + 1, what);
	if ((rc = rd(p, s, len, what)) < 0)
		return rc;
	out->len = len;
	out->s = s;
	return 0;
}

/* ---- metadata values ---- */

static int parse_array(struct gguf_parse *p, struct gguf_array *a, int depth);

static int parse_scalar(struct gguf_parse *p, uint32_t type, struct gguf_value *v)
{
	uint8_t b[8] = {0};
	uint64_t u;
	int rc;

	if ((rc = rd(p, b, vt_min_size[type], "value")) < 0)
		return rc;
	memcpy(&u, b, 8);
	switch (type) {
	case GGUF_VT_UINT8: case GGUF_VT_UINT16: case GGUF_VT_UINT32: case GGUF_VT_UINT64:
		v->v.u = u;
		break;
	case GGUF_VT_INT8: v->v.i = (int8_t)u; break;
	case GGUF_VT_INT16: v->v.i = (int16_t)u; break;
	case GGUF_VT_INT32: v->v.i = (int32_t)u; break;
	case GGUF_VT_INT64: v->v.i = (int64_t)u; break;
	case GGUF_VT_FLOAT32: {
		float f;
		memcpy(&f, b, 4);
		v->v.f = f;
		break;
	}
	case GGUF_VT_FLOAT64: memcpy(&v->v.f, b, 8); break;
	case GGUF_VT_BOOL:
		if (b[0] > 1)
			return perr(p, -LLMK_EFORMAT, "bool value %u at offset %llu (expected 0 or 1)",
				    b[0], (unsigned long long)(p->pos - 1));
		v->v.b = b[0];
		break;
	}
	return 0;
}

static int parse_value(struct gguf_parse *p, uint32_t type, struct gguf_value *v)
{
	if (type >= GGUF_VT_COUNT)
		return perr(p, -LLMK_EFORMAT, "unknown value type %u at offset %llu", type,
			    (unsigned long long)(p->pos - 4));
	v->type = type;
	if (type == GGUF_VT_STRING)
		return rd_str(p, &v->v.str, "string value");
	if (type == GGUF_VT_ARRAY)
		return parse_array(p, &v->v.arr, 1);
	return parse_scalar(p, type, v);
}

/* Array elements: numbers packed as in the file; strings and nested arrays
 * as structs, one per element. */
static int parse_array_elems(struct gguf_parse *p, struct gguf_array *a, int depth)
{
	size_t esz = a->type == GGUF_VT_STRING ? sizeof(struct gguf_str)
		   : a->type == GGUF_VT_ARRAY ? sizeof(struct gguf_array)
		   : vt_min_size[a->type];
	void *data;
	int rc = 0;

	data = llm_arena_alloc(&p->g->arena, (size_t)a->n * esz, 8);
	if (!data)
		return alloc_err(p, a->n * esz, "array");
	a->data = data;
	if (a->type == GGUF_VT_STRING) {
		struct gguf_str *s = data;
		for (uint64_t i = 0; i < a->n && rc == 0; i++)
			rc = rd_str(p, &s[i], "array string");
	} else if (a->type == GGUF_VT_ARRAY) {
		struct gguf_array *sub = data;
		for (uint64_t i = 0; i < a->n && rc == 0; i++)
			rc = parse_array(p, &sub[i], depth + 1);
	} else {
		rc = rd(p, data, a->n * esz, "array data");
	}
	return rc;
}

/* gguf.md: an array is u32 element type, u64 count, then the elements. */
static int parse_array(struct gguf_parse *p, struct gguf_array *a, int depth)
{
	uint64_t min;
	int rc;

	if (depth > GGUF_MAX_NEST)
		return perr(p, -LLMK_EFORMAT, "arrays nested deeper than %d at offset %llu",
			    GGUF_MAX_NEST, (unsigned long long)p->pos);
	if ((rc = rd_u32(p, &a->type, "array type")) < 0 ||
	    (rc = rd_u64(p, &a->n, "array count")) < 0)
		return rc;
	if (a->type >= GGUF_VT_COUNT)
		return perr(p, -LLMK_EFORMAT, "unknown array element type %u at offset %llu",
			    a->type, (unsigned long long)(p->pos - 12));
	min = vt_min_size[a->type];
	if (a->n > left(p) / min)
		return perr(p, -LLMK_EFORMAT,
			    "array of %llu %s at offset %llu needs at least %llu bytes, %llu left",
			    (unsigned long long)a->n, vt_names[a->type],
			    (unsigned long long)(p->pos - 12),
			    a->n > UINT64_MAX / min ? (unsigned long long)UINT64_MAX
						    : (unsigned long long)(a->n * min),
			    (unsigned long long)left(p));
	return parse_array_elems(p, a, depth);
}

static int parse_kv(struct gguf_parse *p, uint64_t i, struct gguf_kv *kv)
{
	uint32_t type;
	int rc;

	plat_snprintf(p->ctx, sizeof p->ctx, "metadata %llu", (unsigned long long)i);
	if ((rc = rd_str(p, &kv->key, "key")) < 0)
		return rc;
	set_ctx(p, "key", &kv->key);
	if ((rc = rd_u32(p, &type, "value type")) < 0)
		return rc;
	return parse_value(p, type, &kv->val);
}

/* ---- header ---- */

static int parse_header(struct gguf_parse *p)
{
	struct gguf_file *g = p->g;
	uint32_t magic;
	int rc;

	plat_snprintf(p->ctx, sizeof p->ctx, "header");
	if ((rc = rd_u32(p, &magic, "magic")) < 0)
		return rc;
	if (magic != GGUF_MAGIC)
		return perr(p, -LLMK_EFORMAT, "bad magic 0x%08x (expected 0x%08x \"GGUF\")",
			    magic, GGUF_MAGIC);
	if ((rc = rd_u32(p, &g->version, "version")) < 0)
		return rc;
	if (g->version != 2 && g->version != 3) {
		/* v3 allows big-endian files; their version reads byte-swapped here. */
		if ((g->version & 0xffff) == 0 && g->version)
			return perr(p, -LLMK_ENOTSUP, "version 0x%08x: big-endian file (only little-endian is supported)",
				    g->version);
		return perr(p, -LLMK_ENOTSUP, "version %u (supported: 2, 3)", g->version);
	}
	if ((rc = rd_u64(p, &g->n_tensors, "tensor count")) < 0 ||
	    (rc = rd_u64(p, &g->n_kv, "metadata count")) < 0)
		return rc;
	/* Smallest metadata entry: u64 key length + u32 type + 1 byte of value;
	 * smallest tensor info: u64 name length + u32 n_dims + u32 type + u64 offset. */
	if (g->n_kv > left(p) / 13)
		return perr(p, -LLMK_EFORMAT, "metadata count %llu cannot fit in %llu bytes",
			    (unsigned long long)g->n_kv, (unsigned long long)left(p));
	if (g->n_tensors > left(p) / 24)
		return perr(p, -LLMK_EFORMAT, "tensor count %llu cannot fit in %llu bytes",
			    (unsigned long long)g->n_tensors, (unsigned long long)left(p));
	return 0;
}

static int parse_alignment(struct gguf_parse *p)
{
	const struct gguf_kv *kv = gguf_find(p->g, "general.alignment");
	uint32_t a;

	p->ctx[0] = 0;
	p->g->alignment = GGUF_DEFAULT_ALIGNMENT;
	if (!kv)
		return 0;
	if (gguf_get_u32(p->g, "general.alignment", &a) < 0)
		return perr(p, -LLMK_EFORMAT, "general.alignment has type %s (expected uint32)",
			    gguf_vtype_name(kv->val.type));
	if (a == 0 || (a & (a - 1)))
		return perr(p, -LLMK_EFORMAT, "general.alignment = %u is not a power of two", a);
	p->g->alignment = a;
	return 0;
}

/* ---- tensor infos (gguf.md gguf_tensor_info_t) ---- */

static int parse_dims(struct gguf_parse *p, struct gguf_tensor *t)
{
	uint64_t n = 1;
	int rc;

	if ((rc = rd_u32(p, &t->n_dims, "n_dims")) < 0)
		return rc;
	if (t->n_dims > GGUF_MAX_DIMS)
		return perr(p, -LLMK_EFORMAT, "%u dimensions (at most %d)", t->n_dims,
			    GGUF_MAX_DIMS);
	for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++)
		t->ne[d] = 1;
	for (uint32_t d = 0; d < t->n_dims; d++) {
		if ((rc = rd_u64(p, &t->ne[d], "dimension")) < 0)
			return rc;
		/* ggml keeps ne as int64_t: the product must stay below 2^63. */
		if (t->ne[d] > INT64_MAX || (t->ne[d] && n > (uint64_t)INT64_MAX / t->ne[d]))
			return perr(p, -LLMK_EFORMAT, "ne[%u] = %llu makes the element count overflow",
				    d, (unsigned long long)t->ne[d]);
		n *= t->ne[d];
	}
	t->n_elems = n;
	return 0;
}

static int parse_type(struct gguf_parse *p, struct gguf_tensor *t)
{
	uint32_t blck, bytes;
	int rc;

	if ((rc = rd_u32(p, &t->type, "type")) < 0)
		return rc;
	if (gguf_type_geometry(t->type, &blck, &bytes) < 0)
		return perr(p, -LLMK_EFORMAT, "unknown type %u", t->type);
	if (t->ne[0] % blck)
		return perr(p, -LLMK_EFORMAT,
			    "row length ne[0] = %llu is not a multiple of the %s block size %u",
			    (unsigned long long)t->ne[0], gguf_type_name(t->type), blck);
	/* n_elems < 2^63 (parse_dims), but a type's bytes per element reach 8
	 * (F64, I64): F32 at 2^62 elements would wrap to 0 bytes and pass every
	 * bounds check after this one. */
	if (t->n_elems / blck > UINT64_MAX / bytes)
		return perr(p, -LLMK_EFORMAT, "%llu elements of %s take more than 2^64 bytes",
			    (unsigned long long)t->n_elems, gguf_type_name(t->type));
	t->size = t->n_elems / blck * bytes;
	return 0;
}

static int parse_tensor_info(struct gguf_parse *p, uint64_t i, struct gguf_tensor *t)
{
	struct gguf_str name;
	int rc;

	plat_snprintf(p->ctx, sizeof p->ctx, "tensor %llu", (unsigned long long)i);
	if ((rc = rd_str(p, &name, "name")) < 0)
		return rc;
	t->name = name.s;
	set_ctx(p, "tensor", &name);
	if ((rc = parse_dims(p, t)) < 0 || (rc = parse_type(p, t)) < 0)
		return rc;
	if ((rc = rd_u64(p, &t->offset, "offset")) < 0)
		return rc;
	if (t->offset % p->g->alignment)
		return perr(p, -LLMK_EFORMAT, "offset 0x%llx is not a multiple of the alignment %u",
			    (unsigned long long)t->offset, p->g->alignment);
	return 0;
}

/* ---- whole-table checks: sort (key, index) pairs, then look at neighbours ---- */

struct kidx {
	uint64_t key;
	uint64_t idx;
};

static void sift_down(struct kidx *a, uint64_t root, uint64_t n)
{
	for (;;) {
		uint64_t c = 2 * root + 1;
		struct kidx t;

		if (c >= n)
			return;
		if (c + 1 < n && a[c + 1].key > a[c].key)
			c++;
		if (a[root].key >= a[c].key)
			return;
		t = a[root];
		a[root] = a[c];
		a[c] = t;
		root = c;
	}
}

/* Heap sort: O(n log n) whatever order a hostile file uses, no recursion. */
static void sort_kidx(struct kidx *a, uint64_t n)
{
	for (uint64_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (uint64_t end = n; end > 1; end--) {
		struct kidx t = a[0];
		a[0] = a[end - 1];
		a[end - 1] = t;
		sift_down(a, 0, end - 1);
	}
}

static uint64_t hash_str(const char *s, uint64_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (uint64_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static int check_tensor_bounds(struct gguf_parse *p, struct gguf_tensor *t)
{
	uint64_t size = p->r->size;
	char nm[64];

	gguf_safe_name(nm, sizeof nm, t->name, strlen(t->name));
	if (t->offset > size - p->g->data_offset)
		return perr(p, -LLMK_EFORMAT,
			    "tensor '%s' starts past end of file (offset 0x%llx + data 0x%llx > %llu)",
			    nm, (unsigned long long)t->offset,
			    (unsigned long long)p->g->data_offset, (unsigned long long)size);
	t->offset += p->g->data_offset;
	if (t->size > size - t->offset)
		return perr(p, -LLMK_EFORMAT,
			    "tensor '%s' extends past end of file (offset 0x%llx + %llu > %llu)",
			    nm, (unsigned long long)t->offset, (unsigned long long)t->size,
			    (unsigned long long)size);
	if (t->offset + t->size > p->g->extent)
		p->g->extent = t->offset + t->size;
	return 0;
}

static int check_overlaps(struct gguf_parse *p, struct kidx *k)
{
	struct gguf_tensor *ts = p->g->tensors;
	char a[64], b[64];

	for (uint64_t i = 0; i < p->g->n_tensors; i++)
		k[i] = (struct kidx){ts[i].offset, i};
	sort_kidx(k, p->g->n_tensors);
	/* each tensor against the last one with bytes before it: an empty
	 * tensor holds none and overlaps nothing, wherever the sort put it
	 * among the tensors at its offset */
	const struct gguf_tensor *x = NULL;
	for (uint64_t i = 0; i < p->g->n_tensors; i++) {
		const struct gguf_tensor *y = &ts[k[i].idx];
		if (!y->size)
			continue;
		if (!x || x->offset + x->size <= y->offset) {
			x = y;
			continue;
		}
		gguf_safe_name(a, sizeof a, x->name, strlen(x->name));
		gguf_safe_name(b, sizeof b, y->name, strlen(y->name));
		return perr(p, -LLMK_EFORMAT,
			    "tensor '%s' (offset 0x%llx, %llu bytes) overlaps tensor '%s' (offset 0x%llx)",
			    a, (unsigned long long)x->offset, (unsigned long long)x->size, b,
			    (unsigned long long)y->offset);
	}
	return 0;
}

static bool str_eq(const struct gguf_str *a, const struct gguf_str *b)
{
	return a->len == b->len && memcmp(a->s, b->s, (size_t)a->len) == 0;
}

/* Duplicate keys or tensor names make lookups ambiguous; ggml refuses them too. */
static int check_dups(struct gguf_parse *p, struct kidx *k, uint64_t n,
		      const struct gguf_str *(*get)(struct gguf_file *, uint64_t, struct gguf_str *),
		      const char *what)
{
	struct gguf_str sa, sb;
	char nm[64];

	for (uint64_t i = 0; i < n; i++) {
		const struct gguf_str *s = get(p->g, i, &sa);
		k[i] = (struct kidx){hash_str(s->s, s->len), i};
	}
	sort_kidx(k, n);
	for (uint64_t i = 1; i < n; i++) {
		if (k[i].key != k[i - 1].key)
			continue;
		const struct gguf_str *x = get(p->g, k[i - 1].idx, &sa);
		const struct gguf_str *y = get(p->g, k[i].idx, &sb);
		if (!str_eq(x, y))
			continue;
		gguf_safe_name(nm, sizeof nm, x->s, x->len);
		return perr(p, -LLMK_EFORMAT, "duplicate %s '%s'", what, nm);
	}
	return 0;
}

static const struct gguf_str *kv_key(struct gguf_file *g, uint64_t i, struct gguf_str *tmp)
{
	return &g->kv[i].key;
}

static const struct gguf_str *tensor_key(struct gguf_file *g, uint64_t i, struct gguf_str *tmp)
{
	tmp->s = g->tensors[i].name;
	tmp->len = strlen(tmp->s);
	return tmp;
}

static int check_tables(struct gguf_parse *p)
{
	struct gguf_file *g = p->g;
	uint64_t n = g->n_kv > g->n_tensors ? g->n_kv : g->n_tensors;
	size_t bytes = (size_t)(n ? n : 1) * sizeof(struct kidx);
	struct kidx *k;
	int rc = 0;

	p->ctx[0] = 0;
	k = llm_mem_alloc(p->mem, bytes, &rc);
	if (!k)
		return perr(p, rc, "out of memory checking %llu entries", (unsigned long long)n);
	rc = check_dups(p, k, g->n_kv, kv_key, "key");
	if (rc == 0)
		rc = check_dups(p, k, g->n_tensors, tensor_key, "tensor name");
	for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++)
		rc = check_tensor_bounds(p, &g->tensors[i]);
	if (rc == 0)
		rc = check_overlaps(p, k);
	llm_mem_free(p->mem, k, bytes);
	return rc;
}

/* ---- open / close ---- */

static int parse_tables(struct gguf_parse *p)
{
	struct gguf_file *g = p->g;
	int rc;

	if ((rc = parse_header(p)) < 0)
		return rc;
	g->kv = llm_arena_alloc(&g->arena, (size_t)g->n_kv * sizeof *g->kv, 8);
	g->tensors = llm_arena_alloc(&g->arena, (size_t)g->n_tensors * sizeof *g->tensors, 8);
	if (!g->kv || !g->tensors)
		return alloc_err(p, g->n_kv * sizeof *g->kv + g->n_tensors * sizeof *g->tensors,
				 "metadata and tensor tables");
	for (uint64_t i = 0; i < g->n_kv; i++)
		if ((rc = parse_kv(p, i, &g->kv[i])) < 0)
			return rc;
	if ((rc = parse_alignment(p)) < 0)
		return rc;
	for (uint64_t i = 0; i < g->n_tensors; i++)
		if ((rc = parse_tensor_info(p, i, &g->tensors[i])) < 0)
			return rc;
	p->ctx[0] = 0;
	/* gguf.md: the data section starts at the next multiple of the alignment. */
	g->data_offset = (p->pos + g->alignment - 1) / g->alignment * g->alignment;
	g->extent = p->pos;
	if (g->n_tensors && g->data_offset > p->r->size)
		return perr(p, -LLMK_EFORMAT, "data section at offset %llu starts past end of file (%llu bytes)",
			    (unsigned long long)g->data_offset, (unsigned long long)p->r->size);
	return check_tables(p);
}

int gguf_open(struct gguf_file *g, const struct llm_reader *r, struct llm_mem *mem,
	      char *err, size_t errlen)
{
	struct gguf_parse p = {.r = r, .g = g, .mem = mem, .err = err, .errlen = errlen};
	int rc;

	memset(g, 0, sizeof *g);
	llm_arena_init(&g->arena, mem);
	/* Small files (tests, fuzzing) need neither a big buffer nor big chunks. */
	if (r->size / 2 < g->arena.chunk_size)
		g->arena.chunk_size = r->size / 2 > 16384 ? (size_t)r->size / 2 : 16384;
	p.buf_cap = r->size < GGUF_BUF_SIZE ? (size_t)r->size + 1 : GGUF_BUF_SIZE;
	if (err && errlen)
		err[0] = 0;
	p.buf = llm_mem_alloc(mem, p.buf_cap, &rc);
	if (!p.buf)
		return perr(&p, rc, "cannot allocate the %zu-byte read buffer", p.buf_cap);
	rc = parse_tables(&p);
	llm_mem_free(mem, p.buf, p.buf_cap);
	if (rc < 0)
		gguf_close(g);
	return rc;
}

void gguf_close(struct gguf_file *g)
{
	llm_arena_free(&g->arena);
	g->kv = NULL;
	g->tensors = NULL;
	g->n_kv = 0;
	g->n_tensors = 0;
}

/* ---- lookups ---- */

const struct gguf_kv *gguf_find(const struct gguf_file *g, const char *key)
{
	size_t n = strlen(key);

	for (uint64_t i = 0; i < g->n_kv; i++)
		if (g->kv[i].key.len == n && memcmp(g->kv[i].key.s, key, n) == 0)
			return &g->kv[i];
	return NULL;
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *g, const char *name)
{
	for (uint64_t i = 0; i < g->n_tensors; i++)
		if (strcmp(g->tensors[i].name, name) == 0)
			return &g->tensors[i];
	return NULL;
}

static bool vt_unsigned(uint32_t t)
{
	return t == GGUF_VT_UINT8 || t == GGUF_VT_UINT16 || t == GGUF_VT_UINT32 ||
	       t == GGUF_VT_UINT64;
}

static bool vt_signed(uint32_t t)
{
	return t == GGUF_VT_INT8 || t == GGUF_VT_INT16 || t == GGUF_VT_INT32 ||
	       t == GGUF_VT_INT64;
}

int gguf_get_u64(const struct gguf_file *g, const char *key, uint64_t *out)
{
	const struct gguf_kv *kv = gguf_find(g, key);

	if (!kv)
		return -LLMK_ENOENT;
	if (vt_unsigned(kv->val.type)) {
		*out = kv->val.v.u;
		return 0;
	}
	if (vt_signed(kv->val.type) && kv->val.v.i >= 0) {
		*out = (uint64_t)kv->val.v.i;
		return 0;
	}
	return -LLMK_EFORMAT;
}

int gguf_get_u32(const struct gguf_file *g, const char *key, uint32_t *out)
{
	uint64_t v;
	int rc = gguf_get_u64(g, key, &v);

	if (rc < 0)
		return rc;
	if (v > UINT32_MAX)
		return -LLMK_EFORMAT;
	*out = (uint32_t)v;
	return 0;
}

int gguf_get_i64(const struct gguf_file *g, const char *key, int64_t *out)
{
	const struct gguf_kv *kv = gguf_find(g, key);

	if (!kv)
		return -LLMK_ENOENT;
	if (vt_signed(kv->val.type)) {
		*out = kv->val.v.i;
		return 0;
	}
	if (vt_unsigned(kv->val.type) && kv->val.v.u <= INT64_MAX) {
		*out = (int64_t)kv->val.v.u;
		return 0;
	}
	return -LLMK_EFORMAT;
}

int gguf_get_f32(const struct gguf_file *g, const char *key, float *out)
{
	const struct gguf_kv *kv = gguf_find(g, key);
	double d;

	if (!kv)
		return -LLMK_ENOENT;
	if (kv->val.type != GGUF_VT_FLOAT32 && kv->val.type != GGUF_VT_FLOAT64)
		return -LLMK_EFORMAT;
	d = kv->val.v.f;
	/* a float64 past the float range is infinite as a float (C leaves the
	 * plain conversion undefined), so callers' range checks see it */
	*out = d > FLT_MAX ? __builtin_inff() : d < -FLT_MAX ? -__builtin_inff() : (float)d;
	return 0;
}

int gguf_get_bool(const struct gguf_file *g, const char *key, bool *out)
{
	const struct gguf_kv *kv = gguf_find(g, key);

	if (!kv)
		return -LLMK_ENOENT;
	if (kv->val.type != GGUF_VT_BOOL)
		return -LLMK_EFORMAT;
	*out = kv->val.v.b;
	return 0;
}

int gguf_get_str(const struct gguf_file *g, const char *key, const struct gguf_str **out)
{
	const struct gguf_kv *kv = gguf_find(g, key);

	if (!kv)
		return -LLMK_ENOENT;
	if (kv->val.type != GGUF_VT_STRING)
		return -LLMK_EFORMAT;
	*out = &kv->val.v.str;
	return 0;
}

int gguf_get_arr(const struct gguf_file *g, const char *key, const struct gguf_array **out)
{
	const struct gguf_kv *kv = gguf_find(g, key);

	if (!kv)
		return -LLMK_ENOENT;
	if (kv->val.type != GGUF_VT_ARRAY)
		return -LLMK_EFORMAT;
	*out = &kv->val.v.arr;
	return 0;
}
