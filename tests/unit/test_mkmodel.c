/* tests/unit/test_mkmodel.c — tools/writer/mkmodel_write.c writes models gguf and tok accept. */
#include "test.h"

#include <stdlib.h>

#include "../../llm/gguf.h"
#include "../../llm/quant.h"
#include "../../llm/tok.h"
#include "../../tools/writer/mkmodel.h"

static int open_model(const char *path, struct gguf_file *g, struct llm_mem *mem, void **buf)
{
	struct llm_reader r;
	struct llm_membuf mb;
	char err[256];
	size_t len;
	int rc;

	*buf = test_read_file(path, &len);
	if (!*buf)
		return -1;
	llm_reader_mem(&r, &mb, *buf, len);
	rc = gguf_open(g, &r, mem, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "  %s: %s\n", path, err);
	else if (g->extent != len)
		fprintf(stderr, "  extent %llu != size %zu\n", (unsigned long long)g->extent, len);
	return rc < 0 ? rc : g->extent == len ? 0 : -1;
}

static void check_tensor(const struct gguf_file *g, const char *name, uint32_t type, uint64_t ne0,
			 uint64_t ne1)
{
	const struct gguf_tensor *t = gguf_find_tensor(g, name);

	if (!t) {
		fprintf(stderr, "  no tensor %s\n", name);
		test_failed_checks++;
		return;
	}
	if (t->type != type || t->ne[0] != ne0 || t->ne[1] != ne1) {
		fprintf(stderr, "  %s: %s [%llu, %llu], want %s [%llu, %llu]\n", name,
			gguf_type_name(t->type), (unsigned long long)t->ne[0],
			(unsigned long long)t->ne[1], gguf_type_name(type),
			(unsigned long long)ne0, (unsigned long long)ne1);
		test_failed_checks++;
	}
}

TEST(mkmodel_every_type_parses)
{
	char path[600], err[256];

	/* every weight type of the quant table, by its name */
	for (uint32_t type = 0; type < GGML_TYPE_COUNT; type++) {
		const char *name = quant_name(type);
		struct mkm_spec s;
		struct llm_mem mem;
		struct gguf_file g;
		enum mkm_mix mix;
		void *buf;
		if (!quant_is_weight(type))
			continue;

		mkm_defaults(&s);
		s.dim = 256;
		s.ffn = 512;
		s.vocab = 400;
		CHECK_EQ_INT(mkm_parse_type(name, &s.type, &mix), 0);
		CHECK_EQ_INT(s.type, type);
		s.mix = MKM_MIX_PURE;
		snprintf(path, sizeof path, "%s/mkm_%s.gguf", test_tmpdir(), name);
		CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
		llm_mem_init(&mem, 0);
		if (open_model(path, &g, &mem, &buf) == 0) {
			CHECK_EQ_INT(g.n_tensors, 2 + 2 * 9 + 1);
			check_tensor(&g, "token_embd.weight", s.type, 256, 400);
			check_tensor(&g, "output.weight", s.type, 256, 400);
			check_tensor(&g, "blk.1.ffn_down.weight", s.type, 512, 256);
			check_tensor(&g, "blk.0.attn_k.weight", s.type, 256, 128);
			check_tensor(&g, "blk.0.attn_norm.weight", GGML_TYPE_F32, 256, 1);
			/* The weights dequantize to finite values of the asked spread. */
			const struct gguf_tensor *t = gguf_find_tensor(&g, "blk.0.ffn_up.weight");
			float *f = malloc(t->n_elems * 4);
			double sq = 0;
			quant_scalar(t->type)->to_float((uint8_t *)buf + t->offset, f, t->n_elems);
			for (uint64_t j = 0; j < t->n_elems; j++)
				sq += (double)f[j] * f[j];
			double sd = sqrt(sq / t->n_elems);
			if (!(sd > 0.014 && sd < 0.026)) {
				fprintf(stderr, "  %s: weight sd %g\n", name, sd);
				test_failed_checks++;
			}
			free(f);
			gguf_close(&g);
		} else {
			test_failed_checks++;
		}
		free(buf);
		remove(path);
	}
}

TEST(mkmodel_mixes_and_fallbacks)
{
	struct mkm_spec s;

	mkm_defaults(&s);
	s.n_layers = 8;
	s.dim = 256;
	CHECK_EQ_INT(mkm_parse_type("q4_k_m", &s.type, &s.mix), 0);
	CHECK_EQ_INT(s.mix, MKM_MIX_M);
	CHECK_EQ_INT(mkm_tensor_type(&s, "output.weight", 0, 256), GGML_TYPE_Q6_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "token_embd.weight", 0, 256), GGML_TYPE_Q4_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.0.attn_v.weight", 0, 256), GGML_TYPE_Q6_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.1.attn_v.weight", 1, 256), GGML_TYPE_Q4_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.3.ffn_down.weight", 3, 256), GGML_TYPE_Q6_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.7.ffn_down.weight", 7, 256), GGML_TYPE_Q6_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.1.attn_q.weight", 1, 256), GGML_TYPE_Q4_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.1.ffn_down.weight", 1, 288), GGML_TYPE_Q5_0);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.1.ffn_down.weight", 1, 172), GGML_TYPE_F16);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.1.ffn_norm.weight", 1, 256), GGML_TYPE_F32);
	s.type = GGML_TYPE_Q4_0;
	s.mix = MKM_MIX_DEFAULT;
	CHECK_EQ_INT(mkm_tensor_type(&s, "output.weight", 0, 256), GGML_TYPE_Q6_K);
	CHECK_EQ_INT(mkm_tensor_type(&s, "blk.0.attn_v.weight", 0, 256), GGML_TYPE_Q4_0);
	CHECK_EQ_INT(mkm_tensor_type(&s, "output.weight", 0, 64), GGML_TYPE_Q8_0);
	s.mix = MKM_MIX_PURE;
	CHECK_EQ_INT(mkm_tensor_type(&s, "output.weight", 0, 256), GGML_TYPE_Q4_0);
	s.type = GGML_TYPE_Q8_0;
	CHECK_EQ_INT(mkm_tensor_type(&s, "x.weight", 0, 48), GGML_TYPE_F16);
	CHECK_EQ_INT(mkm_parse_type("Q9_K", &s.type, &s.mix), -1);
	CHECK_EQ_INT(mkm_parse_type("Q8_K", &s.type, &s.mix), -1); /* activations only */
	/* the names --type takes: every weight type, then the mixes, each parses */
	size_t k = 0;
	for (; mkm_type_name(k); k++)
		CHECK_EQ_INT(mkm_parse_type(mkm_type_name(k), &s.type, &s.mix), 0);
	CHECK_STR(mkm_type_name(0), "F32");
	CHECK_STR(mkm_type_name(k - 1), "Q5_K_M");
}

/* qwen2 with biases, GQA, tied head; same spec twice gives the same bytes;
 * the vocabulary builds a working SPM tokenizer with byte fallback. */
TEST(mkmodel_qwen2_deterministic_and_tokenizes)
{
	struct mkm_spec s;
	struct llm_mem mem;
	struct gguf_file g;
	struct tok t;
	char p1[600], p2[600], err[256];
	void *buf, *b2;
	size_t l1, l2;

	mkm_defaults(&s);
	s.arch = "qwen2";
	s.heads = 8;
	s.kv_heads = 2;
	s.tied = true;
	s.type = GGML_TYPE_Q8_0;
	s.vocab = 1000;
	s.chat_template = "{% for m in messages %}<|im_start|>{% endfor %}";
	snprintf(p1, sizeof p1, "%s/mkm_q1.gguf", test_tmpdir());
	snprintf(p2, sizeof p2, "%s/mkm_q2.gguf", test_tmpdir());
	CHECK_EQ_INT(mkm_write(&s, p1, err, sizeof err), 0);
	CHECK_EQ_INT(mkm_write(&s, p2, err, sizeof err), 0);
	buf = test_read_file(p1, &l1);
	b2 = test_read_file(p2, &l2);
	CHECK(buf && b2 && l1 == l2 && memcmp(buf, b2, l1) == 0);
	free(buf);
	free(b2);
	llm_mem_init(&mem, 0);
	if (open_model(p1, &g, &mem, &buf) != 0) {
		test_failed_checks++;
		free(buf);
		return;
	}
	uint32_t v = 0;
	const struct gguf_str *arch;
	CHECK(gguf_get_str(&g, "general.architecture", &arch) == 0 && !strcmp(arch->s, "qwen2"));
	CHECK(gguf_get_u32(&g, "qwen2.attention.head_count_kv", &v) == 0 && v == 2);
	check_tensor(&g, "blk.1.attn_k.bias", GGML_TYPE_F32, 16, 1);
	check_tensor(&g, "blk.1.attn_q.bias", GGML_TYPE_F32, 64, 1);
	CHECK(gguf_find_tensor(&g, "output.weight") == NULL);
	CHECK_EQ_INT(tok_init(&t, &g, &mem, err, sizeof err), 0);
	if (!err[0]) {
		const char *text = "Hello world, \xc3\xa9t\xc3\xa9!";
		int32_t ids[64];
		char out[128];
		size_t n = 0, m = 0;
		CHECK_EQ_INT(tok_encode(&t, text, strlen(text), true, false, ids, 64, &n), 0);
		CHECK(n > 3 && ids[0] == 1);
		/* Without BOS the round trip is exact (llama.cpp keeps the space after BOS). */
		CHECK_EQ_INT(tok_encode(&t, text, strlen(text), false, false, ids, 64, &n), 0);
		CHECK(n > 3 && ids[0] != 1);
		/* "é" has no piece: it must come out as its two byte tokens. */
		int bytes = 0;
		for (size_t j = 0; j < n; j++)
			bytes += ids[j] == 3 + 0xc3 || ids[j] == 3 + 0xa9;
		CHECK_EQ_INT(bytes, 4);
		CHECK_EQ_INT(tok_decode(&t, ids, n, true, false, out, sizeof out, &m), 0);
		CHECK_STR(out, text);
		tok_free(&t);
	} else {
		fprintf(stderr, "  %s\n", err);
	}
	gguf_close(&g);
	free(buf);
	CHECK_EQ_INT(mem.used, 0);
	remove(p1);
	remove(p2);
}

TEST(mkmodel_rejects_bad_shapes)
{
	struct mkm_spec s;
	char err[256];

	mkm_defaults(&s);
	s.heads = 5;
	CHECK_EQ_INT(mkm_check(&s, err, sizeof err), -1);
	CHECK(strstr(err, "dim 64 is not heads (5)") != NULL);
	mkm_defaults(&s);
	s.kv_heads = 3;
	CHECK_EQ_INT(mkm_check(&s, err, sizeof err), -1);
	CHECK(strstr(err, "kv-heads 3") != NULL);
	mkm_defaults(&s);
	s.arch = "gpt2";
	CHECK_EQ_INT(mkm_write(&s, "/nonexistent/x.gguf", err, sizeof err), -1);
	CHECK(strstr(err, "'gpt2'") != NULL);
	mkm_defaults(&s);
	CHECK_EQ_INT(mkm_write(&s, "/nonexistent/x.gguf", err, sizeof err), -1);
	CHECK(strstr(err, "cannot create") != NULL);
}
