/*
 * llm/unicode.h — the little Unicode the tokenizers need.
 *
 * UTF-8 decoding with llama.cpp's rules (src/unicode.cpp: a bad sequence
 * becomes U+FFFD and consumes one byte; overlong forms are not rejected),
 * code point classes (general category group + White_Space, from the
 * generated table in unicode_data.c), and GPT-2's byte-to-unicode map
 * (openai/gpt-2 encoder.py bytes_to_unicode).
 */
#ifndef LLM_UNICODE_H
#define LLM_UNICODE_H

#include "../kernel/platform.h"

/* General category group (UAX #44, table 12); Cn is UNI_UNDEF. */
enum uni_class {
	UNI_UNDEF = 0,
	UNI_C = 1, /* Cc Cf Cs Co */
	UNI_L = 2,
	UNI_M = 3,
	UNI_N = 4,
	UNI_P = 5,
	UNI_S = 6,
	UNI_Z = 7,
	UNI_CLASS_MASK = 0x0f,
	UNI_WS = 0x80, /* PropList White_Space */
};

struct uni_range {
	uint32_t first;
	uint8_t cls;
};
extern const struct uni_range uni_ranges[];
extern const uint32_t uni_n_ranges;

/* Class byte of code point cp (UNI_UNDEF above U+10FFFF). */
uint8_t uni_class(uint32_t cp);

static inline bool uni_is_ws(uint8_t c) { return (c & UNI_WS) != 0; }
static inline bool uni_is_letter(uint8_t c) { return (c & UNI_CLASS_MASK) == UNI_L; }
static inline bool uni_is_number(uint8_t c) { return (c & UNI_CLASS_MASK) == UNI_N; }
static inline bool uni_is_punct(uint8_t c) { return (c & UNI_CLASS_MASK) == UNI_P; }

/* Length of the UTF-8 sequence a lead byte announces (1 for stray bytes). */
size_t uni_utf8_len(uint8_t lead);
/* Decode one code point at s[*off] (n bytes in all) and advance *off. */
uint32_t uni_utf8_decode(const char *s, size_t n, size_t *off);
/* Encode cp into out (4 bytes room); returns the length, 0 above 0x1FFFFF (the
 * decoder's range, so any decoded code point encodes back to its bytes). */
size_t uni_utf8_encode(uint32_t cp, char *out);

/* GPT-2 byte-level BPE: the code point standing for byte b, and back (-1 if none). */
uint32_t uni_byte_to_cp(uint8_t b);
int uni_cp_to_byte(uint32_t cp);

#endif
