/*
 * boot/efi.c — the UEFI entry point (GNU-EFI's crt0 calls efi_main).
 *
 * Everything the kernel will need from the firmware is collected here, while
 * boot services still exist: the ACPI RSDP, the SEV-SNP CC blob, the TCG2
 * event log, the load options, small files from the root of the boot volume
 * (llmk.cfg among them) and finally the memory map, whose key is handed to
 * ExitBootServices. After that only kernel_main() runs. Arch-neutral: the
 * same file builds for x86_64 and aarch64.
 */
#include <efi.h>

#include "../kernel/arch.h"
#include "../kernel/boot_info.h"

static struct boot_info bi;
static EFI_SYSTEM_TABLE *st;
static EFI_BOOT_SERVICES *bs;

#define MAX_BOOT_FILE (1u << 20)  /* larger files stay on the volume */

/* UEFI 2.10 §4.6 configuration table GUIDs. */
static EFI_GUID acpi20_guid = ACPI_20_TABLE_GUID;
static EFI_GUID acpi10_guid = ACPI_TABLE_GUID;
/* OVMF ConfidentialComputingSevSnpBlob.h: CONFIDENTIAL_COMPUTING_SNP_BLOB_GUID */
static EFI_GUID cc_blob_guid = { 0x067b1f5f, 0xcf26, 0x44c5,
				 { 0x85, 0x54, 0x93, 0xd7, 0x77, 0x91, 0x2d, 0x42 } };
/* TCG EFI Protocol Specification 2.0 §6.3: EFI_TCG2_FINAL_EVENTS_TABLE_GUID */
static EFI_GUID tcg2_final_guid = { 0x1e2ed096, 0x30e2, 0x4254,
				    { 0xbd, 0x89, 0x86, 0x3b, 0xbe, 0xf8, 0x23, 0x25 } };
/* TCG EFI Protocol Specification 2.0 §6.2: EFI_TCG2_PROTOCOL_GUID */
static EFI_GUID tcg2_guid = { 0x607f766c, 0x7455, 0x42be,
			      { 0x93, 0x0b, 0xe4, 0xd7, 0x6d, 0xb2, 0x72, 0x0f } };
static EFI_GUID loaded_image_guid = EFI_LOADED_IMAGE_PROTOCOL_GUID;
static EFI_GUID sfs_guid = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_GUID;

/* TCG EFI Protocol Specification 2.0 §6.4: only GetEventLog is used; the
 * other members are kept as opaque pointers to hold the layout. */
#define TCG2_EVENT_LOG_FORMAT_TCG_2 0x00000002
struct tcg2_protocol {
	void *get_capability;
	EFI_STATUS (EFIAPI *get_event_log)(struct tcg2_protocol *self, UINT32 format,
					   EFI_PHYSICAL_ADDRESS *location,
					   EFI_PHYSICAL_ADDRESS *last_entry, BOOLEAN *truncated);
	void *hash_log_extend_event;
	void *submit_command;
	void *get_active_pcr_banks;
	void *set_active_pcr_banks;
	void *get_result_of_set_active_pcr_banks;
};

static void say(const CHAR16 *s)
{
	st->ConOut->OutputString(st->ConOut, (CHAR16 *)s);
}

static int guid_eq(const EFI_GUID *a, const EFI_GUID *b)
{
	const UINT8 *x = (const UINT8 *)a, *y = (const UINT8 *)b;
	for (unsigned i = 0; i < sizeof(EFI_GUID); i++)
		if (x[i] != y[i])
			return 0;
	return 1;
}

/* UCS-2 to ASCII; characters outside ASCII become '?'. */
static void to_ascii(char *dst, size_t cap, const CHAR16 *src, size_t n)
{
	size_t i = 0;
	for (; i + 1 < cap && i < n && src[i]; i++)
		dst[i] = src[i] < 0x80 ? (char)src[i] : '?';
	dst[i] = 0;
}

/* UEFI 2.10 §4.6: the system table's configuration tables. */
static void scan_config_tables(void)
{
	for (UINTN i = 0; i < st->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *t = &st->ConfigurationTable[i];
		uint64_t addr = (uint64_t)(uintptr_t)t->VendorTable;
		if (guid_eq(&t->VendorGuid, &acpi20_guid))
			bi.acpi_rsdp = addr;
		else if (guid_eq(&t->VendorGuid, &acpi10_guid) && !bi.acpi_rsdp)
			bi.acpi_rsdp = addr;
		else if (guid_eq(&t->VendorGuid, &cc_blob_guid))
			bi.cc_blob = addr;
		else if (guid_eq(&t->VendorGuid, &tcg2_final_guid))
			bi.tcg2_final = addr;
	}
}

/* TCG EFI Protocol Specification 2.0 §6.6.2 GetEventLog: the crypto-agile log. */
static void find_tcg2_log(void)
{
	struct tcg2_protocol *tcg2 = NULL;
	EFI_PHYSICAL_ADDRESS loc = 0, last = 0;
	BOOLEAN trunc = 0;

	if (bs->LocateProtocol(&tcg2_guid, NULL, (void **)&tcg2) != EFI_SUCCESS || !tcg2)
		return;
	if (tcg2->get_event_log(tcg2, TCG2_EVENT_LOG_FORMAT_TCG_2, &loc, &last, &trunc) !=
	    EFI_SUCCESS)
		return;
	bi.tcg2_log = loc;
	bi.tcg2_log_last = last;
	bi.tcg2_truncated = trunc;
	/* §6.6.2: events logged from the first GetEventLog on also go to the
	 * final events table (version u64, NumberOfEvents u64, events); the
	 * kernel takes those after the ones counted here. */
	if (bi.tcg2_final)
		bi.tcg2_final_skip = ((const volatile uint64_t *)(uintptr_t)bi.tcg2_final)[1];
}

/* Load options of our image (UEFI 2.10 §9.1 EFI_LOADED_IMAGE_PROTOCOL) as the
 * command line. A boot entry the firmware made by itself may carry binary
 * OptionalData there (§3.1.3), so only printable UCS-2 text counts. */
static void read_load_options(EFI_LOADED_IMAGE *li)
{
	const CHAR16 *o = li->LoadOptions;
	UINTN n = li->LoadOptionsSize / 2;

	bi.image_base = (uint64_t)(uintptr_t)li->ImageBase;
	bi.image_size = li->ImageSize;
	if (!o)
		return;
	for (UINTN i = 0; i < n && o[i]; i++)
		if (o[i] < 0x20 || o[i] > 0x7e)
			return;
	to_ascii(bi.cmdline, sizeof bi.cmdline, o, n);
}

static int name_is(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? *a + 32 : *a;
		char y = *b >= 'A' && *b <= 'Z' ? *b + 32 : *b;
		if (x != y)
			return 0;
	}
	return *a == *b;
}

/* Read one regular file of the root directory into pool memory (which stays
 * ours after ExitBootServices: EfiLoaderData). */
static void read_one_file(EFI_FILE_HANDLE root, EFI_FILE_INFO *info)
{
	struct boot_file *f;
	EFI_FILE_HANDLE fh;
	void *data;
	UINTN n;

	if (bi.n_files == BOOT_MAX_FILES || (info->Attribute & EFI_FILE_DIRECTORY) ||
	    info->FileSize > MAX_BOOT_FILE)
		return;
	if (root->Open(root, &fh, info->FileName, EFI_FILE_MODE_READ, 0) != EFI_SUCCESS)
		return;
	n = info->FileSize;
	if (bs->AllocatePool(EfiLoaderData, n + 1, &data) == EFI_SUCCESS) {
		if (fh->Read(fh, &n, data) == EFI_SUCCESS) {
			f = &bi.files[bi.n_files++];
			to_ascii(f->name, sizeof f->name, info->FileName, sizeof f->name);
			((char *)data)[n] = 0;  /* NUL-terminated for text files */
			f->data = data;
			f->size = (uint32_t)n;
			if (name_is(f->name, "llmk.cfg"))
				bi.config = data;
		}
	}
	fh->Close(fh);
}

/* UEFI 2.10 §13.5 EFI_FILE_PROTOCOL.Read on a directory returns one
 * EFI_FILE_INFO per call, and size 0 at the end. */
static void read_root_files(EFI_LOADED_IMAGE *li)
{
	EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *sfs;
	EFI_FILE_HANDLE root;
	UINT64 buf[128]; /* EFI_FILE_INFO + a name of up to ~480 chars, aligned */

	if (bs->HandleProtocol(li->DeviceHandle, &sfs_guid, (void **)&sfs) != EFI_SUCCESS)
		return;
	if (sfs->OpenVolume(sfs, &root) != EFI_SUCCESS)
		return;
	for (;;) {
		UINTN n = sizeof buf;
		if (root->Read(root, &n, buf) != EFI_SUCCESS || n == 0)
			break;
		read_one_file(root, (EFI_FILE_INFO *)buf);
	}
	root->Close(root);
}

/* Intel SDM Vol. 3A §9.4.4.1: a STARTUP IPI starts an AP in real mode at
 * vector << 12, so its first code must sit in a page below 1 MiB. Taken as
 * EfiLoaderCode while the firmware still owns the map: it stays ours after
 * ExitBootServices, and a firmware NX policy for free or data memory (edk2's
 * PcdDxeNxMemoryProtectionPolicy; Debian's OVMF leaves it off) does not
 * apply to loader code. Page 0 is left out. */
static void reserve_ap_boot_page(void)
{
#ifdef __x86_64__
	EFI_PHYSICAL_ADDRESS a = 0x9ffff;

	if (bs->AllocatePages(AllocateMaxAddress, EfiLoaderCode, 1, &a) == EFI_SUCCESS && a)
		bi.ap_boot_page = a;
#endif
}

/* UEFI 2.10 §7.4 ExitBootServices: the key must come from the last
 * GetMemoryMap; if it fails, only GetMemoryMap and ExitBootServices may be
 * called again, so the buffer is allocated with room to spare first. */
static EFI_STATUS exit_boot_services(EFI_HANDLE image)
{
	UINTN size = 0, key, dsz;
	UINT32 dver;
	void *map = NULL;
	EFI_STATUS s;

	s = bs->GetMemoryMap(&size, NULL, &key, &dsz, &dver);
	if (s != EFI_BUFFER_TOO_SMALL)
		return s;
	size = size * 2 + 16 * dsz;  /* the pool allocation itself adds entries */
	if ((s = bs->AllocatePool(EfiLoaderData, size, &map)) != EFI_SUCCESS)
		return s;
	for (int tries = 0; tries < 8; tries++) {
		UINTN n = size;
		s = bs->GetMemoryMap(&n, map, &key, &dsz, &dver);
		if (s != EFI_SUCCESS)
			return s;
		bi.mmap = map;
		bi.mmap_size = n;
		bi.mmap_desc_size = dsz;
		bi.mmap_desc_version = dver;
		s = bs->ExitBootServices(image, key);
		if (s == EFI_SUCCESS)
			return s;
	}
	return s;
}

/* GNU-EFI's crt0 converts the firmware's calling convention and calls us
 * with the C ABI of the target, so no EFIAPI here. */
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	EFI_LOADED_IMAGE *li = NULL;
	EFI_STATUS s;

	bi.counter_at_entry = arch_counter();
	st = systab;
	bs = systab->BootServices;
	/* UEFI 2.10 §7.5.2: without this the firmware resets us after 5 minutes. */
	bs->SetWatchdogTimer(0, 0, 0, NULL);
	if (st->FirmwareVendor)
		to_ascii(bi.fw_vendor, sizeof bi.fw_vendor, st->FirmwareVendor, sizeof bi.fw_vendor);
	bi.fw_revision = st->FirmwareRevision;

	scan_config_tables();
	find_tcg2_log();
	reserve_ap_boot_page();
	if (bs->HandleProtocol(image, &loaded_image_guid, (void **)&li) == EFI_SUCCESS && li) {
		read_load_options(li);
		read_root_files(li);
	}
	s = exit_boot_services(image);
	if (s != EFI_SUCCESS) {
		say(L"llmk: ExitBootServices failed\r\n");
		return s;
	}
	kernel_main(&bi);
}
