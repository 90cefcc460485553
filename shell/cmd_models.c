/*
 * shell/cmd_models.c — `models`: what model each disk holds (the disk's id
 * as `disks` prints it, general.name, architecture, size, sealed or not),
 * and the lookup `load` uses: a disk index, a disk id or a general.name.
 *
 * A sealed disk shows its name only to the key that opens it: with the
 * loaded key the GGUF inside is read through the image (its header and
 * metadata chunks decrypted and authenticated), without one it is "sealed,
 * no key loaded". Every string from a disk is printed cleaned (text.c).
 */
#include "cmd_model.h"
#include "cmd_seal.h"

enum model_kind {
	MODEL_NONE,       /* not a GGUF, not a sealed image */
	MODEL_GGUF,       /* a plain GGUF; name and arch set */
	MODEL_SEALED,     /* opened with the loaded key; name and arch set */
	MODEL_LOCKED,     /* sealed; the loaded key (or none) does not open it */
	MODEL_BAD,        /* a GGUF or a sealed image that does not read */
};

struct model_entry {
	enum model_kind kind;
	struct plat_disk_info in;
	char name[256];       /* general.name as the file has it ("" if none) */
	bool name_cut;        /* ... but longer, or with a NUL: it names nothing */
	char arch[48];        /* general.architecture */
	uint64_t size;        /* the GGUF's bytes (sealed: its plaintext) */
	char why[160];        /* MODEL_LOCKED / MODEL_BAD: the reason */
};

/* The string key holds, into buf; true if it did not fit whole. */
static bool copy_str(const struct gguf_file *g, const char *key, char *buf, size_t n)
{
	const struct gguf_str *s;
	size_t k = 0;

	buf[0] = 0;
	if (gguf_get_str(g, key, &s) != 0)
		return false;
	for (; k + 1 < n && k < s->len && s->s[k]; k++)
		buf[k] = s->s[k];
	buf[k] = 0;
	return k < s->len;
}

/* Read what disk holds into m. */
static void probe(struct shell *sh, int disk, struct model_entry *m)
{
	struct llm_mem mem;
	struct llm_reader rd;
	struct seal_header h;
	struct seal_ctx c;
	struct gguf_file g;
	char err[160];
	int r;

	memset(m, 0, sizeof *m);
	if ((r = plat_disk_info(disk, &m->in))) {
		m->kind = MODEL_BAD;
		plat_snprintf(m->why, sizeof m->why, "%s", plat_strerror(r));
		return;
	}
	llm_mem_init(&mem, 0);
	llm_reader_disk(&rd, disk);
	/* the magic is there (a header refused still counts), or not, or no read */
	r = seal_probe(&rd, &h);
	bool sealed = r == 0 || r == -LLMK_EFORMAT || r == -LLMK_ENOTSUP;
	if (!sealed && r != -LLMK_ENOENT) {
		m->kind = MODEL_BAD;
		plat_snprintf(m->why, sizeof m->why, "reading its first bytes: %s", plat_strerror(r));
		return;
	}
	r = seal_wrap(&c, &rd, shell_seal_keysrc(sh), &mem, err, sizeof err);
	if (r < 0) {
		m->kind = sealed ? MODEL_LOCKED : MODEL_BAD;
		plat_snprintf(m->why, sizeof m->why, "%s", err);
		return;
	}
	if (r == 0 && (rd.size < 4 || plat_disk_read(disk, 0, err, 4) || memcmp(err, "GGUF", 4))) {
		m->kind = MODEL_NONE;
		return;
	}
	if ((r = gguf_open(&g, &rd, &mem, err, sizeof err)) == 0) {
		m->kind = sealed ? MODEL_SEALED : MODEL_GGUF;
		m->name_cut = copy_str(&g, "general.name", m->name, sizeof m->name);
		copy_str(&g, "general.architecture", m->arch, sizeof m->arch);
		m->size = g.extent;
		gguf_close(&g);
	} else {
		m->kind = MODEL_BAD;
		plat_snprintf(m->why, sizeof m->why, "%s",
			      sealed && seal_error(&c)[0] ? seal_error(&c) : err);
	}
	if (sealed)
		seal_close(&c);
}

/* ASCII case-insensitive equality (general.name, as load always matched it). */
static bool same_name(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
		char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
		if (x != y)
			return false;
	}
	return *a == *b;
}

int shell_model_find(struct shell *sh, const char *what, int *disk)
{
	struct model_entry m;
	int found = -1, n = plat_disk_count();
	char w[96];

	for (int d = 0; d < n; d++) {
		probe(sh, d, &m);
		bool named = (m.kind == MODEL_GGUF || m.kind == MODEL_SEALED) && m.name[0] &&
			     !m.name_cut && same_name(m.name, what);
		if (strcmp(m.in.id, what) != 0 && !named)
			continue;
		if (found >= 0)
			return shell_err(sh, -LLMK_EINVAL, "load: '%s' names disks %d and %d "
					 "(load N: the disk's index)",
					 shell_clean(what, strlen(what), w, sizeof w), found, d);
		found = d;
	}
	if (found < 0)
		return shell_err(sh, -LLMK_ENOENT, "load: no disk has the id or holds a model named "
				 "'%s' (see 'models')", shell_clean(what, strlen(what), w, sizeof w));
	*disk = found;
	return 0;
}

static int cmd_models(struct shell *sh, int argc, char **argv)
{
	int n = plat_disk_count();

	if (shell_check_argc(sh, argc, argv, 1, 1))
		return -LLMK_EINVAL;
	if (n == 0) {
		plat_printf("no disks\n");
		return 0;
	}
	for (int d = 0; d < n; d++) {
		struct model_entry m;
		char id[64], name[128], arch[48], size[32], why[160];

		probe(sh, d, &m);
		plat_printf("disk %d: id '%s', ", d,
			    shell_clean(m.in.id, strlen(m.in.id), id, sizeof id));
		switch (m.kind) {
		case MODEL_GGUF:
		case MODEL_SEALED:
			plat_printf("'%s', %s, %s, %s\n",
				    m.name[0] ? shell_clean(m.name, strlen(m.name), name, sizeof name)
					      : "(unnamed)",
				    shell_clean(m.arch, strlen(m.arch), arch, sizeof arch),
				    shell_human_size(m.size, size, sizeof size),
				    m.kind == MODEL_SEALED ? "sealed (the loaded key opens it)"
							   : "not sealed");
			break;
		case MODEL_LOCKED: { /* the reason says whether a key is loaded */
			const char *r = strncmp(m.why, "seal: ", 6) ? m.why : m.why + 6;
			plat_printf("sealed (%s)\n", shell_clean(r, strlen(r), why, sizeof why));
			break;
		}
		case MODEL_BAD:
			plat_printf("no readable model (%s)\n",
				    shell_clean(m.why, strlen(m.why), why, sizeof why));
			break;
		case MODEL_NONE:
			plat_printf("no model (%s)\n",
				    shell_human_size(m.in.capacity, size, sizeof size));
			break;
		}
	}
	return 0;
}

const struct shell_cmd shell_cmds_models[] = {
	{"models", "models", "what model each disk holds: id, name, architecture, size, sealed "
	 "(load takes the index, the id or the name)", cmd_models},
	{0},
};
