/*
 * drivers/acpi.h — the ACPI tables the kernel reads (ACPI 6.5): XSDT/RSDT,
 * FADT (PM timer, S5 poweroff, reset), MCFG (PCI ECAM), MADT (CPU count),
 * SPCR (console UART), DSDT (only the \_S5 package), TPM2 (the TPM's interface).
 */
#ifndef LLMK_ACPI_H
#define LLMK_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACPI_PM_TIMER_HZ 3579545u /* ACPI 6.5 §4.8.3.3 */

struct acpi_ecam {
	uint64_t base;
	uint16_t segment;
	uint8_t bus_start, bus_end;
};

enum { ACPI_UART_16550 = 1, ACPI_UART_PL011 = 2, ACPI_UART_OTHER = 3 };
struct acpi_uart {
	int type;
	bool io;       /* address is a port number (x86) rather than MMIO */
	uint64_t addr;
};

/* Validate the RSDP and its XSDT (or RSDT) and pick out the tables above. */
int acpi_init(uint64_t rsdp);
/* One line for the boot log: what was found. */
int acpi_describe(char *buf, size_t cap);
/* The n-th table with this signature, or NULL. */
const void *acpi_table(const char sig[4], int n);

uint32_t acpi_pm_timer_mask(void); /* 0xffffff or 0xffffffff; 0 if there is none */
uint32_t acpi_pm_timer_read(void);

int acpi_ecam(int i, struct acpi_ecam *out);    /* -LLMK_ENOENT past the last */
int acpi_cpu_count(void);                       /* enabled CPUs in the MADT, >= 1 */
/* Firmware ids (x86 APIC id, arm64 MPIDR) of the enabled CPUs, BSP included:
 * the count (may exceed max; only max are stored), 0 without a MADT. */
int acpi_cpu_ids(uint64_t *ids, int max);
int acpi_spcr(struct acpi_uart *out);           /* -LLMK_ENOENT without SPCR */

/* TCG ACPI Specification 1.3 §8.3: the TPM2 table. */
enum { ACPI_TPM2_START_FIFO = 6, ACPI_TPM2_START_CRB = 7 };
struct acpi_tpm2 {
	uint64_t control_area; /* CRB: the control area's address (locality 0 base + 0x40) */
	uint32_t start_method; /* 7 = CRB, 6 = FIFO (TIS); others (ACPI start, ARM SMC) are not driven */
};
int acpi_tpm2(struct acpi_tpm2 *out);           /* -LLMK_ENOENT without TPM2 */
/* The TPM device's register block (a FIFO TPM's TPM2 table has no address):
 * the Memory32Fixed in the _CRS of the DSDT's Device with _HID "MSFT0101"
 * (TCG ACPI 1.3 §8.1; QEMU's virt and q35 declare it so). 0, or
 * -LLMK_ENOENT without such a device, -LLMK_EFORMAT for a malformed one. */
int acpi_tpm_mmio(uint64_t *base, uint32_t *len);

int acpi_poweroff(void); /* returns only on failure */
void acpi_reset(void);   /* returns if there is no usable reset register */

#endif
