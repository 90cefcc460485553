/*
 * tests/fuzz/fuzz_load_model.c — the model table, its edit ops and its GGUF
 * writer (fuzz_load_model.h).
 *
 * The writer redoes the layout from the table each time: header, metadata,
 * tensor infos, padding to general.alignment (ggml docs/gguf.md), then each
 * tensor's data at the next aligned offset, its bytes repeating the seed's
 * bytes of that tensor to whatever size its type and dims now give. So a
 * changed dim or type moves every later tensor, as a converter would have
 * written the file, and an offset edit is a lie on top of a true layout.
 */
#include "fuzz_load_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../llm/gguf.h"

/* ---- arena ---- */
struct fl_chunk {
	struct fl_chunk *next;
	size_t used, size;
	_Alignas(16) uint8_t data[];
};

void *fl_alloc(struct fl_arena *a, size_t n)
{
	struct fl_chunk *c = a->head;

	n = (n + 15) & ~(size_t)15;
	if (!c || c->size - c->used < n) {
		size_t size = n > (1u << 16) ? n : (1u << 16);
		c = malloc(sizeof *c + size);
		if (!c)
			abort();
		c->used = 0;
		c->size = size;
		c->next = a->head;
		a->head = c;
	}
	c->used += n;
	return memset(c->data + c->used - n, 0, n);
}

void fl_arena_free(struct fl_arena *a)
{
	while (a->head) {
		struct fl_chunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
}

static struct fl_str str_dup(struct fl_arena *a, const char *s, uint64_t len)
{
	char *d = fl_alloc(a, len + 1);

	memcpy(d, s, len);
	return (struct fl_str){d, len};
}

static struct fl_str str_of(struct fl_arena *a, const char *s)
{
	return str_dup(a, s, strlen(s));
}

/* ---- reading the script ---- */
struct rd {
	const uint8_t *p;
	size_t n, i;
};

static uint8_t u8(struct rd *r)
{
	return r->i < r->n ? r->p[r->i++] : 0;
}

static uint64_t un(struct rd *r, int bytes)
{
	uint64_t v = 0;

	for (int k = 0; k < bytes; k++)
		v |= (uint64_t)u8(r) << (8 * k);
	return v;
}

static uint32_t pick(struct rd *r, uint32_t n)
{
	return n ? u8(r) % n : 0;
}

/* ---- value classes ---- */
struct ival {
	uint64_t v;
	bool neg; /* store as a signed type */
};

static struct ival int_class(struct rd *r, uint64_t orig)
{
	static const uint64_t fixed[FI_COUNT] = {
		[FI_0] = 0, [FI_1] = 1, [FI_2] = 2, [FI_3] = 3, [FI_4] = 4,
		[FI_U32MAX] = 0xffffffffu, [FI_I32MAX] = 0x7fffffffu, [FI_2P31] = 1ull << 31,
		[FI_2P16] = 1ull << 16, [FI_2P24] = 1ull << 24, [FI_2P24P1] = (1ull << 24) + 1,
		[FI_2P32] = 1ull << 32, [FI_2P61] = 1ull << 61, [FI_2P62] = 1ull << 62,
		[FI_2P63] = 1ull << 63, [FI_U64MAX] = UINT64_MAX, [FI_255] = 255, [FI_256] = 256,
		[FI_257] = 257, [FI_300] = 300, [FI_512] = 512, [FI_7] = 7, [FI_64] = 64,
	};
	uint32_t c = pick(r, FI_COUNT);

	switch (c) {
	case FI_PLUS1: return (struct ival){orig + 1, false};
	case FI_MINUS1: return (struct ival){orig - 1, false};
	case FI_TWICE: return (struct ival){orig * 2, false};
	case FI_HALF: return (struct ival){orig / 2, false};
	case FI_NEG1: return (struct ival){(uint64_t)-1, true};
	case FI_NEG_BIG: return (struct ival){(uint64_t)INT64_MIN, true};
	case FI_U16: return (struct ival){un(r, 2), false};
	case FI_U32: return (struct ival){un(r, 4), false};
	case FI_U64: return (struct ival){un(r, 8), false};
	default: return (struct ival){fixed[c], false};
	}
}

static double float_class(struct rd *r, double orig)
{
	uint32_t bits;
	float f;

	switch (pick(r, FF_COUNT)) {
	case FF_NAN: return __builtin_nan("");
	case FF_INF: return __builtin_inf();
	case FF_NINF: return -__builtin_inf();
	case FF_DENORM: return 1e-40;
	case FF_NEG1: return -1;
	case FF_0: return 0;
	case FF_NEG0: return -0.0;
	case FF_MAX: return 3.4028234663852886e38;
	case FF_MIN: return 1.1754943508222875e-38;
	case FF_1EM30: return 1e-30;
	case FF_1E30: return 1e30;
	case FF_TWICE: return orig * 2;
	case FF_HALF: return orig / 2;
	case FF_1: return 1;
	case FF_0_5: return 0.5;
	case FF_1EM5: return 1e-5;
	case FF_1E4: return 1e4;
	case FF_NEG_SMALL: return -1e-5;
	case FF_BITS:
		bits = (uint32_t)un(r, 4);
		memcpy(&f, &bits, 4);
		return f;
	case FF_DENORM_MIN: return 1.401298464324817e-45;
	case FF_4: return 4;
	default: return 1e6;
	}
}

static const char *const str_classes[] = {
	"", "llama", "qwen2", "gpt2", "none", "linear", "yarn",
	"\x1b[2J\x1b[Herror: fake\r\n", "\xff\xfe\xfd", "llama-bpe", "default", "<s>", "qwen2",
	"{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
	"<|im_end|>\n{% endfor %}<|im_start|>assistant\n",
	"phi3", "gemma", "mistral", "<|im_end|>", "bert", "smollm",
};

static struct fl_str str_class(struct rd *r, struct fl_arena *a)
{
	uint32_t n = sizeof str_classes / sizeof str_classes[0];
	uint32_t c = pick(r, n + 2);
	char *s;

	if (c == n) { /* an inner NUL */
		return str_dup(a, "llama\0qwen2", 11);
	} else if (c == n + 1) { /* long */
		s = fl_alloc(a, 301);
		memset(s, 'A', 300);
		return (struct fl_str){s, 300};
	}
	return str_of(a, str_classes[c]);
}

/* ---- GGUF value types ---- */
static uint32_t vt_size(uint32_t t)
{
	switch (t) {
	case GGUF_VT_UINT8: case GGUF_VT_INT8: case GGUF_VT_BOOL: return 1;
	case GGUF_VT_UINT16: case GGUF_VT_INT16: return 2;
	case GGUF_VT_UINT32: case GGUF_VT_INT32: case GGUF_VT_FLOAT32: return 4;
	case GGUF_VT_UINT64: case GGUF_VT_INT64: case GGUF_VT_FLOAT64: return 8;
	case GGUF_VT_STRING: return sizeof(struct fl_str);
	default: return 0;
	}
}

static bool vt_int(uint32_t t)
{
	return vt_size(t) && t != GGUF_VT_FLOAT32 && t != GGUF_VT_FLOAT64 && t != GGUF_VT_STRING;
}

static bool vt_signed(uint32_t t)
{
	return t == GGUF_VT_INT8 || t == GGUF_VT_INT16 || t == GGUF_VT_INT32 || t == GGUF_VT_INT64;
}

static bool vt_float(uint32_t t)
{
	return t == GGUF_VT_FLOAT32 || t == GGUF_VT_FLOAT64;
}

/* Sign-extend an integer of type t held in u. */
static int64_t as_signed(uint32_t t, uint64_t u)
{
	int sh = 64 - 8 * (int)vt_size(t);

	return sh > 0 && sh < 64 ? (int64_t)(u << sh) >> sh : (int64_t)u;
}

static double scalar_num(const struct fl_kv *kv)
{
	if (vt_float(kv->type))
		return kv->v.f;
	if (vt_signed(kv->type))
		return (double)as_signed(kv->type, kv->v.u);
	if (kv->type == GGUF_VT_STRING)
		return (double)kv->v.s.len;
	if (kv->type == GGUF_VT_ARRAY)
		return (double)kv->v.a.n;
	return (double)kv->v.u;
}

static uint64_t scalar_int(const struct fl_kv *kv)
{
	double f;

	if (vt_int(kv->type))
		return kv->v.u;
	f = scalar_num(kv);
	return f == f && f > -9.2e18 && f < 9.2e18 ? (uint64_t)(int64_t)f : 0;
}

/* The narrowest type that keeps kv's current type if the value fits it. */
static void set_int(struct fl_kv *kv, struct ival x)
{
	uint32_t t = kv->type;
	uint32_t w = vt_int(t) && t != GGUF_VT_BOOL ? vt_size(t) : 0;
	int64_t s = (int64_t)x.v;

	if (x.neg) {
		bool fits = w && vt_signed(t) && (w == 8 || (s >= -(1ll << (8 * w - 1))));
		kv->type = fits ? t : s >= INT32_MIN ? GGUF_VT_INT32 : GGUF_VT_INT64;
	} else if (!(w && (w == 8 || x.v < (1ull << (8 * w - vt_signed(t)))))) {
		kv->type = x.v <= 0xffffffffu ? GGUF_VT_UINT32 : GGUF_VT_UINT64;
	}
	kv->v.u = x.v;
}

static void set_float(struct fl_kv *kv, double f)
{
	if (!vt_float(kv->type))
		kv->type = GGUF_VT_FLOAT32;
	kv->v.f = f;
}

/* ---- finding things ---- */
static struct fl_kv *kv_find(struct fl_model *m, const char *key)
{
	for (uint32_t i = 0; i < m->n_kv; i++)
		if (m->kv[i].key.len == strlen(key) && memcmp(m->kv[i].key.s, key, m->kv[i].key.len) == 0)
			return &m->kv[i];
	return NULL;
}

static struct fl_tensor *t_find(struct fl_model *m, const char *name)
{
	for (uint32_t i = 0; i < m->n_t; i++)
		if (m->t[i].name.len == strlen(name) && memcmp(m->t[i].name.s, name, m->t[i].name.len) == 0)
			return &m->t[i];
	return NULL;
}

/* ---- the seed ---- */
int flm_from_gguf(struct fl_model *m, const uint8_t *bytes, uint64_t n, struct fl_arena *a)
{
	struct llm_reader r;
	struct llm_membuf mb;
	struct llm_mem mem;
	struct gguf_file g;
	const struct gguf_str *s;
	char err[256], key[96];
	uint32_t heads = 0, heads_kv = 0;

	memset(m, 0, sizeof *m);
	m->arena = a;
	llm_mem_init(&mem, 0);
	llm_reader_mem(&r, &mb, bytes, n);
	if (gguf_open(&g, &r, &mem, err, sizeof err) < 0) {
		fprintf(stderr, "fuzz_load: seed does not parse: %s\n", err);
		return -1;
	}
	if (g.n_kv > FLM_MAX_KV - 16 || g.n_tensors > FLM_MAX_T - 16)
		goto bad;
	m->version = g.version;
	for (uint64_t i = 0; i < g.n_kv; i++) {
		const struct gguf_kv *kv = &g.kv[i];
		struct fl_kv *o = &m->kv[m->n_kv++];
		o->key = str_dup(a, kv->key.s, kv->key.len);
		o->type = kv->val.type;
		if (o->type == GGUF_VT_STRING) {
			o->v.s = str_dup(a, kv->val.v.str.s, kv->val.v.str.len);
		} else if (o->type == GGUF_VT_ARRAY) {
			const struct gguf_array *ar = &kv->val.v.arr;
			uint32_t es = vt_size(ar->type);
			void *d;
			if (!es)
				goto bad;
			d = fl_alloc(a, ar->n * es + 1);
			if (ar->type == GGUF_VT_STRING) {
				const struct gguf_str *in = ar->data;
				struct fl_str *out = d;
				for (uint64_t k = 0; k < ar->n; k++)
					out[k] = str_dup(a, in[k].s, in[k].len);
			} else {
				memcpy(d, ar->data, ar->n * es);
			}
			o->v.a = (struct fl_arr){ar->type, ar->n, d};
		} else if (vt_float(o->type)) {
			o->v.f = kv->val.v.f;
		} else {
			o->v.u = vt_signed(o->type) ? (uint64_t)kv->val.v.i : kv->val.v.u;
		}
	}
	for (uint64_t i = 0; i < g.n_tensors; i++) {
		const struct gguf_tensor *t = &g.tensors[i];
		struct fl_tensor *o = &m->t[m->n_t++];
		o->name = str_of(a, t->name);
		o->n_dims = t->n_dims;
		for (int d = 0; d < 6; d++)
			o->ne[d] = d < GGUF_MAX_DIMS ? t->ne[d] : 1;
		o->type = t->type;
		o->src = bytes + t->offset;
		o->src_len = t->size;
	}
	if (gguf_get_str(&g, "general.architecture", &s) < 0 || s->len >= sizeof m->arch)
		goto bad;
	memcpy(m->arch, s->s, s->len + 1);
#define AK(sfx) (snprintf(key, sizeof key, "%s." sfx, m->arch), key)
	if (gguf_get_u32(&g, AK("embedding_length"), &m->dim) < 0 ||
	    gguf_get_u32(&g, AK("attention.head_count"), &heads) < 0 ||
	    gguf_get_u32(&g, AK("attention.head_count_kv"), &heads_kv) < 0 || !heads ||
	    !gguf_find_tensor(&g, "token_embd.weight"))
		goto bad;
#undef AK
	m->head_dim = m->dim / heads;
	m->q_dim = m->dim;
	m->kv_dim = heads_kv * m->head_dim;
	m->vocab = (uint32_t)gguf_find_tensor(&g, "token_embd.weight")->ne[1];
	gguf_close(&g);
	return 0;
bad:
	fprintf(stderr, "fuzz_load: seed is not a small llama-shaped model\n");
	gguf_close(&g);
	return -1;
}

void flm_copy(struct fl_model *dst, const struct fl_model *src, struct fl_arena *a)
{
	memcpy(dst, src, sizeof *dst);
	dst->arena = a;
	dst->weights_touched = false;
	dst->trace = false;
}

/* ---- ops ---- */
static const struct {
	const char *key; /* "%s" is the architecture */
	char kind;       /* i(nt) f(loat) s(tring) b(ool) */
} keys[FK_COUNT] = {
	[FK_CTX] = {"%s.context_length", 'i'},
	[FK_EMBD] = {"%s.embedding_length", 'i'},
	[FK_BLOCKS] = {"%s.block_count", 'i'},
	[FK_FF] = {"%s.feed_forward_length", 'i'},
	[FK_HEADS] = {"%s.attention.head_count", 'i'},
	[FK_HEADS_KV] = {"%s.attention.head_count_kv", 'i'},
	[FK_KEY_LEN] = {"%s.attention.key_length", 'i'},
	[FK_VALUE_LEN] = {"%s.attention.value_length", 'i'},
	[FK_ROPE_DIM] = {"%s.rope.dimension_count", 'i'},
	[FK_VOCAB_SIZE] = {"%s.vocab_size", 'i'},
	[FK_ALIGN] = {"general.alignment", 'i'},
	[FK_BOS] = {"tokenizer.ggml.bos_token_id", 'i'},
	[FK_EOS] = {"tokenizer.ggml.eos_token_id", 'i'},
	[FK_UNK] = {"tokenizer.ggml.unknown_token_id", 'i'},
	[FK_PAD] = {"tokenizer.ggml.padding_token_id", 'i'},
	[FK_EOT] = {"tokenizer.ggml.eot_token_id", 'i'},
	[FK_EOM] = {"tokenizer.ggml.eom_token_id", 'i'},
	[FK_FILE_TYPE] = {"general.file_type", 'i'},
	[FK_EPS] = {"%s.attention.layer_norm_rms_epsilon", 'f'},
	[FK_ROPE_BASE] = {"%s.rope.freq_base", 'f'},
	[FK_ROPE_FACTOR] = {"%s.rope.scaling.factor", 'f'},
	[FK_ROPE_LINEAR] = {"%s.rope.scale_linear", 'f'},
	[FK_ARCH] = {"general.architecture", 's'},
	[FK_NAME] = {"general.name", 's'},
	[FK_ROPE_TYPE] = {"%s.rope.scaling.type", 's'},
	[FK_TOK_MODEL] = {"tokenizer.ggml.model", 's'},
	[FK_TOK_PRE] = {"tokenizer.ggml.pre", 's'},
	[FK_TEMPLATE] = {"tokenizer.chat_template", 's'},
	[FK_ADD_BOS] = {"tokenizer.ggml.add_bos_token", 'b'},
	[FK_ADD_EOS] = {"tokenizer.ggml.add_eos_token", 'b'},
	[FK_ADD_SPACE] = {"tokenizer.ggml.add_space_prefix", 'b'},
};

static const char *const op_names[FLM_OP_COUNT] = {
	"key-set", "kv-set", "kv-type", "kv-drop", "kv-dup", "arr-len", "arr-elem", "tok-n",
	"t-dim", "t-ndims", "t-type", "t-off", "t-drop", "t-dup", "t-name", "t-add", "t-fill",
	"vocab", "version", "t-swap",
};

static void set_value(struct fl_model *m, struct fl_kv *kv, char kind, struct rd *r);

static void trace_kv(const struct fl_model *m, const char *what, const struct fl_kv *kv)
{
	if (!m->trace)
		return;
	fprintf(stderr, "  %s '%.*s' (%s) = ", what, (int)kv->key.len, kv->key.s,
		gguf_vtype_name(kv->type));
	if (vt_float(kv->type))
		fprintf(stderr, "%g\n", kv->v.f);
	else if (vt_signed(kv->type))
		fprintf(stderr, "%lld\n", (long long)as_signed(kv->type, kv->v.u));
	else if (vt_int(kv->type))
		fprintf(stderr, "%llu\n", (unsigned long long)kv->v.u);
	else if (kv->type == GGUF_VT_STRING)
		fprintf(stderr, "'%.*s'\n", (int)(kv->v.s.len > 60 ? 60 : kv->v.s.len), kv->v.s.s);
	else
		fprintf(stderr, "[%s x %llu]\n", gguf_vtype_name(kv->v.a.type),
			(unsigned long long)kv->v.a.n);
}

static void trace_t(const struct fl_model *m, const char *what, const struct fl_tensor *t)
{
	if (!m->trace)
		return;
	fprintf(stderr, "  %s tensor '%.*s' n_dims %u [%llu, %llu, %llu, %llu] %s off %s%llu\n", what,
		(int)(t->name.len > 60 ? 60 : t->name.len), t->name.s, t->n_dims,
		(unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
		(unsigned long long)t->ne[2], (unsigned long long)t->ne[3], gguf_type_name(t->type),
		t->off_abs ? "=" : "+", (unsigned long long)t->off);
}

/* Arrays: resize to n elements (new ones repeat the old from the start). */
#define ARR_CAP 65536u

static void arr_resize(struct fl_model *m, struct fl_arr *ar, uint64_t n)
{
	uint32_t es = vt_size(ar->type);
	uint8_t *d;

	if (!es)
		return;
	if (n > ARR_CAP + ar->n)
		n = ARR_CAP + ar->n;
	d = fl_alloc(m->arena, n * es + 1);
	for (uint64_t k = 0; ar->n && k < n; k++)
		memcpy(d + k * es, (const uint8_t *)ar->data + (k % ar->n) * es, es);
	if (!ar->n && ar->type == GGUF_VT_STRING)
		for (uint64_t k = 0; k < n; k++)
			((struct fl_str *)d)[k] = (struct fl_str){"", 0};
	ar->data = d;
	ar->n = n;
}

static void arr_set(struct fl_model *m, struct fl_arr *ar, uint64_t i, struct rd *r)
{
	uint32_t es = vt_size(ar->type);
	uint8_t *d;

	if (!es || i >= ar->n)
		return;
	arr_resize(m, ar, ar->n); /* a private copy */
	d = (uint8_t *)ar->data + i * es;
	if (ar->type == GGUF_VT_STRING) {
		*(struct fl_str *)d = str_class(r, m->arena);
	} else if (vt_float(ar->type)) {
		double f = float_class(r, 0);
		float f32 = (float)f;
		if (es == 4)
			memcpy(d, &f32, 4);
		else
			memcpy(d, &f, 8);
	} else {
		uint64_t v = int_class(r, 0).v;
		memcpy(d, &v, es); /* little-endian */
	}
}

/* The value of one element as a number (strings: their length). */
static double arr_num(const struct fl_arr *ar, uint64_t i, uint64_t *u)
{
	const uint8_t *d = (const uint8_t *)ar->data + i * vt_size(ar->type);
	float f32;
	double f;

	*u = 0;
	if (ar->type == GGUF_VT_STRING) {
		*u = ((const struct fl_str *)d)->len;
		return (double)*u;
	}
	if (ar->type == GGUF_VT_FLOAT32) {
		memcpy(&f32, d, 4);
		*u = f32 == f32 && f32 > -9e18f && f32 < 9e18f ? (uint64_t)(int64_t)f32 : 0;
		return f32;
	}
	if (ar->type == GGUF_VT_FLOAT64) {
		memcpy(&f, d, 8);
		*u = f == f && f > -9e18 && f < 9e18 ? (uint64_t)(int64_t)f : 0;
		return f;
	}
	memcpy(u, d, vt_size(ar->type));
	return vt_signed(ar->type) ? (double)as_signed(ar->type, *u) : (double)*u;
}

static void arr_retype(struct fl_model *m, struct fl_arr *ar, uint32_t t)
{
	uint32_t es = vt_size(t);
	uint8_t *d;

	if (!es || !vt_size(ar->type))
		return;
	d = fl_alloc(m->arena, ar->n * es + 1);
	for (uint64_t k = 0; k < ar->n; k++) {
		uint64_t u;
		double f = arr_num(ar, k, &u);
		float f32 = (float)f;
		if (t == GGUF_VT_STRING) {
			char buf[32];
			snprintf(buf, sizeof buf, "%g", f);
			((struct fl_str *)d)[k] = str_of(m->arena, buf);
		} else if (t == GGUF_VT_FLOAT32) {
			memcpy(d + k * 4, &f32, 4);
		} else if (t == GGUF_VT_FLOAT64) {
			memcpy(d + k * 8, &f, 8);
		} else {
			memcpy(d + k * es, &u, es);
		}
	}
	ar->type = t;
	ar->data = d;
}

/* Convert kv's value to type t (an array: a per-layer array of 3). */
static void kv_retype(struct fl_model *m, struct fl_kv *kv, uint32_t t)
{
	double f = scalar_num(kv);
	uint64_t u = scalar_int(kv);
	char buf[32];

	if (kv->type == GGUF_VT_ARRAY && t == GGUF_VT_ARRAY)
		return;
	if (kv->type == GGUF_VT_ARRAY && t != GGUF_VT_ARRAY) {
		u = kv->v.a.n;
		f = (double)u;
	}
	if (t == GGUF_VT_ARRAY) {
		uint32_t et = vt_float(kv->type) ? GGUF_VT_FLOAT32 :
			      kv->type == GGUF_VT_STRING ? GGUF_VT_STRING : GGUF_VT_UINT32;
		struct fl_arr ar = {et, 1, NULL};
		struct fl_str s = kv->type == GGUF_VT_STRING ? kv->v.s : (struct fl_str){"", 0};
		float f32 = (float)f;
		uint32_t u32 = (uint32_t)u;
		ar.data = et == GGUF_VT_STRING ? (void *)&s : et == GGUF_VT_FLOAT32 ? (void *)&f32 :
										   (void *)&u32;
		arr_resize(m, &ar, 3);
		kv->v.a = ar;
	} else if (t == GGUF_VT_STRING) {
		snprintf(buf, sizeof buf, "%g", f);
		kv->v.s = str_of(m->arena, buf);
	} else if (vt_float(t)) {
		kv->v.f = f;
	} else if (t == GGUF_VT_BOOL) {
		kv->v.u = u != 0;
	} else {
		kv->v.u = u;
	}
	kv->type = t;
}

static void set_value(struct fl_model *m, struct fl_kv *kv, char kind, struct rd *r)
{
	switch (kind) {
	case 'f':
		set_float(kv, float_class(r, vt_float(kv->type) ? kv->v.f : 1.0));
		break;
	case 's':
		kv->type = GGUF_VT_STRING;
		kv->v.s = str_class(r, m->arena);
		break;
	case 'b':
		kv->type = GGUF_VT_BOOL;
		kv->v.u = u8(r) & 1;
		break;
	case 'a':
		arr_resize(m, &kv->v.a, int_class(r, kv->v.a.n).v);
		break;
	default:
		set_int(kv, int_class(r, scalar_int(kv)));
		break;
	}
}

static char kind_of(uint32_t t)
{
	return t == GGUF_VT_ARRAY ? 'a' : t == GGUF_VT_STRING ? 's' : vt_float(t) ? 'f' : 'i';
}

static struct fl_kv *kv_add(struct fl_model *m, const char *key)
{
	struct fl_kv *kv;

	if (m->n_kv == FLM_MAX_KV)
		return NULL;
	kv = &m->kv[m->n_kv++];
	memset(kv, 0, sizeof *kv);
	kv->key = str_of(m->arena, key);
	kv->type = GGUF_VT_UINT32;
	return kv;
}

static void op_key_set(struct fl_model *m, struct rd *r)
{
	uint32_t k = pick(r, FK_COUNT);
	char key[96];
	struct fl_kv *kv;

	snprintf(key, sizeof key, keys[k].key, m->arch);
	if (!(kv = kv_find(m, key)) && !(kv = kv_add(m, key)))
		return;
	if (kv->type == GGUF_VT_ARRAY) /* a per-layer array: a scalar again */
		kv_retype(m, kv, GGUF_VT_UINT32);
	set_value(m, kv, keys[k].kind, r);
	trace_kv(m, "set", kv);
}

static void tok_n(struct fl_model *m, uint64_t n)
{
	static const char *const arrays[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.scores",
					     "tokenizer.ggml.token_type"};

	for (int i = 0; i < 3; i++) {
		struct fl_kv *kv = kv_find(m, arrays[i]);
		if (kv && kv->type == GGUF_VT_ARRAY) {
			arr_resize(m, &kv->v.a, n);
			trace_kv(m, "resize", kv);
		}
	}
}

/* A tensor type: the first 0x80 values pick one a file is likely to hold,
 * the rest are raw (ggml's removed and unknown types among them). */
static uint32_t type_class(struct rd *r)
{
	static const uint32_t likely[] = {0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24,
					  25, 26, 27, 28, 30, 4, 39, 40, 0xffffffffu};
	uint8_t b = u8(r);

	return b < 0x80 ? likely[b % (sizeof likely / sizeof likely[0])] : b - 0x80u;
}

static struct fl_str name_class(struct fl_model *m, struct rd *r)
{
	static const char *const names[] = {
		"output.weight", "rope_freqs.weight", "blk.0.attn_q.bias", "blk.0.attn_k.bias",
		"blk.0.attn_v.bias", "blk.1.attn_q.bias", "blk.0.attn_qkv.weight",
		"blk.0.ffn_gate_inp.weight", "token_embd.weight", "output_norm.weight",
		"blk.2.attn_norm.weight", "", "blk.0.attn_q.weight", "blk.4294967295.attn_q.weight",
		"blk.1.ffn_down.weight", "extra.weight",
	};
	uint32_t n = sizeof names / sizeof names[0];
	uint8_t b = u8(r);
	char *s;

	if (b < n)
		return str_of(m->arena, names[b]);
	if (b == 0xff) {
		s = fl_alloc(m->arena, 201);
		memset(s, 'x', 200);
		return (struct fl_str){s, 200};
	}
	return m->n_t ? m->t[(b - n) % m->n_t].name : str_of(m->arena, "x");
}

/* Bytes of t as the parser computes them, exactly; false when there is no
 * such number (unknown type, more than 2^64 bytes). */
static bool t_bytes(const struct fl_tensor *t, uint64_t *out)
{
	unsigned __int128 n = 1;
	uint32_t blck, bytes;

	if (gguf_type_geometry(t->type, &blck, &bytes) < 0 || !blck)
		return false;
	for (uint32_t d = 0; d < t->n_dims && d < 6; d++) {
		n *= t->ne[d];
		if (n >> 64)
			return false;
	}
	n = (n + blck - 1) / blck * bytes;
	if (n >> 64)
		return false;
	*out = (uint64_t)n;
	return true;
}

static void op_t_add(struct fl_model *m, struct rd *r)
{
	struct fl_tensor *t;
	uint64_t size = 0;
	uint32_t shape;
	double f;
	float f32;

	if (m->n_t == FLM_MAX_T)
		return;
	t = &m->t[m->n_t++];
	memset(t, 0, sizeof *t);
	t->name = name_class(m, r);
	shape = u8(r) % 8;
	t->n_dims = shape < 4 || shape == 6 ? 1 : 2;
	for (int d = 0; d < 6; d++)
		t->ne[d] = 1;
	switch (shape) {
	case 0: t->ne[0] = m->head_dim / 2; break;           /* rope_freqs */
	case 1: t->ne[0] = m->dim; break;                    /* a norm */
	case 2: t->ne[0] = m->q_dim; break;                  /* a bias */
	case 3: t->ne[0] = m->kv_dim; break;
	case 4: t->ne[0] = m->dim; t->ne[1] = m->vocab; break; /* output */
	case 5: t->ne[0] = m->dim; t->ne[1] = m->dim; break;
	case 6: t->ne[0] = 0; break;
	default: t->ne[0] = 1ull << 31; t->ne[1] = 1ull << 31; break;
	}
	t->type = type_class(r);
	f = float_class(r, 1.0);
	f32 = (float)f;
	if (t_bytes(t, &size) && size) {
		uint8_t *d;
		size = size < (1u << 16) ? size : (1u << 16);
		d = fl_alloc(m->arena, size);
		for (uint64_t o = 0; o + 4 <= size; o += 4)
			memcpy(d + o, &f32, 4);
		t->src = d;
		t->src_len = size;
	}
	m->weights_touched = true;
	trace_t(m, "add", t);
}

static void op_t_off(struct fl_model *m, struct fl_tensor *t, struct rd *r)
{
	switch (u8(r) % 12) {
	case 0: t->off += 1; break;
	case 1: t->off += 2; break;
	case 2: t->off += 3; break;
	case 3: t->off -= 1; break;
	case 4: t->off += 32; break;
	case 5: t->off -= 32; break;
	case 6: t->off_abs = true; t->off = 0; break;
	case 7: t->off_abs = true; t->off = 1ull << 63; break;
	case 8: t->off += 4096; break;
	case 9: t->off_abs = true; t->off = un(r, 4); break;
	case 10: t->off_abs = true; t->off = UINT64_MAX; break;
	default: t->off -= 4; break;
	}
	m->weights_touched = true;
	trace_t(m, "offset", t);
}

static void op_vocab(struct fl_model *m, struct rd *r)
{
	struct fl_tensor *e = t_find(m, "token_embd.weight"), *o = t_find(m, "output.weight");
	struct ival x = int_class(r, e ? e->ne[1] : m->vocab);
	char key[96];
	struct fl_kv *kv;

	if (e) {
		e->ne[1] = x.v;
		trace_t(m, "rows", e);
	}
	if (o) {
		o->ne[1] = x.v;
		trace_t(m, "rows", o);
	}
	snprintf(key, sizeof key, "%s.vocab_size", m->arch);
	if ((kv = kv_find(m, key)) && vt_int(kv->type)) {
		set_int(kv, x);
		trace_kv(m, "set", kv);
	}
}

static void apply_one(struct fl_model *m, uint32_t op, struct rd *r)
{
	struct fl_kv *kv = NULL;
	struct fl_tensor *t = NULL;
	uint32_t i;

	if (m->trace)
		fprintf(stderr, "op %s\n", op_names[op]);
	if ((op >= FLM_KV_SET && op <= FLM_ARR_ELEM) && m->n_kv)
		kv = &m->kv[pick(r, m->n_kv)];
	if ((op >= FLM_T_DIM && op <= FLM_T_NAME) || op == FLM_T_FILL || op == FLM_T_SWAP) {
		if (!m->n_t)
			return;
		t = &m->t[pick(r, m->n_t)];
	}
	switch (op) {
	case FLM_KEY_SET: op_key_set(m, r); break;
	case FLM_KV_SET:
		if (kv) {
			set_value(m, kv, kind_of(kv->type), r);
			trace_kv(m, "set", kv);
		}
		break;
	case FLM_KV_TYPE:
		if (kv) {
			uint8_t b = u8(r);
			if (kv->type == GGUF_VT_ARRAY && b >= 0x80 && b % GGUF_VT_COUNT != GGUF_VT_ARRAY)
				arr_retype(m, &kv->v.a, b % GGUF_VT_COUNT); /* its elements */
			else
				kv_retype(m, kv, b % GGUF_VT_COUNT);
			trace_kv(m, "retype", kv);
		}
		break;
	case FLM_KV_DROP:
		if (kv) {
			trace_kv(m, "drop", kv);
			i = (uint32_t)(kv - m->kv);
			memmove(kv, kv + 1, (m->n_kv - i - 1) * sizeof *kv);
			m->n_kv--;
		}
		break;
	case FLM_KV_DUP:
		if (kv && m->n_kv < FLM_MAX_KV) {
			m->kv[m->n_kv++] = *kv;
			trace_kv(m, "dup", kv);
		}
		break;
	case FLM_ARR_LEN:
		if (kv && kv->type == GGUF_VT_ARRAY) {
			arr_resize(m, &kv->v.a, int_class(r, kv->v.a.n).v);
			trace_kv(m, "resize", kv);
		}
		break;
	case FLM_ARR_ELEM:
		if (kv && kv->type == GGUF_VT_ARRAY && kv->v.a.n) {
			uint64_t n = kv->v.a.n, idx = int_class(r, n - 1).v;
			arr_set(m, &kv->v.a, idx < n ? idx : idx % n, r);
			if (m->trace)
				fprintf(stderr, "  element %llu of '%s'\n", (unsigned long long)(idx < n ? idx : idx % n),
					kv->key.s);
		}
		break;
	case FLM_TOK_N: {
		struct fl_kv *tk = kv_find(m, "tokenizer.ggml.tokens");
		tok_n(m, int_class(r, tk && tk->type == GGUF_VT_ARRAY ? tk->v.a.n : 0).v);
		break;
	}
	case FLM_T_DIM:
		i = u8(r) % 4;
		if (i >= t->n_dims)
			t->n_dims = i + 1;
		t->ne[i] = int_class(r, t->ne[i]).v;
		m->weights_touched = true;
		trace_t(m, "dim", t);
		break;
	case FLM_T_NDIMS:
		i = u8(r) % 7;
		for (uint32_t d = t->n_dims; d < i && d < 6; d++)
			t->ne[d] = 1;
		t->n_dims = i;
		m->weights_touched = true;
		trace_t(m, "ndims", t);
		break;
	case FLM_T_TYPE:
		t->type = type_class(r);
		m->weights_touched = true;
		trace_t(m, "type", t);
		break;
	case FLM_T_OFF: op_t_off(m, t, r); break;
	case FLM_T_DROP:
		trace_t(m, "drop", t);
		i = (uint32_t)(t - m->t);
		memmove(t, t + 1, (m->n_t - i - 1) * sizeof *t);
		m->n_t--;
		break;
	case FLM_T_DUP:
		if (m->n_t < FLM_MAX_T) {
			m->t[m->n_t++] = *t;
			trace_t(m, "dup", t);
		}
		break;
	case FLM_T_NAME:
		t->name = name_class(m, r);
		trace_t(m, "rename", t);
		break;
	case FLM_T_ADD: op_t_add(m, r); break;
	case FLM_T_FILL: {
		float f32 = (float)float_class(r, 1.0);
		memcpy(&t->fill_bits, &f32, 4);
		t->fill = true;
		t->fill_mode = u8(r) % 3;
		m->weights_touched = true;
		if (m->trace)
			fprintf(stderr, "  fill '%s' with %g (mode %u)\n", t->name.s, (double)f32, t->fill_mode);
		break;
	}
	case FLM_VOCAB: op_vocab(m, r); break;
	case FLM_VERSION: {
		static const uint32_t v[] = {1, 2, 3, 4, 0, 0x03000000};
		m->version = v[u8(r) % 6];
		if (m->trace)
			fprintf(stderr, "  version %u\n", m->version);
		break;
	}
	case FLM_T_SWAP: {
		struct fl_tensor tmp = *t, *u = &m->t[pick(r, m->n_t)];
		*t = *u;
		*u = tmp;
		break;
	}
	default: break;
	}
}

#define MAX_OPS 48

void flm_apply(struct fl_model *m, const uint8_t *script, size_t n)
{
	struct rd r = {script, n, 0};

	for (int k = 0; k < MAX_OPS && r.i < r.n; k++)
		apply_one(m, u8(&r) % FLM_OP_COUNT, &r);
}

/* ---- the writer ---- */
static void put(struct fl_out *o, const void *p, uint64_t n)
{
	if (n && o->pos < FLM_FILE_CAP) {
		uint64_t k = FLM_FILE_CAP - o->pos < n ? FLM_FILE_CAP - o->pos : n;
		memcpy(o->buf + o->pos, p, k);
		o->len = o->pos + k;
	}
	o->pos += n;
}

static void put_zeros(struct fl_out *o, uint64_t n)
{
	if (o->pos < FLM_FILE_CAP) {
		uint64_t k = FLM_FILE_CAP - o->pos < n ? FLM_FILE_CAP - o->pos : n;
		memset(o->buf + o->pos, 0, k);
		o->len = o->pos + k;
	}
	o->pos += n;
}

static void put_u32(struct fl_out *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(struct fl_out *o, uint64_t v) { put(o, &v, 8); }

static void put_str(struct fl_out *o, struct fl_str s)
{
	put_u64(o, s.len);
	put(o, s.s, s.len);
}

static void put_scalar(struct fl_out *o, uint32_t t, uint64_t u, double f)
{
	float f32 = (float)f;

	if (t == GGUF_VT_FLOAT32)
		put(o, &f32, 4);
	else if (t == GGUF_VT_FLOAT64)
		put(o, &f, 8);
	else
		put(o, &u, vt_size(t)); /* little-endian: the low bytes */
}

static void put_kv(struct fl_out *o, const struct fl_kv *kv)
{
	put_str(o, kv->key);
	put_u32(o, kv->type);
	if (kv->type == GGUF_VT_STRING) {
		put_str(o, kv->v.s);
	} else if (kv->type == GGUF_VT_ARRAY) {
		const struct fl_arr *a = &kv->v.a;
		put_u32(o, a->type);
		put_u64(o, a->n);
		if (a->type == GGUF_VT_STRING)
			for (uint64_t k = 0; k < a->n; k++)
				put_str(o, ((const struct fl_str *)a->data)[k]);
		else
			put(o, a->data, a->n * vt_size(a->type));
	} else {
		put_scalar(o, kv->type, kv->v.u, kv->v.f);
	}
}

/* general.alignment as the parser will read it, when it will accept it. */
static uint64_t alignment(const struct fl_model *m)
{
	for (uint32_t i = 0; i < m->n_kv; i++) {
		const struct fl_kv *kv = &m->kv[i];
		if (kv->key.len == 17 && memcmp(kv->key.s, "general.alignment", 17) == 0) {
			uint64_t a = vt_int(kv->type) && kv->type != GGUF_VT_BOOL ? kv->v.u : 0;
			if (vt_signed(kv->type))
				a = (uint64_t)as_signed(kv->type, a);
			return a && a <= 0xffffffffu && !(a & (a - 1)) ? a : 32;
		}
	}
	return 32;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static void put_data(struct fl_out *o, const struct fl_tensor *t, uint64_t size)
{
	uint64_t start = o->pos;

	for (uint64_t done = 0; done < size && o->pos < FLM_FILE_CAP;) {
		uint64_t k = size - done;
		if (!t->src_len) {
			put_zeros(o, k);
			break;
		}
		if (k > t->src_len)
			k = t->src_len;
		put(o, t->src, k);
		done += k;
	}
	o->pos = start + size;
	if (t->fill)
		for (uint64_t w = 0; w + 4 <= size && start + w + 4 <= o->len; w += 4) {
			if ((t->fill_mode == 1 && w) || (t->fill_mode == 2 && (w / 4) % 7))
				continue;
			memcpy(o->buf + start + w, &t->fill_bits, 4);
		}
}

void flm_write(const struct fl_model *m, struct fl_out *o)
{
	uint64_t a = alignment(m), rel = 0, lay[FLM_MAX_T], size[FLM_MAX_T], data;
	bool has[FLM_MAX_T];

	o->len = o->pos = 0;
	put(o, "GGUF", 4);
	put_u32(o, m->version);
	put_u64(o, m->n_t);
	put_u64(o, m->n_kv);
	for (uint32_t i = 0; i < m->n_kv; i++)
		put_kv(o, &m->kv[i]);
	/* the layout a converter would write, data capped by the file's cap */
	for (uint32_t i = 0; i < m->n_t; i++) {
		lay[i] = rel;
		has[i] = t_bytes(&m->t[i], &size[i]) && size[i] <= FLM_FILE_CAP && rel <= FLM_FILE_CAP;
		if (has[i])
			rel = align_up(rel + size[i], a);
	}
	for (uint32_t i = 0; i < m->n_t; i++) {
		const struct fl_tensor *t = &m->t[i];
		put_str(o, t->name);
		put_u32(o, t->n_dims);
		for (uint32_t d = 0; d < t->n_dims; d++)
			put_u64(o, d < 6 ? t->ne[d] : 1);
		put_u32(o, t->type);
		put_u64(o, t->off_abs ? t->off : lay[i] + t->off);
	}
	data = align_up(o->pos, a);
	put_zeros(o, data - o->pos);
	for (uint32_t i = 0; i < m->n_t && o->pos < FLM_FILE_CAP; i++) {
		if (!has[i])
			continue;
		put_zeros(o, data + lay[i] - o->pos);
		put_data(o, &m->t[i], size[i]);
	}
}
