/*
 * kernel/main.c — from boot_info to the shell prompt.
 *
 * Order matters: the arch comes first (interrupts off, SIMD enabled, own
 * exception vectors, which in a confidential guest include the #VC / #VE
 * handlers every CPUID and port access needs), then ACPI (the console may
 * be named by SPCR), the console, memory, the confidential guest's own
 * set-up (cc_init: its GHCB, the pool of pages devices may DMA to), a
 * stack of our own, time, and finally the devices.
 */
#include "kernel.h"
#include "arch.h"
#include "../drivers/acpi.h"
#include "../drivers/cc_pages.h"
#include "../drivers/pci.h"
#include "../drivers/virtio_blk.h"
#include "../drivers/net.h"
#include "../shell/shell.h"

#define KERNEL_STACK (4u << 20) /* no guard page below it: be generous */

static int acpi_status;

static void print_memory(void)
{
	struct plat_mem_stats ms;

	plat_mem_stats(&ms);
	plat_printf("mem: %llu MiB conventional memory free for the kernel\n",
		    (unsigned long long)(ms.free >> 20));
}

static void print_cpu(void)
{
	char feats[256];

	plat_cpu_feature_text(plat_cpu_features(), feats, sizeof feats);
	plat_printf("cpu: %s, %s\ncpu: features%s\n", arch_cpu_name(), plat_machine(), feats);
	plat_printf("cpu: %d present (ACPI MADT), %d in use\n", acpi_cpu_count(),
		    plat_cpu_count());
}

static void kernel_start(void *arg)
{
	const struct boot_info *bi = arg;
	uint64_t hz = arch_counter_calibrate();
	int n;

	time_init(hz);
	plat_printf("time: counter %llu.%03llu MHz; firmware took %llu ms to reach llmk\n",
		    (unsigned long long)(hz / 1000000), (unsigned long long)(hz / 1000 % 1000),
		    (unsigned long long)(time_counter_to_ns(bi->counter_at_entry) / 1000000));
	smp_init();
	print_cpu();
	print_memory();
	if ((n = pci_init()) < 0)
		plat_printf("pci: %s; no disks\n", plat_strerror(n));
	else {
		virtio_blk_init();
		/* The network door (docs/network.md): DHCP now; `serve`
		 * listens (attested TLS, docs/tls.md). */
		net_init();
	}
	attest_init();
	shell_main();
}

void kernel_main(struct boot_info *bi)
{
	void *stack;

	kernel_boot = bi;
	arch_early_init();
	acpi_status = acpi_init(bi->acpi_rsdp);
	arch_console_init();
	plat_printf("\nllmk %s (git %s, build %s) %s\n", plat_version(), plat_git(),
		    plat_build_id(), plat_arch());
	plat_printf("boot: firmware \"%s\" rev %#x; cmdline \"%s\"; %d file(s) from the boot volume%s\n",
		    bi->fw_vendor, bi->fw_revision, bi->cmdline, bi->n_files,
		    bi->config ? ", llmk.cfg read" : "");
	if (acpi_status < 0) {
		plat_printf("acpi: %s (RSDP %#llx); no poweroff, PCI or PM timer\n",
			    plat_strerror(acpi_status), (unsigned long long)bi->acpi_rsdp);
	} else {
		char line[160];
		acpi_describe(line, sizeof line);
		plat_printf("acpi: %s\n", line);
	}
	if (bi->cc_blob || bi->tcg2_log)
		plat_printf("boot: SEV-SNP CC blob %#llx, TCG2 event log %#llx\n",
			    (unsigned long long)bi->cc_blob, (unsigned long long)bi->tcg2_log);
	mem_init(bi);
	cc_init();
	stack = plat_alloc(KERNEL_STACK, PAGE_SIZE);
	if (!stack)
		plat_panic("mem: no %u bytes for the kernel stack", KERNEL_STACK);
	arch_run_on_stack(kernel_start, bi, (char *)stack + KERNEL_STACK);
}
