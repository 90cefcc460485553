/*
 * shell/cmd_sys.c — the machine's commands: help, version, mem, disks (list,
 * hash, bench), uptime, config, poweroff, reboot.
 */
#include "shell.h"
#include "cmd_seal.h"
#include "cmd_attest.h"
#include "session.h"

#include <bearssl.h>

#include "../llm/quant.h"
#include "../llm/sha256.h"

/* ---- help ---- */
#define HELP_COL 34 /* usage column width; summaries start after it */

/*
 * One command: a short one-line usage shares its row with the summary;
 * otherwise every usage line comes first and the summary follows on its own
 * row, in the summary column.
 */
static void help_one(const struct shell_cmd *c)
{
	const char *u = c->usage ? c->usage : c->name;
	const char *sum = c->summary ? c->summary : "";
	size_t first = 0;

	while (u[first] && u[first] != '\n')
		first++;
	if (!u[first] && first <= HELP_COL) {
		plat_printf("  %-*s %s\n", HELP_COL, u, sum);
		return;
	}
	while (*u) {
		size_t n = 0;
		while (u[n] && u[n] != '\n')
			n++;
		plat_printf("  %.*s\n", (int)n, u);
		u += n;
		if (*u)
			u++;
	}
	if (*sum)
		plat_printf("  %*s %s\n", HELP_COL, "", sum);
}

/* The config keys that are also flags of the commands whose usage says
 * "--KEY VALUE" (shell.h), wrapped. */
static void help_flags(void)
{
	const struct shell_config_key *k;
	int col = 0;

	plat_printf("  --KEY VALUE, for one run (config KEY VALUE: for every run):\n");
	for (int i = 0; (k = shell_config_at(i)); i++) {
		char item[64];
		int n;
		if (!k->flag || shell_config_find(k->name) != k)
			continue;
		n = plat_snprintf(item, sizeof item, "--%s %s", k->name, k->flag);
		if (col && col + 2 + n > 96) {
			plat_printf("\n");
			col = 0;
		}
		plat_printf("%s%s", col ? "  " : "    ", item);
		col += (col ? 2 : 4) + n;
	}
	if (col)
		plat_printf("\n");
}

static bool takes_flags(const struct shell_cmd *c)
{
	static const char mark[] = "--KEY VALUE";

	for (const char *u = c->usage; u && *u; u++)
		if (strncmp(u, mark, sizeof mark - 1) == 0)
			return true;
	return false;
}

static int cmd_help(struct shell *sh, int argc, char **argv)
{
	const struct shell_cmd *c;
	bool flags = false;

	if (shell_check_argc(sh, argc, argv, 1, 2))
		return -LLMK_EINVAL;
	if (argc == 2) {
		c = shell_find(argv[1]);
		if (!c)
			return shell_err(sh, -LLMK_ENOENT, "help: unknown command '%s' (try 'help')",
					 argv[1]);
		help_one(c);
		if (takes_flags(c))
			help_flags();
		return 0;
	}
	plat_printf("commands (arguments: words, or \"quoted\" with \\n \\t \\r \\\\ \\\" \\xHH):\n");
	for (int i = 0; (c = shell_cmd_at(i)); i++) {
		/* A name listed twice is shadowed by the first table: skip it. */
		if (shell_find(c->name) == c) {
			help_one(c);
			flags = flags || takes_flags(c);
		}
	}
	if (flags)
		help_flags();
	plat_printf("keys: Backspace erases, Ctrl-U clears the line, Ctrl-C cancels it "
		    "(and stops a running command)\n");
	return 0;
}

/* ---- version ---- */
/* The weight types whose resident matrices `load` packs on this CPU (the
 * CPU's quant table's packed forms), so that a test knows what to expect of
 * `info` from the engine and not from a guess of its own. */
static void version_packs(void)
{
	const struct quant_table *qt = quant_cpu();
	bool any = false;

	plat_printf("  packs    ");
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++)
		if (quant_table_packed(qt, t)) {
			plat_printf(" %s", quant_name(t));
			any = true;
		}
	plat_printf("%s\n", any ? "" : " none (no packed kernels for this CPU)");
}

static int cmd_version(struct shell *sh, int argc, char **argv)
{
	char feats[256];

	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	plat_cpu_feature_text(plat_cpu_features(), feats, sizeof feats);
	plat_printf("llmk %s\n", plat_version());
	plat_printf("  git       %s\n", plat_git());
	plat_printf("  build id  %s\n", plat_build_id());
	plat_printf("  arch      %s\n", plat_arch());
	plat_printf("  machine   %s%s\n", plat_machine(), plat_emulated() ? " (emulated)" : "");
	plat_printf("  cpus      %d\n", plat_cpu_count());
	plat_printf("  features %s\n", feats[0] ? feats : " (none beyond the base ISA)");
	version_packs();
	if (shell_seal_key_note(sh))
		plat_printf("  model key %s\n", shell_seal_key_note(sh));
	return 0;
}

/* ---- mem ---- */
static void mem_line(const char *what, uint64_t v, const char *note)
{
	char h[32];
	plat_printf("  %-6s %12s  %llu bytes%s\n", what, shell_human_size(v, h, sizeof h),
		    (unsigned long long)v, note);
}

static int cmd_mem(struct shell *sh, int argc, char **argv)
{
	struct plat_mem_stats st;

	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	plat_mem_stats(&st);
	plat_printf("memory:\n");
	mem_line("total", st.total, "");
	mem_line("free", st.free, "");
	mem_line("used", st.used, " (platform allocations now)");
	mem_line("peak", st.used_peak, " (high-water mark)");
	return 0;
}

/* ---- uptime ---- */
static void print_secs(const char *what, uint64_t ns)
{
	plat_printf("%s %llu.%03llu s", what, (unsigned long long)(ns / 1000000000u),
		    (unsigned long long)(ns / 1000000u % 1000u));
}

static int cmd_uptime(struct shell *sh, int argc, char **argv)
{
	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	uint64_t boot = plat_boot_ns();
	print_secs("up", plat_uptime_ns());
	if (boot)
		print_secs(", boot to prompt", boot);
	else
		plat_printf(", boot to prompt: no prompt yet");
	plat_printf("\n");
	return 0;
}

/* ---- config ---- */
static void config_show(struct shell *sh, const struct shell_config_key *k)
{
	char v[128] = "";
	if (k->get)
		k->get(sh, k, v, sizeof v);
	plat_printf("  %-16s %-12s %s\n", k->name, v, k->help ? k->help : "");
}

static int cmd_config(struct shell *sh, int argc, char **argv)
{
	const struct shell_config_key *k;

	if (shell_check_argc(sh, argc, argv, 1, 3))
		return -LLMK_EINVAL;
	if (argc == 1) {
		for (int i = 0; (k = shell_config_at(i)); i++)
			if (shell_config_find(k->name) == k)
				config_show(sh, k);
		return 0;
	}
	k = shell_config_find(argv[1]);
	if (!k)
		return shell_err(sh, -LLMK_ENOENT, "config: unknown key '%s' (try 'config')", argv[1]);
	if (argc == 2) {
		config_show(sh, k);
		return 0;
	}
	if (!k->set)
		return shell_err(sh, -LLMK_EINVAL, "config: '%s' is read-only", k->name);
	return k->set(sh, k, argv[2]);
}

static int parse_onoff(struct shell *sh, const char *key, const char *v, bool *out)
{
	if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0) {
		*out = true;
		return 0;
	}
	if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) {
		*out = false;
		return 0;
	}
	return shell_err(sh, -LLMK_EINVAL, "config %s: expected on or off, got '%s'", key, v);
}

static int set_echo(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	return parse_onoff(sh, "echo", v, &sh->echo);
}

static void get_echo(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	plat_snprintf(buf, n, "%s", sh->echo ? "on" : "off");
}

static int set_prompt(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	return parse_onoff(sh, "prompt", v, &sh->prompt);
}

static void get_prompt(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	plat_snprintf(buf, n, "%s", sh->prompt ? "on" : "off");
}

/* a.b.c.d, each 0..255; *p moves past it. */
static bool parse_ipv4(const char **p, uint8_t out[4])
{
	const char *s = *p;

	for (int i = 0; i < 4; i++) {
		unsigned v = 0, digits = 0;
		if (i && *s++ != '.')
			return false;
		while (*s >= '0' && *s <= '9' && digits < 3) {
			v = v * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (!digits || v > 255)
			return false;
		out[i] = (uint8_t)v;
	}
	*p = s;
	return true;
}

/* "dhcp", or "static ADDR/MASK GW" with MASK a prefix length (0..32) or
 * a dotted netmask. docs/network.md. */
static int set_net(struct shell *sh, const struct shell_config_key *k, const char *v)
{
	struct plat_net_ipv4 c = { .dhcp = true };
	const char *p = v;
	int err;

	if (strcmp(v, "dhcp") != 0) {
		unsigned bits = 0, digits = 0;
		c.dhcp = false;
		if (strncmp(p, "static ", 7) != 0)
			goto bad;
		p += 7;
		if (!parse_ipv4(&p, c.addr) || *p++ != '/')
			goto bad;
		const char *q = p;
		if (parse_ipv4(&q, c.mask)) {
			p = q;
		} else {
			while (*p >= '0' && *p <= '9' && digits < 2) {
				bits = bits * 10 + (unsigned)(*p++ - '0');
				digits++;
			}
			if (!digits || bits > 32)
				goto bad;
			uint32_t m = bits ? ~0u << (32 - bits) : 0;
			for (int i = 0; i < 4; i++)
				c.mask[i] = (uint8_t)(m >> (24 - 8 * i));
		}
		if (*p++ != ' ' || !parse_ipv4(&p, c.gw) || *p)
			goto bad;
	}
	if ((err = plat_net_ipv4(&c)) < 0)
		return shell_err(sh, err, "config net: %s", plat_strerror(err));
	if (c.dhcp)
		sh->net[0] = 0;
	else
		plat_snprintf(sh->net, sizeof sh->net, "static %u.%u.%u.%u/%u.%u.%u.%u %u.%u.%u.%u",
			      c.addr[0], c.addr[1], c.addr[2], c.addr[3], c.mask[0], c.mask[1],
			      c.mask[2], c.mask[3], c.gw[0], c.gw[1], c.gw[2], c.gw[3]);
	return 0;
bad:
	return shell_err(sh, -LLMK_EINVAL, "config net: expected dhcp or \"static ADDR/MASK GW\" "
			 "(e.g. \"static 10.0.2.15/24 10.0.2.2\"), got '%s'", v);
}

static void get_net(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	plat_snprintf(buf, n, "%s", sh->net[0] ? sh->net : "dhcp");
}

const struct shell_config_key shell_config_sys[] = {
	{"echo", "on|off: echo typed characters (serial terminals want on)", set_echo, get_echo,
	 NULL, NULL},
	{"prompt", "on|off: print the '" SHELL_PROMPT "' prompt", set_prompt, get_prompt, NULL, NULL},
	{"net", "dhcp|\"static ADDR/MASK GW\": the network's IPv4 address (docs/network.md)",
	 set_net, get_net, NULL, NULL},
	{0},
};

/* ---- power ---- */
/* No key outlives the boot: the session's, the attestation's ephemeral
 * private key, the model key. */
void shell_going_down(struct shell *sh)
{
	shell_session_end_now(sh);
	shell_attest_forget(sh);
	shell_seal_forget(sh);
	shell_serve_forget(sh);
}

static int cmd_poweroff(struct shell *sh, int argc, char **argv)
{
	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	shell_going_down(sh);
	plat_printf("powering off\n");
	plat_poweroff();
}

static int cmd_reboot(struct shell *sh, int argc, char **argv)
{
	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	shell_going_down(sh);
	plat_printf("rebooting\n");
	plat_reboot();
}

/* ---- disks ---- */
static int disk_list(struct shell *sh)
{
	int n = plat_disk_count(), first = 0;

	if (n == 0) {
		plat_printf("no disks\n");
		return 0;
	}
	for (int d = 0; d < n; d++) {
		struct plat_disk_info in;
		char h[32], id[sizeof in.id], where[sizeof in.where];
		int r = plat_disk_info(d, &in);
		if (r) {
			plat_printf("disk %d: error: %s\n", d, plat_strerror(r));
			continue;
		}
		plat_printf("disk %d: %llu bytes (%s), id '%s', %s\n", d,
			    (unsigned long long)in.capacity, shell_human_size(in.capacity, h, sizeof h),
			    shell_clean(in.id, strlen(in.id), id, sizeof id),
			    shell_clean(in.where, strlen(in.where), where, sizeof where));
		int e = shell_disk_describe(sh, d, &in);
		first = first ? first : e;
	}
	return first;
}

struct hash_ctx {
	struct llm_sha256 sha;
};

static void hash_consume(void *ctx, const void *p, size_t n)
{
	llm_sha256_update(&((struct hash_ctx *)ctx)->sha, p, n);
}

/* Print "X MB/s" the way bench and hash both do; MB = 10^6 bytes. */
static void print_rate(uint64_t bytes, uint64_t ns)
{
	double s = (double)ns / 1e9;
	plat_printf("%.3f s, %.1f MB/s", s, s > 0 ? (double)bytes / 1e6 / s : 0.0);
}

/* Range check for OFFSET LEN against capacity, in one line. */
static int disk_range(struct shell *sh, int disk, int argc, char **argv, uint64_t cap,
		      uint64_t *off, uint64_t *len)
{
	*off = 0;
	*len = cap;
	if (argc == 3)
		return 0;
	if (argc != 5)
		return shell_err(sh, -LLMK_EINVAL,
				 "disks hash: give both OFFSET and LEN (usage: disks hash N [OFFSET LEN])");
	if (shell_arg_u64(sh, "disks hash OFFSET", argv[3], 0, UINT64_MAX, off) ||
	    shell_arg_u64(sh, "disks hash LEN", argv[4], 0, UINT64_MAX, len))
		return -LLMK_EINVAL;
	if (*off > cap || *len > cap - *off)
		return shell_err(sh, -LLMK_ERANGE,
				 "disks hash: range %llu + %llu is past the end of disk %d (capacity %llu bytes)",
				 (unsigned long long)*off, (unsigned long long)*len, disk,
				 (unsigned long long)cap);
	return 0;
}

static int disk_hash(struct shell *sh, int argc, char **argv)
{
	struct plat_disk_info in;
	struct hash_ctx hc;
	uint64_t off, len, done = 0;
	uint8_t dig[32];
	char hex[65];
	int disk, r;

	if (argc < 3 || argc > 5)
		return shell_err(sh, -LLMK_EINVAL, "disks hash: %s (usage: disks hash N [OFFSET LEN])",
				 argc < 3 ? "missing disk index" : "too many arguments");
	if (shell_arg_disk(sh, argv[2], &disk))
		return -LLMK_ENOENT;
	if ((r = plat_disk_info(disk, &in)))
		return shell_err(sh, r, "disks hash: disk %d: %s", disk, plat_strerror(r));
	if ((r = disk_range(sh, disk, argc, argv, in.capacity, &off, &len)))
		return r;
	llm_sha256_init(&hc.sha);
	uint64_t t0 = plat_time_ns();
	r = shell_disk_stream(sh, disk, off, len, 0, hash_consume, &hc, &done);
	uint64_t t1 = plat_time_ns();
	if (r == -LLMK_ECANCEL)
		return shell_err(sh, r, "disks hash: cancelled after %llu of %llu bytes",
				 (unsigned long long)done, (unsigned long long)len);
	if (r)
		return shell_err(sh, r, "disks hash: disk %d: read failed at byte %llu: %s", disk,
				 (unsigned long long)(off + done), plat_strerror(r));
	llm_sha256_out(&hc.sha, dig);
	for (int i = 0; i < 32; i++)
		plat_snprintf(hex + 2 * i, 3, "%02x", dig[i]);
	plat_printf("%s  disk %d offset %llu length %llu (", hex, disk, (unsigned long long)off,
		    (unsigned long long)len);
	print_rate(len, t1 - t0);
	plat_printf(")\n");
	return 0;
}

/* Sequential reads over the disk, passes repeated, bounded in bytes and time. */
#define BENCH_MAX_BYTES (1ull << 30)
#define BENCH_MAX_NS 3000000000ull

static int disk_bench(struct shell *sh, int argc, char **argv)
{
	uint64_t bytes, ns;
	int disk, r;
	char h[32];

	if (argc != 3)
		return shell_err(sh, -LLMK_EINVAL, "disks bench: %s (usage: disks bench N)",
				 argc < 3 ? "missing disk index" : "too many arguments");
	if (shell_arg_disk(sh, argv[2], &disk))
		return -LLMK_ENOENT;
	r = shell_disk_bench(sh, disk, BENCH_MAX_BYTES, BENCH_MAX_NS, &bytes, &ns);
	if (r == -LLMK_ECANCEL)
		return shell_err(sh, r, "disks bench: cancelled");
	if (r == -LLMK_ERANGE)
		return shell_err(sh, r, "disks bench: disk %d is empty", disk);
	if (r)
		return shell_err(sh, r, "disks bench: disk %d: read failed after %llu bytes: %s", disk,
				 (unsigned long long)bytes, plat_strerror(r));
	plat_printf("disk %d: read %s in ", disk, shell_human_size(bytes, h, sizeof h));
	print_rate(bytes, ns);
	plat_printf(" (sequential, %u KiB requests, %d in flight%s)\n", SHELL_DISK_CHUNK >> 10,
		    SHELL_DISK_DEPTH, plat_emulated() ? "; emulated machine, not hardware speed" : "");
	return 0;
}

static int cmd_disks(struct shell *sh, int argc, char **argv)
{
	if (argc == 1)
		return disk_list(sh);
	if (strcmp(argv[1], "hash") == 0)
		return disk_hash(sh, argc, argv);
	if (strcmp(argv[1], "bench") == 0)
		return disk_bench(sh, argc, argv);
	return shell_err(sh, -LLMK_EINVAL, "disks: unknown subcommand '%s' (disks, disks hash, disks bench)",
			 argv[1]);
}

const struct shell_cmd shell_cmds_sys[] = {
	{"help", "help [COMMAND]", "list commands, or show one command's usage", cmd_help},
	{"version", "version", "version, git commit, build id, arch, machine, CPU features",
	 cmd_version},
	{"mem", "mem", "memory: total, free, used, peak", cmd_mem},
	{"disks",
	 "disks\ndisks hash N [OFFSET LEN]\ndisks bench N",
	 "list disks (and what they hold); SHA-256 of disk N or a byte range; read speed",
	 cmd_disks},
	{"uptime", "uptime", "time since reset and boot-to-prompt time", cmd_uptime},
	{"config", "config [KEY [VALUE]]", "list settings, show one, or set it", cmd_config},
	{"poweroff", "poweroff", "power the machine off (host: exit 0)", cmd_poweroff},
	{"reboot", "reboot", "reset the machine (host: exit 0)", cmd_reboot},
	{0},
};
