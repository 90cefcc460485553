/*
 * tests/fuzz/fuzz_jinja.c — libFuzzer target for the Jinja interpreter
 * (llm/jinja*.c): any bytes as a chat template, rendered for a fixed
 * conversation with a small arena and step budget (so each input ends fast).
 * The first byte picks the options: bit 0 a system message first, bit 1 the
 * generation prompt, bit 2 a tools array, bits 3-4 the arena (16 KiB..2 MiB),
 * bits 5-7 the output buffer's size.
 *
 * Checks: success is a NUL-terminated text of the length reported, its spans
 * in order inside it; failure is one error line naming the template; the
 * arena is never written past (a guard after it stays intact).
 */
#include <stdlib.h>
#include <string.h>

#include "../../llm/jinja.h"

#define GUARD 64
static uint8_t arena[(2u << 20) + GUARD];
static char src[1 << 16], out[1 << 16];

/* with the tools (bit 2): the assistant's message holds a call, a tool
 * result follows it (each message's extra members, as the API makes them) */
static const char *const extra[] = {
	NULL, NULL,
	"{\"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", "
	"\"arguments\": \"{\\\"a\\\": [1, \\\"<|im_end|>\\\"]}\"}, \"id\": \"call00001\"}]}",
	"{\"name\": \"f\", \"tool_call_id\": \"call00001\"}",
};
static const struct chat_msg conv[] = {
	{"system", "You are a helpful assistant"},
	{"user", "Hello <|im_end|>"},
	{"assistant", "   Hi there   "},
	{"user", "caf\xc3\xa9?"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t arenas[4] = {16u << 10, 128u << 10, 512u << 10, 2u << 20};
	struct tok_span spans[16];
	char err[200] = "";

	if (size < 1 || size > sizeof src)
		return 0;
	uint8_t o = data[0];
	memcpy(src, data + 1, size - 1);
	size_t asz = arenas[(o >> 3) & 3], cap = (size_t)64 << (o >> 5);
	memset(arena + asz, 0xa5, GUARD);
	struct jinja_input in = {o & 1 ? conv : conv + 1, o & 1 ? 4 : 3, (o & 2) != 0, "<s>", "</s>",
				 o & 4 ? "[{\"type\": \"function\", \"function\": {\"name\": \"f\", "
					 "\"parameters\": {\"a\": [1, 2.5, null, true]}}}]" : NULL,
				 false, "2026-11-28", o & 4 ? extra + (o & 1 ? 0 : 1) : NULL, false};
	struct jinja_limits lim = {arena, asz, 200000};
	struct jinja_out jo = {out, cap, 0, spans, 16, 0};
	int r = jinja_chat(src, size - 1, &in, &lim, &jo, err, sizeof err);
	for (int i = 0; i < GUARD; i++)
		if (arena[asz + i] != 0xa5)
			abort();
	if (r == 0) {
		size_t end = 0;
		if (jo.len >= cap || out[jo.len] != 0)
			abort();
		for (size_t i = 0; i < jo.n_spans; i++) {
			if (spans[i].off < end || spans[i].off + spans[i].len > jo.len || !spans[i].len)
				abort();
			end = spans[i].off + spans[i].len;
		}
	} else if (r > 0 || !err[0] || strchr(err, '\n') || strlen(err) >= sizeof err) {
		abort();
	}
	return 0;
}
