/*
 * llm/engine_info.c — what the engine tells its callers: the configuration,
 * snapshots of the loaded model, its memory plan and the last run, the
 * tokenizer, and the profiling switch (engine.h). The shell prints these;
 * it never reads or writes struct engine itself.
 */
#include "engine.h"

void engine_get_config(const struct engine *e, struct engine_config *out)
{
	*out = e->cfg;
}

void engine_set_config(struct engine *e, const struct engine_config *cfg)
{
	e->cfg = *cfg;
}

int engine_get_info(const struct engine *e, struct engine_info *info)
{
	memset(info, 0, sizeof *info);
	info->disk = -1;
	if (!e->loaded)
		return -LLMK_EINVAL;
	info->loaded = true;
	info->vocab_only = e->vocab_only;
	info->disk = e->disk;
	info->hp = e->model.hp;
	info->sealed = e->sealed;
	info->extent = e->g.extent;
	if (e->sealed) {
		memcpy(info->plain_sha256, e->seal.hdr.plain_sha256, 32);
		info->seal_chunks = e->seal.hdr.n_chunks;
		info->seal_chunk_size = e->seal.hdr.chunk_size;
	} else if (e->meas.on) { /* never for --vocab-only */
		if (e->meas.done)
			memcpy(info->plain_sha256, e->meas.digest, 32);
		info->digest_as_loaded = true;
		info->measure_pending = !e->meas.done;
		/* (pending only while a bound stream's first pass has not run) */
		info->measured_bytes = e->meas.done ? e->g.extent : e->meas.tags.base + e->meas.tags.fed;
		if (e->meas.tags.tag) {
			info->bind_blocks = e->meas.tags.n_blocks;
			info->bind_block = e->meas.tags.block;
			info->bind_impl = e->meas.tags.impl;
		}
	}
	for (uint64_t i = 0; i < e->g.n_tensors; i++) {
		uint32_t t = e->g.tensors[i].type;
		if (t < GGML_TYPE_COUNT) {
			info->type_count[t]++;
			info->type_bytes[t] += e->g.tensors[i].size;
		}
	}
	info->n_vocab = e->tok.n_vocab;
	info->tok_model = e->tok.model;
	info->tok_pre = e->tok.kind == TOK_BPE ? e->tok.pre_name : NULL;
	info->bos = e->tok.bos;
	info->eos = e->tok.eos;
	info->tmpl = e->tmpl;
	info->tmpl_detected = e->tmpl_detected;
	info->tmpl_configured = !e->tmpl_detected && e->cfg.tmpl != CHAT_UNKNOWN;
	info->tmpl_in_file = e->tmpl_in_file;
	return 0;
}

int engine_get_plan(const struct engine *e, struct engine_plan *plan)
{
	memset(plan, 0, sizeof *plan);
	plan->mem_budget = e->cfg.mem_budget;
	plan->mem_used = e->mem.used;
	plan->mem_peak = e->mem.peak;
	if (!e->loaded || e->vocab_only)
		return -LLMK_EINVAL;
	plan->streaming = e->streaming;
	plan->n_ctx = e->n_ctx;
	plan->n_ctx_asked = e->n_ctx_asked;
	plan->ctx_from_file = e->cfg.n_ctx == 0;
	plan->ctx_capped = e->ctx_cap;
	plan->n_slots = e->n_slots;
	plan->slot_bytes = e->slot_bytes;
	plan->embd_bytes = e->embd_bytes;
	plan->weight_bytes = e->weight_bytes;
	plan->kv_bytes = e->kv_bytes;
	plan->scratch_bytes = e->scratch_bytes;
	plan->kv_type = e->kv.type;
	plan->weights_kind = e->model.w.kind;
	plan->packed_bytes = e->model.w.packed_bytes;
	plan->pack_ns = e->model.w.pack_ns;
	plan->packed_types = e->model.w.packed_types;
	plan->plan_budget = e->plan_budget;
	plan->n_batch = e->s.n_batch;
	plan->threads = e->mm.n_threads;
	return 0;
}

int engine_get_stats(const struct engine *e, struct engine_stats *st)
{
	memset(st, 0, sizeof *st);
	st->mem_used = e->mem.used;
	st->mem_peak = e->mem.peak;
	if (!e->loaded)
		return -LLMK_EINVAL;
	st->run = e->run;
	st->n_past = e->n_past;
	st->n_ctx = e->n_ctx;
	st->streaming = e->streaming;
	st->sealed = e->sealed;
	st->disk = e->disk;
	if (!e->vocab_only)
		wt_io_stats(&e->model.w, &st->io, false);
	return 0;
}

const struct tok *engine_tok(const struct engine *e)
{
	return e->loaded ? &e->tok : NULL;
}

int engine_profile(struct engine *e, bool on, bool reset)
{
	if (!e->loaded || e->vocab_only)
		return -LLMK_EINVAL;
	e->model.prof.on = on;
	if (reset)
		model_prof_reset(&e->model);
	return 0;
}

const struct model_prof *engine_get_profile(const struct engine *e)
{
	return e->loaded && !e->vocab_only ? &e->model.prof : NULL;
}
