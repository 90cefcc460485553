/*
 * tests/unit/shell_fixture.h — what the tests that drive the shell set up
 * alike: the console captured in a growing buffer (tools/host/host.h's
 * output hook), and a fresh shell over disk files with that capture on,
 * taken down again in one call.
 *
 *   struct shell_fixture f;
 *   CHECK_EQ_INT(fixture_open(&f, (const char *[]){path, NULL}, NULL), 0);
 *   CHECK(strstr(fixture_run(&f, "load 0", &st), "loaded disk 0"));
 *   fixture_close(&f);
 */
#ifndef SHELL_FIXTURE_H
#define SHELL_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

struct shell; /* shell/shell.h */

/* What the console printed since the last start or reset; buf holds a
 * NUL-terminated string from capture_start on. */
struct capture {
	char *buf;
	size_t len, cap;
};

/* host_set_output's sink: appends s[n] to the struct capture at ctx. A test
 * that acts on output as it comes calls it from its own sink. */
void capture_write(void *ctx, const char *s, size_t n);
/* c empty, and the console's output into it. */
void capture_start(struct capture *c);
/* c empty again; the output keeps going into it. */
void capture_reset(struct capture *c);
/* The console's output back to stdout; c's buffer freed. */
void capture_stop(struct capture *c);

/* How many times needle stands in hay, not overlapping. */
int fixture_count(const char *hay, const char *needle);

/* testdata_dir()/stories260K/file into path[n]; false (path "") when there
 * is no test data. */
bool fixture_stories(char *path, size_t n, const char *file);

struct shell_fixture {
	struct shell *sh;
	struct capture out;
};

/* A fresh shell (not interactive) over the files in disks, a NULL-ended
 * list (NULL for none), disk i as id i, with cfg as its llmk.cfg (NULL for
 * none; cleared again once shell_init applied it); its console captured in
 * f->out from before shell_init. Returns 0, or the first disk's failure to
 * attach as its id (-LLMK_E*); the shell opens either way, so
 * fixture_close is always right. */
int fixture_open(struct shell_fixture *f, const char *const *disks, const char *cfg);
/* fixture_open over the stories260K file (fixture_stories) as disk 0, that
 * it attached CHECKed; false, and nothing opened, without test data. */
bool fixture_open_stories(struct shell_fixture *f, const char *file);
/* f->out emptied, then one line run: what it printed (f->out.buf, valid
 * until the next run) and, if status is not NULL, its result. */
const char *fixture_run(struct shell_fixture *f, const char *line, int *status);
/* Everything the shell and fixture_open took, given back: the engine
 * unloaded and freed, a confidential session's state and write filter gone,
 * console input and output back to stdin and stdout, no disks. */
void fixture_close(struct shell_fixture *f);

#endif
