/*
 * drivers/acpi.c — walk the ACPI tables the firmware left (ACPI 6.5 §5.2).
 *
 * Tables are read in place (identity-mapped ACPI reclaim/NVS memory); every
 * one is checked against its length and checksum before it is believed.
 * Fields are read with memcpy: ACPI structures are byte-packed.
 */
#include "../kernel/kernel.h"
#include "../kernel/arch.h"
#include "acpi.h"

#define MAX_TABLES 64

struct sdt_header { /* ACPI 6.5 §5.2.6 */
	char sig[4];
	uint32_t length;
	uint8_t revision, checksum;
	char oem[6], oem_table[8];
	uint32_t oem_rev, creator, creator_rev;
} __attribute__((packed));
_Static_assert(sizeof(struct sdt_header) == 36, "ACPI 6.5 Table 5.4");

struct gas { /* ACPI 6.5 §5.2.3.2 Generic Address Structure */
	uint8_t space, bit_width, bit_offset, access_size;
	uint64_t addr;
} __attribute__((packed));
_Static_assert(sizeof(struct gas) == 12, "ACPI 6.5 Table 5.1");
enum { GAS_MEMORY = 0, GAS_IO = 1 };

/* FADT field offsets, ACPI 6.5 §5.2.9 Table 5.9. */
enum {
	FADT_DSDT = 40, FADT_PM1A_CNT = 64, FADT_PM1B_CNT = 68, FADT_PM_TMR = 76,
	FADT_PM1_CNT_LEN = 89, FADT_PM_TMR_LEN = 91, FADT_FLAGS = 112, FADT_RESET_REG = 116,
	FADT_RESET_VALUE = 128, FADT_X_DSDT = 140, FADT_X_PM1A_CNT = 172,
	FADT_X_PM1B_CNT = 184, FADT_X_PM_TMR = 208,
};
#define FADT_TMR_VAL_EXT (1u << 8)
#define FADT_RESET_REG_SUP (1u << 10)
/* ACPI 6.5 §4.8.3.2.1 PM1 control register: SLP_TYPx bits 10-12, SLP_EN bit 13. */
#define PM1_SLP_TYP_SHIFT 10
#define PM1_SLP_TYP_MASK (7u << 10)
#define PM1_SLP_EN (1u << 13)

static struct {
	const struct sdt_header *tables[MAX_TABLES];
	int n;
	const uint8_t *fadt;
	struct gas pm_tmr, pm1a_cnt, pm1b_cnt, reset_reg;
	uint32_t pm_tmr_mask;
	uint8_t reset_value;
	bool have_reset;
	uint8_t s5_typa, s5_typb;
	bool have_s5;
} acpi;

static bool checksum_ok(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (uint32_t i = 0; i < len; i++)
		sum += b[i];
	return sum == 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static const struct sdt_header *table_at(uint64_t addr)
{
	const struct sdt_header *h = (const void *)(uintptr_t)addr;

	if (!addr || h->length < sizeof *h || h->length > (64u << 20))
		return NULL;
	return checksum_ok(h, h->length) ? h : NULL;
}

const void *acpi_table(const char sig[4], int n)
{
	for (int i = 0; i < acpi.n; i++)
		if (!memcmp(acpi.tables[i]->sig, sig, 4) && n-- == 0)
			return acpi.tables[i];
	return NULL;
}

static uint32_t gas_read(const struct gas *g, int bytes)
{
	if (g->space == GAS_IO)
		return arch_io_in((uint16_t)g->addr, bytes);
	if (bytes == 1)
		return mmio_read8(g->addr);
	if (bytes == 2)
		return mmio_read16(g->addr);
	return mmio_read32(g->addr);
}

static void gas_write(const struct gas *g, uint32_t v, int bytes)
{
	if (g->space == GAS_IO)
		arch_io_out((uint16_t)g->addr, v, bytes);
	else if (bytes == 1)
		mmio_write8(g->addr, (uint8_t)v);
	else if (bytes == 2)
		mmio_write16(g->addr, (uint16_t)v);
	else
		mmio_write32(g->addr, v);
}

/* A FADT register: the 64-bit X_ field (a GAS) when the table is long enough
 * and it is set, else the legacy 32-bit port number when the table holds it
 * (a short table's fields are absent: ACPI 6.5 §5.2.9, the FADT's length
 * says which fields exist). */
static struct gas fadt_reg(const uint8_t *f, uint32_t len, uint32_t x_off, uint32_t legacy_off)
{
	struct gas g = { 0 };

	if (len >= x_off + 12)
		memcpy(&g, f + x_off, sizeof g);
	if (!g.addr && len >= legacy_off + 4) {
		g.space = GAS_IO;
		g.addr = rd32(f + legacy_off);
	}
	return g;
}

/* AML package element (ACPI 6.5 §20.2.3): ZeroOp, OneOp, BytePrefix n. */
static int aml_small_int(const uint8_t *p, const uint8_t *end, uint8_t *out)
{
	if (p >= end)
		return -1;
	if (*p == 0x00 || *p == 0x01) {
		*out = *p;
		return 1;
	}
	if (*p == 0x0a && p + 1 < end) {
		*out = p[1];
		return 2;
	}
	return -1;
}

/*
 * Find "Name(_S5_, Package(){SLP_TYPa, SLP_TYPb, ...})" in the DSDT
 * (ACPI 6.5 §7.4.2.5): NameOp 0x08, "_S5_", PackageOp 0x12, PkgLength
 * (1-4 bytes, §20.2.4), NumElements, then the elements.
 */
static void find_s5(const struct sdt_header *dsdt)
{
	const uint8_t *b = (const uint8_t *)dsdt + sizeof *dsdt;
	const uint8_t *end = (const uint8_t *)dsdt + dsdt->length;

	for (const uint8_t *p = b + 1; p + 8 < end; p++) {
		const uint8_t *q;
		int k;

		bool named = p[-1] == 0x08 || (p[-1] == '\\' && p >= b + 2 && p[-2] == 0x08);

		if (!named || memcmp(p, "_S5_", 4))
			continue;
		q = p + 4;
		if (*q++ != 0x12)
			continue;
		q += 1 + (*q >> 6); /* PkgLength */
		q++;                /* NumElements */
		if ((k = aml_small_int(q, end, &acpi.s5_typa)) < 0)
			continue;
		if (aml_small_int(q + k, end, &acpi.s5_typb) < 0)
			acpi.s5_typb = acpi.s5_typa;
		acpi.have_s5 = true;
		return;
	}
}

static void parse_fadt(const uint8_t *f)
{
	uint32_t len = ((const struct sdt_header *)f)->length;
	uint32_t flags = len >= FADT_FLAGS + 4 ? rd32(f + FADT_FLAGS) : 0;
	uint64_t dsdt = len >= FADT_X_DSDT + 8 ? rd64(f + FADT_X_DSDT) : 0;
	const struct sdt_header *d;

	acpi.fadt = f;
	acpi.pm_tmr = fadt_reg(f, len, FADT_X_PM_TMR, FADT_PM_TMR);
	if (acpi.pm_tmr.addr && len > FADT_PM_TMR_LEN && f[FADT_PM_TMR_LEN] == 4)
		acpi.pm_tmr_mask = (flags & FADT_TMR_VAL_EXT) ? 0xffffffffu : 0xffffffu;
	acpi.pm1a_cnt = fadt_reg(f, len, FADT_X_PM1A_CNT, FADT_PM1A_CNT);
	acpi.pm1b_cnt = fadt_reg(f, len, FADT_X_PM1B_CNT, FADT_PM1B_CNT);
	if ((flags & FADT_RESET_REG_SUP) && len >= FADT_RESET_VALUE + 1) {
		memcpy(&acpi.reset_reg, f + FADT_RESET_REG, sizeof acpi.reset_reg);
		acpi.reset_value = f[FADT_RESET_VALUE];
		acpi.have_reset = acpi.reset_reg.addr != 0;
	}
	if (!dsdt && len >= FADT_DSDT + 4)
		dsdt = rd32(f + FADT_DSDT);
	if ((d = table_at(dsdt)) != NULL) {
		if (acpi.n < MAX_TABLES)
			acpi.tables[acpi.n++] = d;
		find_s5(d);
	}
}

int acpi_init(uint64_t rsdp_addr)
{
	const uint8_t *rsdp = (const void *)(uintptr_t)rsdp_addr;
	const struct sdt_header *root;
	int entry_size;

	/* ACPI 6.5 §5.2.5.3: "RSD PTR ", checksum over the first 20 bytes,
	 * revision >= 2 adds the XSDT address and an extended checksum. */
	if (!rsdp || memcmp(rsdp, "RSD PTR ", 8) || !checksum_ok(rsdp, 20))
		return -LLMK_ENOENT;
	if (rsdp[15] >= 2 && checksum_ok(rsdp, rd32(rsdp + 20)) && rd64(rsdp + 24)) {
		root = table_at(rd64(rsdp + 24));
		entry_size = 8;
	} else {
		root = table_at(rd32(rsdp + 16));
		entry_size = 4;
	}
	if (!root)
		return -LLMK_EFORMAT;
	for (uint32_t off = sizeof *root; off + entry_size <= root->length &&
					  acpi.n < MAX_TABLES; off += entry_size) {
		const uint8_t *e = (const uint8_t *)root + off;
		const struct sdt_header *t = table_at(entry_size == 8 ? rd64(e) : rd32(e));
		if (t)
			acpi.tables[acpi.n++] = t;
	}
	if (acpi_table("FACP", 0))
		parse_fadt(acpi_table("FACP", 0));
	return 0;
}

int acpi_describe(char *buf, size_t cap)
{
	return plat_snprintf(buf, cap, "%d tables; PM timer %s%s %#llx; S5 SLP_TYP %u (%s); reset %s",
			     acpi.n, acpi.pm_tmr_mask == 0xffffffffu ? "32-bit" :
				     acpi.pm_tmr_mask ? "24-bit" : "none",
			     acpi.pm_tmr.space == GAS_IO ? " port" : " mmio",
			     (unsigned long long)acpi.pm_tmr.addr, acpi.s5_typa,
			     acpi.have_s5 ? "DSDT \\_S5" : "q35 default",
			     acpi.have_reset ? "register" : "port 0xcf9");
}

uint32_t acpi_pm_timer_mask(void)
{
	return acpi.pm_tmr_mask;
}

uint32_t acpi_pm_timer_read(void)
{
	return gas_read(&acpi.pm_tmr, 4) & acpi.pm_tmr_mask;
}

/* ACPI 6.5 §5.2.6 / PCI Firmware 3.3 §4.1.2 MCFG: 8 reserved bytes, then
 * 16-byte allocation entries. */
int acpi_ecam(int i, struct acpi_ecam *out)
{
	const struct sdt_header *m = acpi_table("MCFG", 0);
	uint32_t off = sizeof *m + 8 + 16 * (uint32_t)i;
	const uint8_t *e;

	if (!m || i < 0 || off + 16 > m->length)
		return -LLMK_ENOENT;
	e = (const uint8_t *)m + off;
	out->base = rd64(e);
	memcpy(&out->segment, e + 8, 2);
	out->bus_start = e[10];
	out->bus_end = e[11];
	return 0;
}

/* ACPI 6.5 §5.2.12 MADT: one processor entry's flags and firmware id:
 * Local APIC (type 0: APIC id at 3), x2APIC (type 9: id at 4), GICC
 * (type 0xb: MPIDR at 68). Flags bit 0 enabled, bit 1 online-capable.
 * Returns false for other entry types. */
static bool madt_cpu(const uint8_t *e, uint32_t *flags, uint64_t *id)
{
	if (e[0] == 0 && e[1] >= 8) {
		*flags = rd32(e + 4);
		*id = e[3];
	} else if (e[0] == 9 && e[1] >= 16) {
		*flags = rd32(e + 8);
		*id = rd32(e + 4);
	} else if (e[0] == 0xb && e[1] >= 76) {
		*flags = rd32(e + 12);
		*id = rd64(e + 68);
	} else if (e[0] == 0xb && e[1] >= 16) {
		*flags = rd32(e + 12);
		*id = ~0ull;
	} else {
		return false;
	}
	return true;
}

/* Walk the MADT's processor entries; count those with any of the flags in
 * want, storing up to max of their ids. */
static int madt_cpus(uint32_t want, uint64_t *ids, int max)
{
	const struct sdt_header *m = acpi_table("APIC", 0);
	int n = 0;

	if (!m)
		return 0;
	for (uint32_t off = sizeof *m + 8; off + 2 <= m->length;) {
		const uint8_t *e = (const uint8_t *)m + off;
		uint32_t flags;
		uint64_t id;

		if (e[1] < 2 || off + e[1] > m->length)
			break;
		if (madt_cpu(e, &flags, &id) && (flags & want)) {
			if (n < max)
				ids[n] = id;
			n++;
		}
		off += e[1];
	}
	return n;
}

/* Enabled (or online-capable) processors, at least the one running this. */
int acpi_cpu_count(void)
{
	int n = madt_cpus(3, NULL, 0);

	return n ? n : 1;
}

int acpi_cpu_ids(uint64_t *ids, int max)
{
	return madt_cpus(1, ids, max);
}

/* Microsoft SPCR (rev 2+): interface type at 36, base address GAS at 40.
 * Types: 0 full 16550, 1 16550 subset, 0x12 16550-compatible, 3 PL011,
 * 0xe SBSA generic UART (a PL011 subset). */
int acpi_spcr(struct acpi_uart *out)
{
	const uint8_t *s = acpi_table("SPCR", 0);
	struct gas g;

	if (!s || ((const struct sdt_header *)s)->length < 52)
		return -LLMK_ENOENT;
	memcpy(&g, s + 40, sizeof g);
	switch (s[36]) {
	case 0x00: case 0x01: case 0x12:
		out->type = ACPI_UART_16550;
		break;
	case 0x03: case 0x0e:
		out->type = ACPI_UART_PL011;
		break;
	default:
		out->type = ACPI_UART_OTHER;
	}
	out->io = g.space == GAS_IO;
	out->addr = g.addr;
	return 0;
}

/* TCG ACPI Specification 1.3 §8.3 TPM2: platform class u16 at 36, reserved
 * u16, address of the CRB control area u64 at 40, start method u32 at 48,
 * start-method parameters from 52 (LAML/LASA may follow). */
int acpi_tpm2(struct acpi_tpm2 *out)
{
	const uint8_t *t = acpi_table("TPM2", 0);

	if (!t || ((const struct sdt_header *)t)->length < 52)
		return -LLMK_ENOENT;
	out->control_area = rd64(t + 40);
	out->start_method = rd32(t + 48);
	return 0;
}

/*
 * ACPI 6.5 §7.4.2 / §16.1.7: enter S5 by writing SLP_TYPa|SLP_EN to PM1a_CNT
 * (and SLP_TYPb to PM1b_CNT). The values come from the DSDT's \_S5 package;
 * without one we use 0, which is what QEMU's q35 (ICH9) DSDT declares and
 * what its PM1 control emulation treats as soft-off.
 */
int acpi_poweroff(void)
{
	uint32_t v;

	if (!acpi.fadt || !acpi.pm1a_cnt.addr)
		return -LLMK_ENOTSUP;
	if (!acpi.have_s5)
		acpi.s5_typa = acpi.s5_typb = 0;
	if (acpi.pm1b_cnt.addr) {
		v = gas_read(&acpi.pm1b_cnt, 2) & ~PM1_SLP_TYP_MASK;
		gas_write(&acpi.pm1b_cnt, v | (uint32_t)acpi.s5_typb << PM1_SLP_TYP_SHIFT |
						  PM1_SLP_EN, 2);
	}
	v = gas_read(&acpi.pm1a_cnt, 2) & ~PM1_SLP_TYP_MASK;
	gas_write(&acpi.pm1a_cnt, v | (uint32_t)acpi.s5_typa << PM1_SLP_TYP_SHIFT | PM1_SLP_EN, 2);
	for (uint64_t t = plat_time_ns(); plat_time_ns() - t < 1000000000ull;)
		arch_relax();
	return -LLMK_EIO;
}

/* ACPI 6.5 §4.8.3.6 reset register: write RESET_VALUE, byte-wide. */
void acpi_reset(void)
{
	if (acpi.have_reset &&
	    (acpi.reset_reg.space == GAS_IO || acpi.reset_reg.space == GAS_MEMORY))
		gas_write(&acpi.reset_reg, acpi.reset_value, 1);
}

/* AML PkgLength (ACPI 6.5 §20.2.4) at p: the length it encodes (which
 * counts its own bytes) and, in *nb, how many bytes it takes. -1 past end. */
static long aml_pkglen(const uint8_t *p, const uint8_t *end, int *nb)
{
	if (p >= end)
		return -1;
	int extra = *p >> 6;
	if (p + 1 + extra > end)
		return -1;
	long len = extra ? (*p & 0x0f) : (*p & 0x3f);
	for (int i = 0; i < extra; i++)
		len |= (long)p[1 + i] << (4 + 8 * i);
	*nb = 1 + extra;
	return len;
}

/*
 * The TPM's Device in the DSDT: Name(_HID, "MSFT0101") (NameOp 0x08, "_HID",
 * StringPrefix 0x0D, the string, NUL) inside a DeviceOp (0x5B 0x82,
 * PkgLength, name) whose PkgLength covers it; in that device's extent,
 * Name(_CRS, Buffer(){...}) (BufferOp 0x11, PkgLength, BufferSize, bytes)
 * holding a Memory32Fixed descriptor (ACPI 6.5 §6.4.3.4: large item 0x86,
 * length 9: information, base u32, length u32). Everything is bounded by
 * the table, the device and the buffer; the caller checks the address.
 */
int acpi_tpm_mmio(uint64_t *base, uint32_t *len)
{
	static const uint8_t hid[] = { 0x08, '_', 'H', 'I', 'D', 0x0d,
				       'M', 'S', 'F', 'T', '0', '1', '0', '1', 0x00 };
	static const uint8_t crs[] = { 0x08, '_', 'C', 'R', 'S', 0x11 };
	const struct sdt_header *d = acpi_table("DSDT", 0);
	if (!d)
		return -LLMK_ENOENT;
	const uint8_t *b = (const uint8_t *)d + sizeof *d, *end = (const uint8_t *)d + d->length;
	const uint8_t *h = NULL;
	for (const uint8_t *p = b; p + sizeof hid <= end; p++)
		if (!memcmp(p, hid, sizeof hid)) {
			h = p;
			break;
		}
	if (!h)
		return -LLMK_ENOENT;
	/* the enclosing device: the nearest DeviceOp before _HID whose package
	 * reaches past it (a name path of a few segments lies between) */
	const uint8_t *dev_end = NULL;
	for (size_t back = 2; back <= 64 && back <= (size_t)(h - b) && !dev_end; back++) {
		const uint8_t *p = h - back;
		int nb;
		long l;
		if (p[0] != 0x5b || p[1] != 0x82 || (l = aml_pkglen(p + 2, end, &nb)) < nb)
			continue;
		if (p + 2 + l > h + sizeof hid && p + 2 + l <= end)
			dev_end = p + 2 + l;
	}
	if (!dev_end)
		return -LLMK_EFORMAT;
	for (const uint8_t *p = h + sizeof hid; p + sizeof crs < dev_end; p++) {
		if (memcmp(p, crs, sizeof crs))
			continue;
		const uint8_t *q = p + sizeof crs;
		int nb;
		long l = aml_pkglen(q, dev_end, &nb);
		if (l < nb || q + l > dev_end)
			return -LLMK_EFORMAT;
		const uint8_t *bend = q + l;
		q += nb;
		/* BufferSize: BytePrefix, WordPrefix or DWordPrefix and its value */
		int isz = q < bend ? (*q == 0x0a ? 1 : *q == 0x0b ? 2 : *q == 0x0c ? 4 : -1) : -1;
		if (isz < 0 || q + 1 + isz > bend)
			return -LLMK_EFORMAT;
		q += 1 + isz;
		/* the resource descriptors, up to the end tag */
		while (q < bend) {
			if (*q & 0x80) {
				if (q + 3 > bend)
					return -LLMK_EFORMAT;
				uint16_t n = (uint16_t)(q[1] | q[2] << 8);
				if (q + 3 + n > bend)
					return -LLMK_EFORMAT;
				if (*q == 0x86 && n >= 9) {
					*base = rd32(q + 4);
					*len = rd32(q + 8);
					return 0;
				}
				q += 3 + n;
			} else {
				if (((*q >> 3) & 0xf) == 0xf) /* end tag */
					break;
				q += 1 + (*q & 7);
			}
		}
		return -LLMK_ENOENT;
	}
	return -LLMK_ENOENT;
}
