/*
 * drivers/tpm_crb.c — TPM 2.0 over the CRB interface (TCG PC Client
 * Platform TPM Profile 1.05 rev 14, §6.5.3), locality 0, polled with
 * timeouts, in the order the PTP's CRB state machine takes:
 *
 *   take locality 0 (LOC_CTRL.requestAccess, wait for LOC_STATE to say so)
 *   Idle -> Ready (CTRL_REQ.cmdReady, wait for it to clear)
 *   write the command into the command buffer, CTRL_START = 1 (Execution)
 *   wait for CTRL_START to clear (Completion), check CTRL_STS.tpmSts
 *   read the response header, then the size it states
 *   Ready -> Idle (CTRL_REQ.goIdle)
 *
 * Timeouts: the PTP's TIMEOUT_A/C (750/200 ms) for locality and state
 * changes, with room to spare under an emulator; a command may take much
 * longer (an RSA 2048 CreatePrimary on a software TPM), so it gets minutes,
 * then is cancelled (CTRL_CANCEL). One state struct; the kernel is the
 * only user of locality 0 after ExitBootServices.
 */
#include "../kernel/kernel.h"
#include "../kernel/arch.h"
#include "tpm_crb.h"
#include "cc_pages.h"

/* §6.5.3: the CRB registers of a locality (QEMU's include/hw/acpi/tpm.h
 * lists the same offsets). */
enum {
	LOC_STATE = 0x00, LOC_CTRL = 0x08, LOC_STS = 0x0C, INTF_ID = 0x30, CTRL_REQ = 0x40,
	CTRL_STS = 0x44, CTRL_CANCEL = 0x48, CTRL_START = 0x4C, CTRL_CMD_SIZE = 0x58,
	CTRL_CMD_LADDR = 0x5C, CTRL_CMD_HADDR = 0x60, CTRL_RSP_SIZE = 0x64, CTRL_RSP_ADDR = 0x68,
};
#define LOC_STATE_ASSIGNED (1u << 1)
#define LOC_STATE_ACTIVE_SHIFT 2
#define LOC_STATE_VALID (1u << 7)
#define LOC_CTRL_REQUEST (1u << 0)
#define LOC_STS_GRANTED (1u << 0)
#define REQ_CMD_READY (1u << 0)
#define REQ_GO_IDLE (1u << 1)
#define STS_ERROR (1u << 0)
#define STS_IDLE (1u << 1)

#define MS 1000000ull
#define STATE_NS (2000 * MS)        /* TIMEOUT_A/C, generous under TCG */
#define COMMAND_NS (300000 * MS)    /* the longest a command may run */
#define CRB_SPAN 0x1000             /* the locality 0 register page */
#define CRB_DATA 0x80               /* where its data buffer may start (§6.5.3.2) */

static struct {
	uint64_t base;
	uint64_t cmd, rsp;
	uint32_t cmd_size, rsp_size;
} crb;

static uint32_t rd(uint32_t off)
{
	return mmio_read32(crb.base + off);
}

static void wr(uint32_t off, uint32_t v)
{
	mmio_write32(crb.base + off, v);
}

/* Wait until (reg & mask) == want; false on timeout. */
static bool wait_reg(uint32_t off, uint32_t mask, uint32_t want, uint64_t ns)
{
	uint64_t t0 = plat_time_ns();
	while ((rd(off) & mask) != want)
		if (plat_time_ns() - t0 > ns)
			return (rd(off) & mask) == want;
	return true;
}

uint64_t crb_base(void)
{
	return crb.base;
}

/* [a, a + n) inside the register page's data area */
static bool in_page(uint64_t a, uint32_t n)
{
	return a >= crb.base + CRB_DATA && n <= CRB_SPAN && a - crb.base <= CRB_SPAN - n;
}

int crb_init(uint64_t control_area, char *err, size_t errn)
{
	if (control_area < CTRL_REQ || (control_area & 3)) {
		plat_snprintf(err, errn, "TPM2 table: CRB control area at %#llx",
			      (unsigned long long)control_area);
		return -LLMK_EIO;
	}
	crb.base = control_area - CTRL_REQ;
	/* the TPM2 table is the host's in a confidential guest: its page must be
	 * device registers, not memory the firmware's map calls RAM, and shared
	 * in our page tables (in a confidential guest) */
	if (mem_is_ram(crb.base, CRB_SPAN) || !cc_mmio_shared(crb.base, CRB_SPAN)) {
		plat_snprintf(err, errn, "TPM2 table: CRB registers at %#llx lie in %s",
			      (unsigned long long)crb.base, mem_is_ram(crb.base, CRB_SPAN) ? "RAM" :
			      "memory our page tables map private");
		crb.base = 0;
		return -LLMK_EIO;
	}
	/* a register block that reads all ones is not there */
	uint32_t st = rd(LOC_STATE);
	if (st == 0xffffffffu || !(st & LOC_STATE_VALID)) {
		plat_snprintf(err, errn, "CRB at %#llx: LOC_STATE %#x (registers not valid)",
			      (unsigned long long)crb.base, st);
		return -LLMK_EIO;
	}
	/* TPM_CRB_INTF_ID: InterfaceType 1 = CRB active */
	uint32_t id = rd(INTF_ID);
	if ((id & 0xf) != 1) {
		plat_snprintf(err, errn, "CRB at %#llx: interface type %u active, not CRB (1)",
			      (unsigned long long)crb.base, id & 0xf);
		return -LLMK_ENOTSUP;
	}
	wr(LOC_CTRL, LOC_CTRL_REQUEST);
	uint32_t want = LOC_STATE_ASSIGNED | LOC_STATE_VALID; /* active locality 0 */
	/* LOC_STATE and LOC_STS are two registers: a device may update them one
	 * after the other, so wait for each */
	if (!wait_reg(LOC_STATE, want | 7u << LOC_STATE_ACTIVE_SHIFT, want, STATE_NS) ||
	    !wait_reg(LOC_STS, LOC_STS_GRANTED, LOC_STS_GRANTED, STATE_NS)) {
		plat_snprintf(err, errn, "CRB at %#llx: locality 0 not granted (LOC_STATE %#x, "
			      "LOC_STS %#x)", (unsigned long long)crb.base, rd(LOC_STATE), rd(LOC_STS));
		return -LLMK_EIO;
	}
	/* The buffers the TPM chose (CTRL_CMD_*, CTRL_RSP_*), each register read
	 * once. They are the device's word: every command byte is written there
	 * and the response parsed from there, so both must lie in the CRB's own
	 * register page after the registers (§6.5.3.2, as QEMU's tpm-crb and
	 * firmware TPMs place them), which the check above found not to be RAM;
	 * anywhere else could be the guest's private memory. */
	crb.cmd = (uint64_t)rd(CTRL_CMD_HADDR) << 32 | rd(CTRL_CMD_LADDR);
	crb.cmd_size = rd(CTRL_CMD_SIZE);
	crb.rsp = mmio_read32(crb.base + CTRL_RSP_ADDR) |
		  (uint64_t)mmio_read32(crb.base + CTRL_RSP_ADDR + 4) << 32;
	crb.rsp_size = rd(CTRL_RSP_SIZE);
	if (!in_page(crb.cmd, crb.cmd_size) || !in_page(crb.rsp, crb.rsp_size) ||
	    crb.cmd_size < 64 || crb.rsp_size < 64) {
		plat_snprintf(err, errn, "CRB at %#llx: command buffer %#llx (%u bytes), response "
			      "%#llx (%u bytes): outside the CRB page or too small",
			      (unsigned long long)crb.base, (unsigned long long)crb.cmd, crb.cmd_size,
			      (unsigned long long)crb.rsp, crb.rsp_size);
		memset(&crb, 0, sizeof crb);
		return -LLMK_EIO;
	}
	return 0;
}

static void go_idle(void)
{
	wr(CTRL_REQ, REQ_GO_IDLE);
	wait_reg(CTRL_REQ, REQ_GO_IDLE, 0, STATE_NS);
}

int crb_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap, size_t *rlen,
	     char *err, size_t errn)
{
	(void)ctx;
	if (!crb.base || !crb.cmd) {
		plat_snprintf(err, errn, "CRB not initialised");
		return -LLMK_EIO;
	}
	if (n > crb.cmd_size) {
		plat_snprintf(err, errn, "command of %zu bytes, the CRB buffer holds %u", n,
			      crb.cmd_size);
		return -LLMK_ERANGE;
	}
	/* Idle -> Ready */
	wr(CTRL_REQ, REQ_CMD_READY);
	if (!wait_reg(CTRL_REQ, REQ_CMD_READY, 0, STATE_NS) || (rd(CTRL_STS) & STS_IDLE)) {
		plat_snprintf(err, errn, "CRB: not ready after cmdReady (CTRL_REQ %#x, CTRL_STS %#x)",
			      rd(CTRL_REQ), rd(CTRL_STS));
		return -LLMK_EIO;
	}
	for (size_t i = 0; i < n; i++)
		mmio_write8(crb.cmd + i, cmd[i]);
	arch_dma_barrier();
	wr(CTRL_START, 1);
	if (!wait_reg(CTRL_START, 1, 0, COMMAND_NS)) {
		/* cancel, then wait for the TPM to give the buffer back */
		wr(CTRL_CANCEL, 1);
		wait_reg(CTRL_START, 1, 0, STATE_NS);
		wr(CTRL_CANCEL, 0);
		go_idle();
		plat_snprintf(err, errn, "CRB: no response within %llu s (cancelled)",
			      (unsigned long long)(COMMAND_NS / 1000000000ull));
		return -LLMK_EIO;
	}
	if (rd(CTRL_STS) & STS_ERROR) {
		plat_snprintf(err, errn, "CRB: the TPM reports a fatal error (CTRL_STS %#x)",
			      rd(CTRL_STS));
		return -LLMK_EIO;
	}
	arch_dma_barrier();
	/* the response's size is in its header (bytes 2-5, big-endian) */
	uint8_t hdr[10];
	for (int i = 0; i < 10; i++)
		hdr[i] = mmio_read8(crb.rsp + (uint64_t)i);
	size_t size = (size_t)hdr[2] << 24 | (size_t)hdr[3] << 16 | (size_t)hdr[4] << 8 | hdr[5];
	if (size < 10 || size > crb.rsp_size || size > cap) {
		go_idle();
		plat_snprintf(err, errn, "CRB: response header says %zu bytes (buffer %u, room %zu)",
			      size, crb.rsp_size, cap);
		return -LLMK_EIO;
	}
	memcpy(rsp, hdr, 10);
	for (size_t i = 10; i < size; i++)
		rsp[i] = mmio_read8(crb.rsp + i);
	*rlen = size;
	go_idle();
	return 0;
}
