/*
 * tests/unit/hostile.h — the hostile-device model the driver harnesses
 * share (tests/unit/test_virtio_pci.c, test_tpm_crb.c, and
 * tests/fuzz/fuzz_drivers.c), issue 28.
 *
 * The memory map: in the kernel mem_is_ram (kernel/mem.c) reads the UEFI
 * map; here it says true for the one range a test named "private RAM" (or
 * for everything but the one range named MMIO). Likewise the page tables
 * of a confidential guest (cc_mmio_shared).
 *
 * A virtio-blk PCI function: a 4 KiB configuration space whose BAR
 * registers answer sizing as PCI Local Bus 3.0 §6.2.5.1 describes, and a
 * 16 KiB BAR 0 (64-bit) holding the virtio structures (virtio 1.2 §4.1.4:
 * common at 0, device at 0x2000, notify at 0x3000, multiplier 4). Two
 * canaries: hostile.priv, the "private RAM", and the 16 KiB just past the
 * BAR. A file that defines HOSTILE_MMIO before including this header has
 * its mmio_read and mmio_write go through the model: accesses outside the
 * configuration space and the BAR are plain memory accesses, as in the
 * guest.
 */
#ifndef TEST_HOSTILE_H
#define TEST_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOSTILE_BAR_SIZE 0x4000u
#define HOSTILE_CANARY 0x4000u
enum { HOSTILE_CAP0 = 0x40 }; /* common, then notify at +0x14, device at +0x28 */

struct hostile_dev {
	uint8_t cfg[4096];
	uint8_t *arena;        /* the BAR, then the canary past it */
	uint8_t priv[HOSTILE_CANARY] __attribute__((aligned(HOSTILE_BAR_SIZE)));
	uint32_t bar_size[6];  /* 0: not a memory BAR */
	bool sizing[6];        /* all ones written: reads give the size mask */
	uint64_t features;     /* what the device offers */
	volatile int gen_spin; /* CONFIG_GENERATION changes on every read */
};
extern struct hostile_dev hostile;

void hostile_private_ram(const void *p, size_t n);
/* The other way round: [p, p + n) is the only MMIO, everything else RAM. */
void hostile_only_mmio(const void *p, size_t n);
/* The page tables (cc_mmio_shared, drivers/cc_pages.c in the kernel): all
 * shared but [p, p + n), which is mapped private. */
void hostile_private_mapped(const void *p, size_t n);
/* The well-formed device (QEMU's virtio-blk-pci, modern), canaries filled,
 * hostile.priv registered as private RAM. */
void hostile_virtio_reset(void);
/* A virtio_pci_cap at off in the configuration space (BAR 0). */
void hostile_cap(unsigned off, unsigned next, uint8_t type, uint32_t at, uint32_t len);
bool hostile_canaries_intact(void);
static inline uint8_t *hostile_bar(void)
{
	return hostile.arena;
}

uint32_t hostile_rd(uint64_t a, int bytes);
void hostile_wr(uint64_t a, uint32_t v, int bytes);

#ifdef HOSTILE_MMIO
#define mmio_read8(a) ((uint8_t)hostile_rd(a, 1))
#define mmio_read16(a) ((uint16_t)hostile_rd(a, 2))
#define mmio_read32(a) hostile_rd(a, 4)
#define mmio_write8(a, v) hostile_wr(a, (uint8_t)(v), 1)
#define mmio_write16(a, v) hostile_wr(a, (uint16_t)(v), 2)
#define mmio_write32(a, v) hostile_wr(a, (uint32_t)(v), 4)
#endif

#endif
