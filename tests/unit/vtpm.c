/*
 * tests/unit/vtpm.c — the swtpm the unit tests share (vtpm.h).
 *
 * Manufactured by `tools/tpm.sh setup`, then run in the foreground as a
 * child of this process (`tools/tpm.sh run`, which execs swtpm) that the
 * kernel ends if this process dies first (PR_SET_PDEATHSIG), so a crashed
 * or aborted test run leaves no swtpm behind; at a normal exit it is
 * stopped by its pid and its directory removed.
 */
#include "vtpm.h"
#include "test.h"
#include "../../tools/host/host.h"
#include "../../tools/verify/tpm_credential.h"
#include "../../tools/verify/verify.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[120], sock[160], fail[400];
static int state; /* 0 untried, 1 running, -1 could not start */
static pid_t child;

static void stop(void)
{
	char cmd[300];
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
		child = 0;
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s %s.log", dir, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "  (could not remove %s)\n", dir);
}

static int start(void)
{
	char cmd[400];
	struct stat st;

	snprintf(dir, sizeof dir, "%s/tpm-%d", test_tmpdir(), (int)getpid());
	snprintf(cmd, sizeof cmd, "tools/tpm.sh setup %s >%s.log 2>&1", dir, dir);
	int rc = system(cmd);
	if (rc != 0) {
		snprintf(fail, sizeof fail, "tools/tpm.sh setup failed (status %d; see %s.log; make "
			 "deps installs swtpm and swtpm-tools)", rc, dir);
		return -1;
	}
	snprintf(sock, sizeof sock, "%s/swtpm.sock", dir);
	unlink(sock);
	pid_t parent = getpid();
	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		execl("/bin/sh", "sh", "tools/tpm.sh", "run", dir, "host", (char *)NULL);
		_exit(127);
	}
	if (child < 0) {
		snprintf(fail, sizeof fail, "fork failed");
		return -1;
	}
	atexit(stop);
	for (int i = 0; i < 100; i++) { /* the socket, within 10 s */
		if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode))
			return 0;
		if (waitpid(child, NULL, WNOHANG) == child) {
			child = 0;
			break;
		}
		usleep(100000);
	}
	snprintf(fail, sizeof fail, "swtpm did not create %s (see %s/swtpm.log)", sock, dir);
	return -1;
}

const char *test_vtpm_path(char *why, size_t n)
{
	const char *env = getenv("LLMK_VTPM");

	if (env && *env)
		return env;
	if (state == 0)
		state = start() == 0 ? 1 : -1;
	if (state < 0)
		snprintf(why, n, "%s", fail);
	return state > 0 ? sock : NULL;
}

char *vtpm_env_set(const char *value)
{
	char *old = getenv("LLMK_VTPM") ? strdup(getenv("LLMK_VTPM")) : NULL;

	if (value)
		setenv("LLMK_VTPM", value, 1);
	else
		unsetenv("LLMK_VTPM");
	host_attest_reset();
	return old;
}

void vtpm_env_restore(char *old)
{
	if (old) {
		setenv("LLMK_VTPM", old, 1);
		free(old);
	} else {
		unsetenv("LLMK_VTPM");
	}
}

uint8_t *test_decode_line(const char *out, const char *label, size_t *n)
{
	const char *e = strstr(out, label);
	if (!e)
		return NULL;
	e += strlen(label);
	size_t len = strcspn(e, "\n");
	uint8_t *b = malloc(len ? len : 1);
	long k = b ? b64_decode(e, len, b, len) : -1;
	if (k < 0) {
		free(b);
		return NULL;
	}
	*n = (size_t)k;
	return b;
}

int test_vtpm_bundle(const uint8_t *ev, size_t n, struct bundle *b)
{
	static struct evidence_rec r[64];
	char err[200];
	int nr = evidence_parse(ev, n, r, 64, err, sizeof err);
	if (nr < 0)
		return -1;
	const struct evidence_rec *rd = evidence_find(r, nr, ATTEST_REC_REPORT_DATA, NULL),
				  *pk = evidence_find(r, nr, ATTEST_REC_PUBKEY, NULL),
				  *ak = evidence_find(r, nr, ATTEST_REC_TPM_AK_PUB, NULL),
				  *ek = evidence_find(r, nr, ATTEST_REC_TPM_EK_PUB, NULL);
	if (!rd || !pk || !ak || !ek || ek->len > sizeof b->tpm_ek_pub)
		return -1;
	memset(b, 0, sizeof *b);
	b->kind = PLAT_ATTEST_VTPM;
	memcpy(b->report_data, rd->val, 64);
	memcpy(b->pubkey, pk->val, 32);
	memcpy(b->tpm_ek_pub, ek->val, ek->len);
	b->tpm_ek_pub_len = ek->len;
	return tpm_credential_name(ak->val, ak->len, b->tpm_ak_name);
}
