/*
 * drivers/tpm_tis.h — a TPM 2.0 behind the FIFO (TIS) interface (TCG PC
 * Client Platform TPM Profile (PTP) 1.05, §6.5.2), polled, locality 0:
 * QEMU's -device tpm-tis-device on the aarch64 `virt` machine (and
 * tpm-tis on a PC). The ACPI TPM2 table says start method 6; the register
 * block's address is the TPM device's (_HID MSFT0101) resource in the DSDT
 * (drivers/acpi.c, acpi_tpm_mmio).
 */
#ifndef LLMK_TPM_TIS_H
#define LLMK_TPM_TIS_H

#include "../kernel/platform.h"

/*
 * Check the register block at base (len bytes, at least locality 0's
 * 4 KiB), take locality 0. 0, or -LLMK_EIO / -LLMK_ENOTSUP with why in err.
 */
int tis_init(uint64_t base, uint64_t len, char *err, size_t errn);
/* The locality 0 register block's address (for messages), 0 before init. */
uint64_t tis_base(void);
/* The TPM_DID_VID register read at init (vendor in the low 16 bits). */
uint32_t tis_did_vid(void);
/* tpm2_xfer_fn (drivers/tpm2.h): one command, the whole response. */
int tis_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap, size_t *rlen,
	     char *err, size_t errn);

#endif
