/*
 * tests/fuzz/fuzz_tis.c — fuzz_drivers' mode 7: drivers/tpm_tis.c against
 * a FIFO TPM whose every register read the input plays. The device is
 * tests/unit/tis_model.h's (the unit test's), well formed; the input's
 * first bytes pick the command's size, the caller's room, the canned
 * response's size and the clock's pace, and the rest is XORed, in order,
 * onto each value the
 * driver reads (TPM_ACCESS and TPM_DATA_FIFO one byte, TPM_STS with its
 * burst count, TPM_INTERFACE_ID and TPM_DID_VID four); past the input's
 * end the device is the well-formed one. One tis_init, then two commands
 * (the second after whatever the first left).
 *
 * The clock moves only with the device: 8 to 263 ms a register read (10
 * in the seed), so every wait of the driver ends within a bounded number
 * of reads (the longest, a command's 300 s, after 1141 to 37500), and at a
 * slow pace the deadlines of the state waits and of whole transfers expire
 * within a few reads.
 *
 * The property: no access out of bounds (ASan: the response buffer is
 * exactly the room the driver is told), no more bytes into the FIFO than
 * the command has nor out of it than the room, each call ends within the
 * sum of the driver's deadlines, and it ends either with a response that
 * fits (its header's size, at least a header, at most the room) or with
 * -LLMK_EIO / -LLMK_ERANGE and a "TIS" message.
 */
#include "../../kernel/kernel.h"
#include "../../kernel/arch.h"

#include <stdlib.h>

static uint64_t clock_ns;
#define plat_time_ns() (clock_ns)

static uint32_t model_rd(uint64_t a, int bytes);
static void model_wr(uint64_t a, uint32_t v, int bytes);
static void fifo_counted(uint64_t a, uint32_t v);
#define mmio_read8(a) ((uint8_t)model_rd(a, 1))
#define mmio_read32(a) model_rd(a, 4)
#define mmio_write8(a, v) fifo_counted(a, (uint8_t)(v))
#define mmio_write32(a, v) model_wr(a, (uint32_t)(v), 4)
#include "../../drivers/tpm_tis.c"

#include "../unit/hostile.h"
#include "../unit/tis_model.h"

static struct {
	const uint8_t *d;
	size_t n, at;
	uint64_t tick;            /* ns a register read takes */
	size_t fifo_in, fifo_out; /* data bytes the driver moved this call */
} in;

static uint32_t noise(uint32_t off, int bytes)
{
	uint32_t v = 0;
	clock_ns += in.tick;
	if (off == TIS_FIFO)
		in.fifo_out++;
	for (int i = 0; i < bytes && in.at < in.n; i++)
		v |= (uint32_t)in.d[in.at++] << (8 * i);
	return v;
}

static void fifo_counted(uint64_t a, uint32_t v)
{
	if (a == (uintptr_t)m.page + TIS_FIFO)
		in.fifo_in++;
	model_wr(a, v, 1);
}

/* The longest one tis_xfer may wait: Ready, the command's transfer and its
 * two Expect checks, the command, the response's transfer and its check,
 * and Ready again, each the driver's deadline; past them only the reads a
 * wait makes after its deadline and the bytes of the burst under way (at
 * most those of the command and of the room). */
#define XFER_BOUND(n, cap) \
	(TIS_STATE_NS * 5 + TIS_XFER_NS * 2 + TIS_COMMAND_NS + ((n) + (cap) + 64) * in.tick)

static void one_command(size_t n, size_t cap)
{
	static uint8_t cmd[TPM2_BUF];
	uint8_t *rsp = malloc(cap ? cap : 1);
	size_t rl = 0;
	char err[200] = "";

	memset(cmd, 0, n);
	if (n >= 6) { /* TPM2_GetCapability's tag, the size the model expects */
		cmd[0] = 0x80, cmd[1] = 0x01;
		cmd[2] = (uint8_t)(n >> 24), cmd[3] = (uint8_t)(n >> 16);
		cmd[4] = (uint8_t)(n >> 8), cmd[5] = (uint8_t)n;
	}
	in.fifo_in = in.fifo_out = 0;
	uint64_t t0 = clock_ns;
	int e = tis_xfer(NULL, cmd, n, rsp, cap, &rl, err, sizeof err);
	if (clock_ns - t0 > XFER_BOUND(n, cap))
		abort(); /* a wait past every deadline */
	if (in.fifo_in > n || in.fifo_out > (cap > TIS_HDR ? cap : TIS_HDR))
		abort(); /* more FIFO bytes than the command or the room */
	if (e == 0) {
		if (rl < TIS_HDR || rl > cap || hdr_size(rsp) != rl)
			abort();
	} else if ((e != -LLMK_EIO && e != -LLMK_ERANGE) || strncmp(err, "TIS", 3)) {
		abort();
	}
	free(rsp);
}

void fuzz_tis(const uint8_t *d, size_t n);
void fuzz_tis(const uint8_t *d, size_t n)
{
	char err[200];
	size_t k = 0;
	/* sizes: the command 0..511 bytes, the room 0..511, the response
	 * 0..64 (below 10: shorter than its own header); the pace */
	uint8_t b[6] = { 12, 0, 64, 0, 40, 2 };
	for (; k < sizeof b && k < n; k++)
		b[k] = d[k];
	size_t cn = b[0] | (size_t)(b[1] & 1) << 8, cap = b[2] | (size_t)(b[3] & 1) << 8;
	size_t rn = b[4] % 65;

	memset(&in, 0, sizeof in);
	in.d = d + k, in.n = n - k;
	in.tick = (b[5] + 8u) * MS;
	hostile_private_ram(NULL, 0); /* the page: device registers, shared */
	hostile_private_mapped(NULL, 0);
	m.noise = NULL;
	model_open(NULL);
	canned_ok(rn < TIS_HDR ? TIS_HDR : rn);
	m.canned_len = rn;
	m.noise = noise;
	if (tis_init((uintptr_t)m.page, 0x5000, err, sizeof err) == 0) {
		one_command(cn, cap);
		one_command(cn, cap);
	} else if (strncmp(err, "TIS", 3) && strncmp(err, "TPM FIFO", 8)) {
		abort();
	}
	m.noise = NULL;
}
