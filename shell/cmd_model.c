/*
 * shell/cmd_model.c — the model commands: load, unload, info, infer, chat,
 * stats, profile. The engine lives in sh->engine, created on first use
 * (shell_engine, shell.c); the
 * commands ask it (engine.h's calls and snapshots) and print the answers.
 * Its settings and their flags are cmd_model_cfg.c's table.
 */
#include "cmd_model.h"
#include "cmd_model_cfg.h"
#include "info_stats.h"
#include "cmd_seal.h"
#include "cmd_attest.h"
#include "json_msgs.h"
#include "http/api_format.h"

/* The loaded model's info; false (info->loaded false) when none. */
static bool loaded(struct shell *sh, struct engine_info *info)
{
	if (sh->engine)
		return engine_get_info(sh->engine, info) == 0;
	memset(info, 0, sizeof *info);
	return false;
}

/* A string the model's file gave (general.name, ...), printable (text.c). */
static const char *file_str(const char *s, char *buf, size_t n)
{
	return shell_clean(s, strlen(s), buf, n);
}

/* ---- load / unload ---- */
#define LOAD_USAGE "load [--vocab-only] [--stream|--resident] [-c|--ctx-size N] N|NAME|ID"
static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int cmd_load(struct shell *sh, int argc, char **argv)
{
	struct engine *e = shell_engine(sh);
	bool vocab_only = false;
	enum engine_weights weights = ENGINE_WEIGHTS_AUTO;
	const char *what = NULL;
	struct engine_config cfg;
	struct engine_info info;
	struct engine_plan plan;
	struct engine_stats st;
	char err[256], name[96], arch[48];
	const char *ctx_flag = NULL, *ctx = NULL;
	int disk, r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--vocab-only") == 0)
			vocab_only = true;
		else if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--ctx-size")) {
			/* llama-cli's context size, for this load (config ctx: every load) */
			if (i + 1 == argc)
				return shell_err(sh, -LLMK_EINVAL, "load: %s needs a value", argv[i]);
			ctx_flag = argv[i];
			ctx = argv[++i];
		} else if (strcmp(argv[i], "--stream") == 0)
			weights = ENGINE_WEIGHTS_STREAM;
		else if (strcmp(argv[i], "--resident") == 0)
			weights = ENGINE_WEIGHTS_RESIDENT;
		else if (argv[i][0] == '-' && argv[i][1])
			return shell_err(sh, -LLMK_EINVAL, "load: unknown flag '%s'", argv[i]);
		else if (what)
			return shell_err(sh, -LLMK_EINVAL, "load: too many arguments");
		else
			what = argv[i];
	}
	if (!what)
		return shell_err(sh, -LLMK_EINVAL, "load: missing argument (usage: %s)", LOAD_USAGE);
	if (all_digits(what)) {
		if ((r = shell_arg_disk(sh, what, &disk)))
			return r;
	} else if ((r = shell_model_find(sh, what, &disk))) {
		return r;
	}
	engine_get_config(e, &cfg);
	cfg.keysrc = shell_seal_keysrc(sh);
	cfg.weights = weights;
	uint32_t cfg_ctx = cfg.n_ctx;
	/* parsed as config ctx's value is, its range included */
	if (ctx && (r = shell_model_flag_parse(sh, shell_config_find("ctx"), ctx_flag, ctx, &cfg)))
		return r;
	/* the model's digest into the attestation service's measurements, once
	 * the engine has it */
	if (!vocab_only && (r = shell_attest_model_loading(sh, &cfg)))
		return r;
	engine_set_config(e, &cfg);
	r = engine_load(e, disk, vocab_only, err, sizeof err);
	cfg.n_ctx = cfg_ctx;
	engine_set_config(e, &cfg);
	if (r)
		return shell_err(sh, r, "load: disk %d: %s", disk, err);
	if (!vocab_only && (r = shell_attest_measure_model(sh))) {
		engine_unload(e);
		return r;
	}
	engine_get_info(e, &info);
	engine_get_stats(e, &st);
	plat_printf("loaded disk %d: %s%s%s, %u tokens vocabulary%s", disk,
		    info.hp.name[0] ? file_str(info.hp.name, name, sizeof name) : "(unnamed)",
		    vocab_only ? "" : ", ",
		    vocab_only ? "" : file_str(info.hp.arch_name, arch, sizeof arch),
		    info.n_vocab, vocab_only ? " (vocabulary only)" : "");
	if (!vocab_only && engine_get_plan(e, &plan) == 0)
		plat_printf(", context %u, %s, %.1f ms", plan.n_ctx,
			    plan.streaming ? "streaming" : "resident", (double)st.run.load_ns / 1e6);
	plat_printf("\n");
	return 0;
}

static int cmd_unload(struct shell *sh, int argc, char **argv)
{
	struct engine_info info;

	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	if (!loaded(sh, &info))
		return shell_err(sh, -LLMK_EINVAL, "unload: no model loaded");
	engine_unload(sh->engine);
	plat_printf("unloaded\n");
	return 0;
}

/* ---- info ---- */
static void info_quant_mix(const struct engine_info *info)
{
	char h[32];

	plat_printf("  quant mix     ");
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++)
		if (info->type_count[t])
			plat_printf(" %s x%llu (%s)", quant_name(t),
				    (unsigned long long)info->type_count[t],
				    shell_human_size(info->type_bytes[t], h, sizeof h));
	plat_printf("\n");
}

static void info_model(const struct engine_info *info, const struct engine_plan *p)
{
	const struct model_hparams *hp = &info->hp;
	char a[32], b[32], c[32], bud[48], arch[48];

	plat_printf("  architecture   %s\n", file_str(hp->arch_name, arch, sizeof arch));
	plat_printf("  parameters     %llu (%.2f M)\n", (unsigned long long)hp->n_params,
		    (double)hp->n_params / 1e6);
	plat_printf("  shape          %u layers, embd %u, ffn %u, heads %u (kv %u), head dim %u\n",
		    hp->n_layer, hp->n_embd, hp->n_ff, hp->n_head, hp->n_head_kv, hp->head_dim);
	if (hp->n_expert)
		plat_printf("  experts        %u, %u a token, %u wide%s (every one read per pass "
			    "when streamed)\n", hp->n_expert, hp->n_expert_used, hp->n_ff_exp,
			    hp->arch->moe_shexp ? ", a shared one" : "");
	plat_printf("  rope           %s, dims %u, base %g, scale %g%s\n",
		    hp->arch->rope == MODEL_ROPE_NEOX ? "neox" : "norm", hp->rope_dim, (double)hp->rope_base,
		    (double)(1.0f / hp->rope_scale), hp->rope_freqs ? ", llama3 freq factors"
		    : hp->longrope ? ", LongRoPE factors" : "");
	plat_printf("  output         %s, rms eps %g%s\n",
		    hp->tied_output ? "tied to token_embd" : "output.weight", (double)hp->norm_eps,
		    hp->qkv_bias ? ", qkv bias" : "");
	info_quant_mix(info);
	if (p->ctx_capped)
		plat_printf("  context        %u (%s %u; capped %s)\n", p->n_ctx,
			    p->ctx_from_file ? "the file says" : "config ctx", p->n_ctx_asked,
			    p->ctx_capped);
	else
		plat_printf("  context        %u (trained %u)\n", p->n_ctx, hp->n_ctx_train);
	plat_printf("  memory         weights %s (%s), kv %s (%s), scratch %s; held %s of %s\n",
		    shell_human_size(p->weight_bytes, a, sizeof a), p->weights_kind,
		    shell_human_size(p->kv_bytes, b, sizeof b), kv_type_name(p->kv_type),
		    shell_human_size(p->scratch_bytes, c, sizeof c),
		    shell_human_size(p->mem_used, a + 16, 16), shell_budget(p, bud, sizeof bud));
	if (p->packed_bytes) {
		plat_printf("  packed         %s of the weights (",
			    shell_human_size(p->packed_bytes, a, sizeof a));
		for (uint32_t t = 0, n = 0; t < GGML_TYPE_COUNT; t++)
			if (p->packed_types >> t & 1)
				plat_printf("%s%s", n++ ? " " : "", quant_name(t));
		plat_printf("), for the packed kernels (%.0f ms at load; config pack off to keep "
			    "GGUF order)\n", (double)p->pack_ns / 1e6);
	}
	shell_print_plan(p);
}

static int cmd_info(struct shell *sh, int argc, char **argv)
{
	struct engine_info info;
	struct engine_plan plan;
	char name[96], tm[32], tp[48];

	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	if (!loaded(sh, &info))
		return shell_err(sh, -LLMK_EINVAL, "info: no model loaded (use 'load N')");
	plat_printf("model %s (disk %d)%s\n",
		    info.hp.name[0] ? file_str(info.hp.name, name, sizeof name) : "(unnamed)",
		    info.disk, info.vocab_only ? ", vocabulary only" : "");
	if (info.sealed)
		plat_printf("  sealed         AES-256-GCM, %llu chunks of %u; %s\n",
			    (unsigned long long)info.seal_chunks, info.seal_chunk_size,
			    shell_seal_key_note(sh) ? shell_seal_key_note(sh) : "key no longer loaded");
	if (info.measure_pending)
		plat_printf("  measured       SHA-256 as loaded: %llu of %llu bytes so far, the first "
			    "pass the rest; every read after checked against it: %llu blocks of "
			    "%u KiB, %s\n",
			    (unsigned long long)info.measured_bytes, (unsigned long long)info.extent,
			    (unsigned long long)info.bind_blocks, info.bind_block >> 10,
			    info.bind_impl);
	else if (info.digest_as_loaded && info.bind_blocks)
		plat_printf("  measured       SHA-256 as loaded; every read checked against it: "
			    "%llu blocks of %u KiB, %s\n",
			    (unsigned long long)info.bind_blocks, info.bind_block >> 10,
			    info.bind_impl);
	else if (info.digest_as_loaded)
		plat_printf("  measured       SHA-256 as loaded (held in memory)\n");
	if (engine_get_plan(sh->engine, &plan) == 0)
		info_model(&info, &plan);
	plat_printf("  vocab          %u tokens, %s%s%s, bos %d, eos %d\n", info.n_vocab,
		    file_str(info.tok_model, tm, sizeof tm), info.tok_pre ? " pre " : "",
		    info.tok_pre ? file_str(info.tok_pre, tp, sizeof tp) : "", info.bos, info.eos);
	plat_printf("  chat template  %s (%s%s)\n", chat_tmpl_name(info.tmpl),
		    engine_tmpl_source(&info),
		    info.tmpl == CHAT_UNKNOWN ? ": chat needs --chat-template NAME" : "");
	return 0;
}

/* ---- infer / chat flags ---- */
struct gen_args {
	struct engine_gen g;
	bool ids;
	const char *text;   /* the prompt (infer) or message (chat) */
	const char *system; /* chat --system */
	const char *messages; /* chat --messages: a JSON array */
	bool show_prompt;   /* chat --show-prompt / --verbose-prompt */
	char *file;         /* --grammar-file's text (plat_alloc, GRAMMAR_FILE_MAX) */
	char *tmpl_file;    /* --chat-template-file's text (plat_alloc, GRAMMAR_FILE_MAX) */
	char *tools;        /* chat --tools FILE's text (the same) */
};

/* The template names, for errors: one table (llm/chat.c) says them. */
static const char *chat_names(char *buf, size_t n)
{
	chat_tmpl_list(buf, n);
	return buf;
}

/* The most bytes a --grammar-file may hold (the engine's own bound is
 * GRAM_MAX_TEXT). */
#define GRAMMAR_FILE_MAX (256u << 10)

static void gen_release(struct gen_args *a)
{
	if (a->file)
		plat_free(a->file, GRAMMAR_FILE_MAX);
	if (a->tmpl_file)
		plat_free(a->tmpl_file, GRAMMAR_FILE_MAX);
	if (a->tools)
		plat_free(a->tools, GRAMMAR_FILE_MAX);
	a->file = a->tmpl_file = a->tools = NULL;
}

/* --grammar TEXT, --grammar-file F, -j/--json-schema SCHEMA,
 * --json-schema-file F: the run's grammar (one of them). */
static int flag_grammar(struct shell *sh, struct gen_args *a, const char *f, const char *v)
{
	bool schema = !strcmp(f, "-j") || !strncmp(f, "--json-schema", 13);
	int n;

	if (a->g.grammar || a->g.json_schema)
		return shell_err(sh, -LLMK_EINVAL, "%s: one grammar or schema a run (%s after another)",
				 sh->argv[0], f);
	if (!strcmp(f, "--grammar") || !strcmp(f, "-j") || !strcmp(f, "--json-schema")) {
		*(schema ? &a->g.json_schema : &a->g.grammar) = v;
		return 0;
	}
	if (!(a->file = plat_alloc(GRAMMAR_FILE_MAX, 64)))
		return shell_err(sh, -LLMK_ENOMEM, "%s: no memory for '%s'", f, v);
	if ((n = plat_boot_file(v, a->file, GRAMMAR_FILE_MAX - 1)) < 0)
		return shell_err(sh, n, "%s: cannot read '%s': %s", f, v,
				 n == -LLMK_ERANGE ? "larger than 256 KiB" : plat_strerror(n));
	a->file[n] = 0;
	*(schema ? &a->g.json_schema : &a->g.grammar) = a->file;
	return 0;
}

/* --chat-template-file F: a Jinja chat template from the boot volume (the
 * host: its file system), run instead of the model's. It decides what the
 * model is shown, so it is measured before use (shell_boot_file: "llmk
 * boot-file F <sha256>", PCR 23 / RTMR3), as the key files are. */
static int flag_tmpl_file(struct shell *sh, struct gen_args *a, const char *v)
{
	int n;

	if (a->tmpl_file)
		return shell_err(sh, -LLMK_EINVAL, "chat: one --chat-template-file a run");
	if (!(a->tmpl_file = plat_alloc(GRAMMAR_FILE_MAX, 64)))
		return shell_err(sh, -LLMK_ENOMEM, "--chat-template-file: no memory for '%s'", v);
	if ((n = shell_boot_file(sh, "--chat-template-file", v, a->tmpl_file,
				 GRAMMAR_FILE_MAX - 1)) < 0)
		return n;
	a->tmpl_file[n] = 0;
	if (strlen(a->tmpl_file) != (size_t)n)
		return shell_err(sh, -LLMK_EFORMAT, "--chat-template-file: '%s' holds a NUL byte", v);
	a->g.tmpl_text = a->tmpl_file;
	return 0;
}

/* --logit-bias ID+B / ID-B / ID-inf (llama.cpp's form): ID-inf bans the
 * token, ID+inf all but forces it. ID must be in the loaded vocabulary. */
static int flag_bias(struct shell *sh, const char *v, struct sample_params *p)
{
	const struct tok *tk = sh->engine ? engine_tok(sh->engine) : NULL;
	char id[24];
	size_t n = 0;
	uint64_t t;
	double b;

	while (v[n] >= '0' && v[n] <= '9' && n + 1 < sizeof id)
		n++;
	memcpy(id, v, n);
	id[n] = 0;
	if (p->n_bias >= SAMPLE_MAX_BIAS)
		return shell_err(sh, -LLMK_ERANGE, "--logit-bias: at most %d", SAMPLE_MAX_BIAS);
	if (!n || (v[n] != '+' && v[n] != '-'))
		return shell_err(sh, -LLMK_EINVAL, "--logit-bias: expected ID+BIAS or ID-BIAS, got '%s'", v);
	if (shell_arg_u64(sh, "--logit-bias id", id, 0, 0xffffffffu, &t))
		return -LLMK_EINVAL;
	if (tk && t >= tk->n_vocab)
		return shell_err(sh, -LLMK_ERANGE, "--logit-bias: token %llu is past the vocabulary "
				 "(ids 0..%u)", (unsigned long long)t, tk->n_vocab - 1);
	/* the magnitude first, then the sign once: -inf is -infinity (the
	 * sampler's ban, as llama.cpp), +inf a bias no logit outweighs */
	if (strcmp(v + n + 1, "inf") == 0)
		b = v[n] == '-' ? -(double)__builtin_inff() : 1e30;
	else if (shell_arg_f64(sh, "--logit-bias", v + n + 1, 0, 1e30, &b))
		return -LLMK_EINVAL;
	else if (v[n] == '-')
		b = -b;
	p->bias[p->n_bias].id = (uint32_t)t;
	p->bias[p->n_bias].bias = (float)b;
	p->n_bias++;
	return 0;
}

/* The flags that are not settings: they add to a list, name the text, or
 * hold for this run only. */
static const char *const list_flags[] = {"--stop", "--system", "-t", "--threads",
					 "--chat-template", "--chat-template-file", "--messages", "--grammar",
					 "--grammar-file", "-j", "--json-schema", "--json-schema-file", "--tools",
					 "--logit-bias", "--grammar-trigger", NULL};

static bool takes_value(const char *f)
{
	for (int i = 0; list_flags[i]; i++)
		if (!strcmp(f, list_flags[i]))
			return true;
	return shell_model_flag_key(f) != NULL;
}

/* One flag and its value: a setting into run (cmd_model_cfg.c's table), or
 * one of list_flags. */
static int parse_flag(struct shell *sh, struct gen_args *a, struct engine_config *run,
		      const char *f, const char *v)
{
	const struct shell_config_key *k = shell_model_flag_key(f);

	if (k)
		return shell_model_flag_parse(sh, k, f, v, run);
	if (!strcmp(f, "--stop")) {
		if (a->g.n_stops >= ENGINE_MAX_STOPS)
			return shell_err(sh, -LLMK_ERANGE, "--stop: at most %d stop strings",
					 ENGINE_MAX_STOPS);
		if (!*v)
			return shell_err(sh, -LLMK_EINVAL, "--stop: empty stop string");
		a->g.stops[a->g.n_stops++] = v;
		return 0;
	}
	if (!strcmp(f, "--system") || !strcmp(f, "--messages") || !strcmp(f, "--chat-template") ||
	    !strcmp(f, "--chat-template-file")) {
		if (strcmp(sh->argv[0], "chat"))
			return shell_err(sh, -LLMK_EINVAL, "%s: %s is for chat", sh->argv[0], f);
		if (!strcmp(f, "--chat-template-file"))
			return flag_tmpl_file(sh, a, v);
		if (f[2] == 's')
			a->system = v;
		else if (f[2] == 'm')
			a->messages = v;
		else if (chat_tmpl_parse(v, &a->g.tmpl)) {
			char names[768];
			plat_printf("templates: %s\n", chat_names(names, sizeof names));
			return shell_err(sh, -LLMK_EINVAL, "--chat-template: '%s' is none of the "
					 "templates above", v);
		}
		return 0;
	}
	if (!strcmp(f, "-t") || !strcmp(f, "--threads")) {
		uint64_t t;
		if (shell_arg_u64(sh, f, v, 1, (uint64_t)plat_cpu_count(), &t))
			return -LLMK_ERANGE;
		a->g.threads = (int)t;
		return 0;
	}
	if (!strcmp(f, "--grammar-trigger")) { /* a lazy grammar (docs/grammars.md) */
		if (a->g.n_triggers >= ENGINE_MAX_TRIGGERS)
			return shell_err(sh, -LLMK_ERANGE, "--grammar-trigger: at most %d words",
					 ENGINE_MAX_TRIGGERS);
		a->g.triggers[a->g.n_triggers++] = v;
		return 0;
	}
	if (!strncmp(f, "--grammar", 9) || !strcmp(f, "-j") || !strncmp(f, "--json-schema", 13))
		return flag_grammar(sh, a, f, v);
	if (!strcmp(f, "--tools")) {
		int n;
		if (strcmp(sh->argv[0], "chat") || a->tools)
			return shell_err(sh, -LLMK_EINVAL, "%s: --tools is for chat, once", sh->argv[0]);
		if (!(a->tools = plat_alloc(GRAMMAR_FILE_MAX, 64)))
			return shell_err(sh, -LLMK_ENOMEM, "--tools: no memory for '%s'", v);
		if ((n = plat_boot_file(v, a->tools, GRAMMAR_FILE_MAX - 1)) < 0)
			return shell_err(sh, n, "--tools: cannot read '%s': %s", v,
					 n == -LLMK_ERANGE ? "larger than 256 KiB" : plat_strerror(n));
		a->tools[n] = 0;
		return 0;
	}
	return flag_bias(sh, v, &run->samp); /* --logit-bias, the last of list_flags */
}

/* Flags anywhere; the one other word is the text. A word starting with '-'
 * is a flag, so a prompt starting with '-' follows "--" (the end of the
 * flags: every word after it is text) or has a leading space: " -x". */
static int parse_gen(struct shell *sh, struct engine *e, int argc, char **argv, struct gen_args *a)
{
	struct engine_config run; /* the settings for this run */
	bool flags = true;        /* until "--" */
	int r;

	memset(a, 0, sizeof *a);
	engine_gen_init(e, &a->g);
	engine_get_config(e, &run);

	for (int i = 1; i < argc; i++) {
		const char *f = argv[i];
		if (!flags || f[0] != '-' || !f[1]) {
			if (a->text)
				return shell_err(sh, -LLMK_EINVAL, "%s: more than one prompt ('%s'); quote it",
						 argv[0], f);
			a->text = f;
		} else if (!strcmp(f, "--")) {
			flags = false;
		} else if (!strcmp(f, "--ids")) {
			a->ids = true;
		} else if (!strcmp(f, "--ignore-eos")) {
			a->g.ignore_eos = true;
		} else if (!strcmp(f, "--parse-special")) {
			a->g.special = ENGINE_SPECIAL_PARSE;
		} else if (!strcmp(f, "--no-parse-special")) {
			a->g.special = ENGINE_SPECIAL_TEXT;
		} else if (!strcmp(f, "--show-prompt") || !strcmp(f, "--verbose-prompt")) {
			if (strcmp(argv[0], "chat"))
				return shell_err(sh, -LLMK_EINVAL, "%s: %s is for chat", argv[0], f);
			a->show_prompt = true;
		} else {
			if (!takes_value(f))
				return shell_err(sh, -LLMK_EINVAL, "%s: unknown flag '%s'", argv[0], f);
			if (i + 1 >= argc)
				return shell_err(sh, -LLMK_EINVAL, "%s: flag '%s' needs a value",
						 argv[0], f);
			if ((r = parse_flag(sh, a, &run, f, argv[++i])))
				return r;
		}
	}
	a->g.samp = run.samp;
	a->g.n_predict = run.n_predict;
	a->g.lookup = run.lookup;
	return 0;
}

/* The model's text: its vocabulary's pieces come from the file too. */
static void emit_console(void *ctx, const char *s, size_t n)
{
	shell_write_text(s, n);
}

static bool poll_cancel(void *ctx)
{
	return shell_poll_cancel(ctx);
}

/* The engine's line before a reply (chat's context shift). */
static void notice(void *ctx, const char *line)
{
	struct shell *sh = ctx;
	plat_printf("%s: %s\n", sh->argv[0], line);
}

/* After the streamed reply: its newline, the --ids line, and the error
 * that ended it, if one did after the first token (a disk read or a sealed
 * chunk that failed mid-reply, Ctrl-C): one error line, and the status. */
static int gen_finish(struct shell *sh, struct gen_args *a, int r, const char *err)
{
	if (a->g.n_out || r != -LLMK_ECANCEL)
		plat_printf("\n");
	if (a->ids) {
		plat_printf("ids:");
		for (uint32_t i = 0; i < a->g.n_out && i < a->g.out_cap; i++)
			plat_printf(" %d", a->g.out_ids[i]);
		plat_printf("\n");
	}
	if (r)
		return shell_err(sh, r, "%s: %s", sh->argv[0], err);
	return 0;
}

static int gen_setup(struct shell *sh, struct gen_args *a, int32_t *ids, uint32_t cap)
{
	a->g.emit = emit_console;
	a->g.cancel = poll_cancel;
	a->g.notice = notice;
	a->g.ctx = sh;
	a->g.out_ids = ids;
	a->g.out_cap = cap;
	return 0;
}

#define IDS_MAX 4096

static int infer(struct shell *sh, int argc, char **argv, struct gen_args *ap)
{
	struct engine *e = shell_engine(sh);
	struct engine_info info;
	struct gen_args a;
	int32_t *ids;
	char err[256];
	int r;

	r = parse_gen(sh, e, argc, argv, &a);
	ap->file = a.file;
	if (r)
		return r;
	if (!a.text)
		return shell_err(sh, -LLMK_EINVAL, "infer: missing argument (usage: infer \"PROMPT\" [flags])");
	if (!loaded(sh, &info))
		return shell_err(sh, -LLMK_EINVAL, "infer: no model loaded (use 'load N')");
	ids = plat_alloc(IDS_MAX * sizeof *ids, 64);
	gen_setup(sh, &a, ids, ids ? IDS_MAX : 0);
	r = engine_infer(e, a.text, &a.g, err, sizeof err);
	if (r && r != -LLMK_ECANCEL && a.g.n_out == 0) {
		if (ids)
			plat_free(ids, IDS_MAX * sizeof *ids);
		return shell_err(sh, r, "infer: %s", err);
	}
	r = gen_finish(sh, &a, r, err);
	if (ids)
		plat_free(ids, IDS_MAX * sizeof *ids);
	return r;
}

static int cmd_infer(struct shell *sh, int argc, char **argv)
{
	struct gen_args a = {0};
	int r = infer(sh, argc, argv, &a);

	gen_release(&a);
	return r;
}

/* One line from the console (the shell's line editor); false at end of
 * input, Ctrl-C, an empty line or "/exit". */
static bool chat_line(struct shell *sh)
{
	enum shell_line_event ev = SHELL_LINE_MORE;
	int c;

	if (sh->prompt)
		plat_printf("you> ");
	shell_line_reset(&sh->line);
	while (ev == SHELL_LINE_MORE && (c = shell_getc(sh)) >= 0)
		ev = shell_line_feed(sh, c);
	if (ev == SHELL_LINE_MORE && sh->line.len)
		ev = shell_line_feed(sh, '\n');
	if (ev != SHELL_LINE_DONE)
		return false;
	return sh->line.buf[0] && strcmp(sh->line.buf, "/exit") != 0;
}

/* chat --show-prompt: the turn's formatted prompt, as it is, then a newline. */
static void show_prompt(void *ctx, const char *s, size_t n)
{
	plat_printf("%s: prompt (%zu bytes):\n", ((struct shell *)ctx)->argv[0], n);
	shell_write_text(s, n);
	plat_printf("\n");
}

/* chat --show-prompt --messages JSON --tools FILE: the conversation with the
 * tools (an OpenAI tools array) written in as the template's tool-call
 * format does (shell/http/api_format.h, docs/api.md), printed. */
#define TOOLS_NODES 16384u
struct tools_work {
	struct api_fmt f;
	struct json_node nodes[TOOLS_NODES];
	char body[2 * GRAMMAR_FILE_MAX], store[2 * GRAMMAR_FILE_MAX], out[2 * API_FMT_TEXT];
};

static int chat_tools(struct shell *sh, struct engine *e, struct gen_args *a)
{
	struct tools_work *w = plat_alloc(sizeof *w, 64);
	struct engine_info info;
	enum chat_tmpl t = a->g.tmpl;
	struct json_doc d;
	struct llm_mem m;
	char err[256];
	size_t len;
	int r;

	if (!w)
		return shell_err(sh, -LLMK_ENOMEM, "chat: out of memory");
	size_t src_len = 0;
	const char *src = a->g.tmpl_text;
	if (src)
		src_len = strlen(src);
	else if (a->g.tmpl == CHAT_UNKNOWN || a->g.tmpl == CHAT_JINJA)
		src = engine_tmpl_text(e, &src_len);
	if (a->g.tmpl_text)
		t = CHAT_JINJA;
	if (t == CHAT_UNKNOWN && loaded(sh, &info))
		t = info.tmpl;
	len = (size_t)plat_snprintf(w->body, sizeof w->body, "{\"messages\":%s,\"tools\":%s}",
				    a->messages, a->tools);
	d = (struct json_doc){w->nodes, TOOLS_NODES, 0, w->store, sizeof w->store, 0, 64,
			      sizeof w->body};
	llm_mem_init(&m, 0);
	if (t == CHAT_UNKNOWN)
		r = shell_err(sh, -LLMK_EINVAL, "chat: --tools: no model's template: load one or "
			      "name one with --chat-template");
	else if (len >= sizeof w->body)
		r = shell_err(sh, -LLMK_ERANGE, "chat: --messages and --tools are too large together");
	else if ((r = json_parse(&d, w->body, len, err, sizeof err)))
		r = shell_err(sh, r, "chat: --messages or --tools is not JSON: %s", err);
	else if ((r = api_fmt_request(&w->f, &d, true, t, src, src_len, &m)))
		r = shell_err(sh, r, "chat: %s", w->f.err);
	else if ((r = engine_chat_render_tools(e, t, a->g.tmpl_text, w->f.msgs,
					       w->f.jinja ? w->f.extra : NULL, w->f.n_msgs,
					       w->f.tools_json, w->out, sizeof w->out, &len, err,
					       sizeof err)))
		r = shell_err(sh, r, "chat: %s", err);
	else
		show_prompt(sh, w->out, len);
	llm_mem_zeroize(w, sizeof *w);
	plat_free(w, sizeof *w);
	return r;
}

/* chat --show-prompt --messages JSON: the conversation formatted with the
 * generation prompt, printed; nothing runs. */
static int chat_messages(struct shell *sh, struct engine *e, struct gen_args *a)
{
	size_t cap = SHELL_LINE_MAX + JSON_MSGS_MAX * 256, n, len;
	struct chat_msg msgs[JSON_MSGS_MAX];
	char err[256], *store, *out;
	int r;

	if (!a->show_prompt || a->text || a->system)
		return shell_err(sh, -LLMK_EINVAL, "chat: --messages goes with --show-prompt, without "
				 "a message or --system (usage: chat --show-prompt --messages 'JSON')");
	if (a->tools)
		return chat_tools(sh, e, a);
	if (!(store = plat_alloc(SHELL_LINE_MAX + cap, 64)))
		return shell_err(sh, -LLMK_ENOMEM, "chat: out of memory");
	out = store + SHELL_LINE_MAX;
	r = json_msgs_parse(a->messages, msgs, JSON_MSGS_MAX, &n, store, SHELL_LINE_MAX, err,
			    sizeof err);
	if (r)
		r = shell_err(sh, r, "chat: --messages: %s", err);
	else if ((r = engine_chat_render(e, a->g.tmpl, a->g.tmpl_text, msgs, n, out, cap, &len,
					 err, sizeof err)))
		r = shell_err(sh, r, "chat: %s", err);
	else
		show_prompt(sh, out, len);
	llm_mem_zeroize(store, SHELL_LINE_MAX + cap);
	plat_free(store, SHELL_LINE_MAX + cap);
	return r;
}

static int chat_turn(struct shell *sh, struct engine *e, struct gen_args *a, const char *msg)
{
	char err[256];
	int32_t ids[1];
	int r;

	gen_setup(sh, a, ids, 0);
	if (a->show_prompt)
		a->g.prompt = show_prompt;
	r = engine_chat(e, msg, &a->g, err, sizeof err);
	if (r && r != -LLMK_ECANCEL && a->g.n_out == 0)
		return shell_err(sh, r, "chat: %s", err);
	return gen_finish(sh, a, r, err);
}

static int chat(struct shell *sh, int argc, char **argv, struct gen_args *ap)
{
	struct engine *e = shell_engine(sh);
	struct engine_info info;
	struct gen_args a;
	int r;

	if (argc == 2 && !strcmp(argv[1], "--reset")) {
		engine_chat_reset(e);
		plat_printf("conversation cleared\n");
		return 0;
	}
	r = parse_gen(sh, e, argc, argv, &a);
	ap->file = a.file;
	ap->tmpl_file = a.tmpl_file;
	ap->tools = a.tools;
	if (r)
		return r;
	if (a.messages)
		return chat_messages(sh, e, &a);
	if (a.tools)
		return shell_err(sh, -LLMK_EINVAL, "chat: --tools goes with --show-prompt --messages "
				 "(the API's tools are the way to call them)");
	if (!loaded(sh, &info) || info.vocab_only)
		return shell_err(sh, -LLMK_EINVAL, "chat: no model loaded (use 'load N')");
	if (a.system) {
		char err[128];
		if ((r = engine_chat_system(e, a.system, err, sizeof err)))
			return shell_err(sh, r, "chat: %s", err);
	}
	if (a.text)
		return chat_turn(sh, e, &a, a.text);
	plat_printf("chat (%s template): type a message; an empty line or /exit ends\n",
		    chat_tmpl_name(a.g.tmpl_text ? CHAT_JINJA : a.g.tmpl ? a.g.tmpl : info.tmpl));
	while (chat_line(sh)) {
		char msg[SHELL_LINE_MAX];
		struct gen_args t = a;
		memcpy(msg, sh->line.buf, sizeof msg);
		if ((r = chat_turn(sh, e, &t, msg)) == -LLMK_ECANCEL)
			break;
	}
	return 0;
}

static int cmd_chat(struct shell *sh, int argc, char **argv)
{
	struct gen_args a = {0};
	int r = chat(sh, argc, argv, &a);

	gen_release(&a);
	return r;
}

/* ---- stats ---- */
static void rate(const char *what, uint32_t n, uint64_t ns, const char *extra)
{
	double s = (double)ns / 1e9;
	plat_printf("  %-11s %u tokens in %.1f ms, %.1f tok/s%s\n", what, n, s * 1e3,
		    s > 0 ? (double)n / s : 0.0, extra);
}

static int cmd_stats(struct shell *sh, int argc, char **argv)
{
	struct engine_stats st;
	struct engine_plan plan;
	char x[96];

	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	if (!sh->engine || engine_get_stats(sh->engine, &st))
		return shell_err(sh, -LLMK_EINVAL, "stats: no model loaded (use 'load N')");
	if (!st.run.stop) {
		plat_printf("no run yet\n");
		return 0;
	}
	engine_get_plan(sh->engine, &plan);
	plat_snprintf(x, sizeof x, " (%u reused from the cache)", st.run.n_reused);
	rate("prompt", st.run.n_prompt, st.run.prompt_ns, x);
	plat_snprintf(x, sizeof x, " (ended: %s, seed %llu, %d thread%s)", st.run.stop,
		      (unsigned long long)st.run.seed, st.run.threads, st.run.threads == 1 ? "" : "s");
	rate("generation", st.run.n_gen, st.run.gen_ns, x);
	if (st.run.lookup)
		plat_printf("  lookup      %u of %u drafted tokens taken: %u tokens from %u passes "
			    "(up to %u drafted a pass)\n", st.run.n_accepted, st.run.n_drafted,
			    st.run.n_gen, st.run.n_passes + 1, st.run.lookup);
	else if (st.run.lookup_off)
		plat_printf("  lookup      off: %s\n", st.run.lookup_off);
	if (st.run.grammar)
		plat_printf("  grammar     %.1f ms (%.1f%% of generation); %u tokens refused, "
			    "%u of those masks from its cache\n", (double)st.run.grammar_ns / 1e6,
			    st.run.gen_ns ? 100.0 * (double)st.run.grammar_ns / (double)st.run.gen_ns
			    : 0.0, st.run.n_masked, st.run.n_mask_hits);
	plat_printf("  cache       %u of %u positions; load %.1f ms; memory peak %llu bytes\n",
		    st.n_past, st.n_ctx, (double)st.run.load_ns / 1e6,
		    (unsigned long long)st.mem_peak);
	shell_print_stats(&st, &plan);
	return 0;
}

/* ---- profile ---- */
static void profile_show(const struct model_prof *p, uint32_t n_layer)
{
	uint64_t total = 0;

	for (int i = 0; i < MS_N; i++)
		total += p->ns[i];
	plat_printf("profile: %llu tokens in %llu passes, %.2f ms in the forward pass\n",
		    (unsigned long long)p->tokens, (unsigned long long)p->passes,
		    (double)total / 1e6);
	for (int i = 0; i < MS_N; i++)
		plat_printf("  %-10s %10.2f ms %5.1f%%\n", model_stage_names[i], (double)p->ns[i] / 1e6,
			    total ? 100.0 * (double)p->ns[i] / (double)total : 0.0);
	plat_printf("  per layer (ms):");
	for (uint32_t l = 0; l < n_layer; l++)
		plat_printf("%s %.2f", l % 8 ? "" : "\n   ", (double)p->layer_ns[l] / 1e6);
	plat_printf("\n");
}

static int cmd_profile(struct shell *sh, int argc, char **argv)
{
	struct engine_info info;
	const struct model_prof *p;

	if (shell_check_argc(sh, argc, argv, 1, 2))
		return -LLMK_EINVAL;
	if (!loaded(sh, &info) || !(p = engine_get_profile(sh->engine)))
		return shell_err(sh, -LLMK_EINVAL, "profile: no model loaded (use 'load N')");
	if (argc == 1) {
		profile_show(p, info.hp.n_layer);
		return 0;
	}
	if (!strcmp(argv[1], "on") || !strcmp(argv[1], "reset"))
		engine_profile(sh->engine, p->on || !strcmp(argv[1], "on"), true);
	else if (!strcmp(argv[1], "off"))
		engine_profile(sh->engine, false, false);
	else
		return shell_err(sh, -LLMK_EINVAL, "profile: expected on, off or reset, got '%s'",
				 argv[1]);
	plat_printf("profiling %s\n", p->on ? "on (counters reset)" : "off");
	return 0;
}

const struct shell_cmd shell_cmds_model[] = {
	{"load", LOAD_USAGE, "load the model on disk N (or the disk with id ID, or holding the "
	 "model named NAME: see models); -c: its context size (config ctx: every load's)",
	 cmd_load},
	{"unload", "unload", "free the loaded model", cmd_unload},
	{"info", "info", "architecture, parameters, quant mix, context, vocab, template, memory",
	 cmd_info},
	{"infer", "infer \"PROMPT\" [-n N] [--KEY VALUE]... [--stop S]... [--logit-bias ID+B|ID-B|ID-inf]\n"
	 "      [-t|--threads N] [--ignore-eos] [--no-parse-special] [--ids]\n"
	 "      [--grammar GBNF | --grammar-file F | -j SCHEMA | --json-schema-file F]\n"
	 "      [--grammar-trigger WORD]...",
	 "generate a continuation of PROMPT (--KEY VALUE: a setting for this run, below; -n -1: "
	 "to the end of the context; special-token text in PROMPT is parsed unless "
	 "--no-parse-special)", cmd_infer},
	{"chat", "chat [\"MESSAGE\"] [--system \"TEXT\"] [--parse-special] [--chat-template NAME]\n"
	 "      [--chat-template-file F]"
	 "      [--show-prompt|--verbose-prompt] [flags as infer: --KEY VALUE]...\n"
	 "chat --show-prompt --messages '[{\"role\": \"user\", \"content\": \"hi\"}, ...]' "
	 "[--tools FILE] [--chat-template NAME]\n"
	 "chat --reset",
	 "multi-turn chat (lines until an empty line or /exit); the message is text unless "
	 "--parse-special; past the context the oldest turns go, the system prompt stays. The "
	 "first turn names the template; --show-prompt prints each turn's formatted prompt; "
	 "with --messages (an OpenAI-style array) it prints that conversation formatted, with "
	 "the generation prompt, and generates nothing (--tools FILE: an OpenAI tools array "
	 "written in, as the API does). --chat-template: one of llama.cpp's "
	 "built-in templates (an unknown NAME lists them), or jinja: the model's own template "
	 "run as Jinja; --chat-template-file: a Jinja template from the boot volume (host: a file)",
	 cmd_chat},
	{"stats", "stats", "prompt and generation speed of the last run", cmd_stats},
	{"profile", "profile [on|off|reset]", "forward-pass time per stage and per layer",
	 cmd_profile},
	{0},
};
