/*
 * kernel/platform.c — the small platform.h services: boot configuration,
 * CPUs, entropy, power and panic. Arch-neutral; the arch layer does the
 * instructions.
 */
#include "kernel.h"
#include "arch.h"

const struct boot_info *kernel_boot;

const char *plat_cmdline(void)
{
	return kernel_boot ? kernel_boot->cmdline : "";
}

const char *plat_config_file(size_t *len)
{
	*len = 0;
	if (!kernel_boot || !kernel_boot->config)
		return NULL;
	/* the config is one of the boot files (boot/efi.c): its size is there */
	for (int i = 0; i < kernel_boot->n_files; i++)
		if (kernel_boot->files[i].data == kernel_boot->config)
			*len = kernel_boot->files[i].size;
	return kernel_boot->config;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* FAT names are case-insensitive, so is the lookup. */
static bool same_name(const char *a, const char *b)
{
	for (; *a && lower(*a) == lower(*b); a++, b++)
		;
	return *a == 0 && *b == 0;
}

int plat_boot_file(const char *name, void *buf, size_t cap)
{
	if (!kernel_boot || !name)
		return -LLMK_ENOENT;
	for (int i = 0; i < kernel_boot->n_files; i++) {
		const struct boot_file *f = &kernel_boot->files[i];
		if (!same_name(f->name, name))
			continue;
		if (f->size > cap)
			return -LLMK_ERANGE;
		memcpy(buf, f->data, f->size);
		return (int)f->size;
	}
	return -LLMK_ENOENT;
}

uint32_t plat_cpu_features(void)
{
	return arch_cpu_features();
}

const char *plat_machine(void)
{
	return arch_machine();
}

bool plat_emulated(void)
{
	return arch_emulated();
}

int plat_entropy(void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n) {
		uint64_t v;
		size_t k = n < 8 ? n : 8;
		int err = arch_entropy64(&v);
		if (err)
			return err;
		memcpy(p, &v, k);
		p += k;
		n -= k;
	}
	return 0;
}

void plat_poweroff(void)
{
	arch_poweroff();
}

void plat_reboot(void)
{
	arch_reboot();
}

void plat_panic(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	plat_vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	console_puts("\npanic: ");
	console_puts(buf);
	console_puts("\nllmk: halted\n");
	arch_halt();
}
