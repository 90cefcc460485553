/*
 * kernel/aarch64/trap.c — our own exception vectors, so a fault after
 * ExitBootServices prints what happened instead of landing in firmware code
 * that no longer owns the machine. DDI 0487 D1.10 (exception entry) and
 * D19.2.37 (ESR_ELx: EC in bits 31:26, ISS below).
 */
#include "../kernel.h"
#include "../arch.h"
#include "aarch64.h"

struct trap_frame {
	uint64_t x[31];
	uint64_t sp;
	uint64_t vector; /* 0-15: entry of the table (see entry.S) */
};
_Static_assert(sizeof(struct trap_frame) == 264, "entry.S stores sp at 248, vector at 256");

extern const char trap_vectors[];
void trap_handler(const struct trap_frame *f);

static const char *const vector_names[4] = { "synchronous", "IRQ", "FIQ", "SError" };
static const char *const vector_from[4] = { "current EL (SP_EL0)", "current EL (SP_ELx)",
					    "lower EL (AArch64)", "lower EL (AArch32)" };

/* DDI 0487 D19.2.37 Table D19-7: the exception classes a kernel bug causes. */
static const char *ec_name(unsigned ec)
{
	switch (ec) {
	case 0x00: return "unknown reason";
	case 0x01: return "WFI/WFE trapped";
	case 0x07: return "FP/SIMD access trapped";
	case 0x0e: return "illegal execution state";
	case 0x15: return "SVC";
	case 0x16: return "HVC";
	case 0x17: return "SMC";
	case 0x18: return "system register access trapped";
	case 0x19: return "SVE access trapped";
	case 0x20: case 0x21: return "instruction abort";
	case 0x22: return "PC alignment fault";
	case 0x24: case 0x25: return "data abort";
	case 0x26: return "SP alignment fault";
	case 0x2c: return "FP exception";
	case 0x2f: return "SError";
	case 0x3c: return "BRK instruction";
	default: return "exception";
	}
}

/* DDI 0487 D19.2.37, ISS for aborts: the fault status code in bits 5:0
 * (DFSC/IFSC); for the common kinds the low two bits are the table level. */
static const char *abort_kind(uint64_t esr, unsigned *level)
{
	unsigned fsc = (unsigned)esr & 0x3f;

	*level = fsc & 3;
	switch (fsc >> 2) {
	case 0x1: return "translation fault (address not mapped)";
	case 0x2: return "access flag fault";
	case 0x3: return "permission fault";
	}
	*level = 0;
	return fsc == 0x21 ? "alignment fault" : fsc == 0x10 ? "external abort" : "fault";
}

void trap_handler(const struct trap_frame *f)
{
	static int depth;
	uint64_t esr, elr, far;
	unsigned ec;

	if (depth++) {
		console_puts("\npanic: fault inside the fault handler\nllmk: halted\n");
		arch_halt();
	}
	if (aarch64_el() == 2) {
		esr = read_sysreg(esr_el2);
		elr = read_sysreg(elr_el2);
		far = read_sysreg(far_el2);
	} else {
		esr = read_sysreg(esr_el1);
		elr = read_sysreg(elr_el1);
		far = read_sysreg(far_el1);
	}
	ec = (unsigned)(esr >> 26) & 0x3f;
	plat_printf("\ncpu: %s %s from the %s (vector %llu)\n"
		    "cpu: x0 %#llx x1 %#llx x2 %#llx x3 %#llx lr %#llx sp %#llx\n",
		    vector_names[f->vector & 3], ec_name(ec), vector_from[(f->vector >> 2) & 3],
		    (unsigned long long)f->vector, (unsigned long long)f->x[0],
		    (unsigned long long)f->x[1], (unsigned long long)f->x[2],
		    (unsigned long long)f->x[3], (unsigned long long)f->x[30],
		    (unsigned long long)f->sp);
	if (ec == 0x20 || ec == 0x21 || ec == 0x24 || ec == 0x25) {
		unsigned level;
		const char *kind = abort_kind(esr, &level);
		plat_printf("cpu: %s, table level %u%s\n", kind, level,
			    (ec == 0x24 || ec == 0x25) && (esr & (1u << 6)) ? ", on a write" : "");
	}
	plat_panic("cpu: %s (ESR %#llx, EC %#x) at ELR %#llx, FAR %#llx; llmk loaded at %#llx",
		   ec_name(ec), (unsigned long long)esr, ec, (unsigned long long)elr,
		   (unsigned long long)far,
		   (unsigned long long)(kernel_boot ? kernel_boot->image_base : 0));
}

void trap_init(void)
{
	if (aarch64_el() == 2)
		write_sysreg(vbar_el2, (uintptr_t)trap_vectors);
	else
		write_sysreg(vbar_el1, (uintptr_t)trap_vectors);
	isb();
}
