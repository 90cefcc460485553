/*
 * kernel/aarch64/aarch64.h — system register access and the bits of them the
 * kernel uses (Arm ARM DDI 0487, chapter D19 "AArch64 System Register
 * Descriptions"). Registers without an assembler name in every binutils
 * (RNDR, ID_AA64ISAR*) are spelled by encoding, S<op0>_<op1>_C<n>_C<m>_<op2>.
 */
#ifndef LLMK_AARCH64_H
#define LLMK_AARCH64_H

#include <stdint.h>

#define read_sysreg(r) ({ uint64_t v__; __asm__ volatile("mrs %0, " #r : "=r"(v__)); v__; })
#define write_sysreg(r, v) __asm__ volatile("msr " #r ", %0" : : "r"((uint64_t)(v)) : "memory")
#define isb() __asm__ volatile("isb" ::: "memory")

/* ID registers (DDI 0487 D19.2). */
#define ID_AA64ISAR0_EL1 S3_0_C0_C6_0
#define ID_AA64ISAR1_EL1 S3_0_C0_C6_1
#define ID_AA64PFR0_EL1 S3_0_C0_C4_0
/* RNDR (DDI 0487 D19.2.132, FEAT_RNG): a random number, NZCV = 0100 on failure. */
#define RNDR_EL0 S3_3_C2_C4_0

/* CurrentEL bits 3:2. */
#define CURRENT_EL(v) (((v) >> 2) & 3)

/* CPACR_EL1.FPEN (bits 21:20) = 0b11: FP/SIMD does not trap at EL1 or EL0. */
#define CPACR_FPEN (3ull << 20)
/* CPTR_EL2.TFP (bit 10): trap FP/SIMD to EL2 when set (non-VHE layout). */
#define CPTR_EL2_TFP (1ull << 10)
/* SCTLR_ELx.A (bit 1): alignment fault checking; SA (bit 3) stack alignment. */
#define SCTLR_A (1ull << 1)

/* Field n (4 bits) of an ID register. */
static inline unsigned id_field(uint64_t reg, unsigned lsb)
{
	return (unsigned)(reg >> lsb) & 0xf;
}

void trap_init(void);
unsigned aarch64_el(void);
/* kernel/aarch64/machine.c: PSCI through the FADT's conduit. */
int psci_conduit(void);
int64_t psci_call(uint32_t fn, uint64_t a1, uint64_t a2, uint64_t a3);

#endif
