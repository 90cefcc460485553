/*
 * kernel/aarch64/smp.c — starting the other CPUs on aarch64 (PSCI CPU_ON,
 * Arm DEN0022D §5.1.4) is not written yet: the pool holds the boot CPU
 * only, and says so once at boot.
 */
#include "../kernel.h"
#include "../arch.h"
#include "../../drivers/acpi.h"

int arch_start_cpus(int max)
{
	int n = acpi_cpu_ids(NULL, 0);

	(void)max;
	if (n > 1)
		plat_printf("smp: %d CPUs in the MADT, only the boot CPU used: "
			    "no PSCI CPU_ON start-up on aarch64 yet\n", n);
	return 1;
}
