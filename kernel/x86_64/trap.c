/*
 * kernel/x86_64/trap.c — our own IDT, so a fault after ExitBootServices
 * prints what happened instead of landing in firmware code that no longer
 * owns the machine (Intel SDM Vol. 3A §6.10-§6.14).
 */
#include "../kernel.h"
#include "../arch.h"
#include "x86.h"

struct idt_gate {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type; /* 0x8e: present, DPL 0, 64-bit interrupt gate */
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t zero;
} __attribute__((packed));
_Static_assert(sizeof(struct idt_gate) == 16, "SDM Vol. 3A Figure 6-8");

struct trap_frame {
	uint64_t vector, error, rip, cs, rflags, rsp, ss;
};

extern const uint64_t trap_stubs[32];
static struct idt_gate idt[32] __attribute__((aligned(16)));

static const char *const trap_names[32] = {
	"divide error", "debug", "NMI", "breakpoint", "overflow", "bound range",
	"invalid opcode", "device not available", "double fault", "coprocessor overrun",
	"invalid TSS", "segment not present", "stack fault", "general protection",
	"page fault", "reserved", "x87 FP error", "alignment check", "machine check",
	"SIMD FP exception", "virtualization", "control protection",
};

void trap_handler(const struct trap_frame *f);

void trap_handler(const struct trap_frame *f)
{
	uint64_t cr2;
	const char *name = f->vector < 32 && trap_names[f->vector] ? trap_names[f->vector] :
								       "exception";

	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	plat_panic("cpu: %s (vector %llu, error %#llx) at rip %#llx, rsp %#llx, cr2 %#llx", name,
		   (unsigned long long)f->vector, (unsigned long long)f->error,
		   (unsigned long long)f->rip, (unsigned long long)f->rsp,
		   (unsigned long long)cr2);
}

/*
 * #VE and #VC (entry.S's emulating stubs): the instruction at r->rip is one
 * the hardware hands to the guest to perform through the TDX module or the
 * GHCB. They happen only in confidential guests, and there from the first
 * CPUID after ExitBootServices on, so the handlers work before anything
 * else is set up. On a machine that is not one, the handler says so and
 * stops.
 */
void trap_emulate(struct trap_regs *r);

void trap_emulate(struct trap_regs *r)
{
	r->gpr[4] = r->rsp;
	if (r->vector == 29)
		vc_handle(r);
	else
		ve_handle(r);
}

void trap_init(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) idtr = { sizeof idt - 1, (uint64_t)(uintptr_t)idt };
	uint16_t cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	for (int i = 0; i < 32; i++) {
		uint64_t a = trap_stubs[i];
		idt[i] = (struct idt_gate){ (uint16_t)a, cs, 0, 0x8e, (uint16_t)(a >> 16),
					    (uint32_t)(a >> 32), 0 };
	}
	__asm__ volatile("lidt %0" : : "m"(idtr));
}
