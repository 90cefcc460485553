/*
 * tests/unit/test_cmd_gen.c — infer and chat (shell/cmd_model.c over
 * llm/engine.c) on synthetic models (tools/writer/mkmodel.h), so nothing
 * here skips: an error after the first generated token is one error line
 * and the command's status; the flags as llama-cli users type them
 * (--logit-bias ID-inf, -n -1, --seed -1, --repeat-penalty, --ignore-eos,
 * -t); chat user text cannot open a role with special-token text; a chat
 * longer than the context drops its oldest turns and keeps going.
 */
#include "test.h"
#include "../../llm/engine.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct gen_session {
	struct shell *sh;
	char *buf;
	size_t len, cap;
	char path[600];
	/* truncate path to this many bytes at the first output (0: never) */
	off_t cut_at;
};

static void gen_capture(void *ctx, const char *s, size_t n)
{
	struct gen_session *g = ctx;

	if (g->cut_at) {
		CHECK_EQ_INT(truncate(g->path, g->cut_at), 0);
		g->cut_at = 0;
	}
	if (g->len + n + 1 > g->cap) {
		g->cap = (g->len + n + 1) * 2;
		g->buf = realloc(g->buf, g->cap);
	}
	memcpy(g->buf + g->len, s, n);
	g->len += n;
	g->buf[g->len] = 0;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* A shell over a fresh model file written from spec as disk 0. */
static void gen_open(struct gen_session *g, const struct mkm_spec *spec, const char *file)
{
	char err[256];

	memset(g, 0, sizeof *g);
	snprintf(g->path, sizeof g->path, "%s/%s", test_tmpdir(), file);
	CHECK_EQ_INT(mkm_write(spec, g->path, err, sizeof err), 0);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(g->path), 0);
	host_set_config(NULL);
	g->sh = calloc(1, sizeof *g->sh);
	shell_init(g->sh, false);
	gen_capture(g, "", 0);
	host_set_output(gen_capture, g);
}

static const char *gen_run(struct gen_session *g, const char *line, int *status)
{
	g->len = 0;
	g->buf[0] = 0;
	int r = shell_exec_line(g->sh, line);
	if (status)
		*status = r;
	return g->buf;
}

static void gen_close(struct gen_session *g)
{
	if (g->sh->engine) {
		engine_unload(g->sh->engine);
		plat_free(g->sh->engine, sizeof(struct engine));
	}
	host_set_output(NULL, NULL);
	host_remove_disks();
	unlink(g->path);
	free(g->sh);
	free(g->buf);
}

/* Streamed with more layers than slots, every token reads every layer again:
 * the file cut to half its size under a running reply fails the next read. */
TEST(cmd_infer_reports_a_read_error_after_the_first_token)
{
	struct gen_session g;
	struct mkm_spec s;
	const char *out;
	int st;

	mkm_defaults(&s);
	s.n_layers = 8;
	gen_open(&g, &s, "gen_truncated.gguf");
	gen_run(&g, "config threads 1", &st);
	gen_run(&g, "load --stream 0", &st);
	CHECK_EQ_INT(st, 0);
	struct stat sb;
	CHECK_EQ_INT(stat(g.path, &sb), 0);
	g.cut_at = sb.st_size / 2;
	out = gen_run(&g, "infer \"Once upon a time\" -n 32 --temp 0 --ids", &st);
	CHECK(st < 0);
	CHECK_EQ_INT(count(out, "error: "), 1);
	CHECK(strstr(out, "\nerror: infer: ") != NULL);
	CHECK(strncmp(out, "error", 5) != 0); /* the reply had begun */
	CHECK_STR(g.sh->engine->run.stop, "error");
	if (st >= 0 || count(out, "error: ") != 1)
		fprintf(stderr, "  got: %s\n", out);
	gen_close(&g);
}
