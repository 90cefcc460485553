/*
 * kernel/version.c — build identity. LLMK_BUILD_ID is a SHA-256 over the
 * sources that make up the image (mk/efi.mk computes it), so two builds of
 * the same tree report the same id.
 */
#include "platform.h"

#ifndef LLMK_VERSION
#define LLMK_VERSION "0.0.0"
#endif
#ifndef LLMK_GIT
#define LLMK_GIT "unknown"
#endif
#ifndef LLMK_BUILD_ID
#define LLMK_BUILD_ID "unknown"
#endif

const char *plat_version(void)
{
	return LLMK_VERSION;
}

const char *plat_git(void)
{
	return LLMK_GIT;
}

const char *plat_build_id(void)
{
	return LLMK_BUILD_ID;
}
