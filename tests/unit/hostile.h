/*
 * tests/unit/hostile.h — what the hostile-device harnesses share
 * (test_virtio_pci.c, test_tpm_crb.c): the memory map the drivers see.
 * In the kernel mem_is_ram (kernel/mem.c) reads the UEFI map; here it says
 * true for the one range a test named "private RAM", the canary a device
 * must not make the driver write.
 */
#ifndef TEST_HOSTILE_H
#define TEST_HOSTILE_H

#include <stddef.h>

void hostile_private_ram(const void *p, size_t n);

#endif
