# mk/host.mk — the host platform's build identity. tools/host/plat.c gets the
# git commit and a build id (SHA-256 over the names and contents of the
# engine + shell sources it is linked with, in sorted order; first 16 hex
# digits, as the kernel's) on its compile line, and is rebuilt whenever
# either changes.
HOST_ID_SRC := $(sort $(ENGINE_SRC) $(SIMD_SRC_$(HOST_ARCH)) $(wildcard kernel/platform.h \
	llm/*.h llm/kernels/*/*.h shell/*.h shell/http/*.h))
HOST_BUILD_ID := $(shell sha256sum $(HOST_ID_SRC) | sha256sum | cut -c1-16)
HOST_ID_STAMP := $(B)/host-id.stamp
$(shell mkdir -p $(B); echo '$(GIT) $(HOST_BUILD_ID)' | cmp -s - $(HOST_ID_STAMP) || \
	echo '$(GIT) $(HOST_BUILD_ID)' > $(HOST_ID_STAMP))
HOST_ID_OBJ := $(B)/host/obj/tools/host/plat.o $(B)/host-asan/obj/tools/host/plat.o
$(HOST_ID_OBJ): $(HOST_ID_STAMP)
$(HOST_ID_OBJ): host_CFLAGS += -DLLMK_BUILD_ID='"$(HOST_BUILD_ID)"'
$(HOST_ID_OBJ): host-asan_CFLAGS += -DLLMK_BUILD_ID='"$(HOST_BUILD_ID)"'
