/*
 * kernel/x86_64/insn.c — decoding port I/O and MMIO moves (insn.h says
 * why and which). In 64-bit mode, in the SDM's order (Vol. 2A §2.1):
 *
 *   legacy prefixes  66 (operand size 16); 2E 36 3E 26 (segment overrides,
 *                    ignored in 64-bit mode, Vol. 1 §3.3.7.1); anything else
 *                    (F0 LOCK, F2/F3 REP, 64/65 FS/GS, 67 address size)
 *                    is refused: our code has none on these instructions
 *   REX              40-4F right before the opcode: W (64-bit operand),
 *                    R (ModR/M reg + 8), X (SIB index + 8), B (base + 8);
 *                    any REX makes byte registers 4-7 SPL..DIL, not AH..BH
 *   opcode           E4-E7, EC-EF (IN/OUT); 88 89 8A 8B C6/0 C7/0 (MOV);
 *                    0F B6 B7 (MOVZX), 0F BE BF (MOVSX)
 *   ModR/M, SIB      Tables 2-2, 2-3; mod 00 rm 101 is RIP + disp32
 *                    (§2.2.1.6), SIB base 101 with mod 00 is disp32 alone,
 *                    SIB index 100 (no REX.X) is none
 *   displacement     8 or 32 bits, sign-extended
 *   immediate        ib, iw, id (C7 with REX.W: id sign-extended)
 */
#include "insn.h"

#include "../platform.h"

static int fail(struct insn *in, int err, const char *why)
{
	in->why = why;
	return err;
}

static uint64_t mask(unsigned bytes)
{
	return bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
}

/* n bytes little-endian at c[*i], sign-extended; false if cut short. */
static bool take(const uint8_t *c, size_t n, size_t *i, unsigned bytes, int64_t *out)
{
	uint64_t v = 0;

	if (n - *i < bytes)
		return false;
	for (unsigned k = 0; k < bytes; k++)
		v |= (uint64_t)c[*i + k] << (8 * k);
	*i += bytes;
	if (bytes < 8 && (v >> (8 * bytes - 1)) & 1)
		v |= ~mask(bytes);
	*out = (int64_t)v;
	return true;
}

/* ModR/M (+ SIB + displacement) of a memory operand; *reg gets the reg field. */
static int modrm(const uint8_t *c, size_t n, size_t *i, uint8_t rex, struct insn *in,
		 uint8_t *reg)
{
	uint8_t m, mod, rm;
	int64_t d = 0;
	unsigned disp = 0;

	if (*i >= n)
		return fail(in, -LLMK_EINVAL, "instruction cut short (ModR/M)");
	m = c[(*i)++];
	mod = m >> 6;
	rm = m & 7;
	*reg = (uint8_t)(((m >> 3) & 7) | ((rex & 4) ? 8 : 0));
	if (mod == 3)
		return fail(in, -LLMK_ENOTSUP, "register operand where memory was expected");
	disp = mod == 1 ? 1 : mod == 2 ? 4 : 0;
	if (rm == 4) {
		uint8_t s, idx, b;
		if (*i >= n)
			return fail(in, -LLMK_EINVAL, "instruction cut short (SIB)");
		s = c[(*i)++];
		idx = (uint8_t)(((s >> 3) & 7) | ((rex & 2) ? 8 : 0));
		b = s & 7;
		in->scale = (uint8_t)(1u << (s >> 6));
		if (idx != 4)
			in->index = idx;
		if (b == 5 && mod == 0)
			disp = 4; /* no base, disp32 */
		else
			in->base = (uint8_t)(b | ((rex & 1) ? 8 : 0));
	} else if (rm == 5 && mod == 0) {
		in->rip_rel = true;
		disp = 4;
	} else {
		in->base = (uint8_t)(rm | ((rex & 1) ? 8 : 0));
	}
	if (disp && !take(c, n, i, disp, &d))
		return fail(in, -LLMK_EINVAL, "instruction cut short (displacement)");
	in->disp = (int32_t)d;
	return 0;
}

/* E4-E7, EC-EF: bit 1 says OUT, bit 0 a word/dword, bit 3 the port in DX. */
static int port_io(const uint8_t *c, size_t n, size_t *i, uint8_t op, bool opsize,
		   struct insn *in)
{
	in->op = (op & 2) ? INSN_OUT : INSN_IN;
	in->size = (op & 1) ? (opsize ? 2 : 4) : 1;
	in->reg = INSN_RAX;
	in->reg_size = in->size;
	in->port_dx = (op & 8) != 0;
	if (!in->port_dx) {
		if (*i >= n)
			return fail(in, -LLMK_EINVAL, "instruction cut short (port)");
		in->port = c[(*i)++];
	}
	return 0;
}

int insn_decode(const uint8_t *c, size_t n, struct insn *in)
{
	size_t i = 0;
	bool opsize = false;
	uint8_t rex = 0, op, reg = 0;
	unsigned wide;
	int64_t imm;
	int e;

	memset(in, 0, sizeof *in);
	in->reg = in->base = in->index = INSN_NO_REG;
	in->scale = 1;
	if (n > INSN_MAX_LEN)
		n = INSN_MAX_LEN;
	for (;; i++) {
		if (i >= n)
			return fail(in, -LLMK_EINVAL, "instruction cut short (prefixes)");
		if (c[i] == 0x66)
			opsize = true;
		else if (c[i] == 0x2e || c[i] == 0x36 || c[i] == 0x3e || c[i] == 0x26)
			continue;
		else if (c[i] == 0x64 || c[i] == 0x65)
			return fail(in, -LLMK_ENOTSUP, "FS/GS segment override");
		else if (c[i] == 0x67)
			return fail(in, -LLMK_ENOTSUP, "address-size prefix (32-bit addressing)");
		else if (c[i] == 0xf0)
			return fail(in, -LLMK_ENOTSUP, "LOCK prefix");
		else if (c[i] == 0xf2 || c[i] == 0xf3)
			return fail(in, -LLMK_ENOTSUP, "REP prefix");
		else
			break;
	}
	if ((c[i] & 0xf0) == 0x40) {
		rex = c[i++];
		if (i >= n)
			return fail(in, -LLMK_EINVAL, "instruction cut short (after REX)");
	}
	op = c[i++];
	/* operand size of the non-byte forms (REX.W wins over 66, §2.2.1.2) */
	wide = (rex & 8) ? 8 : opsize ? 2 : 4;

	if ((op >= 0xe4 && op <= 0xe7) || (op >= 0xec && op <= 0xef)) {
		if ((e = port_io(c, n, &i, op, opsize, in)))
			return e;
		in->len = (uint8_t)i;
		return 0;
	}
	if (op >= 0x6c && op <= 0x6f)
		return fail(in, -LLMK_ENOTSUP, "string port I/O (INS/OUTS)");

	switch (op) {
	case 0x88: /* MOV r/m8, r8 */
	case 0x89: /* MOV r/m, r */
	case 0x8a: /* MOV r8, r/m8 */
	case 0x8b: /* MOV r, r/m */
		if ((e = modrm(c, n, &i, rex, in, &reg)))
			return e;
		in->op = (op & 2) ? INSN_MMIO_READ : INSN_MMIO_WRITE;
		in->size = in->reg_size = (op & 1) ? (uint8_t)wide : 1;
		in->reg = reg;
		break;
	case 0xc6: /* MOV r/m8, imm8 */
	case 0xc7: /* MOV r/m, imm16/32 */
		if ((e = modrm(c, n, &i, rex, in, &reg)))
			return e;
		if ((reg & 7) != 0)
			return fail(in, -LLMK_ENOTSUP, "C6/C7 with a ModR/M reg field other than /0");
		in->op = INSN_MMIO_WRITE;
		in->size = (op & 1) ? (uint8_t)wide : 1;
		if (!take(c, n, &i, in->size >= 4 ? 4 : in->size, &imm))
			return fail(in, -LLMK_EINVAL, "instruction cut short (immediate)");
		in->imm = (uint64_t)imm;
		break;
	case 0x0f:
		if (i >= n)
			return fail(in, -LLMK_EINVAL, "instruction cut short (0F opcode)");
		op = c[i++];
		if (op != 0xb6 && op != 0xb7 && op != 0xbe && op != 0xbf)
			return fail(in, -LLMK_ENOTSUP, "0F opcode other than MOVZX/MOVSX");
		if ((e = modrm(c, n, &i, rex, in, &reg)))
			return e;
		in->op = INSN_MMIO_READ;
		in->size = (op & 1) ? 2 : 1;
		in->reg = reg;
		in->reg_size = (uint8_t)wide;
		in->sign_extend = op >= 0xbe;
		break;
	default:
		return fail(in, -LLMK_ENOTSUP, "opcode other than IN/OUT/MOV/MOVZX/MOVSX");
	}
	/* byte registers 4-7 are AH..BH unless a REX prefix is present (§3.4.1.1) */
	if (in->reg != INSN_NO_REG && in->reg_size == 1 && !rex && in->reg >= 4 && in->reg < 8) {
		in->high8 = true;
		in->reg -= 4;
	}
	if (in->op == INSN_MMIO_READ && in->reg == INSN_RSP && !in->high8)
		return fail(in, -LLMK_ENOTSUP, "MMIO load into RSP");
	in->len = (uint8_t)i;
	return 0;
}

uint64_t insn_mem_addr(const struct insn *in, const uint64_t gpr[16], uint64_t rip)
{
	uint64_t a = (uint64_t)(int64_t)in->disp;

	if (in->rip_rel)
		a += rip + in->len;
	if (in->base != INSN_NO_REG)
		a += gpr[in->base];
	if (in->index != INSN_NO_REG)
		a += gpr[in->index] * in->scale;
	return a;
}

uint64_t insn_src_value(const struct insn *in, const uint64_t gpr[16])
{
	uint64_t v;

	if (in->reg == INSN_NO_REG)
		v = in->imm;
	else
		v = in->high8 ? gpr[in->reg] >> 8 : gpr[in->reg];
	return v & mask(in->size);
}

void insn_dst_write(const struct insn *in, uint64_t gpr[16], uint64_t val)
{
	uint64_t v = val & mask(in->size), *r = &gpr[in->reg];

	if (in->sign_extend && ((v >> (8 * in->size - 1)) & 1))
		v |= ~mask(in->size);
	v &= mask(in->reg_size);
	if (in->reg_size == 1 && in->high8)
		*r = (*r & ~0xff00ull) | v << 8;
	else if (in->reg_size <= 2)
		*r = (*r & ~mask(in->reg_size)) | v;
	else
		*r = v; /* a 32-bit write clears bits 63:32 */
}
