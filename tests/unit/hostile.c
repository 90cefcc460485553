/*
 * tests/unit/hostile.c — the hostile-device model and memory map of the
 * driver harnesses (hostile.h).
 */
#include "hostile.h"
#include "../../kernel/kernel.h"

#include <stdlib.h>

struct hostile_dev hostile;

static struct {
	uint64_t lo, hi;
	bool only_mmio; /* [lo, hi) is the only MMIO, everything else RAM */
} ram;

void hostile_private_ram(const void *p, size_t n)
{
	ram.lo = (uintptr_t)p;
	ram.hi = ram.lo + n;
	ram.only_mmio = false;
}

void hostile_only_mmio(const void *p, size_t n)
{
	hostile_private_ram(p, n);
	ram.only_mmio = true;
}

bool mem_is_ram(uint64_t addr, uint64_t len)
{
	if (addr + len < addr)
		return true;
	if (ram.only_mmio)
		return addr < ram.lo || addr + len > ram.hi;
	return len && addr < ram.hi && addr + len > ram.lo;
}

static struct {
	uint64_t lo, hi;
} priv_mapped;

void hostile_private_mapped(const void *p, size_t n)
{
	priv_mapped.lo = (uintptr_t)p;
	priv_mapped.hi = priv_mapped.lo + n;
}

bool cc_mmio_shared(uint64_t addr, uint64_t len)
{
	return !(len && addr < priv_mapped.hi && addr + len > priv_mapped.lo);
}

static bool in(uint64_t a, const void *p, size_t n)
{
	return a >= (uintptr_t)p && a < (uintptr_t)p + n;
}

/* Configuration space: BAR registers answer sizing, the rest is memory. */
static uint32_t cfg_rd(unsigned off, int bytes)
{
	uint32_t v = 0;
	unsigned reg = off & ~3u, b = (reg - 0x10) / 4;

	memcpy(&v, hostile.cfg + reg, 4);
	if (reg >= 0x10 && reg < 0x28 && hostile.sizing[b]) {
		/* the upper half of a 64-bit BAR below 4 GiB in size */
		bool hi = b > 0 && hostile.bar_size[b - 1] &&
			  ((hostile.cfg[0x10 + 4 * (b - 1)] >> 1) & 3) == 2 && !hostile.bar_size[b];
		v = hi ? 0xffffffffu :
		    hostile.bar_size[b] ? (~(hostile.bar_size[b] - 1) | (v & 0xf)) : 0;
	}
	v >>= 8 * (off & 3);
	return bytes == 4 ? v : bytes == 2 ? (v & 0xffff) : (v & 0xff);
}

static void cfg_wr(unsigned off, uint32_t v, int bytes)
{
	unsigned reg = off & ~3u, b = (reg - 0x10) / 4;

	if (reg >= 0x10 && reg < 0x28 && bytes == 4) {
		if (v == 0xffffffffu) {
			hostile.sizing[b] = true;
			return;
		}
		hostile.sizing[b] = false;
	}
	memcpy(hostile.cfg + off, &v, (size_t)bytes);
}

/* The common configuration (§4.1.4.3): feature words by their selector. */
static uint32_t bar_rd(uint64_t a, int bytes)
{
	unsigned off = (unsigned)(a - (uintptr_t)hostile_bar());
	uint32_t v = 0;

	if (off == 4 && bytes == 4) {
		uint32_t sel;
		memcpy(&sel, hostile_bar(), 4);
		return (uint32_t)(hostile.features >> (sel ? 32 : 0));
	}
	if (off == 21 && bytes == 1 && hostile.gen_spin)
		return ++hostile_bar()[21];
	memcpy(&v, hostile_bar() + off, (size_t)bytes);
	return v;
}

uint32_t hostile_rd(uint64_t a, int bytes)
{
	uint32_t v = 0;

	if (in(a, hostile.cfg, sizeof hostile.cfg))
		return cfg_rd((unsigned)(a - (uintptr_t)hostile.cfg), bytes);
	if (in(a, hostile_bar(), HOSTILE_BAR_SIZE))
		return bar_rd(a, bytes);
	memcpy(&v, (void *)(uintptr_t)a, (size_t)bytes); /* not the device's */
	return v;
}

void hostile_wr(uint64_t a, uint32_t v, int bytes)
{
	if (in(a, hostile.cfg, sizeof hostile.cfg))
		cfg_wr((unsigned)(a - (uintptr_t)hostile.cfg), v, bytes);
	else
		memcpy((void *)(uintptr_t)a, &v, (size_t)bytes); /* the BAR, or not the device's */
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

void hostile_cap(unsigned off, unsigned next, uint8_t type, uint32_t at, uint32_t len)
{
	uint8_t *c = hostile.cfg + off;

	c[0] = 0x09; /* vendor-specific */
	c[1] = (uint8_t)next;
	c[2] = type == 2 ? 20 : 16;
	c[3] = type;
	c[4] = 0;
	put32(c + 8, at);
	put32(c + 12, len);
	if (type == 2)
		put32(c + 16, 4); /* notify_off_multiplier */
}

void hostile_virtio_reset(void)
{
	uint64_t b;

	memset(hostile.cfg, 0, sizeof hostile.cfg);
	memset(hostile.bar_size, 0, sizeof hostile.bar_size);
	memset(hostile.sizing, 0, sizeof hostile.sizing);
	hostile.gen_spin = 0;
	if (!hostile.arena) /* a BAR is aligned to its size */
		hostile.arena = aligned_alloc(HOSTILE_BAR_SIZE, HOSTILE_BAR_SIZE + HOSTILE_CANARY);
	memset(hostile.arena, 0, HOSTILE_BAR_SIZE);
	memset(hostile.arena + HOSTILE_BAR_SIZE, 0xa5, HOSTILE_CANARY);
	memset(hostile.priv, 0x5a, sizeof hostile.priv);
	hostile_private_ram(hostile.priv, sizeof hostile.priv);
	hostile_private_mapped(NULL, 0);
	hostile.features = 1ull << 32; /* VERSION_1 */
	hostile_bar()[24] = 16;        /* queue 0's size */
	put32(hostile.cfg, 0x10421af4);
	put32(hostile.cfg + 0x04, 0x00100007); /* status: capability list */
	b = (uintptr_t)hostile_bar();
	put32(hostile.cfg + 0x10, (uint32_t)b | 4); /* 64-bit memory BAR */
	put32(hostile.cfg + 0x14, (uint32_t)(b >> 32));
	hostile.bar_size[0] = HOSTILE_BAR_SIZE;
	hostile.cfg[0x34] = HOSTILE_CAP0;
	hostile_cap(HOSTILE_CAP0, HOSTILE_CAP0 + 0x14, 1, 0x0000, 0x38);
	hostile_cap(HOSTILE_CAP0 + 0x14, HOSTILE_CAP0 + 0x28, 2, 0x3000, 0x1000);
	hostile_cap(HOSTILE_CAP0 + 0x28, 0, 4, 0x2000, 0x1000);
}

bool hostile_canaries_intact(void)
{
	for (unsigned i = 0; i < HOSTILE_CANARY; i++)
		if (hostile.priv[i] != 0x5a || hostile.arena[HOSTILE_BAR_SIZE + i] != 0xa5)
			return false;
	return true;
}
