/*
 * tests/unit/test_engine_chat.c — engine_chat_messages (llm/engine_chat.c),
 * the HTTP API's chat: a conversation given whole gets the reply
 * engine_chat gives the same turns, and the shell's conversation stays as
 * it was. On a synthetic model (tools/host/mkmodel.h), so it never skips.
 */
#include "test.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

static struct engine *open_chat_model(void)
{
	char path[600], err[256];
	struct mkm_spec s;

	mkm_defaults(&s);
	s.name = "chat_messages";
	s.chat_template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
	snprintf(path, sizeof path, "%s/engine_chat_messages.gguf", test_tmpdir());
	CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	struct engine *e = calloc(1, sizeof *e);
	engine_init(e);
	e->cfg.threads = 1;
	CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), 0);
	return e;
}

static void greedy(struct engine *e, struct engine_gen *g, int32_t *ids)
{
	engine_gen_init(e, g);
	g->samp.temp = 0;
	g->n_predict = 8;
	g->out_ids = ids;
	g->out_cap = 8;
}

TEST(engine_chat_messages_replies_as_engine_chat_to_the_same_turns)
{
	struct engine *e = open_chat_model();
	struct chat_msg msgs[2] = {{"system", "be brief"}, {"user", "hello there"}};
	int32_t want[8], got[8];
	struct engine_gen g;
	char err[256];

	CHECK_EQ_INT(engine_chat_system(e, "be brief", err, sizeof err), 0);
	greedy(e, &g, want);
	CHECK_EQ_INT(engine_chat(e, "hello there", &g, err, sizeof err), 0);
	uint32_t n_want = g.n_out, n_msgs = e->n_msgs;
	greedy(e, &g, got);
	CHECK_EQ_INT(engine_chat_messages(e, msgs, 2, &g, err, sizeof err), 0);
	CHECK_EQ_INT(g.n_out, n_want);
	CHECK(memcmp(got, want, n_want * sizeof *got) == 0);
	CHECK_EQ_INT(e->n_msgs, n_msgs);
	/* a role that is not a word is refused with a message */
	struct chat_msg bad[1] = {{"us er", "x"}};
	greedy(e, &g, got);
	CHECK_EQ_INT(engine_chat_messages(e, bad, 1, &g, err, sizeof err), -LLMK_EINVAL);
	CHECK(strstr(err, "role") != NULL);
	engine_unload(e);
	free(e);
	host_remove_disks();
}
