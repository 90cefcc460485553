/*
 * tools/writer/mkmodel.h — synthetic GGUF models for tests and benchmarks
 * (tools/mkmodel.c is the command line; tests call mkmodel_write directly).
 *
 * Deterministic: the same spec writes the same bytes. Weights are valid
 * random blocks (quant_fill_random), written tensor by tensor in chunks, so
 * a 7B-shaped file needs a few MB of memory and seconds of CPU.
 */
#ifndef TOOLS_WRITER_MKMODEL_H
#define TOOLS_WRITER_MKMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mkm_mix {
	MKM_MIX_DEFAULT, /* like llama-quantize: output.weight in Q6_K below Q6_K */
	MKM_MIX_PURE,    /* every matrix in the base type (llama-quantize --pure) */
	MKM_MIX_M,       /* _M: Q6_K for output, and attn_v/ffn_down of some layers */
};

struct mkm_spec {
	const char *arch;        /* a name of llm/model_hparams.c's model_archs[] */
	const char *name;        /* general.name */
	uint32_t n_layers, dim, ffn, heads, kv_heads, vocab, ctx;
	uint32_t type;           /* base weight type (enum ggml_type) */
	enum mkm_mix mix;
	float rope_base, norm_eps, std;
	uint64_t seed;
	bool tied;               /* no output.weight: the head reuses token_embd */
	bool rope_freqs;         /* rope_freqs.weight: llama 3.x frequency factors (factor 8,
				    low 1, high 4) for an original context of ctx / 2 */
	bool longrope;           /* LongRoPE (phi3 128k): rope_factors_long/short.weight, an
				    original context of ctx / 4 and its attention factor */
	uint32_t n_expert, n_expert_used; /* a mixture of experts when n_expert > 0
				    (mkm_set_experts) */
	uint32_t ffn_exp, ffn_shexp; /* an expert's width, the shared expert's */
	uint32_t swa;            /* <arch>.attention.sliding_window when > 0 */
	float attn_cap, final_cap; /* <arch>.{attn,final}_logit_softcapping when > 0 */
	float rope_linear;       /* rope.scaling.type linear with this factor when > 0 */
	float rope_yarn;         /* rope.scaling.type yarn with this factor when > 0, the
				    original context ctx / 4 */
	const char *chat_template; /* tokenizer.chat_template, or NULL */
	bool chatml;             /* the vocabulary's last two ids are the control tokens
				    <|im_start|> and <|im_end|>; and, without chat_template,
				    a ChatML one */
};

/* Experts for s (its arch set): n_expert of them, n_used a token; an
 * expert 32 wide for qwen2moe/qwen3moe (s->ffn for llama's), the shared
 * one 48. */
void mkm_set_experts(struct mkm_spec *s, uint32_t n_expert, uint32_t n_used);
/* Defaults: llama, 2 layers, dim 64, ffn 172, 4 heads, 2 KV heads, vocab 512,
 * ctx 256, F32, seed 1. */
void mkm_defaults(struct mkm_spec *s);
/* The reference model of architecture arch (tests/refs/arch/: llama.cpp's
 * greedy ids on it): a few layers, every trait of the architecture on,
 * weights wide enough that greedy choices are rarely near-ties. 0, or -1
 * for an architecture model_archs[] does not have. */
int mkm_ref_spec(struct mkm_spec *s, const char *arch);
/* The architectures mkmodel writes (model_archs[]), ", "-separated, into
 * buf; the length it wanted. */
size_t mkm_arch_names(char *buf, size_t n);
/* Parse "Q4_K_M", "q4_0", "F16", ... into type and mix; 0 or -1. */
int mkm_parse_type(const char *s, uint32_t *type, enum mkm_mix *mix);
/* The i-th name --type takes (every weight type, then the mixes); NULL
 * past the last. */
const char *mkm_type_name(size_t i);
/* Check the shape (one message to err on failure); 0 or -1. */
int mkm_check(const struct mkm_spec *s, char *err, size_t errlen);
/* Write the model to path; 0, or -1 with a message in err. */
int mkm_write(const struct mkm_spec *s, const char *path, char *err, size_t errlen);
/* The type the tensor `name` (of row length ne0) gets under spec s. */
uint32_t mkm_tensor_type(const struct mkm_spec *s, const char *name, uint32_t layer, uint64_t ne0);

#endif
