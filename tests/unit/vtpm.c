/*
 * tests/unit/vtpm.c — the swtpm the unit tests share (vtpm.h).
 */
#include "vtpm.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[120], sock[160], fail[240];
static int state; /* 0 untried, 1 running, -1 could not start */

static void stop(void)
{
	char cmd[400];
	snprintf(cmd, sizeof cmd, "tools/tpm.sh stop %s && rm -rf %s %s.log", dir, dir, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "  (tools/tpm.sh stop %s failed)\n", dir);
}

const char *test_vtpm_path(char *why, size_t n)
{
	const char *env = getenv("LLMK_VTPM");
	char cmd[400];

	if (env && *env)
		return env;
	if (state == 0) {
		state = -1;
		snprintf(dir, sizeof dir, "%s/tpm-%d", test_tmpdir(), (int)getpid());
		snprintf(cmd, sizeof cmd, "tools/tpm.sh start %s host >%s.log 2>&1", dir, dir);
		int rc = system(cmd);
		if (rc != 0) {
			snprintf(fail, sizeof fail, "tools/tpm.sh could not start swtpm (status %d; see "
				 "%s.log; make deps installs swtpm and swtpm-tools)", rc, dir);
		} else {
			snprintf(sock, sizeof sock, "%s/swtpm.sock", dir);
			atexit(stop);
			state = 1;
		}
	}
	if (state < 0)
		snprintf(why, n, "%s", fail);
	return state > 0 ? sock : NULL;
}
