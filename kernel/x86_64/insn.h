/*
 * kernel/x86_64/insn.h — a decoder for the few instructions a confidential
 * guest must emulate (kernel/x86_64/insn.c): port I/O and MMIO moves.
 *
 * In an SEV-ES/SNP guest an intercepted instruction raises #VC with only the
 * exit code; in a TDX guest an EPT violation on shared memory (MMIO) raises
 * #VE with the address but not the register or the width. Either way the
 * kernel reads the instruction at RIP and must know what it does. It decodes
 * exactly the forms our code contains (checked against the compiler's output;
 * tests/unit/test_insn_decode.c lists them) and refuses everything else with
 * a reason, so an unexpected instruction stops the kernel with a message
 * instead of being emulated wrongly.
 *
 * Intel SDM Vol. 2A §2.1 (prefixes, opcode, ModR/M, SIB, displacement,
 * immediate), §2.2.1 (REX), Tables 2-2 and 2-3 (32/64-bit ModR/M and SIB),
 * §2.2.1.6 (RIP-relative addressing); the instructions: IN, OUT (Vol. 2A),
 * MOV 88/89/8A/8B/C6/C7, MOVZX 0F B6/B7, MOVSX 0F BE/BF (Vol. 2B).
 *
 * Portable C (no x86 code): the host unit tests build it too.
 */
#ifndef LLMK_X86_INSN_H
#define LLMK_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INSN_MAX_LEN 15   /* SDM Vol. 2A §2.3.11 */
#define INSN_NO_REG 0xff

enum insn_op {
	INSN_IN = 1,     /* IN AL/AX/EAX, imm8 or DX */
	INSN_OUT,        /* OUT imm8 or DX, AL/AX/EAX */
	INSN_MMIO_READ,  /* MOV/MOVZX/MOVSX register <- memory */
	INSN_MMIO_WRITE, /* MOV memory <- register or immediate */
};

/* Register numbers: the SDM's encoding (0 RAX, 1 RCX, 2 RDX, 3 RBX, 4 RSP,
 * 5 RBP, 6 RSI, 7 RDI, 8..15 R8..R15). */
enum { INSN_RAX = 0, INSN_RCX = 1, INSN_RDX = 2, INSN_RSP = 4 };

struct insn {
	uint8_t len;      /* bytes, prefixes included */
	uint8_t op;       /* enum insn_op */
	uint8_t size;     /* bytes moved over the bus: 1, 2, 4 or 8 */
	/* The register operand: the source of OUT and MMIO writes, the
	 * destination of IN and MMIO reads (INSN_NO_REG: an immediate source). */
	uint8_t reg;
	uint8_t reg_size; /* the register's width written or read: 1, 2, 4, 8 */
	bool high8;       /* AH, CH, DH, BH (a byte register, no REX prefix) */
	bool sign_extend; /* MOVSX; MOVZX zero-extends (reg_size > size) */
	uint64_t imm;     /* an immediate source, sign-extended to 64 bits */
	/* IN/OUT: the port is DX, or port */
	bool port_dx;
	uint8_t port;
	/* MMIO: the memory operand, base + index * scale + disp (+ next RIP) */
	uint8_t base, index; /* INSN_NO_REG when absent */
	uint8_t scale;
	bool rip_rel;
	int32_t disp;
	const char *why;  /* when insn_decode fails: what it could not take */
};

/* Decode the instruction in code[0..n) (n may be more than its length).
 * 0, or -LLMK_ENOTSUP (a form we do not emulate) / -LLMK_EINVAL (not a
 * valid instruction, or cut short) with in->why set. */
int insn_decode(const uint8_t *code, size_t n, struct insn *in);

/* The memory operand's linear address, given the registers at the fault
 * (gpr[INSN_RSP] the interrupted RSP) and the instruction's own RIP. */
uint64_t insn_mem_addr(const struct insn *in, const uint64_t gpr[16], uint64_t rip);

/* What an OUT or an MMIO write sends: size bytes, zero-extended. */
uint64_t insn_src_value(const struct insn *in, const uint64_t gpr[16]);

/* Put what an IN or an MMIO read got (size bytes) into the destination as
 * the hardware would: 8- and 16-bit writes keep the register's other bits,
 * 32-bit writes clear bits 63:32 (SDM Vol. 1 §3.4.1.1), MOVZX/MOVSX extend. */
void insn_dst_write(const struct insn *in, uint64_t gpr[16], uint64_t val);

#endif
