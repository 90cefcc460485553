# mk/efi-aarch64.mk — what ARCH=aarch64 changes in mk/efi.mk's bare-metal
# build, and the aarch64 QEMU test stage.
#
# GNU-EFI for arm64 is Debian's gnu-efi:arm64 unpacked into build/deps
# (tools/deps.sh); the compiler is Debian's aarch64-linux-gnu cross gcc.
# Debian's binutils has no efi-app-aarch64 target, so the PE header comes
# from crt0-efi-aarch64.o and objcopy writes a flat binary of the sections
# boot/aarch64/linker.ld lays out (see there); the subsystem must be given
# on the link line (EFI_SUBSYSTEM, UEFI 2.10 §2.1.1: 10 = application).

GNUEFI_ARM64 := $(B)/deps/gnu-efi-arm64/usr
EFI_CC_aarch64 := aarch64-linux-gnu-gcc
EFI_LD_aarch64 := aarch64-linux-gnu-ld
EFI_OBJCOPY_aarch64 := aarch64-linux-gnu-objcopy
GNUEFI_INC_aarch64 := $(GNUEFI_ARM64)/include/efi
GNUEFI_LIB_aarch64 := $(GNUEFI_ARM64)/lib
# Atomics inline (-mno-outline-atomics): libgcc's out-of-line helpers probe
# the CPU with getauxval, which only Linux has.
# NEON is part of the base ISA, so only the kernel side is kept off the FP
# registers (general-regs-only: no FP/SIMD state in code that runs before
# CPACR is checked, nor in the exception path).
EFI_ARCH_CFLAGS_aarch64 := -mno-outline-atomics
EFI_KERNEL_CFLAGS_aarch64 := -mgeneral-regs-only
EFI_BOOT_NAME_aarch64 := BOOTAA64.EFI
EFI_LDS_aarch64 := boot/aarch64/linker.ld
EFI_LDFLAGS_aarch64 := --defsym=EFI_SUBSYSTEM=0xa
EFI_OBJCOPY_FLAGS_aarch64 := -j .text -j .dynamic -j .data -j .rela -O binary

# `make test` runs the aarch64 stage from an x86_64 make: re-enter with ARCH.
ifneq ($(ARCH),aarch64)
.PHONY: test-qemu-aarch64
test-qemu-aarch64: ## QEMU boot tests for aarch64 (AAVMF, TCG)
	@$(MAKE) --no-print-directory ARCH=aarch64 test-qemu-aarch64
endif
