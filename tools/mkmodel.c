/*
 * tools/mkmodel.c — build/host/mkmodel: write a synthetic GGUF model.
 * The work is in tools/host/mkmodel_write.c; this is the command line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/mkmodel.h"

static const char usage[] =
"usage: mkmodel [options] -o FILE\n"
"Write a deterministic synthetic GGUF v3 model: random but valid weights of\n"
"any shape and quant type, and a small SentencePiece vocabulary with byte\n"
"fallback (<unk> <s> </s>, 256 byte tokens, then pieces).\n"
"\n"
"  -o, --out FILE        output path (required)\n"
"  --arch NAME           general.architecture, llama (default); --archs lists\n"
"                        them (qwen2 adds attn_q/k/v biases, qwen3 Q/K norms)\n"
"  --archs               print the architectures, one a line, and exit\n"
"  --ref NAME            the reference model of architecture NAME\n"
"                        (tests/refs/arch; later options change it)\n"
"  --name NAME           general.name (default \"mkmodel\")\n"
"  --layers N            transformer blocks (2)\n"
"  --dim N               embedding length (64)\n"
"  --ffn N               feed-forward length (172)\n"
"  --heads N             attention heads (4)\n"
"  --kv-heads N          key/value heads, GQA (2)\n"
"  --vocab N             vocabulary size, >= 300 (512)\n"
"  --ctx N               context length (256)\n"
"  --type T              weight type, one of the types listed below (F32)\n"
"                        As llama-quantize: output.weight is Q6_K for types\n"
"                        below Q6_K; _M also gives Q6_K to attn_v and ffn_down\n"
"                        of the first and last eighth of the layers and every\n"
"                        third between; rows that do not split into 256-blocks\n"
"                        fall back (Q4_K->Q5_0, Q5_K->Q5_1, Q6_K->Q8_0, Q2/3_K->Q4_0)\n"
"  --pure                every weight matrix in --type (no output/_M bumps)\n"
"  --tied                no output.weight (the head reuses token_embd)\n"
"  --yarn F              rope.scaling.type yarn, factor F, original context --ctx / 4\n"
"  --rope-freqs          rope_freqs.weight, llama 3.x frequency factors (factor 8)\n"
"  --experts N           a mixture of N experts, 2 a token (llama: Mixtral's layout)\n"
"                        for an original context of --ctx / 2\n"
"  --rope-base F         rope.freq_base (10000)\n"
"  --norm-eps F          attention.layer_norm_rms_epsilon (1e-5)\n"
"  --std F               standard deviation of the weights (0.02)\n"
"  --seed N              weight seed (1): same options, same bytes\n"
"  --chat-template S     tokenizer.chat_template\n"
"  --chatml              the last two ids are the control tokens <|im_start|> and\n"
"                        <|im_end|>; with no --chat-template, a ChatML one\n"
"  --shape NAME          preset shape: tinyllama (22 layers, 2048 dim, 5632 ffn,\n"
"                        32 heads, 4 KV heads, 32000 vocab, ctx 2048) or llama2-7b\n"
"                        (32, 4096, 11008, 32, 32, 32000, 4096); later options win\n"
"  -h, --help            this text\n"
"\n"
"examples:\n"
"  mkmodel --shape tinyllama --type Q4_K_M -o tinyllama-q4_k_m.gguf\n"
"  mkmodel --arch qwen2 --layers 2 --dim 128 --ffn 256 --type Q8_0 -o tiny.gguf\n";

static int num(const char *opt, const char *v, unsigned long max, uint32_t *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = v ? strtoul(v, &end, 10) : 0;
	if (!v || errno || *end || n > max) {
		fprintf(stderr, "mkmodel: %s needs a number <= %lu, got '%s'\n", opt, max, v ? v : "");
		return -1;
	}
	*out = (uint32_t)n;
	return 0;
}

static int flt(const char *opt, const char *v, float *out)
{
	char *end;

	*out = v ? strtof(v, &end) : 0;
	if (!v || *end || !(*out > 0)) {
		fprintf(stderr, "mkmodel: %s needs a positive number, got '%s'\n", opt, v ? v : "");
		return -1;
	}
	return 0;
}

static int shape(struct mkm_spec *s, const char *name)
{
	if (name && strcmp(name, "tinyllama") == 0) {
		s->n_layers = 22, s->dim = 2048, s->ffn = 5632, s->heads = 32, s->kv_heads = 4;
		s->vocab = 32000, s->ctx = 2048, s->name = "TinyLlama-1.1B-shaped (mkmodel)";
		return 0;
	}
	if (name && strcmp(name, "llama2-7b") == 0) {
		s->n_layers = 32, s->dim = 4096, s->ffn = 11008, s->heads = 32, s->kv_heads = 32;
		s->vocab = 32000, s->ctx = 4096, s->name = "Llama-2-7B-shaped (mkmodel)";
		return 0;
	}
	fprintf(stderr, "mkmodel: unknown --shape '%s' (tinyllama, llama2-7b)\n", name ? name : "");
	return -1;
}

/* One option (and its value, argv[i + 1]); returns the arguments used or -1. */
static int option(struct mkm_spec *s, const char **out, char **argv, int i)
{
	const char *o = argv[i], *v = argv[i + 1];
	const unsigned long big = 1ul << 24;

	if (!strcmp(o, "-o") || !strcmp(o, "--out")) { *out = v; return v ? 2 : -1; }
	if (!strcmp(o, "--arch")) { s->arch = v; return v ? 2 : -1; }
	if (!strcmp(o, "--ref")) {
		if (v && mkm_ref_spec(s, v) == 0)
			return 2;
		fprintf(stderr, "mkmodel: --ref '%s' is not an architecture (see --archs)\n",
			v ? v : "");
		return -1;
	}
	if (!strcmp(o, "--name")) { s->name = v; return v ? 2 : -1; }
	if (!strcmp(o, "--chat-template")) { s->chat_template = v; return v ? 2 : -1; }
	if (!strcmp(o, "--chatml")) { s->chatml = true; return 1; }
	if (!strcmp(o, "--layers")) return num(o, v, 4096, &s->n_layers) ? -1 : 2;
	if (!strcmp(o, "--dim")) return num(o, v, big, &s->dim) ? -1 : 2;
	if (!strcmp(o, "--ffn")) return num(o, v, big, &s->ffn) ? -1 : 2;
	if (!strcmp(o, "--heads")) return num(o, v, 4096, &s->heads) ? -1 : 2;
	if (!strcmp(o, "--kv-heads")) return num(o, v, 4096, &s->kv_heads) ? -1 : 2;
	if (!strcmp(o, "--vocab")) return num(o, v, big, &s->vocab) ? -1 : 2;
	if (!strcmp(o, "--ctx")) return num(o, v, big, &s->ctx) ? -1 : 2;
	if (!strcmp(o, "--rope-base")) return flt(o, v, &s->rope_base) ? -1 : 2;
	if (!strcmp(o, "--norm-eps")) return flt(o, v, &s->norm_eps) ? -1 : 2;
	if (!strcmp(o, "--std")) return flt(o, v, &s->std) ? -1 : 2;
	if (!strcmp(o, "--shape")) return shape(s, v) ? -1 : 2;
	if (!strcmp(o, "--pure")) { s->mix = MKM_MIX_PURE; return 1; }
	if (!strcmp(o, "--tied")) { s->tied = true; return 1; }
	if (!strcmp(o, "--rope-freqs")) { s->rope_freqs = true; return 1; }
	if (!strcmp(o, "--experts")) {
		uint32_t n = 0;
		if (num(o, v, 512, &n))
			return -1;
		mkm_set_experts(s, n, n < 2 ? n : 2);
		return 2;
	}
	if (!strcmp(o, "--yarn")) return flt(o, v, &s->rope_yarn) ? -1 : 2;
	if (!strcmp(o, "--seed")) {
		char *end;
		s->seed = v ? strtoull(v, &end, 0) : 0;
		if (!v || *end) {
			fprintf(stderr, "mkmodel: --seed needs a number, got '%s'\n", v ? v : "");
			return -1;
		}
		return 2;
	}
	if (!strcmp(o, "--type")) {
		enum mkm_mix mix;
		if (!v || mkm_parse_type(v, &s->type, &mix) < 0) {
			fprintf(stderr, "mkmodel: unknown --type '%s' (see --help)\n", v ? v : "");
			return -1;
		}
		if (s->mix != MKM_MIX_PURE)
			s->mix = mix;
		return 2;
	}
	fprintf(stderr, "mkmodel: unknown option '%s' (see --help)\n", o);
	return -1;
}

int main(int argc, char **argv)
{
	struct mkm_spec s;
	const char *out = NULL;
	char err[256];

	mkm_defaults(&s);
	for (int i = 1; i < argc;) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			fputs("\ntypes:", stdout);
			for (size_t k = 0; mkm_type_name(k); k++)
				printf(" %s", mkm_type_name(k));
			putchar('\n');
			return 0;
		}
		if (!strcmp(argv[i], "--archs")) {
			char names[256];
			mkm_arch_names(names, sizeof names);
			for (char *p = strtok(names, ", "); p; p = strtok(NULL, ", "))
				puts(p);
			return 0;
		}
		int used = option(&s, &out, argv, i);
		if (used < 0) {
			if (i + 1 >= argc || !argv[i + 1])
				fprintf(stderr, "mkmodel: %s needs a value\n", argv[i]);
			return 2;
		}
		i += used;
	}
	if (!out) {
		fprintf(stderr, "mkmodel: no output file (-o FILE); see --help\n");
		return 2;
	}
	if (mkm_write(&s, out, err, sizeof err) < 0) {
		fprintf(stderr, "mkmodel: %s\n", err);
		return 1;
	}
	return 0;
}
