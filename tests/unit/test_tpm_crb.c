/*
 * tests/unit/test_tpm_crb.c — drivers/tpm_crb.c against a CRB register page
 * in host memory, with a thread playing the device (PTP §6.5.3, as QEMU's
 * tpm-crb behaves: locality grant, cmdReady/goIdle, START cleared when the
 * response is in the buffer) and forwarding each command to swtpm, so the
 * driver's state machine runs real TPM commands. Also its refusals: a
 * register page that reads all ones, a locality never granted, a FIFO
 * interface, a response header larger than the buffer.
 */
#include "../../drivers/tpm_crb.c"

#include "test.h"
#include "hostile.h"
#include "vtpm.h"
#include "../../drivers/tpm2.h"
#include "../../tools/host/host.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

/* drivers/tpm_crb.c orders its buffer writes against the device's view. */
void arch_dma_barrier(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#define BUF_OFF 0x80u
#define BUF_SIZE 0xF80u

static struct {
	uint8_t *page;     /* the locality 0 register page and its data buffer */
	int fd;            /* swtpm */
	volatile int stop;
	bool lie;          /* answer with a header claiming more than the buffer */
	pthread_t th;
} dev;

static uint32_t reg(uint32_t off)
{
	return __atomic_load_n((uint32_t *)(dev.page + off), __ATOMIC_SEQ_CST);
}

static void set(uint32_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(dev.page + off), v, __ATOMIC_SEQ_CST);
}

static void *device(void *arg)
{
	(void)arg;
	while (!dev.stop) {
		if (reg(LOC_CTRL) & LOC_CTRL_REQUEST) {
			/* the two registers change one after the other, with time
			 * between (a driver that reads LOC_STS as soon as LOC_STATE
			 * says assigned sees it not yet granted) */
			set(LOC_CTRL, 0);
			set(LOC_STATE, LOC_STATE_VALID | LOC_STATE_ASSIGNED);
			usleep(2000);
			set(LOC_STS, LOC_STS_GRANTED);
		}
		uint32_t req = reg(CTRL_REQ);
		if (req & REQ_CMD_READY) {
			set(CTRL_STS, reg(CTRL_STS) & ~STS_IDLE);
			set(CTRL_REQ, 0);
		} else if (req & REQ_GO_IDLE) {
			set(CTRL_STS, reg(CTRL_STS) | STS_IDLE);
			set(CTRL_REQ, 0);
		}
		if (reg(CTRL_START) & 1) {
			uint8_t *b = dev.page + BUF_OFF, rsp[TPM2_BUF];
			size_t n = (size_t)b[2] << 24 | (size_t)b[3] << 16 | (size_t)b[4] << 8 | b[5], rl = 0;
			char err[160];
			if (dev.fd >= 0 && n <= BUF_SIZE && host_vtpm_xfer(&dev.fd, b, n, rsp, sizeof rsp, &rl, err,
							     sizeof err) == 0) {
				memcpy(b, rsp, rl);
				if (dev.lie)
					b[4] = 0x40; /* 16 KiB */
			}
			set(CTRL_START, 0);
		}
		usleep(50);
	}
	return NULL;
}

/* A fresh register page as QEMU's tpm-crb presents it after reset. */
static void page_reset(void)
{
	memset(dev.page, 0, 0x1000);
	uint64_t buf = (uintptr_t)dev.page + BUF_OFF;
	set(LOC_STATE, LOC_STATE_VALID);
	set(INTF_ID, 1); /* CRB active */
	set(CTRL_STS, STS_IDLE);
	set(CTRL_CMD_SIZE, BUF_SIZE);
	set(CTRL_CMD_LADDR, (uint32_t)buf);
	set(CTRL_CMD_HADDR, (uint32_t)(buf >> 32));
	set(CTRL_RSP_SIZE, BUF_SIZE);
	memcpy(dev.page + CTRL_RSP_ADDR, &buf, 8);
	memset(&crb, 0, sizeof crb);
}

TEST(crb_runs_tpm_commands_through_a_crb_device_backed_by_swtpm)
{
	char why[240], err[160];
	static struct tpm2 t;
	const char *vt = test_vtpm_path(why, sizeof why);
	if (!vt)
		SKIP("no swtpm: %s", why);
	dev.fd = host_vtpm_connect(vt, err, sizeof err);
	CHECK(dev.fd >= 0);
	if (dev.fd < 0)
		return;
	dev.page = aligned_alloc(4096, 4096);
	page_reset();
	dev.stop = 0;
	dev.lie = false;
	pthread_create(&dev.th, NULL, device, NULL);

	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), 0);
	CHECK_EQ_INT(crb_base(), (uintptr_t)dev.page);
	tpm2_init(&t, crb_xfer, NULL);
	uint32_t man = 0;
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &man), 0);
	CHECK_EQ_INT(man, 0x49424d00); /* "IBM": swtpm */
	static uint8_t pcrs[TPM2_PCRS][32];
	uint8_t d[32] = {9};
	CHECK_EQ_INT(tpm2_pcr_reset(&t, 23), 0);
	CHECK_EQ_INT(tpm2_pcr_extend(&t, 23, d), 0);
	CHECK_EQ_INT(tpm2_pcr_read(&t, 0xff | 1u << 23, pcrs), 0);
	CHECK(memcmp(pcrs[23], (uint8_t[32]){0}, 32) != 0);
	CHECK_EQ_INT(tpm2_pcr_reset(&t, 23), 0);
	/* the driver leaves the TPM idle between commands */
	CHECK(reg(CTRL_STS) & STS_IDLE);
	/* a command larger than the buffer is refused before it is written */
	static uint8_t big[BUF_SIZE + 1];
	size_t rl;
	CHECK_EQ_INT(crb_xfer(NULL, big, sizeof big, big, sizeof big, &rl, err, sizeof err),
		     -LLMK_ERANGE);
	/* a response header that claims more than the buffer is refused */
	dev.lie = true;
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &man), -LLMK_EIO);
	CHECK(strstr(t.err, "CRB: response header says 164") != NULL); /* 0x40xx bytes */
	CHECK(strstr(t.err, "(buffer 3968,") != NULL);
	dev.lie = false;
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &man), 0);

	dev.stop = 1;
	pthread_join(dev.th, NULL);
	close(dev.fd);
	free(dev.page);
}

TEST(crb_init_refuses_a_missing_device_a_fifo_one_and_a_locality_never_granted)
{
	char err[160];
	dev.page = aligned_alloc(4096, 4096);
	memset(dev.page, 0xff, 0x1000); /* nothing decodes the addresses */
	memset(&crb, 0, sizeof crb);
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "registers not valid") != NULL);
	page_reset();
	set(INTF_ID, 0); /* FIFO (TIS) active */
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), -LLMK_ENOTSUP);
	CHECK(strstr(err, "interface type 0 active, not CRB") != NULL);
	page_reset(); /* no device thread: the request is never granted */
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "locality 0 not granted") != NULL);
	CHECK_EQ_INT(crb_init(0x10, err, sizeof err), -LLMK_EIO);
	size_t rl;
	uint8_t b[16];
	memset(&crb, 0, sizeof crb);
	CHECK_EQ_INT(crb_xfer(NULL, b, 10, b, sizeof b, &rl, err, sizeof err), -LLMK_EIO);
	free(dev.page);
}

/* Issue 28: the buffer addresses are the device's. A command buffer on
 * private RAM, a response buffer outside the CRB's register page, a buffer
 * running past the page's end, a register page on RAM: each refused at
 * crb_init, and no byte of the canary written by a command after it. */
TEST(crb_init_refuses_buffers_outside_the_crb_page_or_on_ram)
{
	static uint8_t priv[4096] __attribute__((aligned(4096)));
	char err[200];
	size_t rl;
	uint8_t cmd[12] = { 0x80, 0x01, 0, 0, 0, 12, 0, 0, 1, 0x44, 0, 0 }, rsp[64];

	memset(priv, 0x5a, sizeof priv);
	hostile_private_ram(priv, sizeof priv);
	dev.page = aligned_alloc(4096, 4096);
	page_reset();
	dev.stop = 0;
	dev.lie = false;
	dev.fd = -1;
	set(LOC_STATE, LOC_STATE_VALID | LOC_STATE_ASSIGNED);
	set(LOC_STS, LOC_STS_GRANTED);
	uint64_t p = (uintptr_t)priv;
	set(CTRL_CMD_LADDR, (uint32_t)p);
	set(CTRL_CMD_HADDR, (uint32_t)(p >> 32));
	if (crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err) == 0) {
		CHECK(!"a command buffer on private RAM taken");
		pthread_create(&dev.th, NULL, device, NULL);
		crb_xfer(NULL, cmd, sizeof cmd, rsp, sizeof rsp, &rl, err, sizeof err);
		dev.stop = 1;
		pthread_join(dev.th, NULL);
	} else {
		CHECK(strstr(err, "outside the CRB") != NULL);
	}
	for (size_t i = 0; i < sizeof priv; i++)
		if (priv[i] != 0x5a) {
			CHECK(!"the canary was written");
			break;
		}

	page_reset();
	set(LOC_STATE, LOC_STATE_VALID | LOC_STATE_ASSIGNED);
	set(LOC_STS, LOC_STS_GRANTED);
	memcpy(dev.page + CTRL_RSP_ADDR, &p, 8);
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), -LLMK_EIO);

	page_reset(); /* in the page, but 0x100 bytes too long */
	set(LOC_STATE, LOC_STATE_VALID | LOC_STATE_ASSIGNED);
	set(LOC_STS, LOC_STS_GRANTED);
	set(CTRL_CMD_SIZE, BUF_SIZE + 0x100);
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), -LLMK_EIO);

	page_reset(); /* well formed: taken */
	set(LOC_STATE, LOC_STATE_VALID | LOC_STATE_ASSIGNED);
	set(LOC_STS, LOC_STS_GRANTED);
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), 0);

	page_reset(); /* the register page itself on RAM */
	hostile_private_ram(dev.page, 4096);
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "RAM") != NULL);
	hostile_private_ram(NULL, 0);
	page_reset(); /* not RAM, but our page tables map it private */
	hostile_private_mapped(dev.page, 4096);
	CHECK_EQ_INT(crb_init((uintptr_t)dev.page + CTRL_REQ, err, sizeof err), -LLMK_EIO);
	CHECK(strstr(err, "map private") != NULL);
	hostile_private_mapped(NULL, 0);
	memset(&crb, 0, sizeof crb);
	free(dev.page);
}
