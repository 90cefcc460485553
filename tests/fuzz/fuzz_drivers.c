/*
 * tests/fuzz/fuzz_drivers.c — libFuzzer over the drivers' parsers of what
 * the host says (issue 28). In a confidential VM the host emulates every
 * device and writes every table; the first input byte picks the parser, the
 * rest is the host's:
 *
 *   0  ACPI: one table (signature FACP, APIC, MCFG, SPCR, TPM2 by the
 *      second byte; a FACP's DSDT the same bytes as a DSDT), checksummed,
 *      behind an RSDP and XSDT, walked by every acpi_* reader
 *   1  PCI capability list and virtio structures: the bytes XORed onto the
 *      well-formed device of tests/unit/hostile.h (capability pointer and
 *      list, the common configuration, the features), then probe, start,
 *      a queue, a kick and a config read; neither canary may change
 *   2  TPM responses: every tpm2_* command answered with the bytes
 *   3  CRB register page: the bytes XORed onto a well-formed page (the
 *      buffer addresses relative to it), the device completing at once:
 *      crb_init, then one command and its response
 *   4  the SNP certificate table: a page count, then the shared pages
 *   5  an SNP guest message response page (the hypervisor relays it): the
 *      header, the payload opened under a zero VMPCK, the report and key
 *      responses
 *   6  the hypervisor's answers to the #VC handler (tests/fuzz/fuzz_ghcb.c)
 *   7  a FIFO (TIS) TPM's registers: every value drivers/tpm_tis.c reads
 *      during init and two commands, XORed onto the well-formed device of
 *      tests/unit/tis_model.h (tests/fuzz/fuzz_tis.c)
 *   8  the DSDT's TPM device: the bytes XORed onto a well-formed
 *      Device(TPM0) { _HID "MSFT0101", _CRS Memory32Fixed }, the rest
 *      appended, as mode 0's FACP-and-DSDT, then acpi_tpm_mmio (mode 0
 *      also scans its DSDT)
 *
 * The drivers are compiled as they are, their MMIO through hostile.h's
 * model: anything outside the configuration space and the BAR is a plain
 * memory access, so ASan reports a write the drivers should have refused.
 */
#include "../../kernel/kernel.h"
#include "../../kernel/arch.h"
#define HOSTILE_MMIO
#include "../unit/hostile.h"

#include <stdlib.h>

/* The drivers' timeouts on a clock that runs 100 ms a reading: a device
 * that never answers costs microseconds, not seconds. */
static uint64_t fuzz_clock(void)
{
	static uint64_t t;
	return t += 100000000ull;
}
#define plat_time_ns fuzz_clock

#include "../../drivers/acpi.c"
#include "../../drivers/pci.c"
#include "../../drivers/virtio_pci.c"

/* The CRB device completes at once: writes to its request registers
 * (locality request, cmdReady/goIdle, START, CANCEL) are taken and
 * dropped, so they read back as done. */
static uint64_t crb_page;
static void crb_wr32(uint64_t a, uint32_t v)
{
	uint64_t off = a - crb_page;

	if (crb_page && a >= crb_page &&
	    (off == 0x08 || off == 0x40 || off == 0x48 || off == 0x4c))
		return;
	hostile_wr(a, v, 4);
}
#undef mmio_write32
#define mmio_write32(a, v) crb_wr32(a, (uint32_t)(v))
#include "../../drivers/tpm_crb.c"

#include "../../drivers/tpm2.h"
#include "../../drivers/snp_guest_msg.h"

uint32_t arch_io_in(uint16_t port, int bytes)
{
	(void)port;
	(void)bytes;
	return 0xffffffffu;
}

void arch_io_out(uint16_t port, uint32_t val, int bytes)
{
	(void)port;
	(void)val;
	(void)bytes;
}

void arch_relax(void)
{
}

void arch_dma_barrier(void)
{
}

static void *dma[3];
void *cc_dma_alloc(size_t size)
{
	size_t n = (size + 4095) & ~(size_t)4095;
	void *p = aligned_alloc(4096, n);

	if (p)
		memset(p, 0, n);
	for (int i = 0; i < 3; i++)
		if (!dma[i]) {
			dma[i] = p;
			break;
		}
	return p;
}

/* ---- 0: ACPI ---- */
static void seal(uint8_t *t, uint32_t len, const char sig[4])
{
	uint8_t sum = 0;

	memcpy(t, sig, 4);
	memcpy(t + 4, &len, 4);
	t[9] = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += t[i];
	t[9] = (uint8_t)-sum;
}

static void fuzz_acpi(const uint8_t *d, size_t n)
{
	static const char sigs[5][4] = { "FACP", "APIC", "MCFG", "SPCR", "TPM2" };
	uint8_t rsdp[36] = "RSD PTR ", xsdt[44], sum = 0;
	uint32_t len;
	uint64_t p;
	char line[200];

	if (n < 1)
		return;
	const char *sig = sigs[d[0] % 5];
	d++, n--;
	len = n < 36 ? 36 : (uint32_t)n;
	uint8_t *t = calloc(1, len), *dsdt = calloc(1, len);
	memcpy(t, d, n);
	memcpy(dsdt, d, n);
	seal(dsdt, len, "DSDT");
	if (!memcmp(sig, "FACP", 4)) { /* its DSDT pointers: the bytes as a DSDT */
		uint32_t p32 = (uint32_t)(uintptr_t)dsdt;
		p = (uintptr_t)dsdt;
		if (len >= 44)
			memcpy(t + 40, (uintptr_t)dsdt == p32 ? &p32 : (uint32_t[]){ 0 }, 4);
		if (len >= 148)
			memcpy(t + 140, &p, 8);
	}
	seal(t, len, sig);
	memset(xsdt, 0, sizeof xsdt);
	p = (uintptr_t)t;
	memcpy(xsdt + 36, &p, 8);
	seal(xsdt, sizeof xsdt, "XSDT");
	rsdp[15] = 2;
	memcpy(rsdp + 20, &(uint32_t){ 36 }, 4);
	p = (uintptr_t)xsdt;
	memcpy(rsdp + 24, &p, 8);
	for (int i = 0; i < 20; i++)
		sum += rsdp[i];
	rsdp[8] = (uint8_t)-sum;
	sum = 0;
	for (int i = 0; i < 36; i++)
		sum += rsdp[i];
	rsdp[32] = (uint8_t)-sum;

	memset(&acpi, 0, sizeof acpi);
	if (acpi_init((uintptr_t)rsdp) == 0) {
		struct acpi_ecam e;
		struct acpi_uart u;
		struct acpi_tpm2 tp;
		uint64_t ids[8];
		acpi_describe(line, sizeof line);
		acpi_cpu_count();
		acpi_cpu_ids(ids, 8);
		acpi_spcr(&u);
		acpi_tpm2(&tp);
		for (int i = 0; acpi_ecam(i, &e) == 0; i++)
			;
		uint64_t tb;
		uint32_t tl;
		if (acpi_tpm_mmio(&tb, &tl) == 0) { /* a descriptor's base, length in the DSDT */
			uint8_t want[8];
			uint32_t b32 = (uint32_t)tb;
			memcpy(want, &b32, 4);
			memcpy(want + 4, &tl, 4);
			bool in_dsdt = false;
			for (uint32_t i = 36; i + 8 <= len && !in_dsdt; i++)
				in_dsdt = !memcmp(dsdt + i, want, 8);
			if (tb >> 32 || !in_dsdt)
				abort();
		}
	}
	memset(&acpi, 0, sizeof acpi);
	free(t);
	free(dsdt);
}

/* ---- 8: the DSDT's TPM device ---- */
/* Scope(\_SB_) { Device(TPM0) { Name(_HID, "MSFT0101") Name(_STR, "TPM 2.0
 * Device") Name(_UID, 0) Name(_CRS, ResourceTemplate() { Memory32Fixed(
 * ReadWrite, 0x0C000000, 0x5000) }) } }, the shape of QEMU virt's; two-byte
 * PkgLengths. Returns its length. */
static size_t tpm_device_aml(uint8_t *aml)
{
	static const uint8_t body[] = {
		'T', 'P', 'M', '0',
		0x08, '_', 'H', 'I', 'D', 0x0d, 'M', 'S', 'F', 'T', '0', '1', '0', '1', 0x00,
		0x08, '_', 'S', 'T', 'R', 0x0d, 'T', 'P', 'M', ' ', '2', '.', '0', ' ',
		'D', 'e', 'v', 'i', 'c', 'e', 0x00,
		0x08, '_', 'U', 'I', 'D', 0x00,
		/* Buffer: PkgLength 17, BufferSize 14, Memory32Fixed, EndTag */
		0x08, '_', 'C', 'R', 'S', 0x11, 17, 0x0a, 14,
		0x86, 9, 0, 0x01, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x50, 0x00, 0x00, 0x79, 0x00,
	};
	size_t dev = 2 + sizeof body, scope = 2 + 5 + 2 + dev, n = 0;
	aml[n++] = 0x10;
	aml[n++] = (uint8_t)(0x40 | (scope & 0x0f));
	aml[n++] = (uint8_t)(scope >> 4);
	memcpy(aml + n, "\\_SB_", 5);
	n += 5;
	aml[n++] = 0x5b;
	aml[n++] = 0x82;
	aml[n++] = (uint8_t)(0x40 | (dev & 0x0f));
	aml[n++] = (uint8_t)(dev >> 4);
	memcpy(aml + n, body, sizeof body);
	return n + sizeof body;
}

static void fuzz_dsdt_tpm(const uint8_t *d, size_t n)
{
	/* mode 0's input: the FACP selector, a 36-byte header the seal fills,
	 * the AML, zeros up to the FACP's X_DSDT (offset 140) and past it */
	size_t len = 1 + 36 + 128 + n + 160;
	uint8_t *t = calloc(1, len), *aml = t + 1 + 36;
	size_t k = tpm_device_aml(aml);

	for (size_t i = 0; i < n; i++)
		aml[i] ^= d[i]; /* past the template: the bytes themselves */
	fuzz_acpi(t, 1 + 36 + (k > n ? k : n) + 160);
	free(t);
}

/* ---- 1: PCI capabilities and virtio ---- */
static void fuzz_virtio(const uint8_t *d, size_t n)
{
	static struct pci_dev dev;
	struct virtio_pci vp;
	struct virtq q;
	uint64_t got, v[8];
	size_t i = 0;

	hostile_virtio_reset();
	/* the BAR is the only MMIO: the rest of memory is RAM in the map */
	hostile_only_mmio(hostile_bar(), HOSTILE_BAR_SIZE);
	memset(&dev, 0, sizeof dev);
	dev.cfg = (uintptr_t)hostile.cfg;
	/* the capability pointer and list (0x34..0xff), the common
	 * configuration (64 bytes), the features, a config read */
	for (unsigned o = 0x34; o < 0x100 && i < n; o++)
		hostile.cfg[o] ^= d[i++];
	for (unsigned o = 0; o < 64 && i < n; o++)
		hostile_bar()[o] ^= d[i++];
	for (int b = 0; b < 8 && i < n; b++)
		hostile.features ^= (uint64_t)d[i++] << (8 * b);
	unsigned off = i < n ? d[i++] * 17u : 0, len = i < n ? d[i++] % 64 : 8;
	memset(dma, 0, sizeof dma);
	if (virtio_pci_probe(&vp, &dev) == 0 && virtio_pci_start(&vp, ~0ull, &got) == 0) {
		virtio_pci_config(&vp, off, v, len);
		if (virtio_pci_queue(&vp, 0, 8, &q) == 0) {
			virtq_push(&q, 0);
			virtq_kick(&q);
		}
	}
	if (!hostile_canaries_intact())
		abort();
	for (int k = 0; k < 3; k++)
		free(dma[k]);
}

/* ---- 2: TPM responses ---- */
struct canned {
	const uint8_t *d;
	size_t n;
};

static int answer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap, size_t *rlen,
		  char *err, size_t errn)
{
	const struct canned *c = ctx;
	(void)cmd;
	(void)n;
	(void)err;
	(void)errn;
	*rlen = c->n < cap ? c->n : cap;
	memcpy(rsp, c->d, *rlen);
	return 0;
}

static void fuzz_tpm2(const uint8_t *d, size_t n)
{
	static struct tpm2 t;
	static uint8_t pcrs[TPM2_PCRS][32], buf[4096], sig[1024];
	static struct tpm2_object o;
	struct canned c = { d, n };
	struct tpm2_nv_public nv;
	uint32_t v, h[8], s;
	size_t l1, l2;
	int k;

	tpm2_init(&t, answer, &c);
	tpm2_get_property(&t, 0x105, &v);
	tpm2_get_handles(&t, 0x81000000, h, 8, &k);
	tpm2_pcr_read(&t, 0xffffff, pcrs);
	tpm2_read_public(&t, 0x81000001, &o);
	tpm2_create_primary(&t, 0x4000000b, buf, 64, &o);
	tpm2_quote(&t, 0x80000001, buf, 32, 0xff, buf, sizeof buf, &l1, sig, sizeof sig, &l2);
	tpm2_nv_read_public(&t, 0x01c00002, &nv);
	tpm2_nv_read(&t, 0x01c00002, buf, sizeof buf, &l1);
	tpm2_start_policy_session(&t, &s);
	tpm2_activate_credential(&t, 0x80000001, 0x80000002, 0x03000000, buf, 64, buf, 64, sig,
				 sizeof sig, &l1);
}

/* ---- 3: the CRB register page ---- */
static void fuzz_crb(const uint8_t *d, size_t n)
{
	uint8_t *page = aligned_alloc(4096, 4096), cmd[12] = { 0x80, 1, 0, 0, 0, 12, 0, 0, 1, 0x7a };
	uint8_t rsp[4096];
	uint64_t buf;
	uint32_t w[0x70 / 4] = { 0 };
	size_t rl;
	char err[200];

	memset(page, 0, 4096);
	buf = (uintptr_t)page + 0x80;
	w[0x00 / 4] = 0x82;     /* LOC_STATE: valid, locality 0 assigned */
	w[0x0c / 4] = 1;        /* LOC_STS: granted */
	w[0x30 / 4] = 1;        /* INTF_ID: CRB */
	w[0x58 / 4] = 0xf80;    /* CTRL_CMD_SIZE */
	w[0x5c / 4] = (uint32_t)buf;
	w[0x60 / 4] = (uint32_t)(buf >> 32);
	w[0x64 / 4] = 0xf80;    /* CTRL_RSP_SIZE */
	memcpy(&w[0x68 / 4], &buf, 8);
	size_t i = 0;
	for (; i < sizeof w && i < n; i++)
		((uint8_t *)w)[i] ^= d[i];
	w[0x40 / 4] = w[0x44 / 4] = w[0x4c / 4] = 0; /* nothing pending, not idle */
	memcpy(page, w, sizeof w);
	memcpy(page + sizeof w, d + i, n - i < 4096 - sizeof w ? n - i : 4096 - sizeof w);
	memset(&crb, 0, sizeof crb);
	crb_page = (uintptr_t)page;
	hostile_private_ram(NULL, 0);
	if (crb_init((uintptr_t)page + 0x40, err, sizeof err) == 0)
		crb_xfer(NULL, cmd, sizeof cmd, rsp, sizeof rsp, &rl, err, sizeof err);
	crb_page = 0;
	memset(&crb, 0, sizeof crb);
	free(page);
}

/* ---- 4: the SNP certificate table ---- */
static void fuzz_snp_certs(const uint8_t *d, size_t n)
{
	enum { PAGES = 4 };
	uint8_t *shared = calloc(PAGES, SNP_PAGE), *dst = malloc(PAGES * SNP_PAGE);
	uint32_t pages = 0;

	if (n >= 4) {
		memcpy(&pages, d, 4);
		d += 4, n -= 4;
	}
	memcpy(shared, d, n < PAGES * SNP_PAGE ? n : PAGES * SNP_PAGE);
	if (snp_certs_copy(dst, shared, pages, PAGES) > PAGES * SNP_PAGE)
		abort();
	free(shared);
	free(dst);
}

/* ---- 5: an SNP guest message response ---- */
static void fuzz_snp_msg(const uint8_t *d, size_t n)
{
	static const uint8_t key[SNP_VMPCK_SIZE];
	static uint8_t payload[SNP_PAGE];
	struct snp_msg_hdr h;
	const uint8_t *rep;
	uint8_t k[32];
	char err[160];

	snp_msg_hdr_parse(d, n, &h);
	snp_msg_open(key, d, n, &h, payload, sizeof payload);
	snp_report_rsp_parse(d, n, &rep, err, sizeof err);
	snp_key_rsp_parse(d, n, k, err, sizeof err);
}

void fuzz_ghcb(const uint8_t *d, size_t n);
void fuzz_tis(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 9) {
	case 0: fuzz_acpi(data + 1, size - 1); break;
	case 1: fuzz_virtio(data + 1, size - 1); break;
	case 2: fuzz_tpm2(data + 1, size - 1); break;
	case 3: fuzz_crb(data + 1, size - 1); break;
	case 4: fuzz_snp_certs(data + 1, size - 1); break;
	case 5: fuzz_snp_msg(data + 1, size - 1); break;
	case 6: fuzz_ghcb(data + 1, size - 1); break;
	case 7: fuzz_tis(data + 1, size - 1); break;
	case 8: fuzz_dsdt_tpm(data + 1, size - 1); break;
	}
	return 0;
}
