/*
 * kernel/arch.h — what each architecture provides to the arch-neutral kernel
 * and drivers. Implemented in kernel/x86_64/ (and kernel/aarch64/).
 */
#ifndef LLMK_ARCH_H
#define LLMK_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Free-running counter: TSC (x86_64) or CNTVCT_EL0 (aarch64). Callable
 * before ExitBootServices. */
uint64_t arch_counter(void);

/* Interrupts off, own exception vectors, FPU/SIMD state enabled so the
 * engine's SSE/AVX/NEON code may run. First thing kernel_main does. */
void arch_early_init(void);
/* Calibrate arch_counter() against a real time reference (ACPI PM timer,
 * CNTFRQ); needs acpi_init() first on x86_64. Returns the counter's Hz. */
uint64_t arch_counter_calibrate(void);
/* The console UART (16550 / PL011), after acpi_init() so SPCR can name it. */
void arch_console_init(void);
void arch_console_putc(char c);
int arch_console_getc(void); /* -1 when nothing is waiting */

uint32_t arch_cpu_features(void); /* PLAT_CPU_* that are present and enabled */
const char *arch_cpu_name(void);  /* brand string, "" if unknown */
const char *arch_machine(void);
bool arch_emulated(void);
int arch_entropy64(uint64_t *out); /* 0, or -LLMK_ENOTSUP / -LLMK_EIO */

void arch_relax(void);            /* spin-loop hint */
void arch_dma_barrier(void);      /* order memory against a device's view */
__attribute__((noreturn)) void arch_halt(void);
__attribute__((noreturn)) void arch_poweroff(void);
__attribute__((noreturn)) void arch_reboot(void);
/* Start the other CPUs the firmware lists (MADT) as workers 1.. of the pool,
 * each entering smp_ap_main(i) with interrupts off and the boot CPU's SIMD
 * state enabled; at most max CPUs in all. Returns the CPUs running, the boot
 * CPU included (1 when none could be started, which it reports). */
int arch_start_cpus(int max);
/* Call fn(arg) on a new stack; fn never returns. */
__attribute__((noreturn)) void arch_run_on_stack(void (*fn)(void *), void *arg, void *top);

/* Port I/O for x86 devices (16550 at COM1, ACPI fixed hardware in I/O space).
 * Architectures without port I/O read all-ones and ignore writes. */
uint32_t arch_io_in(uint16_t port, int bytes);
void arch_io_out(uint16_t port, uint32_t val, int bytes);

#endif
