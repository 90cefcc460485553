# mk/efi.mk — the bare-metal build: build/$(ARCH)/llmk.efi, its FAT boot
# image, `make run` and the QEMU boot tests.
#
# Compile flags, three kinds:
#   kernel  boot/ kernel/ drivers/: freestanding, no red zone, -fpic (GNU-EFI
#           relocates us), and no SIMD registers at all (-mgeneral-regs-only):
#           that code runs before XCR0 is set and must not touch AVX state.
#   engine  ENGINE_SRC + SIMD_SRC_$(ARCH) from the Makefile: same, but with the
#           ISA's vector unit (SSE2 baseline; the SIMD dirs get their -m flags).
#   bearssl Debian's BearSSL source with the engine flags, into an archive.

EFI_DIR := $(B)/$(ARCH)
EFI_OBJ_DIR := $(EFI_DIR)/obj
EFI_IMG := $(EFI_DIR)/llmk.efi
ESP_IMG := $(EFI_DIR)/esp.img
BEARSSL_DIR := $(B)/deps/bearssl

EFI_CC_x86_64 := gcc
EFI_OBJCOPY_x86_64 := objcopy
EFI_LD_x86_64 := ld
GNUEFI_INC_x86_64 := /usr/include/efi
GNUEFI_LIB_x86_64 := /usr/lib
# x86-64-v2 as the host build: the same instructions for the same engine code.
EFI_ARCH_CFLAGS_x86_64 := -march=x86-64-v2 -mno-red-zone -DGNU_EFI_USE_MS_ABI
EFI_KERNEL_CFLAGS_x86_64 := -mgeneral-regs-only
EFI_BOOT_NAME_x86_64 := BOOTX64.EFI
EFI_LDS_x86_64 := linker.ld
EFI_LDFLAGS_x86_64 :=
EFI_OBJCOPY_FLAGS_x86_64 := -j .text -j .reloc -j .data -j .dynamic -j .rela -j .dynsym \
	-j .dynstr --target=efi-app-x86_64 --subsystem=10
# Another architecture sets the same *_$(ARCH) variables in its own mk file.

EFI_CC := $(EFI_CC_$(ARCH))
EFI_LD := $(EFI_LD_$(ARCH))
EFI_OBJCOPY := $(EFI_OBJCOPY_$(ARCH))
GNUEFI_INC := $(GNUEFI_INC_$(ARCH))
GNUEFI_LIB := $(GNUEFI_LIB_$(ARCH))

EFI_COMMON_CFLAGS := -std=gnu11 -O2 $(WARN) -ffp-contract=off -ffreestanding -fno-stack-protector -fpic \
	-fvisibility=hidden -fshort-wchar -fno-strict-aliasing -fno-tree-loop-distribute-patterns \
	-ffile-prefix-map=$(CURDIR)/= $(EFI_ARCH_CFLAGS_$(ARCH)) -MMD -MP
EFI_KERNEL_CFLAGS := $(EFI_COMMON_CFLAGS) $(EFI_KERNEL_CFLAGS_$(ARCH)) \
	-I$(GNUEFI_INC) -I$(GNUEFI_INC)/$(ARCH) -I$(GNUEFI_INC)/protocol
EFI_ENGINE_CFLAGS := $(EFI_COMMON_CFLAGS) -I$(BEARSSL_DIR)/inc -DLLMK_VERSION='"$(VERSION)"'
# BearSSL's config.h guesses an OS from predefined macros; none of its OS
# services (urandom, getentropy, time()) exist here.
BEARSSL_CFLAGS := $(EFI_COMMON_CFLAGS) -w -I$(BEARSSL_DIR)/inc -I$(BEARSSL_DIR)/src \
	-DBR_USE_URANDOM=0 -DBR_USE_GETENTROPY=0 -DBR_USE_UNIX_TIME=0 -DBR_USE_WIN32_TIME=0 \
	-DBR_USE_WIN32_RAND=0

EFI_KERNEL_SRC := $(sort $(wildcard boot/*.c boot/$(ARCH)/*.c drivers/*.c drivers/$(ARCH)/*.c \
	kernel/$(ARCH)/*.c kernel/$(ARCH)/*.S $(filter-out kernel/fmt.c,$(wildcard kernel/*.c))))
EFI_ENGINE_SRC := $(ENGINE_SRC) $(SIMD_SRC_$(ARCH))
BEARSSL_SRC := $(sort $(shell find $(BEARSSL_DIR)/src -name '*.c' 2>/dev/null))

EFI_KERNEL_OBJ := $(patsubst %,$(EFI_OBJ_DIR)/%.o,$(basename $(EFI_KERNEL_SRC)))
EFI_ENGINE_OBJ := $(patsubst %.c,$(EFI_OBJ_DIR)/%.o,$(EFI_ENGINE_SRC))
# Archives other mk files add (mk/lwip.mk), linked before BearSSL.
EFI_LIBS :=
BEARSSL_OBJ := $(patsubst $(BEARSSL_DIR)/src/%.c,$(EFI_DIR)/bearssl/%.o,$(BEARSSL_SRC))

# The build id: SHA-256 over every source file that goes into the image
# (names and contents, in sorted order), so it names the sources, not the
# moment of the build.
EFI_ID_SRC = $(sort $(EFI_KERNEL_SRC) $(EFI_ENGINE_SRC) $(wildcard boot/*.h kernel/*.h \
	kernel/$(ARCH)/*.h drivers/*.h llm/*.h llm/kernels/*/*.h shell/*.h shell/http/*.h) $(EFI_LDS_$(ARCH)) mk/efi.mk)
EFI_BUILD_ID = $(shell sha256sum $(EFI_ID_SRC) | sha256sum | cut -c1-16)

$(EFI_DIR)/build_id.h: FORCE
	@mkdir -p $(@D)
	@echo '#define LLMK_BUILD_ID "$(EFI_BUILD_ID)"' > $@.tmp
	@echo '#define LLMK_GIT "$(GIT)"' >> $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
.PHONY: FORCE
FORCE:

$(EFI_OBJ_DIR)/kernel/version.o: kernel/version.c $(EFI_DIR)/build_id.h
	@mkdir -p $(@D)
	$(EFI_CC) $(EFI_KERNEL_CFLAGS) -DLLMK_VERSION='"$(VERSION)"' -include $(EFI_DIR)/build_id.h -c $< -o $@

$(EFI_OBJ_DIR)/%.o: %.S
	@mkdir -p $(@D)
	$(EFI_CC) $(EFI_KERNEL_CFLAGS) -c $< -o $@

# Engine sources get the engine flags.
$(EFI_OBJ_DIR)/llm/%.o: llm/%.c
	@mkdir -p $(@D)
	$(EFI_CC) $(EFI_ENGINE_CFLAGS) $(if $(filter llm/kernels/%,$<),$(call simd_flags,$<)) -c $< -o $@
$(EFI_OBJ_DIR)/shell/%.o: shell/%.c
	@mkdir -p $(@D)
	$(EFI_CC) $(EFI_ENGINE_CFLAGS) -c $< -o $@
$(EFI_OBJ_DIR)/kernel/fmt.o: kernel/fmt.c
	@mkdir -p $(@D)
	$(EFI_CC) $(EFI_ENGINE_CFLAGS) -c $< -o $@
$(EFI_OBJ_DIR)/%.o: %.c
	@mkdir -p $(@D)
	$(EFI_CC) $(EFI_KERNEL_CFLAGS) -c $< -o $@

$(EFI_DIR)/bearssl/%.o: $(BEARSSL_DIR)/src/%.c
	@mkdir -p $(@D)
	@$(EFI_CC) $(BEARSSL_CFLAGS) -c $< -o $@
$(EFI_DIR)/libbearssl.a: $(BEARSSL_OBJ)
	@[ -n "$(BEARSSL_OBJ)" ] || { echo "no BearSSL source in $(BEARSSL_DIR): run make deps"; exit 1; }
	@rm -f $@
	ar rcD $@ $^

$(EFI_DIR)/llmk.so: $(EFI_KERNEL_OBJ) $(EFI_ENGINE_OBJ) $(EFI_DIR)/libbearssl.a $(EFI_LDS_$(ARCH))
	$(EFI_LD) -nostdlib -znocombreloc -T $(EFI_LDS_$(ARCH)) -shared -Bsymbolic --no-undefined \
		--no-warn-rwx-segments $(EFI_LDFLAGS_$(ARCH)) -o $@ $(GNUEFI_LIB)/crt0-efi-$(ARCH).o $(EFI_KERNEL_OBJ) \
		$(EFI_ENGINE_OBJ) $(EFI_LIBS) $(EFI_DIR)/libbearssl.a $(GNUEFI_LIB)/libgnuefi.a \
		$(shell $(EFI_CC) -print-libgcc-file-name)
	@# _relocate() in GNU-EFI applies only RELATIVE fix-ups; anything else
	@# would be left pointing at address 0 once the firmware moves us. NONE
	@# entries (slots ld reserved, then resolved itself) are skipped by it.
	@if readelf -rW $@ | awk 'NR>3 && $$3 ~ /^R_/ && $$3 !~ /^R_(X86_64|AARCH64)_(RELATIVE|NONE)$$/' | grep -q .; then \
		echo "$@: dynamic relocations other than RELATIVE:"; readelf -rW $@ | grep -v RELATIVE; rm -f $@; exit 1; fi

$(EFI_DIR)/llmk.efi: $(EFI_DIR)/llmk.so
	$(EFI_OBJCOPY) $(EFI_OBJCOPY_FLAGS_$(ARCH)) $< $@

# The boot volume: a FAT image, reproducible (fixed volume id and serial,
# every timestamp SOURCE_DATE_EPOCH). LLMK_CFG=file adds it as /llmk.cfg;
# ESP_FILES="a b" adds more files to the root (a key file llmk.cfg names).
ESP_KIB := 16384
LLMK_CFG ?=
ESP_FILES ?=
# The image is rebuilt when LLMK_CFG or ESP_FILES name other files (or none).
$(EFI_DIR)/esp.cfg: FORCE
	@mkdir -p $(@D)
	@echo '$(LLMK_CFG) $(ESP_FILES)' | cmp -s - $@ || echo '$(LLMK_CFG) $(ESP_FILES)' > $@
$(ESP_IMG): $(EFI_IMG) $(LLMK_CFG) $(ESP_FILES) $(EFI_DIR)/esp.cfg
	@rm -f $@ $@.tmp && mkdir -p $(EFI_DIR)/esp
	cp $(EFI_IMG) $(EFI_DIR)/esp/$(EFI_BOOT_NAME_$(ARCH))
	touch -d @$(SOURCE_DATE_EPOCH) $(EFI_DIR)/esp/$(EFI_BOOT_NAME_$(ARCH))
	mkfs.fat -C --invariant -i 4c4c4d4b -n LLMK $@.tmp $(ESP_KIB) >/dev/null
	MTOOLS_SKIP_CHECK=1 mmd -i $@.tmp ::/EFI ::/EFI/BOOT
	MTOOLS_SKIP_CHECK=1 mcopy -m -i $@.tmp $(EFI_DIR)/esp/$(EFI_BOOT_NAME_$(ARCH)) ::/EFI/BOOT/
	$(if $(LLMK_CFG),cp $(LLMK_CFG) $(EFI_DIR)/esp/llmk.cfg && touch -d @$(SOURCE_DATE_EPOCH) $(EFI_DIR)/esp/llmk.cfg && MTOOLS_SKIP_CHECK=1 mcopy -m -i $@.tmp $(EFI_DIR)/esp/llmk.cfg ::/)
	$(foreach f,$(ESP_FILES),cp $(f) $(EFI_DIR)/esp/$(notdir $(f)) && touch -d @$(SOURCE_DATE_EPOCH) $(EFI_DIR)/esp/$(notdir $(f)) && MTOOLS_SKIP_CHECK=1 mcopy -m -i $@.tmp $(EFI_DIR)/esp/$(notdir $(f)) ::/ &&) true
	mv $@.tmp $@

-include $(shell find $(EFI_OBJ_DIR) -name '*.d' 2>/dev/null)

.PHONY: efi image run test-qemu-$(ARCH)
efi: $(EFI_IMG) ## build build/$(ARCH)/llmk.efi
image: $(ESP_IMG) ## build the FAT boot image build/$(ARCH)/esp.img

# The disk(s) `make run` attaches: DISKS="a b c", or MODEL=path, or the
# reference tiny model when ../shared/testdata has it, or a generated one.
MKMODEL := $(B)/host/mkmodel
DEFAULT_MODEL := $(firstword $(wildcard $(LLMK_TESTDATA)/stories260K/stories260K.gguf) \
	$(B)/gen/model.gguf)
RUN_DISKS := $(if $(DISKS),$(DISKS),$(if $(MODEL),$(MODEL),$(DEFAULT_MODEL)))
$(B)/gen/model.gguf: $(MKMODEL)
	@mkdir -p $(@D)
	$(MKMODEL) --name llmk-default -o $@.tmp && mv $@.tmp $@

# QEMU_ARGS adds QEMU options, e.g. QEMU_ARGS="-device tpm-crb,tpmdev=..." (a vTPM).
QEMU_MEM ?= 2G
QEMU_SMP ?= 2
QEMU_ARGS ?=
# `make run NET=1`: a virtio-net device on QEMU's user network, the guest's
# NET_GUEST_PORT reachable at 127.0.0.1:NET_PORT and nowhere else (hostfwd
# bound to loopback; slirp lets the guest out, not others in). docs/network.md.
NET ?=
NET_PORT ?= 8007
NET_GUEST_PORT ?= 8443
ifeq ($(NET),1)
QEMU_NET_ARGS := -netdev user,id=n0,hostfwd=tcp:127.0.0.1:$(NET_PORT)-:$(NET_GUEST_PORT) \
	-device virtio-net-pci,netdev=n0
endif
QEMU_PY := python3 tests/qemu/qemu.py --arch $(ARCH) --esp $(ESP_IMG) --mem $(QEMU_MEM) \
	--smp $(QEMU_SMP) --qemu-args '$(QEMU_ARGS) $(QEMU_NET_ARGS)'

# PROMPT: what `make run` asks disk 0's model first, at a terminal or with
# nothing on stdin (PROMPT= for none); piped commands are sent as they are.
PROMPT ?= Once upon a time
run: ## boot llmk in QEMU and answer PROMPT (MODEL=path or DISKS="a b c"; default: the tiny reference model; NET=1: a network on 127.0.0.1:NET_PORT)
	@tools/deps.sh
	@$(MAKE) --no-print-directory $(ESP_IMG) $(filter $(B)/gen/%,$(RUN_DISKS))
	@exec $(QEMU_PY) run --prompt '$(subst ','\'',$(PROMPT))' $(RUN_DISKS)

test-qemu-$(ARCH):
	@$(MAKE) --no-print-directory $(ESP_IMG) $(B)/host/llmctl $(B)/host/mkmodel
	@tests/stage.sh qemu-$(ARCH) python3 tests/qemu/test_boot.py --arch $(ARCH) --esp $(ESP_IMG)

# `make ARCH=other test` still runs the x86_64 stage: re-enter with ARCH.
ifneq ($(ARCH),x86_64)
.PHONY: test-qemu-x86_64
test-qemu-x86_64:
	@$(MAKE) --no-print-directory ARCH=x86_64 test-qemu-x86_64
endif
test-qemu-x86_64: ## QEMU boot tests, x86_64 (OVMF, TCG)
