/*
 * tests/unit/model_fixture.c — the model fixture (model_fixture.h).
 */
#include "model_fixture.h"
#include "gguf_edit.h"
#include "test.h"
#include "../../tools/writer/mkmodel.h"

#include <stdlib.h>

enum { T_NONE, T_GGUF, T_MODEL, T_KV, T_SCRATCH, T_MM };

int tmodel_read(struct tmodel *t, const void *file, size_t len, const char *name)
{
	int r;

	memset(t, 0, sizeof *t);
	t->file = (void *)file;
	t->len = len;
	llm_reader_mem(&t->rd, &t->mb, t->file, t->len);
	llm_mem_init(&t->mem, 0);
	if (!(r = gguf_open(&t->g, &t->rd, &t->mem, t->err, sizeof t->err))) {
		t->stage = T_GGUF;
		if (!(r = model_read_hparams(&t->hp, &t->g, t->err, sizeof t->err)))
			r = model_check_layout(&t->hp, &t->g, t->err, sizeof t->err);
	}
	if (name && t->err[0])
		fprintf(stderr, "  %s: %s\n", name, t->err);
	return r;
}

int tmodel_load(struct tmodel *t, uint32_t kv_type, uint32_t n_ctx, uint32_t n_batch,
		uint32_t n_workers)
{
	const struct model_hparams *hp = &t->hp;
	struct wt_ctx w;
	int r;

	if ((r = wt_resident_open(&w, &t->g, &t->rd, &t->mem, hp->n_layer, hp->n_embd, 1, NULL,
				  t->err, sizeof t->err)))
		return r;
	if ((r = model_check_rope_freqs(hp, &w, t->err, sizeof t->err)) ||
	    (r = model_init(&t->m, hp, &w, &t->mem))) {
		wt_close(&w);
		return r;
	}
	t->stage = T_MODEL;
	if ((r = kv_init(&t->kv, &t->mem, kv_type, hp->n_layer, n_ctx, hp->n_head_kv * hp->head_dim)))
		return r;
	t->stage = T_KV;
	if ((r = model_scratch_init(&t->s, hp, n_batch, n_workers, &t->mem)))
		return r;
	t->stage = T_SCRATCH;
	if ((r = mm_init(&t->mm, &t->mem, 1)))
		return r;
	t->stage = T_MM;
	return 0;
}

int tmodel_open(struct tmodel *t, const char *path, uint32_t kv_type, uint32_t n_ctx,
		uint32_t n_batch)
{
	size_t len;
	void *file = test_read_file(path, &len);

	if (!file) {
		memset(t, 0, sizeof *t);
		return -1;
	}
	if (tmodel_read(t, file, len, NULL) || tmodel_load(t, kv_type, n_ctx, n_batch, 1)) {
		t->own = true;
		fprintf(stderr, "  %s: %s\n", path, t->err);
		return -1;
	}
	t->own = true;
	return 0;
}

void tmodel_close(struct tmodel *t)
{
	if (t->stage >= T_MM)
		mm_free(&t->mm);
	if (t->stage >= T_SCRATCH)
		model_scratch_free(&t->s, &t->mem);
	if (t->stage >= T_KV)
		kv_free(&t->kv);
	if (t->stage >= T_MODEL)
		model_free(&t->m);
	if (t->stage >= T_GGUF)
		gguf_close(&t->g);
	CHECK_EQ_INT(t->mem.used, 0);
	if (t->own)
		free(t->file);
	memset(t, 0, sizeof *t);
}

int tmodel_edited(const struct mkm_spec *s, const char *name, const struct gedit *ed, char *err,
		  size_t errlen)
{
	char src[600], dst[600];
	struct tmodel t;
	size_t len;
	void *f;
	int r;

	snprintf(src, sizeof src, "%s/%s-src.gguf", test_tmpdir(), name);
	snprintf(dst, sizeof dst, "%s/%s.gguf", test_tmpdir(), name);
	err[0] = 0;
	if (mkm_write(s, src, err, errlen) || gedit_rewrite(src, dst, ed) ||
	    !(f = test_read_file(dst, &len)))
		return -1000;
	r = tmodel_read(&t, f, len, NULL);
	snprintf(err, errlen, "%s", t.err);
	t.own = true;
	tmodel_close(&t);
	return r;
}
