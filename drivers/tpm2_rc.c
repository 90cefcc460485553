/*
 * drivers/tpm2_rc.c — TPM_RC response codes as text (TPM 2.0 Part 2 §6.6):
 * "TPM_RC_VALUE (parameter 2)", so an error says what the TPM refused.
 */
#include "tpm2.h"

struct rc_name {
	uint16_t code;
	const char *name;
};

static const struct rc_name rc_ver1[] = { /* format 0, RC_VER1 + n */
	{0x000, "INITIALIZE"}, {0x001, "FAILURE"}, {0x003, "SEQUENCE"}, {0x00B, "PRIVATE"},
	{0x019, "HMAC"}, {0x020, "DISABLED"}, {0x021, "EXCLUSIVE"}, {0x024, "AUTH_TYPE"},
	{0x025, "AUTH_MISSING"}, {0x026, "POLICY"}, {0x027, "PCR"}, {0x028, "PCR_CHANGED"},
	{0x02D, "UPGRADE"}, {0x02E, "TOO_MANY_CONTEXTS"}, {0x02F, "AUTH_UNAVAILABLE"},
	{0x030, "REBOOT"}, {0x031, "UNBALANCED"}, {0x042, "COMMAND_SIZE"},
	{0x043, "COMMAND_CODE"}, {0x044, "AUTHSIZE"}, {0x045, "AUTH_CONTEXT"},
	{0x046, "NV_RANGE"}, {0x047, "NV_SIZE"}, {0x048, "NV_LOCKED"},
	{0x049, "NV_AUTHORIZATION"}, {0x04A, "NV_UNINITIALIZED"}, {0x04B, "NV_SPACE"},
	{0x04C, "NV_DEFINED"}, {0x050, "BAD_CONTEXT"}, {0x051, "CPHASH"}, {0x052, "PARENT"},
	{0x053, "NEEDS_TEST"}, {0x054, "NO_RESULT"}, {0x055, "SENSITIVE"},
};

static const struct rc_name rc_warn[] = { /* format 0, RC_WARN + n */
	{0x001, "CONTEXT_GAP"}, {0x002, "OBJECT_MEMORY"}, {0x003, "SESSION_MEMORY"},
	{0x004, "MEMORY"}, {0x005, "SESSION_HANDLES"}, {0x006, "OBJECT_HANDLES"},
	{0x007, "LOCALITY"}, {0x008, "YIELDED"}, {0x009, "CANCELED"}, {0x00A, "TESTING"},
	{0x010, "REFERENCE_H0"}, {0x011, "REFERENCE_H1"}, {0x012, "REFERENCE_H2"},
	{0x013, "REFERENCE_H3"}, {0x014, "REFERENCE_H4"}, {0x015, "REFERENCE_H5"},
	{0x016, "REFERENCE_H6"}, {0x018, "REFERENCE_S0"}, {0x019, "REFERENCE_S1"},
	{0x01A, "REFERENCE_S2"}, {0x01B, "REFERENCE_S3"}, {0x01C, "REFERENCE_S4"},
	{0x01D, "REFERENCE_S5"}, {0x01E, "REFERENCE_S6"}, {0x020, "NV_RATE"},
	{0x021, "LOCKOUT"}, {0x022, "RETRY"}, {0x023, "NV_UNAVAILABLE"},
};

static const struct rc_name rc_fmt1[] = { /* format 1, RC_FMT1 + n */
	{0x001, "ASYMMETRIC"}, {0x002, "ATTRIBUTES"}, {0x003, "HASH"}, {0x004, "VALUE"},
	{0x005, "HIERARCHY"}, {0x007, "KEY_SIZE"}, {0x008, "MGF"}, {0x009, "MODE"},
	{0x00A, "TYPE"}, {0x00B, "HANDLE"}, {0x00C, "KDF"}, {0x00D, "RANGE"},
	{0x00E, "AUTH_FAIL"}, {0x00F, "NONCE"}, {0x010, "PP"}, {0x012, "SCHEME"},
	{0x015, "SIZE"}, {0x016, "SYMMETRIC"}, {0x017, "TAG"}, {0x018, "SELECTOR"},
	{0x01A, "INSUFFICIENT"}, {0x01B, "SIGNATURE"}, {0x01C, "KEY"}, {0x01D, "POLICY_FAIL"},
	{0x01F, "INTEGRITY"}, {0x020, "TICKET"}, {0x021, "RESERVED_BITS"}, {0x022, "BAD_AUTH"},
	{0x023, "EXPIRED"}, {0x024, "POLICY_CC"}, {0x025, "BINDING"}, {0x026, "CURVE"},
	{0x027, "ECC_POINT"},
};

static const char *rc_lookup(const struct rc_name *t, size_t n, uint32_t code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

#define LOOKUP(tab, c) rc_lookup(tab, sizeof tab / sizeof tab[0], c)

const char *tpm2_rc_str(uint32_t rc, char *buf, size_t n)
{
	const char *name;

	if (rc == 0) {
		plat_snprintf(buf, n, "TPM_RC_SUCCESS");
	} else if (rc & 0x080) {
		/* Format 1: bits 0-5 the error, bit 6 P (a parameter), bits 8-11
		 * N: the parameter's number, else a handle 1-7 or a session 8-15. */
		uint32_t e = rc & 0x3f, num = (rc >> 8) & 0xf;
		char where[24] = "";
		if (rc & 0x040)
			plat_snprintf(where, sizeof where, " (parameter %u)", num);
		else if (num & 8)
			plat_snprintf(where, sizeof where, " (session %u)", num - 8);
		else if (num)
			plat_snprintf(where, sizeof where, " (handle %u)", num);
		if ((name = LOOKUP(rc_fmt1, e)))
			plat_snprintf(buf, n, "TPM_RC_%s%s", name, where);
		else
			plat_snprintf(buf, n, "TPM_RC_0x%x%s (format 1, unknown error %#x)", rc, where, e);
	} else if (!(rc & 0x100)) {
		plat_snprintf(buf, n, "TPM 1.2 response code %#x", rc);
	} else if (rc & 0x400) {
		plat_snprintf(buf, n, "TPM_RC_0x%x (vendor-defined)", rc);
	} else if (rc & 0x800) {
		if ((name = LOOKUP(rc_warn, rc & 0x7f)))
			plat_snprintf(buf, n, "TPM_RC_%s (warning)", name);
		else
			plat_snprintf(buf, n, "TPM_RC_0x%x (warning)", rc);
	} else if ((name = LOOKUP(rc_ver1, rc & 0x7f))) {
		plat_snprintf(buf, n, "TPM_RC_%s", name);
	} else {
		plat_snprintf(buf, n, "TPM_RC_0x%x", rc);
	}
	return buf;
}

