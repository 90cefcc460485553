/*
 * drivers/lwip/arch/cc.h — lwIP's compiler and platform port (lwIP 2.1
 * doc/"Porting"): the kernel's freestanding build, diagnostics on the
 * serial console, an assertion is a panic.
 */
#ifndef LLMK_LWIP_ARCH_CC_H
#define LLMK_LWIP_ARCH_CC_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/platform.h"

/* No libc here: lwIP brings its own ctype; printf formats only for
 * LWIP_DEBUG, which is off. */
#define LWIP_NO_CTYPE_H 1
#define LWIP_NO_INTTYPES_H 1
#define X8_F "02x"
#define U16_F "u"
#define S16_F "d"
#define X16_F "x"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "zu"

#define LWIP_PLATFORM_DIAG(x) do { plat_printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) plat_panic("lwip: assertion \"%s\" failed at %s:%d", x, __FILE__, __LINE__)

/* TCP initial sequence numbers and DHCP transaction ids. */
uint32_t lwip_port_rand(void);
int lwip_port_atoi(const char *s);
#define LWIP_RAND() lwip_port_rand()

#endif
