/*
 * kernel/kernel.h — declarations shared inside kernel/ and drivers/ (not part
 * of the platform seam; llm/ and shell/ never include it).
 */
#ifndef LLMK_KERNEL_H
#define LLMK_KERNEL_H

#include "platform.h"
#include "boot_info.h"

#define PAGE_SIZE 4096ull
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((uint64_t)(a) - 1))

extern const struct boot_info *kernel_boot; /* what boot/ collected */

/* kernel/mem.c */
void mem_init(const struct boot_info *bi);
/* Whether [addr, addr + len) overlaps memory the UEFI map describes as
 * anything but MMIO (RAM of any type, reserved ranges included): where a
 * device's registers must never be. True when the range wraps. */
bool mem_is_ram(uint64_t addr, uint64_t len);

/* kernel/time.c */
void time_init(uint64_t counter_hz);
uint64_t time_counter_hz(void);
uint64_t time_counter_to_ns(uint64_t c);

/* kernel/smp.c: the worker pool behind plat_parallel */
#define SMP_MAX_CPUS 64
void smp_init(void); /* after time_init: starts the other CPUs (arch_start_cpus) */
/* An AP's life once its arch start-up is done: join the pool as worker cpu. */
__attribute__((noreturn)) void smp_ap_main(int cpu);
/* For arch_start_cpus: wait up to ns for worker cpu to join the pool. */
bool smp_ap_wait(int cpu, uint64_t ns);

/* kernel/attest.c: copy the firmware's event log, find the vTPM, say what
 * was found (once, after the devices; plat_attest_* call it too). */
void attest_init(void);

/* kernel/console.c */
void console_puts(const char *s);

/*
 * Device registers by address. On x86_64 each access is one MOV of a fixed
 * form (88/89/8A/8B, C6/C7 for constants), written as inline assembly as
 * Linux's readl/writel are: in a confidential guest an MMIO access traps
 * and kernel/x86_64/insn.c decodes it, so the compiler must not fold one
 * into another instruction (a CMP or TEST with a memory operand).
 */
#if defined(__x86_64__)
#define MMIO_REF(t, a) (*(volatile t *)(uintptr_t)(a))
static inline uint8_t mmio_read8(uint64_t a)
{
	uint8_t v;
	__asm__ volatile("movb %1, %0" : "=q"(v) : "m"(MMIO_REF(uint8_t, a)) : "memory");
	return v;
}
static inline uint16_t mmio_read16(uint64_t a)
{
	uint16_t v;
	__asm__ volatile("movw %1, %0" : "=r"(v) : "m"(MMIO_REF(uint16_t, a)) : "memory");
	return v;
}
static inline uint32_t mmio_read32(uint64_t a)
{
	uint32_t v;
	__asm__ volatile("movl %1, %0" : "=r"(v) : "m"(MMIO_REF(uint32_t, a)) : "memory");
	return v;
}
static inline void mmio_write8(uint64_t a, uint8_t v)
{
	__asm__ volatile("movb %1, %0" : "=m"(MMIO_REF(uint8_t, a)) : "qi"(v) : "memory");
}
static inline void mmio_write16(uint64_t a, uint16_t v)
{
	__asm__ volatile("movw %1, %0" : "=m"(MMIO_REF(uint16_t, a)) : "ri"(v) : "memory");
}
static inline void mmio_write32(uint64_t a, uint32_t v)
{
	__asm__ volatile("movl %1, %0" : "=m"(MMIO_REF(uint32_t, a)) : "ri"(v) : "memory");
}
#undef MMIO_REF
#else
static inline uint8_t mmio_read8(uint64_t a) { return *(volatile uint8_t *)(uintptr_t)a; }
static inline uint16_t mmio_read16(uint64_t a) { return *(volatile uint16_t *)(uintptr_t)a; }
static inline uint32_t mmio_read32(uint64_t a) { return *(volatile uint32_t *)(uintptr_t)a; }
static inline void mmio_write8(uint64_t a, uint8_t v) { *(volatile uint8_t *)(uintptr_t)a = v; }
static inline void mmio_write16(uint64_t a, uint16_t v) { *(volatile uint16_t *)(uintptr_t)a = v; }
static inline void mmio_write32(uint64_t a, uint32_t v) { *(volatile uint32_t *)(uintptr_t)a = v; }
#endif

#endif
