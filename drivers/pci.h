/*
 * drivers/pci.h — PCI(e) configuration space over ECAM (PCIe Base 6.0 §7.2.2),
 * found through the ACPI MCFG table. Enumeration happens once at boot; BARs
 * are used as the firmware assigned them.
 */
#ifndef LLMK_PCI_H
#define LLMK_PCI_H

#include <stdint.h>

struct pci_dev {
	uint64_t cfg; /* ECAM address of this function's 4 KiB configuration space */
	uint16_t segment;
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
	uint32_t class_rev;
};

enum { PCI_COMMAND = 0x04, PCI_STATUS = 0x06, PCI_CAP_PTR = 0x34 };
#define PCI_CMD_MEMORY (1u << 1)
#define PCI_CMD_MASTER (1u << 2)
#define PCI_CMD_INTX_OFF (1u << 10)

int pci_init(void); /* number of functions found, or -LLMK_E* */
int pci_count(void);
const struct pci_dev *pci_get(int i);

uint8_t pci_read8(const struct pci_dev *d, unsigned reg);
uint16_t pci_read16(const struct pci_dev *d, unsigned reg);
uint32_t pci_read32(const struct pci_dev *d, unsigned reg);
void pci_write16(const struct pci_dev *d, unsigned reg, uint16_t v);
void pci_write32(const struct pci_dev *d, unsigned reg, uint32_t v);

/* Memory address of BAR n (64-bit BARs combined), 0 if unset or I/O. */
uint64_t pci_bar(const struct pci_dev *d, int n);
/* The size of memory BAR n as the device decodes it (sized the PCI way,
 * memory decoding off meanwhile): a power of two, or 0 for an I/O BAR, an
 * unimplemented one, or an answer that is not a BAR's (not a power of two,
 * the address not aligned to it, or the range wrapping). */
uint64_t pci_bar_size(const struct pci_dev *d, int n);
/* Turn on memory decoding and bus mastering (DMA), INTx off: we poll. */
void pci_enable(const struct pci_dev *d);
/* Offset of the first capability with this id after `from` (0 to start), 0
 * if none. The list is the device's: a walk that calls this again from the
 * capability returned stops after PCI_CAP_MAX of them (a list that points
 * back into itself never ends otherwise). */
#define PCI_CAP_MAX 48 /* (256 - 0x40) / 4: more capabilities than fit */
unsigned pci_next_cap(const struct pci_dev *d, unsigned from, uint8_t id);

#endif
