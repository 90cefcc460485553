/*
 * drivers/pci.c — enumerate PCI functions through ECAM.
 *
 * PCIe Base 6.0 §7.2.2: function (bus, dev, fn) has its configuration space
 * at base + (bus - bus_start) << 20 | dev << 15 | fn << 12. A vendor id of
 * 0xffff means nothing is there; header type bit 7 says whether functions
 * 1-7 exist. Bridges are not walked: every bus number the MCFG covers is
 * probed, which finds devices behind bridges the firmware configured too.
 */
#include "../kernel/kernel.h"
#include "acpi.h"
#include "pci.h"

#define MAX_PCI 128

static struct {
	struct pci_dev devs[MAX_PCI];
	int n;
} pci;

uint8_t pci_read8(const struct pci_dev *d, unsigned reg)
{
	return mmio_read8(d->cfg + reg);
}

uint16_t pci_read16(const struct pci_dev *d, unsigned reg)
{
	return mmio_read16(d->cfg + reg);
}

uint32_t pci_read32(const struct pci_dev *d, unsigned reg)
{
	return mmio_read32(d->cfg + reg);
}

void pci_write16(const struct pci_dev *d, unsigned reg, uint16_t v)
{
	mmio_write16(d->cfg + reg, v);
}

void pci_write32(const struct pci_dev *d, unsigned reg, uint32_t v)
{
	mmio_write32(d->cfg + reg, v);
}

static void probe(const struct acpi_ecam *e, unsigned bus, unsigned dev, unsigned fn)
{
	uint64_t cfg = e->base + ((uint64_t)(bus - e->bus_start) << 20 | dev << 15 | fn << 12);
	uint32_t id = mmio_read32(cfg);
	struct pci_dev *d;

	if ((id & 0xffff) == 0xffff || pci.n == MAX_PCI)
		return;
	d = &pci.devs[pci.n++];
	d->cfg = cfg;
	d->segment = e->segment;
	d->bus = (uint8_t)bus;
	d->dev = (uint8_t)dev;
	d->fn = (uint8_t)fn;
	d->vendor = (uint16_t)id;
	d->device = (uint16_t)(id >> 16);
	d->class_rev = mmio_read32(cfg + 0x08);
}

int pci_init(void)
{
	struct acpi_ecam e;

	for (int i = 0; acpi_ecam(i, &e) == 0; i++) {
		for (unsigned bus = e.bus_start; bus <= e.bus_end; bus++) {
			for (unsigned dev = 0; dev < 32; dev++) {
				uint64_t cfg = e.base + ((uint64_t)(bus - e.bus_start) << 20 |
							 dev << 15);
				if (mmio_read16(cfg) == 0xffff)
					continue;
				/* Header type (offset 0x0e) bit 7: multi-function. */
				unsigned nfn = (mmio_read8(cfg + 0x0e) & 0x80) ? 8 : 1;
				for (unsigned fn = 0; fn < nfn; fn++)
					probe(&e, bus, dev, fn);
			}
		}
	}
	if (acpi_ecam(0, &e) < 0)
		return -LLMK_ENOENT;
	return pci.n;
}

int pci_count(void)
{
	return pci.n;
}

const struct pci_dev *pci_get(int i)
{
	return i >= 0 && i < pci.n ? &pci.devs[i] : NULL;
}

/* PCI Local Bus 3.0 §6.2.5.1: bit 0 set = I/O BAR; bits 2:1 = 10b is a
 * 64-bit memory BAR whose upper half is the next BAR. */
uint64_t pci_bar(const struct pci_dev *d, int n)
{
	uint32_t lo = pci_read32(d, 0x10 + 4 * (unsigned)n);
	uint64_t addr;

	if (lo & 1)
		return 0;
	addr = lo & ~0xfull;
	if (((lo >> 1) & 3) == 2 && n < 5)
		addr |= (uint64_t)pci_read32(d, 0x10 + 4 * (unsigned)(n + 1)) << 32;
	return addr;
}

/* PCI Local Bus 3.0 §6.2.5.1: write all ones to the BAR, read it back: the
 * address bits the device does not decode stay 0, so the size is the two's
 * complement of what reads back (type bits masked); then restore it. Memory
 * decoding is off meanwhile (§6.2.2, command bit 1), so the BAR's passing
 * value claims no addresses. The answer is the device's: one that no BAR
 * could give (not a power of two, the address not aligned to it, the range
 * wrapping) is 0, as for a BAR that is not there. */
uint64_t pci_bar_size(const struct pci_dev *d, int n)
{
	unsigned reg = 0x10 + 4 * (unsigned)n;
	uint32_t lo = pci_read32(d, reg), hi = 0, slo, shi = 0xffffffffu;
	uint16_t cmd = pci_read16(d, PCI_COMMAND);
	bool is64 = ((lo >> 1) & 3) == 2 && n < 5;
	uint64_t addr = pci_bar(d, n), size;

	if (lo & 1)
		return 0;
	pci_write16(d, PCI_COMMAND, cmd & ~PCI_CMD_MEMORY);
	pci_write32(d, reg, 0xffffffffu);
	slo = pci_read32(d, reg);
	pci_write32(d, reg, lo);
	if (is64) {
		hi = pci_read32(d, reg + 4);
		pci_write32(d, reg + 4, 0xffffffffu);
		shi = pci_read32(d, reg + 4);
		pci_write32(d, reg + 4, hi);
	}
	pci_write16(d, PCI_COMMAND, cmd);
	size = ~((uint64_t)shi << 32 | (slo & ~0xfu)) + 1;
	if (!size || (size & (size - 1)) || (addr & (size - 1)) || addr + size < addr)
		return 0;
	return size;
}

void pci_enable(const struct pci_dev *d)
{
	uint16_t cmd = pci_read16(d, PCI_COMMAND);

	pci_write16(d, PCI_COMMAND, cmd | PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_OFF);
}

/* PCI Local Bus 3.0 §6.7: status bit 4 says a capability list exists; each
 * entry is [id, next] with next 0 at the end, dword-aligned at 0x40 or
 * above. One call looks at PCI_CAP_MAX entries at most; the caller bounds
 * its own walk the same way. */
unsigned pci_next_cap(const struct pci_dev *d, unsigned from, uint8_t id)
{
	unsigned p, guard = 0;

	if (!(pci_read16(d, PCI_STATUS) & (1u << 4)))
		return 0;
	p = from ? pci_read8(d, from + 1) : pci_read8(d, PCI_CAP_PTR);
	for (; p >= 0x40 && guard < PCI_CAP_MAX; guard++) {
		p &= ~3u;
		if (pci_read8(d, p) == id)
			return p;
		p = pci_read8(d, p + 1);
	}
	return 0;
}
