/*
 * shell/cmd_tok.c — tokenize / detokenize with the loaded vocabulary.
 *
 *   tokenize "TEXT" [--no-special] [--no-parse-special] [--pieces]
 *   detokenize ID...
 *
 * As llama.cpp's llama-tokenize: BOS/EOS are added as the vocabulary's
 * add_bos_token / add_eos_token say (--no-special: none), and special-token
 * text in TEXT becomes that token (--no-parse-special: plain text). The
 * vocabulary is the engine's (shell/cmd_model.c: `load N` or
 * `load --vocab-only N`).
 */
#include "shell.h"
#include "../llm/engine.h"
#include "../llm/unicode.h"

static const struct tok *cur_tok(struct shell *sh, const char *cmd)
{
	const struct tok *t = sh->engine ? engine_tok(sh->engine) : NULL;

	if (!t)
		shell_err(sh, -LLMK_EINVAL, "%s: no vocabulary loaded (load N or load --vocab-only N)",
			  cmd);
	return t;
}

/* One token as "id 'piece'": control bytes and bytes that are not whole
 * UTF-8 characters (byte-fallback pieces) escaped as \n \t \xHH. */
static void print_piece(const struct tok *t, int32_t id)
{
	char piece[256];
	int n = tok_piece(t, id, TOK_PIECE_SPECIAL, piece, sizeof piece);

	plat_printf("%6d '", (int)id);
	for (size_t i = 0; n > 0 && i < (size_t)n;) {
		uint8_t c = (uint8_t)piece[i];
		size_t at = i;
		uint32_t cp = uni_utf8_decode(piece, (size_t)n, &i);

		if (c >= 0x80 && !(cp == 0xFFFD && i - at == 1))
			plat_write(piece + at, i - at);
		else if (c == '\n')
			plat_printf("\\n");
		else if (c == '\t')
			plat_printf("\\t");
		else if (c == '\\' || c == '\'')
			plat_printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			plat_printf("\\x%02x", c);
		else
			plat_write(piece + at, 1);
	}
	plat_printf(n < 0 ? "' (longer than %zu bytes)\n" : "'\n", sizeof piece);
}

static int cmd_tokenize(struct shell *sh, int argc, char **argv)
{
	const struct tok *t;
	const char *text = NULL;
	bool add_special = true, parse_special = true, pieces = false;
	int32_t *ids;
	size_t n = 0, cap;
	bool flags = true; /* until "--": every word after it is text */
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *f = argv[i];
		if (!flags || f[0] != '-' || f[1] != '-') {
			if (text)
				return shell_err(sh, -LLMK_EINVAL,
						 "tokenize: one text only (quote it: tokenize \"a b\")");
			text = f;
		} else if (!strcmp(f, "--")) {
			flags = false;
		} else if (!strcmp(f, "--no-special")) {
			add_special = false;
		} else if (!strcmp(f, "--no-parse-special")) {
			parse_special = false;
		} else if (!strcmp(f, "--pieces")) {
			pieces = true;
		} else {
			return shell_err(sh, -LLMK_EINVAL, "tokenize: unknown flag '%s' (text that starts "
					 "with \"--\" goes after --: tokenize -- \"--x\")", f);
		}
	}
	if (!text)
		return shell_err(sh, -LLMK_EINVAL, "tokenize: missing argument (usage: tokenize \"TEXT\" [--no-special])");
	if (!(t = cur_tok(sh, "tokenize")))
		return -LLMK_EINVAL;
	/* usually at most one id per byte plus BOS/EOS; if not, the first call
	 * says how many */
	cap = strlen(text) + 2;
	for (int pass = 0; pass < 2; pass++) {
		if (!(ids = plat_alloc(cap * sizeof *ids, 64)))
			return shell_err(sh, -LLMK_ENOMEM, "tokenize: out of memory for %zu ids", cap);
		rc = tok_encode(t, text, strlen(text), add_special, parse_special, ids, cap, &n);
		if (rc != -LLMK_ERANGE)
			break;
		plat_free(ids, cap * sizeof *ids);
		ids = NULL;
		cap = n;
	}
	if (!ids)
		return shell_err(sh, -LLMK_ERANGE, "tokenize: %zu ids do not fit", n);
	if (rc == 0) {
		for (size_t i = 0; i < n && !pieces; i++)
			plat_printf(i ? " %d" : "%d", (int)ids[i]);
		if (!pieces)
			plat_printf("\n");
		for (size_t i = 0; i < n && pieces; i++)
			print_piece(t, ids[i]);
	} else {
		shell_err(sh, rc, "tokenize: %s", plat_strerror(rc));
	}
	plat_free(ids, cap * sizeof *ids);
	return rc;
}

static int cmd_detokenize(struct shell *sh, int argc, char **argv)
{
	const struct tok *t;
	int32_t ids[SHELL_ARGV_MAX];
	size_t n = 0, len = 0, cap;
	char *buf;
	int rc;

	if (shell_check_argc(sh, argc, argv, 2, -1))
		return -LLMK_EINVAL;
	if (!(t = cur_tok(sh, "detokenize")))
		return -LLMK_EINVAL;
	for (int i = 1; i < argc; i++) {
		int64_t v;
		if (shell_parse_i64(argv[i], &v) < 0 || v < 0 || v >= t->n_vocab)
			return shell_err(sh, -LLMK_EINVAL,
					 "detokenize: bad token id '%s' (vocabulary has ids 0..%u)",
					 argv[i], t->n_vocab - 1);
		ids[n++] = (int32_t)v;
	}
	/* first pass sizes the text, second writes it */
	rc = tok_decode(t, ids, n, false, true, NULL, 0, &len);
	if (rc != 0 && rc != -LLMK_ERANGE)
		return shell_err(sh, rc, "detokenize: %s", plat_strerror(rc));
	cap = len + 1;
	if (!(buf = plat_alloc(cap, 64)))
		return shell_err(sh, -LLMK_ENOMEM, "detokenize: out of memory for %zu bytes", cap);
	rc = tok_decode(t, ids, n, false, true, buf, cap, &len);
	if (rc == 0) {
		shell_write_text(buf, len); /* the vocabulary's text is the file's */
		plat_printf("\n");
	} else {
		shell_err(sh, rc, "detokenize: %s", plat_strerror(rc));
	}
	plat_free(buf, cap);
	return rc;
}

const struct shell_cmd shell_cmds_tok[] = {
	{"tokenize", "tokenize [--no-special] [--no-parse-special] [--pieces] [--] \"TEXT\"",
	 "token ids of TEXT (BOS/EOS as the vocabulary adds them)", cmd_tokenize},
	{"detokenize", "detokenize ID...", "the text of token ids", cmd_detokenize},
	{0},
};
