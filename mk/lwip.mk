# mk/lwip.mk — lwIP 2.1 (Debian's source, build/deps/lwip, tools/deps.sh)
# and its port (drivers/lwip/) for the EFI image, both architectures.
#
# lwIP's core, IPv4 and Ethernet, NO_SYS (drivers/lwip/lwipopts.h), built
# with the kernel's flags (freestanding, no SIMD registers) into an archive
# the image links. The port's own files get warnings; lwIP's get -w as
# BearSSL's do.

LWIP_DIR := $(B)/deps/lwip
LWIP_SRC := $(sort $(wildcard $(LWIP_DIR)/src/core/*.c $(LWIP_DIR)/src/core/ipv4/*.c)) \
	$(LWIP_DIR)/src/netif/ethernet.c
LWIP_PORT_SRC := $(sort $(wildcard drivers/lwip/*.c))
LWIP_INC := -I. -Idrivers/lwip -I$(LWIP_DIR)/src/include
# lwIP's mem_init would clash with the kernel's; its one libc call (atoi,
# netif_find) goes to the port, not to glibc's inline strtol.
LWIP_DEFS := -Dmem_init=lwip_mem_init -Datoi=lwip_port_atoi -D__NO_INLINE__
LWIP_OBJ := $(patsubst $(LWIP_DIR)/src/%.c,$(EFI_DIR)/lwip/%.o,$(LWIP_SRC)) \
	$(patsubst %.c,$(EFI_OBJ_DIR)/%.o,$(LWIP_PORT_SRC))
EFI_LIBS += $(EFI_DIR)/liblwip.a
EFI_ID_SRC += $(LWIP_PORT_SRC) $(wildcard drivers/lwip/*.h drivers/lwip/arch/*.h) mk/lwip.mk

$(EFI_DIR)/lwip/%.o: $(LWIP_DIR)/src/%.c drivers/lwip/lwipopts.h drivers/lwip/arch/cc.h
	@mkdir -p $(@D)
	@$(EFI_CC) $(EFI_KERNEL_CFLAGS) -w $(LWIP_INC) $(LWIP_DEFS) -c $< -o $@
$(EFI_OBJ_DIR)/drivers/lwip/%.o: drivers/lwip/%.c
	@mkdir -p $(@D)
	$(EFI_CC) $(EFI_KERNEL_CFLAGS) $(LWIP_INC) $(LWIP_DEFS) -c $< -o $@
$(EFI_DIR)/liblwip.a: $(LWIP_OBJ)
	@[ -f $(LWIP_DIR)/src/core/init.c ] || { echo "no lwIP source in $(LWIP_DIR): run make deps"; exit 1; }
	@rm -f $@
	ar rcD $@ $^
$(EFI_DIR)/llmk.so: $(EFI_DIR)/liblwip.a
