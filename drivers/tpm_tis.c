/*
 * drivers/tpm_tis.c — TPM 2.0 over the FIFO interface (TCG PC Client
 * Platform TPM Profile 1.05 rev 14, §6.5.2; the TIS register layout),
 * locality 0, polled with bounded waits, in the order the PTP's FIFO
 * state machine takes:
 *
 *   take locality 0 (TPM_ACCESS.requestUse, wait for activeLocality)
 *   Idle -> Ready (TPM_STS.commandReady, wait for it to read back set)
 *   Reception: the command into TPM_DATA_FIFO, at most burstCount bytes at
 *     a time; Expect still set before the last byte, clear after it
 *   TPM_STS.tpmGo (Execution), wait for stsValid and dataAvail (Completion)
 *   the response out of TPM_DATA_FIFO by burstCount: its 10-byte header,
 *     then the size the header states; dataAvail clear after it
 *   TPM_STS.commandReady (Completion -> Ready, which frees the buffer)
 *
 * Every register value is the device's word (in a confidential guest the
 * host's): a burst count is used only to bound how many bytes are moved
 * before the status is read again, never as a size; a burst count that
 * stays 0, a status that never settles, a response whose header claims more
 * than the caller's buffer (or less than a header), or one with bytes left
 * over after the size it stated, each ends the command with one error and
 * the TPM told commandReady (abort). Timeouts: the PTP's TIMEOUT_A/B/C/D
 * (750/2000/200/30 ms) with room under an emulator, and 10 s for moving a
 * whole command or response through the FIFO; a command may take minutes on
 * a software TPM (an RSA 2048 CreatePrimary), then is cancelled.
 */
#include "../kernel/kernel.h"
#include "../kernel/arch.h"
#include "tpm_tis.h"
#include "cc_pages.h"

/* §6.5.2.x: the FIFO registers of locality 0 (QEMU's hw/tpm/tpm_tis.h
 * lists the same offsets). */
enum {
	TIS_ACCESS = 0x00, TIS_INTF_CAP = 0x14, TIS_STS = 0x18, TIS_FIFO = 0x24,
	TIS_INTF_ID = 0x30, TIS_DID_VID = 0xF00,
};
/* TPM_ACCESS_x (8 bits) */
#define ACCESS_REQUEST_USE (1u << 1)
#define ACCESS_ACTIVE (1u << 5)
#define ACCESS_VALID (1u << 7)
/* TPM_STS_x (32 bits): burstCount in bits 8-23, tpmFamily in 26-27 */
#define STS_EXPECT (1u << 3)
#define STS_DATA_AVAIL (1u << 4)
#define STS_GO (1u << 5)
#define STS_READY (1u << 6)
#define STS_VALID (1u << 7)
#define STS_CANCEL (1u << 24)
#define STS_BURST(s) (((s) >> 8) & 0xffffu)
#define STS_FAMILY(s) (((s) >> 26) & 3u)
#define FAMILY_TPM2 1u

#define MS 1000000ull
#ifndef TIS_STATE_NS
#define TIS_STATE_NS (2000 * MS)     /* TIMEOUT_A/B/C/D, generous under TCG */
#endif
#ifndef TIS_XFER_NS
#define TIS_XFER_NS (10000 * MS)     /* moving one command or one response */
#endif
#ifndef TIS_COMMAND_NS
#define TIS_COMMAND_NS (300000 * MS) /* the longest a command may run */
#endif
#define TIS_SPAN 0x1000              /* the locality 0 register page */
#define TIS_HDR 10                   /* tag u16, size u32, code u32 */

static struct {
	uint64_t base;
	uint32_t did_vid;
} tis;

static uint32_t sts(void)
{
	return mmio_read32(tis.base + TIS_STS);
}

static void sts_write(uint32_t v)
{
	mmio_write32(tis.base + TIS_STS, v);
}

/* Wait until (STS & mask) == want; the last value read in *last. */
static bool wait_sts(uint32_t mask, uint32_t want, uint64_t ns, uint32_t *last)
{
	uint64_t t0 = plat_time_ns();
	uint32_t s;
	while (((s = sts()) & mask) != want) {
		if (plat_time_ns() - t0 > ns) {
			s = sts();
			break;
		}
		arch_relax();
	}
	if (last)
		*last = s;
	return (s & mask) == want;
}

/* A burst count above 0, at most `most` (the bytes the caller still has to
 * move): how many the FIFO takes or gives before the status is read again.
 * 0 when it stays 0 for TIMEOUT_D, or past the whole transfer's deadline
 * (a device that hands out one byte just before each timeout would
 * otherwise stretch a 4 KiB response over hours). */
static size_t burst(size_t most, uint64_t deadline)
{
	uint64_t t0 = plat_time_ns();
	for (;;) {
		uint32_t b = STS_BURST(sts());
		uint64_t now = plat_time_ns();
		if (now > deadline)
			return 0;
		if (b)
			return b < most ? b : most;
		if (now - t0 > TIS_STATE_NS)
			return 0;
		arch_relax();
	}
}

uint64_t tis_base(void)
{
	return tis.base;
}

uint32_t tis_did_vid(void)
{
	return tis.did_vid;
}

int tis_init(uint64_t base, uint64_t len, char *err, size_t errn)
{
	memset(&tis, 0, sizeof tis);
	if (!base || (base & (TIS_SPAN - 1)) || len < TIS_SPAN) {
		plat_snprintf(err, errn, "TPM FIFO registers at %#llx (%llu bytes): not a 4 KiB page",
			      (unsigned long long)base, (unsigned long long)len);
		return -LLMK_EIO;
	}
	/* the address is the host's in a confidential guest: device registers,
	 * not memory the firmware's map calls RAM, and shared in our tables */
	if (mem_is_ram(base, TIS_SPAN) || !cc_mmio_shared(base, TIS_SPAN)) {
		plat_snprintf(err, errn, "TPM FIFO registers at %#llx lie in %s",
			      (unsigned long long)base, mem_is_ram(base, TIS_SPAN) ? "RAM" :
			      "memory our page tables map private");
		return -LLMK_EIO;
	}
	tis.base = base;
	uint8_t acc = mmio_read8(base + TIS_ACCESS);
	if (acc == 0xff || !(acc & ACCESS_VALID)) {
		plat_snprintf(err, errn, "TIS at %#llx: TPM_ACCESS %#x (registers not valid)",
			      (unsigned long long)base, acc);
		tis.base = 0;
		return -LLMK_EIO;
	}
	/* TPM_INTERFACE_ID: InterfaceType 0 = FIFO for TPM 2.0 (PTP), 0xF =
	 * TIS 1.3 (the register reads as all ones on older parts); 1 = CRB
	 * active, which this driver does not speak */
	uint32_t id = mmio_read32(base + TIS_INTF_ID), type = id & 0xf;
	if (type != 0 && type != 0xf) {
		plat_snprintf(err, errn, "TIS at %#llx: interface type %u active, not FIFO (0)",
			      (unsigned long long)base, type);
		tis.base = 0;
		return -LLMK_ENOTSUP;
	}
	if (!(acc & ACCESS_ACTIVE))
		mmio_write8(base + TIS_ACCESS, ACCESS_REQUEST_USE);
	uint64_t t0 = plat_time_ns();
	while (((acc = mmio_read8(base + TIS_ACCESS)) & (ACCESS_VALID | ACCESS_ACTIVE)) !=
	       (ACCESS_VALID | ACCESS_ACTIVE)) {
		if (plat_time_ns() - t0 > TIS_STATE_NS) {
			plat_snprintf(err, errn, "TIS at %#llx: locality 0 not granted (TPM_ACCESS %#x)",
				      (unsigned long long)base, acc);
			tis.base = 0;
			return -LLMK_EIO;
		}
		arch_relax();
	}
	uint32_t s = sts();
	if (type == 0 && STS_FAMILY(s) != FAMILY_TPM2) {
		plat_snprintf(err, errn, "TIS at %#llx: TPM_STS %#x says TPM family %u, not 2.0",
			      (unsigned long long)base, s, STS_FAMILY(s));
		tis.base = 0;
		return -LLMK_ENOTSUP;
	}
	tis.did_vid = mmio_read32(base + TIS_DID_VID);
	return 0;
}

/* Ready (aborts a command in any state, and frees the response buffer);
 * best effort: the caller already has its answer or its error. */
static void to_ready(void)
{
	sts_write(STS_READY);
	wait_sts(STS_READY, STS_READY, TIS_STATE_NS, NULL);
}

static int fail(char *err, size_t errn, const char *what)
{
	uint32_t s = sts();
	plat_snprintf(err, errn, "TIS: %s (TPM_STS %#x)", what, s);
	to_ready();
	return -LLMK_EIO;
}

/* n bytes into the FIFO, burst by burst, before deadline. */
static bool fifo_write(const uint8_t *p, size_t n, uint64_t deadline)
{
	for (size_t i = 0; i < n;) {
		size_t k = burst(n - i, deadline);
		if (!k)
			return false;
		while (k--)
			mmio_write8(tis.base + TIS_FIFO, p[i++]);
	}
	return true;
}

/* n bytes out of the FIFO, burst by burst, before deadline. */
static bool fifo_read(uint8_t *p, size_t n, uint64_t deadline)
{
	for (size_t i = 0; i < n;) {
		size_t k = burst(n - i, deadline);
		if (!k)
			return false;
		while (k--)
			p[i++] = mmio_read8(tis.base + TIS_FIFO);
	}
	return true;
}

int tis_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap, size_t *rlen,
	     char *err, size_t errn)
{
	(void)ctx;
	uint32_t s;
	if (!tis.base) {
		plat_snprintf(err, errn, "TIS not initialised");
		return -LLMK_EIO;
	}
	if (n < TIS_HDR || n > 0xffffffu || cap < TIS_HDR) {
		plat_snprintf(err, errn, "TIS: a command of %zu bytes, room for %zu", n, cap);
		return -LLMK_ERANGE;
	}
	/* Idle -> Ready */
	if (!(sts() & STS_READY)) {
		sts_write(STS_READY);
		if (!wait_sts(STS_READY, STS_READY, TIS_STATE_NS, &s))
			return fail(err, errn, "not ready after commandReady");
	}
	/* Reception: all but the last byte, then the TPM must still expect */
	uint64_t until = plat_time_ns() + TIS_XFER_NS;
	if (!fifo_write(cmd, n - 1, until))
		return fail(err, errn, "burst count 0 past the timeouts while sending the command");
	if (!wait_sts(STS_VALID | STS_EXPECT, STS_VALID | STS_EXPECT, TIS_STATE_NS, &s))
		return fail(err, errn, "the TPM stopped expecting before the command's last byte");
	if (!fifo_write(cmd + n - 1, 1, until))
		return fail(err, errn, "burst count 0 past the timeouts before the command's last byte");
	if (!wait_sts(STS_VALID | STS_EXPECT, STS_VALID, TIS_STATE_NS, &s))
		return fail(err, errn, "the TPM expects more than the command's size");
	/* Execution */
	sts_write(STS_GO);
	if (!wait_sts(STS_VALID | STS_DATA_AVAIL, STS_VALID | STS_DATA_AVAIL, TIS_COMMAND_NS, &s)) {
		sts_write(STS_CANCEL);
		plat_snprintf(err, errn, "TIS: no response within %llu s (cancelled; TPM_STS %#x)",
			      (unsigned long long)(TIS_COMMAND_NS / 1000000000ull), s);
		to_ready();
		return -LLMK_EIO;
	}
	/* Completion: the header, then the size it states (bytes 2-5, big-endian) */
	until = plat_time_ns() + TIS_XFER_NS;
	if (!fifo_read(rsp, TIS_HDR, until))
		return fail(err, errn, "burst count 0 past the timeouts while reading the response header");
	size_t size = (size_t)rsp[2] << 24 | (size_t)rsp[3] << 16 | (size_t)rsp[4] << 8 | rsp[5];
	if (size < TIS_HDR || size > cap) {
		char what[80];
		plat_snprintf(what, sizeof what, "response header says %zu bytes (room %zu)", size, cap);
		return fail(err, errn, what);
	}
	if (!fifo_read(rsp + TIS_HDR, size - TIS_HDR, until))
		return fail(err, errn, "burst count 0 past the timeouts while reading the response");
	if (!wait_sts(STS_VALID | STS_DATA_AVAIL, STS_VALID, TIS_STATE_NS, &s))
		return fail(err, errn, "data left in the FIFO past the response's stated size");
	*rlen = size;
	to_ready();
	return 0;
}
