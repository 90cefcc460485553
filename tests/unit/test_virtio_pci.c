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
#define HOSTILE_MMIO
#include "hostile.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../../drivers/pci.c"
#include "../../drivers/virtio_pci.c"

/* What these drivers reach outside themselves (pci_init's acpi_ecam is
 * test_acpi.c's drivers/acpi.c; arch_relax and arch_dma_barrier are the
 * other driver tests'; mem_is_ram is hostile.c's). */
void *cc_dma_alloc(size_t size)
{
	void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (p)
		memset(p, 0, (size + 4095) & ~(size_t)4095);
	return p;
}

/* the model's names, short */
#define BAR_SIZE HOSTILE_BAR_SIZE
#define CAP0 HOSTILE_CAP0
#define m hostile
#define bar hostile_bar
#define cap hostile_cap
#define canaries_intact hostile_canaries_intact

static struct pci_dev dev;

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* hostile.h's device, and the pci_dev that names it */
static void device(void)
{
	hostile_virtio_reset();
	memset(&dev, 0, sizeof dev);
	dev.cfg = (uintptr_t)m.cfg;
	dev.vendor = 0x1af4;
	dev.device = 0x1042;
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
	free(q.desc);
	free(q.avail);
	free(q.used);
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

/* In the map's MMIO, but our page tables map it private (a confidential
 * guest's firmware maps MMIO shared): refused before any access. */
TEST(virtio_pci_refuses_a_bar_its_page_tables_map_private)
{
	struct virtio_pci vp;
	struct virtq q;

	device();
	hostile_private_mapped(bar(), BAR_SIZE);
	CHECK(bring_up(&vp, &q) < 0);
	CHECK(strstr(vp.err, "private") != NULL);
	CHECK_EQ_INT(bar()[20], 0); /* DEVICE_STATUS never written */
	hostile_private_mapped(NULL, 0);
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
