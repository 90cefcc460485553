/*
 * tests/unit/test_engine.c — llm/engine.c's memory hygiene: engine_forget
 * (chat --reset, a confidential session's start and end) zeroizes the
 * bytes of the conversation, the generated text, the cached tokens, every
 * KV row, the activations and logits and the sampler's state, not only
 * their counts; the next prompt then reuses nothing from the cache; and
 * engine_unload hands every byte back through the zeroizing free. On a
 * synthetic model (tools/host/mkmodel.h), so it never skips.
 */
#include "test.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

/* It reads whole allocations, the redzones the sanitizer build poisons
 * inside them included (llm/mem.h). */
__attribute__((no_sanitize_address)) static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* A loaded engine over a fresh synthetic model with a chat template. */
static struct engine *loaded(void)
{
	char path[600], err[256];
	struct mkm_spec s;

	mkm_defaults(&s);
	s.name = "forget";
	s.chat_template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
	snprintf(path, sizeof path, "%s/engine_forget.gguf", test_tmpdir());
	CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	struct engine *e = calloc(1, sizeof *e);
	engine_init(e);
	e->cfg.threads = 1;
	CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), 0);
	return e;
}

static int chat(struct engine *e, const char *msg)
{
	struct engine_gen g;
	char err[256];
	engine_gen_init(e, &g);
	g.samp.temp = 0.8f;
	g.samp.seed = 5;
	g.n_predict = 6;
	return engine_chat(e, msg, &g, err, sizeof err);
}

TEST(engine_forget_zeroizes_the_conversation_kv_and_sampler)
{
	struct engine *e = loaded();

	CHECK_EQ_INT(chat(e, "a secret about the weather"), 0);
	CHECK_EQ_INT(chat(e, "and one more"), 0);
	CHECK(e->n_past > 0 && e->n_msgs == 4 && e->text_len > 0);
	/* what a conversation leaves behind, before */
	CHECK(!all_zero(e->kv.k, e->kv.bytes) && !all_zero(e->kv.v, e->kv.bytes));
	CHECK(!all_zero(e->chat_buf, e->chat_cap) && !all_zero(e->fmt_buf, e->chat_cap));
	CHECK(!all_zero(e->ctx_tok, (e->n_ctx + 1) * sizeof(int32_t)));
	CHECK(!all_zero(e->s.base, e->s.bytes));
	CHECK(!all_zero(e->smp.cand, e->smp.n_vocab * sizeof *e->smp.cand));
	CHECK(!all_zero(e->smp.hist, e->smp.hist_cap * sizeof *e->smp.hist));

	engine_forget(e);
	CHECK(all_zero(e->kv.k, e->kv.bytes) && all_zero(e->kv.v, e->kv.bytes));
	CHECK(all_zero(e->chat_buf, e->chat_cap) && all_zero(e->fmt_buf, e->chat_cap));
	CHECK(all_zero(e->text, e->text_cap));
	CHECK(all_zero(e->ctx_tok, (e->n_ctx + 1) * sizeof(int32_t)));
	CHECK(all_zero(e->tok_buf, (e->n_ctx + 1) * sizeof(int32_t)));
	CHECK(all_zero(e->s.base, e->s.bytes));
	CHECK(all_zero(e->mm.act, e->mm.act_cap));
	CHECK(all_zero(e->smp.cand, e->smp.n_vocab * sizeof *e->smp.cand));
	CHECK(all_zero(e->smp.hist, e->smp.hist_cap * sizeof *e->smp.hist));
	CHECK(all_zero(&e->smp.rng, sizeof e->smp.rng));
	CHECK(all_zero(e->msgs, sizeof e->msgs));
	CHECK_EQ_INT(e->n_past, 0);
	CHECK_EQ_INT(e->n_msgs, 0);
	CHECK(e->loaded);

	/* the same message again evaluates from position 0: nothing reused */
	CHECK_EQ_INT(chat(e, "a secret about the weather"), 0);
	CHECK_EQ_INT(e->run.n_reused, 0);
	engine_unload(e);
	free(e);
	host_remove_disks();
}

TEST(engine_chat_reset_zeroizes_and_unload_frees_through_the_wipe)
{
	struct engine *e = loaded();

	CHECK_EQ_INT(chat(e, "remember this"), 0);
	CHECK(!all_zero(e->kv.k, e->kv.bytes));
	engine_chat_reset(e);
	CHECK(all_zero(e->kv.k, e->kv.bytes) && all_zero(e->chat_buf, e->chat_cap));
	CHECK_EQ_INT(e->n_past, 0);
	CHECK_EQ_INT(chat(e, "remember this"), 0);
	CHECK_EQ_INT(e->run.n_reused, 0);
	/* unload: every byte went back through llm_mem_free, which zeroizes
	 * (llm/mem.c; the pages are unmapped after, so not readable here) */
	engine_unload(e);
	CHECK_EQ_INT(e->mem.used, 0);
	CHECK_EQ_INT(e->mem.n_allocs, 0);
	CHECK(!e->loaded && e->kv.k == NULL && e->text == NULL);
	free(e);
	host_remove_disks();
}

TEST(llm_mem_zeroize_clears_in_place)
{
	uint8_t b[64];
	memset(b, 0xa5, sizeof b);
	llm_mem_zeroize(b + 8, 40);
	CHECK(b[7] == 0xa5 && all_zero(b + 8, 40) && b[48] == 0xa5);
	llm_mem_zeroize(NULL, 10);
}
