/*
 * tests/unit/shell_fixture.c — the console capture and the shell fixture
 * (shell_fixture.h).
 */
#include "shell_fixture.h"
#include "test.h"
#include "../../llm/engine.h"
#include "../../shell/session.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"

#include <stdlib.h>

void capture_write(void *ctx, const char *s, size_t n)
{
	struct capture *c = ctx;

	if (c->len + n + 1 > c->cap) {
		size_t cap = (c->len + n + 1) * 2;
		char *b = realloc(c->buf, cap);
		if (!b) {
			/* a test's console past memory: nothing to check against */
			fprintf(stderr, "capture: out of memory at %zu bytes\n", cap);
			abort();
		}
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, s, n);
	c->len += n;
	c->buf[c->len] = 0;
}

void capture_start(struct capture *c)
{
	memset(c, 0, sizeof *c);
	capture_write(c, "", 0);
	host_set_output(capture_write, c);
}

void capture_reset(struct capture *c)
{
	c->len = 0;
	c->buf[0] = 0;
}

void capture_stop(struct capture *c)
{
	host_set_output(NULL, NULL);
	free(c->buf);
	memset(c, 0, sizeof *c);
}

int fixture_count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

bool fixture_stories(char *path, size_t n, const char *file)
{
	const char *dir = testdata_dir();

	path[0] = 0;
	if (!dir)
		return false;
	snprintf(path, n, "%s/stories260K/%s", dir, file);
	return true;
}

int fixture_open(struct shell_fixture *f, const char *const *disks, const char *cfg)
{
	int status = 0;

	memset(f, 0, sizeof *f);
	host_remove_disks();
	for (int i = 0; disks && disks[i]; i++) {
		int r = host_add_disk(disks[i]);
		if (r != i && status == 0)
			status = r < 0 ? r : -LLMK_EINVAL;
	}
	capture_start(&f->out);
	host_set_config(cfg);
	f->sh = calloc(1, sizeof *f->sh);
	shell_init(f->sh, false);
	f->sh->in = &shell_input_session;
	host_set_config(NULL);
	return status;
}

bool fixture_open_stories(struct shell_fixture *f, const char *file)
{
	char path[4096];

	if (!fixture_stories(path, sizeof path, file))
		return false;
	CHECK_EQ_INT(fixture_open(f, (const char *[]){path, NULL}, NULL), 0);
	return true;
}

const char *fixture_run(struct shell_fixture *f, const char *line, int *status)
{
	capture_reset(&f->out);
	int r = shell_exec_line(f->sh, line);
	if (status)
		*status = r;
	return f->out.buf;
}

void fixture_close(struct shell_fixture *f)
{
	/* the session's filter first: nothing after this goes through it */
	plat_set_write_filter(NULL, NULL);
	if (f->sh->engine) {
		engine_unload(f->sh->engine);
		plat_free(f->sh->engine, sizeof(struct engine));
	}
	plat_free(f->sh->session, sizeof(struct session_state));
	free(f->sh);
	f->sh = NULL;
	capture_stop(&f->out);
	host_set_input(NULL, 0);
	host_remove_disks();
}
