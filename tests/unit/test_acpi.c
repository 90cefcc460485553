/*
 * tests/unit/test_acpi.c — drivers/acpi.c over hand-built tables in host
 * memory (ACPI 6.5 §5.2): RSDP -> XSDT -> FADT (with a DSDT holding \_S5),
 * MCFG, MADT. Register blocks are "system memory" GAS entries pointing at
 * host variables, so the S5 write and the PM timer read can be observed.
 */
#include "../../drivers/acpi.c"

#include "test.h"

/* drivers/acpi.c reaches port I/O and the spin hint through kernel/arch.h. */
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

static void seal(void *t, uint32_t len, const char sig[4])
{
	struct sdt_header *h = t;
	uint8_t sum = 0;

	memcpy(h->sig, sig, 4);
	h->length = len;
	h->revision = 2;
	h->checksum = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += ((uint8_t *)t)[i];
	h->checksum = (uint8_t)-sum;
}

static void put_gas(uint8_t *at, void *reg, uint8_t bits)
{
	struct gas g = { GAS_MEMORY, bits, 0, bits / 8 == 4 ? 3 : 2, (uintptr_t)reg };
	memcpy(at, &g, sizeof g);
}

struct tables {
	uint8_t rsdp[36];
	uint8_t xsdt[36 + 3 * 8];
	uint8_t fadt[276];
	uint8_t dsdt[36 + 16];
	uint8_t mcfg[36 + 8 + 16];
	uint8_t madt[36 + 8 + 8 + 8 + 8 + 16];
	uint16_t pm1a;
	uint32_t pm_tmr;
};

static void build(struct tables *t, const uint8_t *aml, size_t aml_len)
{
	uint64_t p;
	uint8_t sum = 0;

	memset(t, 0, sizeof *t);
	memcpy(t->dsdt + 36, aml, aml_len);
	seal(t->dsdt, (uint32_t)(36 + aml_len), "DSDT");

	put_gas(t->fadt + FADT_X_PM1A_CNT, &t->pm1a, 16);
	put_gas(t->fadt + FADT_X_PM_TMR, &t->pm_tmr, 32);
	t->fadt[FADT_PM_TMR_LEN] = 4;
	uint32_t flags = FADT_TMR_VAL_EXT;
	memcpy(t->fadt + FADT_FLAGS, &flags, 4);
	p = (uintptr_t)t->dsdt;
	memcpy(t->fadt + FADT_X_DSDT, &p, 8);
	seal(t->fadt, sizeof t->fadt, "FACP");

	p = 0xb0000000;
	memcpy(t->mcfg + 44, &p, 8);
	t->mcfg[44 + 10] = 0;
	t->mcfg[44 + 11] = 0xff;
	seal(t->mcfg, sizeof t->mcfg, "MCFG");

	/* Local APIC enabled, Local APIC disabled, Local APIC online-capable,
	 * x2APIC enabled: 3 CPUs. */
	uint8_t *e = t->madt + 44;
	uint8_t lapic[3][8] = { { 0, 8, 0, 0, 1 }, { 0, 8, 1, 1, 0 }, { 0, 8, 2, 2, 2 } };
	memcpy(e, lapic, sizeof lapic);
	e += sizeof lapic;
	e[0] = 9;
	e[1] = 16;
	e[4] = 0x20;
	e[8] = 1;
	seal(t->madt, sizeof t->madt, "APIC");

	uint64_t ptrs[3] = { (uintptr_t)t->fadt, (uintptr_t)t->mcfg, (uintptr_t)t->madt };
	memcpy(t->xsdt + 36, ptrs, sizeof ptrs);
	seal(t->xsdt, sizeof t->xsdt, "XSDT");

	memcpy(t->rsdp, "RSD PTR ", 8);
	t->rsdp[15] = 2;
	uint32_t len = 36;
	memcpy(t->rsdp + 20, &len, 4);
	p = (uintptr_t)t->xsdt;
	memcpy(t->rsdp + 24, &p, 8);
	for (int i = 0; i < 20; i++)
		sum += t->rsdp[i];
	t->rsdp[8] = (uint8_t)-sum;
	sum = 0;
	for (int i = 0; i < 36; i++)
		sum += t->rsdp[i];
	t->rsdp[32] = (uint8_t)-sum;
	memset(&acpi, 0, sizeof acpi);
}

/* Name(_S5_, Package(4){5, 7, 0, 0}) with BytePrefix elements. */
static const uint8_t s5_bytes[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x0a, 0x04,
				    0x0a, 0x05, 0x0a, 0x07, 0x00, 0x00 };

TEST(acpi_walks_xsdt_fadt_mcfg_madt)
{
	static struct tables t;
	struct acpi_ecam ec = { 0 };

	build(&t, s5_bytes, sizeof s5_bytes);
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	CHECK(acpi_table("FACP", 0) == (void *)t.fadt);
	CHECK(acpi_table("DSDT", 0) == (void *)t.dsdt);
	CHECK(acpi_table("SPCR", 0) == NULL);
	CHECK_EQ_INT(acpi_ecam(0, &ec), 0);
	CHECK_EQ_INT(ec.base, 0xb0000000);
	CHECK_EQ_INT(ec.bus_end, 0xff);
	CHECK_EQ_INT(acpi_ecam(1, &ec), -LLMK_ENOENT);
	CHECK_EQ_INT(acpi_cpu_count(), 3);
	/* Only enabled CPUs are started: APIC id 0 and x2APIC id 0x20. */
	uint64_t ids[4] = { 0 };
	CHECK_EQ_INT(acpi_cpu_ids(ids, 4), 2);
	CHECK_EQ_INT(ids[0], 0);
	CHECK_EQ_INT(ids[1], 0x20);
	CHECK_EQ_INT(acpi_cpu_ids(ids, 1), 2);
	CHECK_EQ_INT(acpi_pm_timer_mask(), 0xffffffffu);
	t.pm_tmr = 123456;
	CHECK_EQ_INT(acpi_pm_timer_read(), 123456);
}

TEST(acpi_poweroff_writes_s5_from_dsdt)
{
	static struct tables t;

	build(&t, s5_bytes, sizeof s5_bytes);
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	t.pm1a = 0x0001; /* SCI_EN stays */
	CHECK_EQ_INT(acpi_poweroff(), -LLMK_EIO); /* nobody powers the host off */
	CHECK_EQ_INT(t.pm1a, 0x0001 | 5 << 10 | 1 << 13);
}

TEST(acpi_s5_root_prefix_and_zero_op)
{
	static struct tables t;
	static const uint8_t aml[] = { 0x08, '\\', '_', 'S', '5', '_', 0x12, 0x06, 0x04,
				       0x00, 0x00, 0x00, 0x00 };

	build(&t, aml, sizeof aml);
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	CHECK(acpi.have_s5);
	CHECK_EQ_INT(acpi.s5_typa, 0);
}

TEST(acpi_rejects_bad_checksums)
{
	static struct tables t;

	build(&t, s5_bytes, sizeof s5_bytes);
	t.rsdp[9] ^= 1;
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), -LLMK_ENOENT);
	CHECK_EQ_INT(acpi_init(0), -LLMK_ENOENT);

	build(&t, s5_bytes, sizeof s5_bytes);
	t.xsdt[40] ^= 1; /* XSDT body: checksum no longer adds up */
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), -LLMK_EFORMAT);

	build(&t, s5_bytes, sizeof s5_bytes);
	t.mcfg[50] ^= 1; /* one bad table is skipped, the rest stand */
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	CHECK(acpi_table("MCFG", 0) == NULL);
	CHECK(acpi_table("APIC", 0) != NULL);
}

/* TCG ACPI Specification §8.3: QEMU's TPM2 table for tpm-crb (control area
 * 0xfed40040, start method 7), then one too short to hold those fields. */
TEST(acpi_tpm2_gives_the_crb_control_area_and_start_method)
{
	static struct tables t;
	static uint8_t tpm2[76], short_tpm2[48];
	struct acpi_tpm2 out = {0};

	build(&t, s5_bytes, sizeof s5_bytes);
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	CHECK_EQ_INT(acpi_tpm2(&out), -LLMK_ENOENT);
	uint64_t ctrl = 0xfed40040;
	uint32_t start = 7;
	memcpy(tpm2 + 40, &ctrl, 8);
	memcpy(tpm2 + 48, &start, 4);
	seal(tpm2, sizeof tpm2, "TPM2");
	acpi.tables[acpi.n++] = (const void *)tpm2;
	CHECK_EQ_INT(acpi_tpm2(&out), 0);
	CHECK_EQ_INT(out.control_area, 0xfed40040);
	CHECK_EQ_INT(out.start_method, ACPI_TPM2_START_CRB);

	build(&t, s5_bytes, sizeof s5_bytes);
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	seal(short_tpm2, sizeof short_tpm2, "TPM2");
	acpi.tables[acpi.n++] = (const void *)short_tpm2;
	CHECK_EQ_INT(acpi_tpm2(&out), -LLMK_ENOENT);
}

/* A checksummed FACP of 36 bytes (the header alone) lying in memory whose
 * next bytes look like FADT fields: PM1a at 64, the PM timer at 76 with
 * length 4 at 91. None of them is the table's: none
 * may be taken (under ASan, reading them is a heap overflow). */
TEST(acpi_fadt_fields_past_a_short_tables_length_are_not_read)
{
	static struct tables t;
	static uint8_t mem[276];

	build(&t, s5_bytes, sizeof s5_bytes);
	memset(mem, 0, sizeof mem);
	uint32_t port = 0x604, tmr = 0x608;
	memcpy(mem + FADT_PM1A_CNT, &port, 4);
	memcpy(mem + FADT_PM_TMR, &tmr, 4);
	mem[FADT_PM_TMR_LEN] = 4;
	seal(mem, 36, "FACP");
	uint64_t p = (uintptr_t)mem;
	memcpy(t.xsdt + 36, &p, 8);
	seal(t.xsdt, sizeof t.xsdt, "XSDT");
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	CHECK(acpi_table("FACP", 0) == (void *)mem);
	CHECK_EQ_INT(acpi_pm_timer_mask(), 0);
	CHECK_EQ_INT(acpi.pm1a_cnt.addr, 0);
	CHECK_EQ_INT(acpi_poweroff(), -LLMK_ENOTSUP);
}

/* Device(TPM0){Name(_HID,"MSFT0101") Name(_STR,"TPM 2.0 Device") Name(_UID,0)
 * Name(_CRS, ResourceTemplate(){Memory32Fixed(ReadWrite, base, 0x5000)})}
 * in Scope(\_SB), as QEMU's virt writes it for tpm-tis-device; into aml,
 * its length returned. crs_len_adj changes the _CRS PkgLength, desc_len the
 * Memory32Fixed's length field; the device's PkgLength covers what is there. */
static size_t tpm_dsdt(uint8_t *aml, uint32_t base, int crs_len_adj, uint16_t desc_len)
{
	static const uint8_t head[] = { 0x08, '_', 'H', 'I', 'D', 0x0d, 'M', 'S', 'F', 'T', '0', '1',
					'0', '1', 0x00, 0x08, '_', 'S', 'T', 'R', 0x0d, 'T', 'P', 'M',
					' ', '2', '.', '0', ' ', 'D', 'e', 'v', 'i', 'c', 'e', 0x00,
					0x08, '_', 'U', 'I', 'D', 0x00 };
	uint8_t body[128], *q = body;
	memcpy(q, "TPM0", 4);
	q += 4;
	memcpy(q, head, sizeof head);
	q += sizeof head;
	uint8_t crs[] = { 0x08, '_', 'C', 'R', 'S', 0x11, (uint8_t)(1 + 2 + 14 + crs_len_adj), 0x0a,
			  14, 0x86, (uint8_t)desc_len, (uint8_t)(desc_len >> 8), 0x01,
			  (uint8_t)base, (uint8_t)(base >> 8), (uint8_t)(base >> 16),
			  (uint8_t)(base >> 24), 0x00, 0x50, 0x00, 0x00, 0x79, 0x00 };
	memcpy(q, crs, sizeof crs);
	q += sizeof crs;
	size_t blen = (size_t)(q - body), n = 0;
	/* Scope(\_SB_) { Device(...) }: PkgLengths of two bytes */
	size_t dev_len = 2 + blen, scope_len = 2 + 5 + 2 + dev_len;
	aml[n++] = 0x10;
	aml[n++] = (uint8_t)(0x40 | (scope_len & 0x0f));
	aml[n++] = (uint8_t)(scope_len >> 4);
	memcpy(aml + n, "\\_SB_", 5);
	n += 5;
	aml[n++] = 0x5b;
	aml[n++] = 0x82;
	aml[n++] = (uint8_t)(0x40 | (dev_len & 0x0f));
	aml[n++] = (uint8_t)(dev_len >> 4);
	memcpy(aml + n, body, blen);
	return n + blen;
}

/* TCG ACPI §8.1: a FIFO TPM's registers are its device's _CRS; a DSDT with
 * a _CRS longer than its device, a descriptor longer than its buffer, a
 * _HID outside any device, or none, gives no address. */
TEST(acpi_tpm_mmio_finds_the_tpm_devices_memory32fixed)
{
	static struct tables t;
	static uint8_t dsdt[36 + 256];
	uint8_t aml[200];
	uint64_t base = 0;
	uint32_t len = 0;

	build(&t, s5_bytes, sizeof s5_bytes);
	CHECK_EQ_INT(acpi_init((uintptr_t)t.rsdp), 0);
	CHECK_EQ_INT(acpi_tpm_mmio(&base, &len), -LLMK_ENOENT); /* no TPM device */
	int slot = -1;
	for (int i = 0; i < acpi.n; i++)
		if (!memcmp(acpi.tables[i]->sig, "DSDT", 4))
			slot = i;
	CHECK(slot >= 0);
	if (slot < 0)
		return;
	struct { int crs_adj; uint16_t desc_len; int want; } cases[] = {
		{ 0, 9, 0 }, { 40, 9, -LLMK_EFORMAT }, { 0, 200, -LLMK_EFORMAT },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t n = tpm_dsdt(aml, 0x0c000000, cases[c].crs_adj, cases[c].desc_len);
		memset(dsdt, 0, sizeof dsdt);
		memcpy(dsdt + 36, aml, n);
		seal(dsdt, (uint32_t)(36 + n), "DSDT");
		acpi.tables[slot] = (const void *)dsdt;
		base = len = 0;
		CHECK_EQ_INT(acpi_tpm_mmio(&base, &len), cases[c].want);
		if (cases[c].want == 0) {
			CHECK_EQ_INT(base, 0x0c000000);
			CHECK_EQ_INT(len, 0x5000);
		}
	}
	/* the _HID alone, in no device */
	size_t n = tpm_dsdt(aml, 0x0c000000, 0, 9);
	memset(dsdt, 0, sizeof dsdt);
	memcpy(dsdt + 36, aml + 15, n - 15);
	seal(dsdt, (uint32_t)(36 + n - 15), "DSDT");
	CHECK_EQ_INT(acpi_tpm_mmio(&base, &len), -LLMK_EFORMAT);
	/* the device cut short by the table's end */
	memset(dsdt, 0, sizeof dsdt);
	memcpy(dsdt + 36, aml, n - 6);
	seal(dsdt, (uint32_t)(36 + n - 6), "DSDT");
	CHECK(acpi_tpm_mmio(&base, &len) != 0);
}
