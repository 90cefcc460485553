/*
 * shell/text.c — strings that come from files (a GGUF's general.name and
 * other metadata, an error quoting them, a disk's id, a model's generated
 * text) made safe for the terminal before the shell prints them.
 *
 * A terminal acts on what it is sent: ESC starts a control sequence (clear
 * the screen, move the cursor, set the title, write the clipboard), CR and
 * LF start a new line that may then say "error: ..." as if the shell had.
 * So a name is printed only as printable characters: C0 and C1 controls,
 * DEL, bytes that are not UTF-8 (a lone 0x9b is CSI to an 8-bit terminal),
 * overlong forms and the invisible direction and line-separator characters
 * (Unicode UAX #9 explicit formatting: U+200E/F, U+202A..E, U+2066..9; and
 * U+2028/9) each become '?'. Text a model generates keeps its newlines and
 * tabs, and is sent as it streams, so there only the ASCII controls go.
 */
#include "shell.h"
#include "../llm/unicode.h"

static bool unsafe(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

const char *shell_clean(const char *s, size_t len, char *buf, size_t cap)
{
	size_t i = 0, n = 0;

	if (!cap)
		return "";
	while (i < len) {
		size_t at = i, k;
		char enc[4];
		uint32_t cp = uni_utf8_decode(s, len, &i);
		/* 0xFFFD from one byte: not UTF-8; a longer encoding than the
		 * code point needs: overlong */
		bool bad = unsafe(cp) || (cp == 0xFFFD && i - at == 1) ||
			   uni_utf8_encode(cp, enc) != i - at;

		k = bad ? 1 : i - at;
		/* leave room for "..." while more follows */
		if (n + k + (i < len ? 3 : 0) >= cap) {
			if (n + 3 < cap) {
				memcpy(buf + n, "...", 3);
				n += 3;
			}
			break;
		}
		if (bad)
			buf[n] = '?';
		else
			memcpy(buf + n, s + at, k);
		n += k;
	}
	buf[n] = 0;
	return buf;
}

void shell_write_text(const char *s, size_t n)
{
	char out[256];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		out[k++] = (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f ? '?' : (char)c;
		if (k == sizeof out) {
			plat_write(out, k);
			k = 0;
		}
	}
	if (k)
		plat_write(out, k);
}
