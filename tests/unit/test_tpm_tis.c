/*
 * tests/unit/test_tpm_tis.c — drivers/tpm_tis.c against a model of a FIFO
 * TPM's locality 0 registers (tests/unit/tis_model.h, shared with
 * tests/fuzz/fuzz_tis.c), the driver's MMIO accessors aimed at the model.
 * tpmGo forwards the command to swtpm (or answers with a canned
 * response), so the driver's state machine runs real TPM commands. Then the model turns hostile: a burst count of 0
 * forever, one of 0xffff, a status that never settles, a response header
 * larger than the buffer or smaller than a header, bytes past the stated
 * size, a TPM that stops expecting early; each must end in bounded time
 * with one error, no byte written past the caller's buffer, and the TPM
 * told commandReady so the next command works. And init's refusals.
 */
#define TIS_STATE_NS (30 * 1000000ull)    /* short waits: the tests time out on purpose */
#define TIS_COMMAND_NS (300 * 1000000ull)
#define TIS_XFER_NS (200 * 1000000ull)
#include "../../kernel/kernel.h"
#include "../../kernel/arch.h"

static uint32_t model_rd(uint64_t a, int bytes);
static void model_wr(uint64_t a, uint32_t v, int bytes);
#define mmio_read8(a) ((uint8_t)model_rd(a, 1))
#define mmio_read32(a) model_rd(a, 4)
#define mmio_write8(a, v) model_wr(a, (uint8_t)(v), 1)
#define mmio_write32(a, v) model_wr(a, (uint32_t)(v), 4)
#include "../../drivers/tpm_tis.c"

#include "test.h"
#include "hostile.h"
#include "vtpm.h"
#include "../../drivers/tpm2.h"
#include "../../tools/host/host.h"
#include "tis_model.h"

#include <unistd.h>

/* swtpm behind the model's tpmGo (tis_runs_tpm_commands...) */
static int swtpm_fd = -1;

static int swtpm_backend(const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap, size_t *rlen)
{
	char err[160];
	return host_vtpm_xfer(&swtpm_fd, cmd, n, rsp, cap, rlen, err, sizeof err);
}

static const uint8_t startup[12] = { 0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x44, 0, 0 };

TEST(tis_runs_tpm_commands_through_a_fifo_device_backed_by_swtpm)
{
	char why[240], err[160];
	static struct tpm2 t;
	const char *vt = test_vtpm_path(why, sizeof why);
	if (!vt)
		SKIP("no swtpm: %s", why);
	int fd = host_vtpm_connect(vt, err, sizeof err);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	swtpm_fd = fd;
	model_open(swtpm_backend);
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), 0);
	CHECK_EQ_INT(tis_base(), (uintptr_t)m.page);
	CHECK_EQ_INT(tis_did_vid(), 0x00011014);
	CHECK(m.access & ACCESS_ACTIVE);
	tpm2_init(&t, tis_xfer, NULL);
	uint32_t man = 0;
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &man), 0);
	CHECK_EQ_INT(man, 0x49424d00); /* "IBM": swtpm */
	static uint8_t pcrs[TPM2_PCRS][32];
	uint8_t d[32] = {7};
	CHECK_EQ_INT(tpm2_pcr_reset(&t, 23), 0);
	CHECK_EQ_INT(tpm2_pcr_extend(&t, 23, d), 0);
	CHECK_EQ_INT(tpm2_pcr_read(&t, 0xff | 1u << 23, pcrs), 0);
	CHECK(memcmp(pcrs[23], (uint8_t[32]){0}, 32) != 0);
	CHECK_EQ_INT(tpm2_pcr_reset(&t, 23), 0);
	/* the driver hands the buffer back (commandReady) after each command */
	CHECK_EQ_INT(m.state, M_READY);
	/* a response header that claims more than the caller's room is refused,
	 * and the next command goes through */
	m.lie_size = 0x4000;
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &man), -LLMK_EIO);
	CHECK(strstr(t.err, "TIS: response header says 16384 bytes") != NULL);
	m.lie_size = 0;
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &man), 0);
	close(swtpm_fd);
	swtpm_fd = -1;
	m.backend = NULL;
}

TEST(tis_xfer_survives_a_hostile_fifo)
{
	char err[200];
	uint8_t rsp[64 + 16];
	size_t rl = 0;
	model_open(NULL);
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), 0);

	/* well formed: 40 bytes, cut into bursts of 37 */
	canned_ok(40);
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), 0);
	CHECK_EQ_INT(rl, 40);
	CHECK(memcmp(rsp, m.canned, 40) == 0);
	CHECK_EQ_INT(m.state, M_READY);

	/* a burst count of 0 forever: bounded, one error, commandReady after */
	m.burst_zero = true;
	uint64_t t0 = plat_time_ns();
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "TIS: burst count 0 past the timeouts while sending the command") != NULL);
	CHECK(plat_time_ns() - t0 < 2000000000ull);
	m.burst_zero = false;
	/* ... and 0 once the response's header is out */
	m.fifo_bytes = 0;
	m.burst_zero_after = (int)sizeof startup + 10;
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "burst count 0 past the timeouts while reading the response (") != NULL);
	CHECK_EQ_INT(m.state, M_READY);
	m.burst_zero_after = 0;

	/* one byte just before each burst timeout: the whole transfer still
	 * ends at its own deadline (64 bytes at 20 ms each would take 1.3 s) */
	canned_ok(64);
	m.drip_ns = 20 * 1000000ull;
	t0 = plat_time_ns();
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "burst count 0 past the timeouts while reading the response") != NULL);
	CHECK(plat_time_ns() - t0 < 1000000000ull);
	m.drip_ns = 0;
	canned_ok(40);

	/* a burst count of 0xffff: the driver moves only the bytes it has, and
	 * none past the caller's room */
	m.burst_huge = true;
	memset(rsp, 0xcc, sizeof rsp);
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 40, &rl, err, sizeof err), 0);
	CHECK_EQ_INT(rl, 40);
	CHECK_EQ_INT(m.executed, sizeof startup); /* no extra FIFO writes either */
	for (size_t i = 40; i < sizeof rsp; i++)
		if (rsp[i] != 0xcc) {
			CHECK(!"a byte written past the caller's room");
			break;
		}
	m.burst_huge = false;

	/* the header says more than the room, or less than a header */
	m.lie_size = 0xffffffffu;
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "TIS: response header says 4294967295 bytes (room 64)") != NULL);
	CHECK_EQ_INT(m.state, M_READY);
	m.lie_size = 6;
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "response header says 6 bytes") != NULL);
	m.lie_size = 0;

	/* bytes past the stated size */
	m.extra = true;
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "data left in the FIFO past the response's stated size") != NULL);
	m.extra = false;

	/* the TPM stops expecting before the command's end */
	m.expect_short = true;
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "stopped expecting before the command's last byte") != NULL);
	m.expect_short = false;

	/* a status that never settles: never valid, never ready */
	m.never_valid = true;
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "TIS: ") == err);
	m.never_valid = false;
	m.state = M_IDLE;
	m.never_ready = true;
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "not ready after commandReady") != NULL);
	m.never_ready = false;

	/* a command the TPM never answers: cancelled after the command timeout */
	m.no_answer = true;
	t0 = plat_time_ns();
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "TIS: no response within") != NULL);
	CHECK(plat_time_ns() - t0 >= TIS_COMMAND_NS && plat_time_ns() - t0 < 3000000000ull);
	m.no_answer = false;
	/* after all that, a good command still goes through */
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 64, &rl, err, sizeof err), 0);
	CHECK_EQ_INT(rl, 40);

	/* sizes the driver refuses before touching the FIFO */
	CHECK_EQ_INT(tis_xfer(NULL, startup, 4, rsp, 64, &rl, err, sizeof err), -LLMK_ERANGE);
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, rsp, 4, &rl, err, sizeof err), -LLMK_ERANGE);
}

TEST(tis_init_refuses_a_missing_device_a_crb_one_tpm12_a_locality_never_granted_and_ram)
{
	char err[200];
	model_open(NULL);
	m.all_ones = true; /* nothing decodes the addresses */
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "registers not valid") != NULL);
	CHECK_EQ_INT(tis_base(), 0);
	model_reset();
	m.intf_id = 1; /* CRB active */
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), -LLMK_ENOTSUP);
	CHECK(strstr(err, "interface type 1 active, not FIFO") != NULL);
	model_reset();
	m.family = 0; /* TPM 1.2 */
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), -LLMK_ENOTSUP);
	CHECK(strstr(err, "TPM family 0, not 2.0") != NULL);
	model_reset();
	m.no_grant = true;
	uint64_t t0 = plat_time_ns();
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "locality 0 not granted") != NULL);
	CHECK(plat_time_ns() - t0 < 2000000000ull);
	model_reset();
	CHECK_EQ_INT(tis_init((uintptr_t)m.page + 0x40, 0x5000, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "not a 4 KiB page") != NULL);
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x800, err, sizeof err), -LLMK_EIO);
	CHECK_EQ_INT(tis_init(0, 0x5000, err, sizeof err), -LLMK_EIO);
	/* on RAM the firmware's map names, or mapped private: refused unread */
	hostile_private_ram(m.page, 4096);
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "lie in RAM") != NULL);
	hostile_private_ram(NULL, 0);
	hostile_private_mapped(m.page, 4096);
	CHECK_EQ_INT(tis_init((uintptr_t)m.page, 0x5000, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "map private") != NULL);
	hostile_private_mapped(NULL, 0);
	/* uninitialised: no register touched */
	size_t rl;
	uint8_t b[16];
	memset(&tis, 0, sizeof tis);
	CHECK_EQ_INT(tis_xfer(NULL, startup, sizeof startup, b, sizeof b, &rl, err, sizeof err),
		     -LLMK_EIO);
	CHECK(strstr(err, "not initialised") != NULL);
}
