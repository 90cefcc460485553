# mk/poison.mk — the ASan/UBSan flavor (build/host-asan) poisons what the
# engine's allocators leave between and after their objects, and guards each
# page allocation with PROT_NONE pages (LLMK_POISON: llm/mem.h, llm/mem.c,
# tools/host/plat.c), so that ASan sees overflows inside the mmap'd arenas
# too. Its objects depend on this file: changing the switch rebuilds them.
host-asan_CFLAGS += -DLLMK_POISON=1
$(host-asan_ENGINE_OBJ) $(host-asan_PLAT_OBJ) $(host-asan_TEST_OBJ): mk/poison.mk
