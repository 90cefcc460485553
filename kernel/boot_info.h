/*
 * kernel/boot_info.h — what boot/ collects from UEFI before ExitBootServices
 * and hands to kernel_main(). Plain C, no UEFI headers: the kernel never sees
 * a firmware type, only addresses and sizes the firmware left behind.
 */
#ifndef LLMK_BOOT_INFO_H
#define LLMK_BOOT_INFO_H

#include <stdint.h>
#include <stddef.h>

/* UEFI 2.10 §7.2 EFI_MEMORY_DESCRIPTOR; walk with desc_size, never sizeof. */
struct boot_mem_desc {
	uint32_t type;
	uint32_t pad;
	uint64_t phys;
	uint64_t virt;
	uint64_t pages; /* 4 KiB pages */
	uint64_t attr;
};

/* UEFI 2.10 §7.2 EFI_MEMORY_TYPE values the kernel cares about. */
enum {
	BOOT_MEM_LOADER_CODE = 1,
	BOOT_MEM_LOADER_DATA = 2,
	BOOT_MEM_BS_CODE = 3,
	BOOT_MEM_BS_DATA = 4,
	BOOT_MEM_CONVENTIONAL = 7,
	BOOT_MEM_ACPI_RECLAIM = 9,
	BOOT_MEM_MMIO = 11,
	BOOT_MEM_MMIO_PORT = 12,
};

/* A small file from the root of the boot volume, read before ExitBootServices. */
struct boot_file {
	char name[40];
	const void *data;
	uint32_t size;
};

#define BOOT_MAX_FILES 16

struct boot_info {
	uint64_t counter_at_entry; /* arch counter (TSC) when efi_main started */

	/* Memory map as returned by the final GetMemoryMap (UEFI 2.10 §7.2). */
	const void *mmap;
	uint64_t mmap_size;
	uint64_t mmap_desc_size;
	uint32_t mmap_desc_version;

	uint64_t acpi_rsdp;   /* physical address of the RSDP (ACPI 2.0 table preferred), 0 if none */
	uint64_t cc_blob;     /* SEV-SNP CC blob (OVMF ConfidentialComputingSevSnpBlob.h), 0 if none */
	uint64_t tcg2_log;    /* TCG2 event log (crypto-agile format), 0 if no TPM */
	uint64_t tcg2_log_last;  /* address of the last entry */
	uint64_t tcg2_final;  /* EFI_TCG2_FINAL_EVENTS_TABLE, 0 if none */
	/* Its NumberOfEvents when GetEventLog was called: those events are
	 * already in the log; the ones after (ExitBootServices') are not. */
	uint64_t tcg2_final_skip;
	int tcg2_truncated;

	/* x86_64: one page below 1 MiB, EfiLoaderCode (ours and executable in
	 * the firmware's page tables), for the AP start-up code; 0 if none. */
	uint64_t ap_boot_page;

	uint64_t image_base;  /* where the firmware loaded llmk.efi */
	uint64_t image_size;

	char fw_vendor[48];   /* firmware vendor, ASCII */
	uint32_t fw_revision;

	char cmdline[512];    /* load options as ASCII, "" if none */
	const char *config;   /* llmk.cfg contents, NUL-terminated, or NULL */
	struct boot_file files[BOOT_MAX_FILES];
	int n_files;
};

__attribute__((noreturn)) void kernel_main(struct boot_info *bi);

#endif
