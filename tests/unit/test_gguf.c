/* tests/unit/test_gguf.c — llm/gguf.c against real files and hand-built bad ones. */
#include "test.h"

#include <dirent.h>
#include <stdlib.h>

#include "../../llm/gguf.h"
#include "../../llm/quant.h"
#include "../../tools/host/host.h"

/* ---- a tiny GGUF writer for hand-built files ---- */
struct gb {
	uint8_t *p;
	size_t n, cap;
};

static void gb_bytes(struct gb *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}
static void gb_u8(struct gb *b, uint8_t v) { gb_bytes(b, &v, 1); }
static void gb_u32(struct gb *b, uint32_t v) { gb_bytes(b, &v, 4); }
static void gb_u64(struct gb *b, uint64_t v) { gb_bytes(b, &v, 8); }
static void gb_str(struct gb *b, const char *s)
{
	gb_u64(b, strlen(s));
	gb_bytes(b, s, strlen(s));
}
static void gb_header(struct gb *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
	gb_bytes(b, "GGUF", 4);
	gb_u32(b, version);
	gb_u64(b, n_tensors);
	gb_u64(b, n_kv);
}
static void gb_kv_u32(struct gb *b, const char *key, uint32_t v)
{
	gb_str(b, key);
	gb_u32(b, GGUF_VT_UINT32);
	gb_u32(b, v);
}
static void gb_tensor(struct gb *b, const char *name, uint32_t n_dims, const uint64_t *ne,
		      uint32_t type, uint64_t off)
{
	gb_str(b, name);
	gb_u32(b, n_dims);
	for (uint32_t i = 0; i < n_dims; i++)
		gb_u64(b, ne[i]);
	gb_u32(b, type);
	gb_u64(b, off);
}
static void gb_pad(struct gb *b, size_t align)
{
	while (b->n % align)
		gb_u8(b, 0);
}
static void gb_zeros(struct gb *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gb_u8(b, 0);
}

static int parse(const void *p, size_t n, struct gguf_file *g, struct llm_mem *mem,
		 char *err, size_t errlen)
{
	struct llm_reader r;
	struct llm_membuf mb;

	llm_reader_mem(&r, &mb, p, n);
	return gguf_open(g, &r, mem, err, errlen);
}

/* Expect parsing to fail with code and a message holding want. */
static void expect_error(struct gb *b, int code, const char *want)
{
	struct llm_mem mem;
	struct gguf_file g;
	char err[256];
	int rc;

	llm_mem_init(&mem, 0);
	rc = parse(b->p, b->n, &g, &mem, err, sizeof err);
	CHECK_EQ_INT(rc, code);
	if (!strstr(err, want) || strncmp(err, "gguf: ", 6) != 0) {
		fprintf(stderr, "  error \"%s\" lacks \"%s\"\n", err, want);
		test_failed_checks++;
	}
	CHECK_EQ_INT(mem.used, 0); /* everything freed on error */
	if (rc == 0)
		gguf_close(&g);
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* A valid file: every value type, nested arrays, two F32 tensors and a Q4_0 one. */
static void build_valid(struct gb *b, uint32_t version)
{
	uint64_t ne2[2] = {4, 2}, ne1[1] = {8}, neq[2] = {32, 2};

	gb_header(b, version, 3, 16);
	gb_str(b, "general.architecture"); gb_u32(b, GGUF_VT_STRING); gb_str(b, "llama");
	gb_str(b, "u8"); gb_u32(b, GGUF_VT_UINT8); gb_u8(b, 200);
	gb_str(b, "i8"); gb_u32(b, GGUF_VT_INT8); gb_u8(b, 0xfe);
	gb_str(b, "u16"); gb_u32(b, GGUF_VT_UINT16); gb_u8(b, 0x34); gb_u8(b, 0x12);
	gb_str(b, "i16"); gb_u32(b, GGUF_VT_INT16); gb_u8(b, 0xff); gb_u8(b, 0xff);
	gb_kv_u32(b, "u32", 70000);
	gb_str(b, "i32"); gb_u32(b, GGUF_VT_INT32); gb_u32(b, (uint32_t)-5);
	float f = 1.5f;
	gb_str(b, "f32"); gb_u32(b, GGUF_VT_FLOAT32); gb_bytes(b, &f, 4);
	gb_str(b, "bool"); gb_u32(b, GGUF_VT_BOOL); gb_u8(b, 1);
	gb_str(b, "u64"); gb_u32(b, GGUF_VT_UINT64); gb_u64(b, 1ull << 40);
	gb_str(b, "i64"); gb_u32(b, GGUF_VT_INT64); gb_u64(b, (uint64_t)-3);
	double d = -0.25;
	gb_str(b, "f64"); gb_u32(b, GGUF_VT_FLOAT64); gb_bytes(b, &d, 8);
	gb_str(b, "strs"); gb_u32(b, GGUF_VT_ARRAY); gb_u32(b, GGUF_VT_STRING); gb_u64(b, 3);
	gb_str(b, "a"); gb_str(b, ""); gb_str(b, "ccc");
	gb_str(b, "nums"); gb_u32(b, GGUF_VT_ARRAY); gb_u32(b, GGUF_VT_INT32); gb_u64(b, 2);
	gb_u32(b, 7); gb_u32(b, (uint32_t)-7);
	/* [[1, 2], []] of uint16 */
	gb_str(b, "nested"); gb_u32(b, GGUF_VT_ARRAY); gb_u32(b, GGUF_VT_ARRAY); gb_u64(b, 2);
	gb_u32(b, GGUF_VT_UINT16); gb_u64(b, 2); gb_u8(b, 1); gb_u8(b, 0); gb_u8(b, 2); gb_u8(b, 0);
	gb_u32(b, GGUF_VT_UINT16); gb_u64(b, 0);
	gb_kv_u32(b, "general.alignment", 64);
	gb_tensor(b, "a", 2, ne2, GGML_TYPE_F32, 0);
	gb_tensor(b, "b", 1, ne1, GGML_TYPE_F32, 64);
	gb_tensor(b, "q", 2, neq, GGML_TYPE_Q4_0, 128);
	gb_pad(b, 64);
	gb_zeros(b, 128 + 36);
}

static void check_valid(const struct gguf_file *g)
{
	uint64_t u;
	int64_t i;
	float f;
	bool bl;
	const struct gguf_str *s;
	const struct gguf_array *a;

	CHECK_EQ_INT(g->n_kv, 16);
	CHECK_EQ_INT(g->n_tensors, 3);
	CHECK_EQ_INT(g->alignment, 64);
	CHECK(gguf_get_str(g, "general.architecture", &s) == 0 && strcmp(s->s, "llama") == 0);
	CHECK(gguf_get_u64(g, "u8", &u) == 0 && u == 200);
	CHECK(gguf_get_i64(g, "i8", &i) == 0 && i == -2);
	CHECK(gguf_get_u64(g, "u16", &u) == 0 && u == 0x1234);
	CHECK(gguf_get_i64(g, "i16", &i) == 0 && i == -1);
	CHECK_EQ_INT(gguf_get_u64(g, "i16", &u), -LLMK_EFORMAT); /* negative */
	CHECK(gguf_get_u64(g, "u32", &u) == 0 && u == 70000);
	CHECK(gguf_get_i64(g, "i32", &i) == 0 && i == -5);
	CHECK(gguf_get_f32(g, "f32", &f) == 0 && f == 1.5f);
	CHECK(gguf_get_bool(g, "bool", &bl) == 0 && bl);
	CHECK_EQ_INT(gguf_get_u32(g, "u64", (uint32_t *)&u), -LLMK_EFORMAT); /* out of range */
	CHECK(gguf_get_u64(g, "u64", &u) == 0 && u == 1ull << 40);
	CHECK(gguf_get_i64(g, "i64", &i) == 0 && i == -3);
	CHECK(gguf_get_f32(g, "f64", &f) == 0 && f == -0.25f);
	CHECK_EQ_INT(gguf_get_f32(g, "u8", &f), -LLMK_EFORMAT);
	CHECK_EQ_INT(gguf_get_u64(g, "missing", &u), -LLMK_ENOENT);
	CHECK(gguf_get_arr(g, "strs", &a) == 0 && a->n == 3 && a->type == GGUF_VT_STRING);
	if (gguf_get_arr(g, "strs", &a) == 0 && a->n == 3) {
		const struct gguf_str *ss = a->data;
		CHECK_STR(ss[0].s, "a");
		CHECK_EQ_INT(ss[1].len, 0);
		CHECK_STR(ss[2].s, "ccc");
	}
	CHECK(gguf_get_arr(g, "nums", &a) == 0 && a->n == 2 && ((const int32_t *)a->data)[1] == -7);
	if (gguf_get_arr(g, "nested", &a) == 0 && a->n == 2) {
		const struct gguf_array *sub = a->data;
		CHECK_EQ_INT(sub[0].type, GGUF_VT_UINT16);
		CHECK_EQ_INT(sub[0].n, 2);
		CHECK_EQ_INT(((const uint16_t *)sub[0].data)[1], 2);
		CHECK_EQ_INT(sub[1].n, 0);
	} else {
		CHECK(!"nested array missing");
	}
	const struct gguf_tensor *t = gguf_find_tensor(g, "q");
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_INT(t->offset, g->data_offset + 128);
		CHECK_EQ_INT(t->size, 36);
		CHECK_EQ_INT(t->n_elems, 64);
		CHECK_EQ_INT(t->ne[1], 2);
		CHECK_EQ_INT(t->ne[2], 1);
		CHECK_EQ_INT(g->extent, t->offset + 36);
	}
	CHECK_EQ_INT(g->data_offset % 64, 0);
}

TEST(gguf_valid_v3_and_v2)
{
	for (uint32_t v = 2; v <= 3; v++) {
		struct gb b = {0};
		struct llm_mem mem;
		struct gguf_file g;
		char err[256];

		build_valid(&b, v);
		llm_mem_init(&mem, 0);
		int rc = parse(b.p, b.n, &g, &mem, err, sizeof err);
		CHECK_EQ_INT(rc, 0);
		if (rc == 0) {
			CHECK_EQ_INT(g.version, v);
			check_valid(&g);
			gguf_close(&g);
		} else {
			fprintf(stderr, "  %s\n", err);
		}
		CHECK_EQ_INT(mem.used, 0);
		free(b.p);
	}
}

/* Every proper prefix of a valid file must fail cleanly, never read past it. */
TEST(gguf_refuses_a_file_truncated_at_any_byte)
{
	struct gb b = {0};
	struct llm_mem mem;
	struct gguf_file g;
	char err[256];
	int bad = 0;

	build_valid(&b, 3);
	llm_mem_init(&mem, 0);
	for (size_t n = 0; n < b.n; n++) {
		int rc = parse(b.p, n, &g, &mem, err, sizeof err);
		if (rc != -LLMK_EFORMAT || (!strstr(err, "truncated") && !strstr(err, "past end") &&
					    !strstr(err, "cannot fit") && !strstr(err, "needs at least"))) {
			if (bad++ < 3)
				fprintf(stderr, "  prefix %zu: rc %d \"%s\"\n", n, rc, err);
		}
		if (rc == 0)
			gguf_close(&g);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(mem.used, 0);
	free(b.p);
}

TEST(gguf_refuses_a_bad_header_naming_the_field)
{
	struct gb b = {0};

	gb_bytes(&b, "GGUG", 4); gb_u32(&b, 3); gb_u64(&b, 0); gb_u64(&b, 0);
	expect_error(&b, -LLMK_EFORMAT, "bad magic 0x47554747");
	gb_header(&b, 1, 0, 0);
	expect_error(&b, -LLMK_ENOTSUP, "version 1 (supported: 2, 3)");
	gb_header(&b, 0x03000000, 0, 0);
	expect_error(&b, -LLMK_ENOTSUP, "big-endian");
	gb_header(&b, 3, 0, 1ull << 60);
	expect_error(&b, -LLMK_EFORMAT, "metadata count 1152921504606846976 cannot fit");
	gb_header(&b, 3, 0xffffffffffffull, 0);
	expect_error(&b, -LLMK_EFORMAT, "tensor count 281474976710655 cannot fit");
}

TEST(gguf_refuses_bad_metadata_naming_the_key)
{
	struct gb b = {0};

	gb_header(&b, 3, 0, 1); gb_u64(&b, 1ull << 40); gb_bytes(&b, "abcdefgh", 8);
	expect_error(&b, -LLMK_EFORMAT, "key length 1099511627776 at offset 24 runs past end");
	gb_header(&b, 3, 0, 1); gb_str(&b, "k"); gb_u32(&b, 13); gb_u32(&b, 0);
	expect_error(&b, -LLMK_EFORMAT, "key 'k': unknown value type 13");
	gb_header(&b, 3, 0, 1); gb_str(&b, "s"); gb_u32(&b, GGUF_VT_STRING); gb_u64(&b, 100);
	gb_str(&b, "short");
	expect_error(&b, -LLMK_EFORMAT, "key 's': string value length 100");
	gb_header(&b, 3, 0, 1); gb_str(&b, "arr"); gb_u32(&b, GGUF_VT_ARRAY);
	gb_u32(&b, GGUF_VT_STRING); gb_u64(&b, 1ull << 62); gb_str(&b, "x");
	expect_error(&b, -LLMK_EFORMAT, "key 'arr': array of 4611686018427387904 string");
	gb_header(&b, 3, 0, 1); gb_str(&b, "arr"); gb_u32(&b, GGUF_VT_ARRAY);
	gb_u32(&b, 77); gb_u64(&b, 1);
	expect_error(&b, -LLMK_EFORMAT, "unknown array element type 77");
	gb_header(&b, 3, 0, 1); gb_str(&b, "b"); gb_u32(&b, GGUF_VT_BOOL); gb_u8(&b, 2);
	expect_error(&b, -LLMK_EFORMAT, "key 'b': bool value 2");
	gb_header(&b, 3, 0, 1); gb_str(&b, "deep"); gb_u32(&b, GGUF_VT_ARRAY);
	for (int i = 0; i < 12; i++) {
		gb_u32(&b, GGUF_VT_ARRAY);
		gb_u64(&b, 1);
	}
	gb_zeros(&b, 64);
	expect_error(&b, -LLMK_EFORMAT, "arrays nested deeper than 8");
	gb_header(&b, 3, 0, 2); gb_kv_u32(&b, "dup", 1); gb_kv_u32(&b, "dup", 2);
	expect_error(&b, -LLMK_EFORMAT, "duplicate key 'dup'");
	gb_header(&b, 3, 0, 1); gb_kv_u32(&b, "general.alignment", 48);
	expect_error(&b, -LLMK_EFORMAT, "general.alignment = 48 is not a power of two");
	gb_header(&b, 3, 0, 1); gb_kv_u32(&b, "general.alignment", 0);
	expect_error(&b, -LLMK_EFORMAT, "general.alignment = 0 is not a power of two");
	gb_header(&b, 3, 0, 1); gb_str(&b, "general.alignment"); gb_u32(&b, GGUF_VT_STRING);
	gb_str(&b, "32");
	expect_error(&b, -LLMK_EFORMAT, "general.alignment has type string");
}

/* One tensor of the given shape/type/offset after a 32-aligned header. */
static void one_tensor(struct gb *b, uint32_t n_dims, const uint64_t *ne, uint32_t type,
		       uint64_t off, size_t data)
{
	gb_header(b, 3, 1, 0);
	gb_tensor(b, "blk.0.w", n_dims, ne, type, off);
	gb_pad(b, 32);
	gb_zeros(b, data);
}

TEST(gguf_refuses_bad_tensor_infos_naming_the_tensor)
{
	struct gb b = {0};
	uint64_t ne5[5] = {1, 1, 1, 1, 1}, ne[2] = {32, 4}, odd[2] = {100, 2};
	uint64_t huge[2] = {1ull << 32, 1ull << 32};

	one_tensor(&b, 5, ne5, GGML_TYPE_F32, 0, 64);
	expect_error(&b, -LLMK_EFORMAT, "tensor 'blk.0.w': 5 dimensions (at most 4)");
	one_tensor(&b, 2, ne, 99, 0, 512);
	expect_error(&b, -LLMK_EFORMAT, "tensor 'blk.0.w': unknown type 99");
	one_tensor(&b, 2, ne, 4, 0, 512); /* Q4_2: removed from ggml */
	expect_error(&b, -LLMK_EFORMAT, "unknown type 4");
	one_tensor(&b, 2, odd, GGML_TYPE_Q4_0, 0, 512);
	expect_error(&b, -LLMK_EFORMAT, "row length ne[0] = 100 is not a multiple of the Q4_0 block size 32");
	one_tensor(&b, 2, huge, GGML_TYPE_F32, 0, 64);
	expect_error(&b, -LLMK_EFORMAT, "ne[1] = 4294967296 makes the element count overflow");
	one_tensor(&b, 2, ne, GGML_TYPE_F32, 16, 1024);
	expect_error(&b, -LLMK_EFORMAT, "offset 0x10 is not a multiple of the alignment 32");
	one_tensor(&b, 2, ne, GGML_TYPE_F32, 0, 511);
	expect_error(&b, -LLMK_EFORMAT, "tensor 'blk.0.w' extends past end of file");
	one_tensor(&b, 2, ne, GGML_TYPE_F32, 1ull << 40, 512);
	expect_error(&b, -LLMK_EFORMAT, "tensor 'blk.0.w' starts past end of file");

	gb_header(&b, 3, 2, 0);
	gb_tensor(&b, "x", 2, ne, GGML_TYPE_F32, 0);
	gb_tensor(&b, "y", 2, ne, GGML_TYPE_F32, 256);
	gb_pad(&b, 32);
	gb_zeros(&b, 1024);
	expect_error(&b, -LLMK_EFORMAT, "tensor 'x' (offset 0x");
	gb_header(&b, 3, 2, 0);
	gb_tensor(&b, "x", 2, ne, GGML_TYPE_F32, 512);
	gb_tensor(&b, "x", 2, ne, GGML_TYPE_F32, 0);
	gb_pad(&b, 32);
	gb_zeros(&b, 1024);
	expect_error(&b, -LLMK_EFORMAT, "duplicate tensor name 'x'");
	gb_header(&b, 3, 1, 0);
	gb_tensor(&b, "bad\x01name", 2, ne, 99, 0);
	expect_error(&b, -LLMK_EFORMAT, "tensor 'bad?name': unknown type 99");
}

/* A tensor with a 0 dimension holds no bytes: at the offset of another it
 * overlaps nothing, in either order of the tables (the overlap check once
 * took the order the sort left the tie in). */
TEST(gguf_an_empty_tensor_overlaps_nothing_in_either_order)
{
	uint64_t ne[2] = {32, 4}, empty[2] = {32, 0};

	for (int order = 0; order < 2; order++) {
		struct gb b = {0};
		struct llm_mem mem;
		struct gguf_file g;
		char err[256] = "";

		gb_header(&b, 3, 2, 0);
		gb_tensor(&b, order ? "x" : "e", 2, order ? ne : empty, GGML_TYPE_F32, 0);
		gb_tensor(&b, order ? "e" : "x", 2, order ? empty : ne, GGML_TYPE_F32, 0);
		gb_pad(&b, 32);
		gb_zeros(&b, 512);
		llm_mem_init(&mem, 0);
		int rc = parse(b.p, b.n, &g, &mem, err, sizeof err);
		CHECK_EQ_INT(rc, 0);
		if (rc)
			fprintf(stderr, "  order %d: %s\n", order, err);
		else {
			CHECK_EQ_INT(gguf_find_tensor(&g, "e")->size, 0);
			gguf_close(&g);
		}
		free(b.p);
	}
}

/* ne fits ggml's int64_t but elements x type size does not fit 64 bits:
 * the byte size must not wrap to 0 or to a few bytes that then pass the
 * bounds check (F32/I32 at 2^62 elements, F64/I64 at 2^61). */
TEST(gguf_refuses_a_tensor_whose_byte_size_overflows)
{
	struct gb b = {0};
	uint64_t zero[2] = {1ull << 31, 1ull << 31}, small[1] = {(1ull << 62) + 1};
	uint64_t f64[2] = {1ull << 31, 1ull << 30};

	one_tensor(&b, 2, zero, GGML_TYPE_F32, 0, 64);
	expect_error(&b, -LLMK_EFORMAT,
		     "tensor 'blk.0.w': 4611686018427387904 elements of F32 take more than 2^64 bytes");
	one_tensor(&b, 1, small, GGML_TYPE_F32, 0, 64);
	expect_error(&b, -LLMK_EFORMAT, "4611686018427387905 elements of F32 take more than");
	one_tensor(&b, 2, zero, GGML_TYPE_I32, 0, 64);
	expect_error(&b, -LLMK_EFORMAT, "elements of I32 take more than 2^64 bytes");
	one_tensor(&b, 2, f64, GGML_TYPE_F64, 0, 64);
	expect_error(&b, -LLMK_EFORMAT, "2305843009213693952 elements of F64 take more than");
	one_tensor(&b, 2, f64, GGML_TYPE_I64, 0, 64);
	expect_error(&b, -LLMK_EFORMAT, "elements of I64 take more than 2^64 bytes");
}

TEST(gguf_parse_stops_at_the_memory_budget)
{
	struct gb b = {0};
	struct llm_mem mem;
	struct gguf_file g;
	char err[256];

	build_valid(&b, 3);
	llm_mem_init(&mem, 8192); /* the read buffer fits, the first arena chunk not */
	CHECK_EQ_INT(parse(b.p, b.n, &g, &mem, err, sizeof err), -LLMK_EBUDGET);
	CHECK(strstr(err, "exceeds the memory budget (4096 of 8192 bytes in use)") != NULL);
	CHECK_EQ_INT(mem.used, 0);
	llm_mem_init(&mem, 2048);
	CHECK_EQ_INT(parse(b.p, b.n, &g, &mem, err, sizeof err), -LLMK_EBUDGET);
	CHECK(strstr(err, "read buffer") != NULL);
	free(b.p);
}

/* ---- real files ---- */

static int open_file(const char *path, struct gguf_file *g, struct llm_mem *mem, void **buf,
		     size_t *len)
{
	char err[256];
	int rc;

	*buf = test_read_file(path, len);
	if (!*buf) {
		fprintf(stderr, "  cannot read %s\n", path);
		return -1;
	}
	rc = parse(*buf, *len, g, mem, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "  %s: %s\n", path, err);
	return rc;
}

TEST(gguf_parses_every_vocab_file_of_the_testdata)
{
	const char *td = testdata_dir();
	char dir[200], path[600];
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (!td)
		SKIP("no testdata");
	snprintf(dir, sizeof dir, "%s/vocab", td);
	d = opendir(dir);
	if (!d)
		SKIP("no %s", dir);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), len;
		struct llm_mem mem;
		struct gguf_file g;
		const struct gguf_array *toks;
		void *buf;

		if (l < 5 || strcmp(e->d_name + l - 5, ".gguf") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		llm_mem_init(&mem, 0);
		if (open_file(path, &g, &mem, &buf, &len) == 0) {
			CHECK_EQ_INT(g.n_tensors, 0);
			CHECK(gguf_get_arr(&g, "tokenizer.ggml.tokens", &toks) == 0 && toks->n > 1000);
			CHECK(g.extent <= len && g.extent + g.alignment > len);
			gguf_close(&g);
			n++;
		} else {
			test_failed_checks++;
		}
		CHECK_EQ_INT(mem.used, 0);
		free(buf);
	}
	closedir(d);
	CHECK(n >= 7);
}

static const struct { const char *file; uint32_t type; } zoo[] = {
	{"zoo-f32.gguf", GGML_TYPE_F32},     {"zoo-F16.gguf", GGML_TYPE_F16},
	{"zoo-BF16.gguf", GGML_TYPE_BF16},   {"zoo-Q8_0.gguf", GGML_TYPE_Q8_0},
	{"zoo-Q4_0.gguf", GGML_TYPE_Q4_0},   {"zoo-Q4_1.gguf", GGML_TYPE_Q4_1},
	{"zoo-Q5_0.gguf", GGML_TYPE_Q5_0},   {"zoo-Q5_1.gguf", GGML_TYPE_Q5_1},
	{"zoo-Q2_K.gguf", GGML_TYPE_Q2_K},   {"zoo-Q3_K_S.gguf", GGML_TYPE_Q3_K},
	{"zoo-Q4_K_S.gguf", GGML_TYPE_Q4_K}, {"zoo-Q5_K_S.gguf", GGML_TYPE_Q5_K},
	{"zoo-Q6_K.gguf", GGML_TYPE_Q6_K},
};

TEST(gguf_parses_every_quant_type_file_of_the_testdata)
{
	const char *td = testdata_dir();
	char path[600];

	if (!td)
		SKIP("no testdata");
	for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++) {
		struct llm_mem mem;
		struct gguf_file g;
		const struct gguf_tensor *t;
		void *buf;
		size_t len;

		snprintf(path, sizeof path, "%s/quant/%s", td, zoo[i].file);
		llm_mem_init(&mem, 0);
		if (open_file(path, &g, &mem, &buf, &len) < 0) {
			test_failed_checks++;
			free(buf);
			continue;
		}
		t = gguf_find_tensor(&g, "blk.0.attn_q.weight");
		CHECK(t && t->type == zoo[i].type && t->ne[0] == 256 && t->ne[1] == 256);
		t = gguf_find_tensor(&g, "blk.1.ffn_down.weight");
		CHECK(t && t->ne[0] == 768 && t->ne[1] == 256);
		CHECK(g.extent <= len && g.extent + g.alignment > len);
		gguf_close(&g);
		free(buf);
	}
}

TEST(gguf_parses_the_stories260k_file)
{
	const char *td = testdata_dir();
	char path[600];
	struct llm_mem mem;
	struct gguf_file g;
	void *buf;
	size_t len;

	if (!td)
		SKIP("no testdata");
	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", td);
	llm_mem_init(&mem, 0);
	if (open_file(path, &g, &mem, &buf, &len) == 0) {
		const struct gguf_tensor *t = gguf_find_tensor(&g, "token_embd.weight");
		const struct gguf_array *toks;
		CHECK(t && t->type == GGML_TYPE_F32 && t->ne[0] == 64 && t->ne[1] == 512);
		CHECK(gguf_get_arr(&g, "tokenizer.ggml.tokens", &toks) == 0 && toks->n == 512);
		CHECK(gguf_find(&g, "llama.rope.freq_base") == NULL);
		CHECK(g.extent <= len && g.extent + g.alignment > len);
		gguf_close(&g);
	} else {
		test_failed_checks++;
	}
	free(buf);
	CHECK_EQ_INT(mem.used, 0);
}

/* The disk reader over a disk larger than the file: extent is the contents. */
TEST(gguf_real_stories_on_disk)
{
	const char *td = testdata_dir();
	char path[600], tmp[700], err[256];
	struct llm_reader r;
	struct llm_mem mem;
	struct gguf_file g;
	const struct gguf_str *s;
	size_t len;
	void *buf;
	FILE *f;
	int disk;

	if (!td)
		SKIP("no testdata");
	snprintf(path, sizeof path, "%s/stories260K/stories260K-F16.gguf", td);
	buf = test_read_file(path, &len);
	if (!buf)
		SKIP("no stories260K-F16.gguf");
	snprintf(tmp, sizeof tmp, "%s/gguf_disk.img", test_tmpdir());
	f = fopen(tmp, "wb");
	fwrite(buf, 1, len, f);
	for (int i = 0; i < 5000; i++)
		fputc(0, f);
	fclose(f);
	free(buf);
	disk = host_add_disk(tmp);
	CHECK(disk >= 0);
	llm_reader_disk(&r, disk);
	CHECK_EQ_INT(r.size, len + 5000);
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(gguf_open(&g, &r, &mem, err, sizeof err), 0);
	CHECK(gguf_get_str(&g, "general.architecture", &s) == 0 && strcmp(s->s, "llama") == 0);
	const struct gguf_tensor *t = gguf_find_tensor(&g, "blk.4.ffn_down.weight");
	CHECK(t && t->type == GGML_TYPE_F16 && t->ne[0] == 172 && t->ne[1] == 64);
	CHECK(g.extent <= len && g.extent + g.alignment > len);
	uint32_t ctx = 0;
	CHECK(gguf_get_u32(&g, "llama.context_length", &ctx) == 0 && ctx == 128);
	gguf_close(&g);
	CHECK_EQ_INT(mem.used, 0);
	host_remove_disks();
	remove(tmp);
}
