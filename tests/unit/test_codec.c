/*
 * tests/unit/test_codec.c — llm/codec.c: hex and base64 against their
 * definitions (RFC 4648 §8 and §4).
 */
#include "test.h"
#include "../../llm/codec.h"

#include <string.h>

/* The plain reading of a hex digit, to hold the constant-time one against. */
static int hex_ref(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int b64_ref(int c)
{
	const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c > 0 && c < 256 ? strchr(a, c) : NULL;
	return p ? (int)(p - a) : -1;
}

TEST(codec_digits_read_every_character_as_their_definition_does)
{
	for (int c = -300; c < 600; c++) {
		CHECK_EQ_INT(hex_digit(c), hex_ref(c));
		CHECK_EQ_INT(b64_digit(c), b64_ref(c));
	}
	CHECK_EQ_INT(hex_digit((char)0xb0), -1); /* a signed char above 0x7f */
	CHECK_EQ_INT(hex_digit(0x7fffffff), -1);
	CHECK_EQ_INT(b64_digit(-2147483647 - 1), -1);
}

TEST(codec_hex_round_trips_and_names_the_first_bad_digit)
{
	uint8_t b[4], in[3] = {0x00, 0xaf, 0x5c};
	char s[7];
	size_t bad = 99;

	CHECK_STR(hex_encode(in, 3, s), "00af5c");
	CHECK_EQ_INT(hex_decode("00AF5c", 6, b, sizeof b, NULL), 3);
	CHECK(memcmp(b, in, 3) == 0);
	CHECK_EQ_INT(hex_decode("", 0, b, sizeof b, NULL), 0);
	CHECK_EQ_INT(hex_decode("00g1", 4, b, sizeof b, &bad), -LLMK_EFORMAT);
	CHECK_EQ_INT((long)bad, 2);
	CHECK_EQ_INT(hex_decode("0 01", 4, b, sizeof b, &bad), -LLMK_EFORMAT);
	CHECK_EQ_INT((long)bad, 1);
	CHECK_EQ_INT(hex_decode("abc", 3, b, sizeof b, &bad), -LLMK_EFORMAT);
	CHECK_EQ_INT((long)bad, 3);
	CHECK_EQ_INT(hex_decode("0011223344", 10, b, sizeof b, NULL), -LLMK_ERANGE);
}

TEST(codec_base64_matches_rfc4648_and_refuses_noncanonical_text)
{
	/* RFC 4648 §10 */
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
					  "Zm9vYmFy"};
	for (int i = 0; i < 7; i++) {
		char out[16];
		uint8_t back[16];
		CHECK_EQ_INT(b64_encode(plain[i], strlen(plain[i]), out, sizeof out),
			     (long)strlen(enc[i]));
		CHECK_STR(out, enc[i]);
		long n = b64_decode(enc[i], strlen(enc[i]), back, sizeof back);
		CHECK_EQ_INT(n, (long)strlen(plain[i]));
		CHECK(n >= 0 && memcmp(back, plain[i], (size_t)n) == 0);
	}
	uint8_t b[16];
	static const char *const bad[] = {"Zg=", "Zg=a", "Z===", "Zh==", "Zm9v\n", "Zm 9",
					  "Zg==Zg==", "Zm9*"};
	for (int i = 0; i < 8; i++)
		CHECK_EQ_INT(b64_decode(bad[i], strlen(bad[i]), b, sizeof b), -LLMK_EFORMAT);
	CHECK_EQ_INT(b64_decode("Zm9vYmFy", 8, b, 5), -LLMK_ERANGE);
	char small[8];
	CHECK_EQ_INT(b64_encode("foobar", 6, small, sizeof small), -LLMK_ERANGE);
}
