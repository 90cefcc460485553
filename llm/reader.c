/*
 * llm/reader.c — the readers over a memory buffer and a platform disk
 * (reader.h).
 */
#include "reader.h"

static int membuf_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct llm_membuf *mb = ctx;

	if (off > mb->n || n > mb->n - off)
		return -LLMK_ERANGE;
	memcpy(buf, mb->p + off, n);
	return 0;
}

void llm_reader_mem(struct llm_reader *r, struct llm_membuf *mb, const void *p, uint64_t n)
{
	mb->p = p;
	mb->n = n;
	r->read = membuf_read;
	r->ctx = mb;
	r->size = n;
}

static int disk_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	return plat_disk_read((int)(intptr_t)ctx, off, buf, n);
}

void llm_reader_disk(struct llm_reader *r, int disk)
{
	struct plat_disk_info info;

	r->read = disk_read;
	r->ctx = (void *)(intptr_t)disk;
	r->size = plat_disk_info(disk, &info) == 0 ? info.capacity : 0;
}
