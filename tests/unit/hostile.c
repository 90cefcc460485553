/*
 * tests/unit/hostile.c — the memory map of the hostile-device harnesses
 * (hostile.h).
 */
#include "hostile.h"
#include "../../kernel/kernel.h"

static struct {
	uint64_t lo, hi;
} ram;

void hostile_private_ram(const void *p, size_t n)
{
	ram.lo = (uintptr_t)p;
	ram.hi = ram.lo + n;
}

bool mem_is_ram(uint64_t addr, uint64_t len)
{
	return addr + len < addr || (len && addr < ram.hi && addr + len > ram.lo);
}
