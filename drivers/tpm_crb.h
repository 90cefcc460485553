/*
 * drivers/tpm_crb.h — a TPM 2.0 behind the Command Response Buffer
 * interface (TCG PC Client Platform TPM Profile (PTP) 1.05, §6.5.3), polled,
 * locality 0: QEMU's -device tpm-crb, and the vTPMs of cloud confidential
 * VMs. The ACPI TPM2 table gives the control area's address.
 */
#ifndef LLMK_TPM_CRB_H
#define LLMK_TPM_CRB_H

#include "../kernel/platform.h"

/*
 * Take locality 0 of the CRB whose control area is at control_area (the
 * TPM2 table's address; the locality registers are 0x40 below it) and
 * check its buffers. 0, or -LLMK_EIO / -LLMK_ENOTSUP with why in err.
 */
int crb_init(uint64_t control_area, char *err, size_t errn);
/* The locality 0 register block's address (for messages). */
uint64_t crb_base(void);
/* tpm2_xfer_fn (drivers/tpm2.h): one command, the whole response. */
int crb_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap, size_t *rlen,
	     char *err, size_t errn);

#endif
