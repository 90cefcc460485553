/*
 * tests/unit/model_fixture.h — a model opened as the engine opens a resident
 * one, for the tests that drive the forward pass themselves
 * (test_model*.c): the GGUF read and checked, then the weights, the model,
 * its cache, scratch and matmul context; taken down again in one call that
 * checks every byte came back.
 *
 *   struct tmodel t;
 *   CHECK_EQ_INT(tmodel_open(&t, path, GGML_TYPE_F32, 64, 16), 0);
 *   model_forward(&t.m, &t.s, &t.mm, &t.kv, toks, n, 0, true);
 *   tmodel_close(&t);
 */
#ifndef MODEL_FIXTURE_H
#define MODEL_FIXTURE_H

#include "../../llm/model.h"

struct gedit;    /* gguf_edit.h */
struct mkm_spec; /* tools/writer/mkmodel.h */

struct tmodel {
	void *file;               /* the bytes (tmodel_open's own: freed at close) */
	size_t len;
	bool own;
	int stage;                /* how far it opened: what close takes down */
	struct llm_membuf mb;
	struct llm_reader rd;
	struct llm_mem mem;
	struct gguf_file g;
	struct model_hparams hp;  /* as read (a test may change it before tmodel_load) */
	struct model m;
	struct model_scratch s;
	struct kv_cache kv;
	struct mm_ctx mm;
	char err[256];
};

/* file[0..len) (the caller's, kept until close) read: gguf_open,
 * model_read_hparams, model_check_layout. 0, or the first error, its line in
 * t->err (printed after name when name is not NULL, as is a note a
 * successful check leaves). tmodel_close either way. */
int tmodel_read(struct tmodel *t, const void *file, size_t len, const char *name);
/* Then resident weights (model_check_rope_freqs), the model, a cache of
 * n_ctx positions of kv_type, scratch for n_batch tokens and n_workers
 * workers, and a one-thread matmul context: 0, or the first error (t->err). */
int tmodel_load(struct tmodel *t, uint32_t kv_type, uint32_t n_ctx, uint32_t n_batch,
		uint32_t n_workers);
/* path's file read and loaded as above (one scratch worker): 0, or -1 with
 * the error printed after path. */
int tmodel_open(struct tmodel *t, const char *path, uint32_t kv_type, uint32_t n_ctx,
		uint32_t n_batch);
/* Everything opened freed (the file if tmodel_open read it); checks that
 * the model's memory all came back. */
void tmodel_close(struct tmodel *t);

/* The model s describes, written to <tmpdir>/<name>-src.gguf, rewritten with
 * ed's edits to <name>.gguf and read (tmodel_read): 0, or the first error,
 * its line in err; -1000 when a file could not be written or read. */
int tmodel_edited(const struct mkm_spec *s, const char *name, const struct gedit *ed, char *err,
		  size_t errlen);

#endif
