/*
 * tests/unit/tis_model.h — a model of a FIFO TPM's locality 0 registers
 * (PTP §6.5.2, as QEMU's tpm-tis behaves: TPM_ACCESS locality grant;
 * TPM_STS commandReady, Expect, tpmGo, dataAvail, burstCount;
 * TPM_DATA_FIFO moving one byte per access), shared by
 * tests/unit/test_tpm_tis.c and tests/fuzz/fuzz_tis.c.
 *
 * Include it after drivers/tpm_tis.c (it uses the driver's register
 * offsets and bits), with the driver's mmio_read8/32 and mmio_write8/32
 * aimed at model_rd and model_wr, declared before that include:
 *
 *   static uint32_t model_rd(uint64_t a, int bytes);
 *   static void model_wr(uint64_t a, uint32_t v, int bytes);
 *
 * tpmGo runs the command through m.backend (the unit test's swtpm), else
 * answers with m.canned. The hostility flags below bend the device; m.noise,
 * when set, is XORed onto every register value the driver reads (the
 * fuzzer's input: all zeros leaves the well-formed device).
 */
#ifndef TEST_TIS_MODEL_H
#define TEST_TIS_MODEL_H

#include "../../drivers/tpm2.h"

#include <stdlib.h>

enum { M_IDLE, M_READY, M_RECEPTION, M_COMPLETION };

static struct {
	uint8_t *page;           /* 4 KiB: the address the driver is given */
	int state;
	uint8_t access;
	uint32_t intf_id, family;
	uint8_t cmd[TPM2_BUF];
	size_t clen, executed;   /* executed: the size of the last command run */
	uint8_t rsp[2 * TPM2_BUF];
	size_t rlen, roff;
	/* what tpmGo runs; NULL: the canned response */
	int (*backend)(const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap, size_t *rlen);
	uint8_t canned[64];
	size_t canned_len;
	/* XORed onto each value read from the page (off: the register) */
	uint32_t (*noise)(uint32_t off, int bytes);
	/* hostility */
	bool all_ones, no_grant, burst_zero, burst_huge, never_ready, never_valid, expect_short;
	bool no_answer;          /* tpmGo is ignored */
	bool extra;              /* 16 bytes past the size the header states */
	uint32_t lie_size;       /* nonzero: the response header's size field */
	int burst_zero_after;    /* >0: the burst count drops to 0 after this many FIFO bytes */
	int fifo_bytes;
	uint64_t drip_ns, last_fifo; /* drip: one byte per drip_ns, burst 0 between */
} m;

static size_t hdr_size(const uint8_t *b)
{
	return (size_t)b[2] << 24 | (size_t)b[3] << 16 | (size_t)b[4] << 8 | b[5];
}

static bool expect(void)
{
	if (m.expect_short && m.clen >= 6)
		return false;
	return m.clen < 6 || m.clen < hdr_size(m.cmd);
}

static uint32_t burst_count(void)
{
	size_t left = m.state == M_COMPLETION ? m.rlen - m.roff :
		      m.state == M_READY || m.state == M_RECEPTION ? sizeof m.cmd - m.clen : 0;
	if (m.burst_zero || (m.burst_zero_after && m.fifo_bytes >= m.burst_zero_after))
		return 0;
	if (m.burst_huge)
		return 0xffff;
	if (m.drip_ns && m.state == M_COMPLETION)
		return left && plat_time_ns() - m.last_fifo >= m.drip_ns;
	return left < 37 ? (uint32_t)left : 37; /* an odd size, to cut the transfers */
}

static uint32_t status(void)
{
	uint32_t s = m.family << 26 | burst_count() << 8;
	if (!m.never_valid)
		s |= STS_VALID;
	if (m.state == M_READY)
		s |= STS_READY;
	if (m.state == M_RECEPTION && expect())
		s |= STS_EXPECT;
	if (m.state == M_COMPLETION && m.roff < m.rlen)
		s |= STS_DATA_AVAIL;
	return s;
}

static void execute(void)
{
	size_t rl = 0;
	m.executed = m.clen;
	if (m.backend) {
		if (m.backend(m.cmd, m.clen, m.rsp, sizeof m.rsp / 2, &rl))
			rl = 0;
	} else {
		memcpy(m.rsp, m.canned, m.canned_len);
		rl = m.canned_len;
	}
	if (m.lie_size && rl >= 6) {
		m.rsp[2] = (uint8_t)(m.lie_size >> 24), m.rsp[3] = (uint8_t)(m.lie_size >> 16);
		m.rsp[4] = (uint8_t)(m.lie_size >> 8), m.rsp[5] = (uint8_t)m.lie_size;
	}
	if (m.extra) {
		memset(m.rsp + rl, 0xee, 16);
		rl += 16;
	}
	m.rlen = rl;
	m.roff = 0;
	m.state = M_COMPLETION;
}

static bool in_page(uint64_t a)
{
	return a >= (uintptr_t)m.page && a < (uintptr_t)m.page + 0x1000;
}

static uint32_t model_rd(uint64_t a, int bytes)
{
	if (!in_page(a))
		return bytes == 1 ? *(volatile uint8_t *)(uintptr_t)a : *(volatile uint32_t *)(uintptr_t)a;
	uint32_t off = (uint32_t)(a - (uintptr_t)m.page), v = 0;
	if (m.all_ones)
		v = 0xffffffffu;
	else
		switch (off) {
		case TIS_ACCESS:
			v = m.access;
			break;
		case TIS_STS:
			v = status();
			break;
		case TIS_FIFO:
			m.fifo_bytes++;
			m.last_fifo = plat_time_ns();
			v = m.state == M_COMPLETION && m.roff < m.rlen ? m.rsp[m.roff++] : 0xff;
			break;
		case TIS_INTF_ID:
			v = m.intf_id;
			break;
		case TIS_DID_VID:
			v = 0x00011014; /* IBM, device 1: QEMU's */
			break;
		}
	if (m.noise)
		v ^= m.noise(off, bytes);
	return bytes == 1 ? (uint8_t)v : v;
}

static void model_wr(uint64_t a, uint32_t v, int bytes)
{
	if (!in_page(a)) {
		if (bytes == 1)
			*(volatile uint8_t *)(uintptr_t)a = (uint8_t)v;
		else
			*(volatile uint32_t *)(uintptr_t)a = v;
		return;
	}
	uint32_t off = (uint32_t)(a - (uintptr_t)m.page);
	if (off == TIS_ACCESS && (v & ACCESS_REQUEST_USE) && !m.no_grant)
		m.access |= ACCESS_ACTIVE;
	if (off == TIS_FIFO) {
		m.fifo_bytes++;
		m.last_fifo = plat_time_ns();
		if (m.state == M_READY)
			m.state = M_RECEPTION;
		if (m.state == M_RECEPTION && m.clen < sizeof m.cmd)
			m.cmd[m.clen++] = (uint8_t)v;
	}
	if (off != TIS_STS)
		return;
	if ((v & STS_READY) && !m.never_ready) {
		m.state = M_READY;
		m.clen = m.rlen = m.roff = 0;
	}
	if ((v & STS_GO) && m.state == M_RECEPTION && !expect() && !m.no_answer)
		execute();
}

/* A fresh device as QEMU's tpm-tis presents it after the firmware: valid,
 * no locality active, idle, TPM 2.0, the FIFO interface. The page, the
 * backend and the noise stay; the driver's state is forgotten. */
static void model_reset(void)
{
	uint8_t *page = m.page;
	int (*backend)(const uint8_t *, size_t, uint8_t *, size_t, size_t *) = m.backend;
	uint32_t (*noise)(uint32_t, int) = m.noise;
	memset(&m, 0, sizeof m);
	m.page = page;
	m.backend = backend;
	m.noise = noise;
	memset(m.page, 0x5a, 0x1000);
	m.access = ACCESS_VALID;
	m.family = FAMILY_TPM2;
	m.state = M_IDLE;
	memset(&tis, 0, sizeof tis);
}

static void model_open(int (*backend)(const uint8_t *, size_t, uint8_t *, size_t, size_t *))
{
	if (!m.page)
		m.page = aligned_alloc(4096, 4096);
	m.backend = backend;
	model_reset();
}

/* A well-formed response of n bytes (n <= 64) as the canned answer: tag
 * 0x8001, size n, rc 0, then bytes counting up. */
static void canned_ok(size_t n)
{
	memset(m.canned, 0, sizeof m.canned);
	m.canned[0] = 0x80, m.canned[1] = 0x01;
	m.canned[5] = (uint8_t)n;
	for (size_t i = 10; i < n; i++)
		m.canned[i] = (uint8_t)i;
	m.canned_len = n;
}

#endif
