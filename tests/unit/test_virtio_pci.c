/*
 * tests/unit/test_virtio_pci.c — the hostile-device harness for
 * drivers/pci.c and drivers/virtio_pci.c (issue 28): the drivers compiled as
 * they are, their MMIO accessors aimed at a device model in test memory.
 *
 * In a confidential VM the host emulates the device, so everything it says
 * is chosen to hurt: a BAR placed on the guest's private RAM, a capability
 * whose structure runs past its BAR, a doorbell offset far outside the
 * notification area, a capability list that loops, a config generation that
 * never settles. The model: a 4 KiB configuration space (BAR sizing as PCI
 * Local Bus 3.0 §6.2.5.1 describes it), a 16 KiB BAR holding the virtio
 * structures (virtio 1.2 §4.1.4), and two canaries: "private" RAM (what
 * mem_is_ram says the memory map calls RAM, hostile.h) and the bytes just
 * past the BAR. Any access outside the model is a plain memory access, as
 * it would be in the guest: no byte of either canary may change, and the
 * driver must say no in bounded time.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include "../../kernel/kernel.h"
#include "../../kernel/arch.h"

#include "test.h"
#include "hostile.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define BAR_SIZE 0x4000u
#define CANARY 0x4000u

static struct {
	uint8_t cfg[4096];
	uint8_t *arena;          /* the BAR, then the canary past it */
	uint8_t priv[CANARY] __attribute__((aligned(BAR_SIZE))); /* "private RAM" */
	uint32_t bar_size[6];    /* 0: not a memory BAR */
	bool sizing[6];          /* all ones written: reads give the size mask */
	uint64_t features;       /* what the device offers */
	volatile int gen_spin;   /* CONFIG_GENERATION changes on every read */
} m;

static uint8_t *bar(void)
{
	return m.arena;
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

	memcpy(&v, m.cfg + reg, 4);
	if (reg >= 0x10 && reg < 0x28 && m.sizing[b]) {
		bool hi = b > 0 && m.bar_size[b - 1] && ((m.cfg[0x10 + 4 * (b - 1)] >> 1) & 3) == 2 &&
			  !m.bar_size[b];
		v = hi ? 0xffffffffu : m.bar_size[b] ? (~(m.bar_size[b] - 1) | (v & 0xf)) : 0;
	}
	v >>= 8 * (off & 3);
	return bytes == 4 ? v : bytes == 2 ? (v & 0xffff) : (v & 0xff);
}

static void cfg_wr(unsigned off, uint32_t v, int bytes)
{
	unsigned reg = off & ~3u, b = (reg - 0x10) / 4;

	if (reg >= 0x10 && reg < 0x28 && bytes == 4) {
		if (v == 0xffffffffu) {
			m.sizing[b] = true;
			return;
		}
		m.sizing[b] = false;
	}
	memcpy(m.cfg + off, &v, (size_t)bytes);
}

/* The common configuration (§4.1.4.3): feature words by their selector. */
static uint32_t bar_rd(uint64_t a, int bytes)
{
	unsigned off = (unsigned)(a - (uintptr_t)bar());
	uint32_t v = 0;

	if (off == 4 && bytes == 4) {
		uint32_t sel;
		memcpy(&sel, bar(), 4);
		return (uint32_t)(m.features >> (sel ? 32 : 0));
	}
	if (off == 21 && bytes == 1 && m.gen_spin)
		return ++bar()[21];
	memcpy(&v, bar() + off, (size_t)bytes);
	return v;
}

static uint32_t dev_rd(uint64_t a, int bytes)
{
	uint32_t v = 0;

	if (in(a, m.cfg, sizeof m.cfg))
		return cfg_rd((unsigned)(a - (uintptr_t)m.cfg), bytes);
	if (in(a, bar(), BAR_SIZE))
		return bar_rd(a, bytes);
	memcpy(&v, (void *)(uintptr_t)a, (size_t)bytes); /* not the device's */
	return v;
}

static void dev_wr(uint64_t a, uint32_t v, int bytes)
{
	if (in(a, m.cfg, sizeof m.cfg))
		cfg_wr((unsigned)(a - (uintptr_t)m.cfg), v, bytes);
	else
		memcpy((void *)(uintptr_t)a, &v, (size_t)bytes); /* the BAR, or not the device's */
}

#define mmio_read8(a) ((uint8_t)dev_rd(a, 1))
#define mmio_read16(a) ((uint16_t)dev_rd(a, 2))
#define mmio_read32(a) dev_rd(a, 4)
#define mmio_write8(a, v) dev_wr(a, (uint8_t)(v), 1)
#define mmio_write16(a, v) dev_wr(a, (uint16_t)(v), 2)
#define mmio_write32(a, v) dev_wr(a, (uint32_t)(v), 4)
#include "../../drivers/pci.c"
#include "../../drivers/virtio_pci.c"

/* What these drivers reach outside themselves (pci_init's acpi_ecam is
 * test_acpi.c's drivers/acpi.c; arch_relax and arch_dma_barrier are the
 * other driver tests'). */
void *cc_dma_alloc(size_t size)
{
	void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (p)
		memset(p, 0, (size + 4095) & ~(size_t)4095);
	return p;
}


/* ---- the device each test starts from: QEMU's virtio-blk-pci, modern ---- */
enum { CAP0 = 0x40 };

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* A virtio_pci_cap at off (§4.1.4): type, BAR 0, offset, length. */
static void cap(unsigned off, unsigned next, uint8_t type, uint32_t at, uint32_t len)
{
	uint8_t *c = m.cfg + off;
	c[0] = PCI_CAP_VENDOR;
	c[1] = (uint8_t)next;
	c[2] = type == CFG_NOTIFY ? 20 : 16;
	c[3] = type;
	c[4] = 0;
	put32(c + 8, at);
	put32(c + 12, len);
	if (type == CFG_NOTIFY)
		put32(c + 16, 4); /* notify_off_multiplier */
}

static struct pci_dev dev;

static void device(void)
{
	uint64_t b;

	memset(m.cfg, 0, sizeof m.cfg);
	memset(m.bar_size, 0, sizeof m.bar_size);
	memset(m.sizing, 0, sizeof m.sizing);
	m.gen_spin = 0;
	if (!m.arena)
		m.arena = aligned_alloc(BAR_SIZE, BAR_SIZE + CANARY); /* a BAR is aligned to its size */
	memset(m.arena, 0, BAR_SIZE);
	memset(m.arena + BAR_SIZE, 0xa5, CANARY);
	memset(m.priv, 0x5a, sizeof m.priv);
	hostile_private_ram(m.priv, sizeof m.priv);
	m.features = 1ull << 32; /* VERSION_1 */
	bar()[24] = 16;          /* queue 0's size */
	put32(m.cfg, 0x10421af4);
	put32(m.cfg + PCI_COMMAND, 0x00100007); /* status: capability list */
	b = (uintptr_t)bar();
	put32(m.cfg + 0x10, (uint32_t)b | 4); /* 64-bit memory BAR */
	put32(m.cfg + 0x14, (uint32_t)(b >> 32));
	m.bar_size[0] = BAR_SIZE;
	m.cfg[PCI_CAP_PTR] = CAP0;
	cap(CAP0, CAP0 + 0x14, CFG_COMMON, 0x0000, 0x38);
	cap(CAP0 + 0x14, CAP0 + 0x28, CFG_NOTIFY, 0x3000, 0x1000);
	cap(CAP0 + 0x28, 0, CFG_DEVICE, 0x2000, 0x1000);
	memset(&dev, 0, sizeof dev);
	dev.cfg = (uintptr_t)m.cfg;
	dev.vendor = 0x1af4;
	dev.device = 0x1042;
}

static bool canaries_intact(void)
{
	for (unsigned i = 0; i < CANARY; i++)
		if (m.priv[i] != 0x5a || m.arena[BAR_SIZE + i] != 0xa5)
			return false;
	return true;
}

/* probe, start, one queue, a kick: what virtio-blk does with a device */
static int bring_up(struct virtio_pci *vp, struct virtq *q)
{
	uint64_t got;
	int e;

	if ((e = virtio_pci_probe(vp, &dev)) < 0)
		return e;
	if ((e = virtio_pci_start(vp, 0, &got)) < 0)
		return e;
	if ((e = virtio_pci_queue(vp, 0, 8, q)) < 0)
		return e;
	virtq_push(q, 0);
	virtq_kick(q);
	return 0;
}

/* Run fn in a thread; false when it has not returned within a second (the
 * driver spins on what the device says: the thread is left behind). */
static bool bounded(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	struct timespec ts;

	pthread_create(&t, NULL, fn, arg);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	if (pthread_timedjoin_np(t, NULL, &ts) != 0) {
		pthread_detach(t);
		return false;
	}
	return true;
}

TEST(virtio_pci_brings_up_a_well_formed_device_and_kicks_its_doorbell)
{
	struct virtio_pci vp;
	struct virtq q;

	device();
	bar()[0x3000 + 2 * 4] = 0; /* queue 0's doorbell: notify_off 2 * 4 */
	bar()[30] = 2;             /* queue_notify_off */
	bar()[24] = 16;            /* queue_size */
	CHECK_EQ_INT(bring_up(&vp, &q), 0);
	CHECK_EQ_INT(vp.common, (uintptr_t)bar());
	CHECK_EQ_INT(q.notify, (uintptr_t)bar() + 0x3000 + 8);
	CHECK_EQ_INT(q.size, 8);
	CHECK(canaries_intact());
	/* sizing left the BAR as the firmware assigned it, decoding on */
	CHECK_EQ_INT(pci_bar(&dev, 0), (uintptr_t)bar());
	CHECK(pci_read16(&dev, PCI_COMMAND) & PCI_CMD_MEMORY);
}

TEST(virtio_pci_refuses_a_bar_on_private_ram)
{
	struct virtio_pci vp;
	struct virtq q;

	device();
	uint64_t p = (uintptr_t)m.priv;
	put32(m.cfg + 0x10, (uint32_t)p | 4);
	put32(m.cfg + 0x14, (uint32_t)(p >> 32));
	CHECK(bring_up(&vp, &q) < 0);
	CHECK(canaries_intact());
	CHECK(strstr(vp.err, "RAM") != NULL);
}

TEST(virtio_pci_refuses_a_structure_past_its_bars_size)
{
	struct virtio_pci vp;
	struct virtq q;

	device();
	cap(CAP0, CAP0 + 0x14, CFG_COMMON, BAR_SIZE, 0x38); /* the canary past the BAR */
	CHECK(bring_up(&vp, &q) < 0);
	CHECK(canaries_intact());
	CHECK(strstr(vp.err, "past") != NULL);

	device();
	cap(CAP0, CAP0 + 0x14, CFG_COMMON, 0xffffffffu, 0x38); /* offset + length wraps */
	CHECK(bring_up(&vp, &q) < 0);
	CHECK(canaries_intact());
}

TEST(virtio_pci_refuses_capabilities_shorter_than_their_structures)
{
	struct virtio_pci vp;
	struct virtq q;

	device();
	/* a common config of 8 bytes at the BAR's end: its fields past 8 would
	 * be the canary */
	cap(CAP0, CAP0 + 0x14, CFG_COMMON, BAR_SIZE - 8, 8);
	CHECK(bring_up(&vp, &q) < 0);
	CHECK(canaries_intact());
	device();
	m.cfg[CAP0 + 0x14 + 2] = 16; /* a notify capability without its multiplier */
	CHECK(bring_up(&vp, &q) < 0);
	CHECK(canaries_intact());
}

TEST(virtio_pci_refuses_a_doorbell_outside_the_notification_area)
{
	struct virtio_pci vp;
	struct virtq q;

	device();
	bar()[24] = 16;
	/* queue_notify_off 0x400 * 4: the notify area's end, at the canary */
	bar()[30] = 0x00;
	bar()[31] = 0x04;
	CHECK(bring_up(&vp, &q) < 0);
	CHECK(canaries_intact());
	CHECK(strstr(vp.err, "notify") != NULL);
}

static void *probe_thread(void *arg)
{
	static struct virtio_pci vp;
	*(int *)arg = virtio_pci_probe(&vp, &dev);
	return NULL;
}

TEST(pci_capability_walk_ends_on_a_capability_that_points_at_itself)
{
	static int r;

	device();
	m.cfg[CAP0 + 1] = CAP0; /* the common config capability is its own next */
	r = 1;
	CHECK(bounded(probe_thread, &r));
	CHECK(r < 0);
	/* a loop through two of them */
	device();
	m.cfg[CAP0 + 0x28 + 1] = CAP0 + 0x14;
	r = 1;
	CHECK(bounded(probe_thread, &r));
	CHECK_EQ_INT(r, 0);
}

static void *config_thread(void *arg)
{
	static struct virtio_pci vp;
	uint64_t v;
	if (virtio_pci_probe(&vp, &dev) == 0)
		*(int *)arg = virtio_pci_config(&vp, 0, &v, 8);
	return NULL;
}

TEST(virtio_pci_config_gives_up_on_a_generation_that_never_settles)
{
	static int r;

	device();
	m.gen_spin = 1;
	r = 1;
	CHECK(bounded(config_thread, &r));
	CHECK_EQ_INT(r, -LLMK_EIO);
	device();
	r = 1;
	CHECK(bounded(config_thread, &r));
	CHECK_EQ_INT(r, 0);
}

TEST(virtio_pci_config_reads_only_inside_the_device_structure)
{
	struct virtio_pci vp;
	uint32_t v;

	device();
	CHECK_EQ_INT(virtio_pci_probe(&vp, &dev), 0);
	CHECK_EQ_INT(virtio_pci_config(&vp, 0x1000 - 4, &v, 4), 0);
	CHECK_EQ_INT(virtio_pci_config(&vp, 0x1000 - 2, &v, 4), -LLMK_ERANGE);
}
