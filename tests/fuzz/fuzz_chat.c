/*
 * tests/fuzz/fuzz_chat.c — libFuzzer target for chat --messages: the JSON
 * reader (shell/json_msgs.c) on any bytes, and every template (llm/chat.c)
 * on what it reads, into a roomy buffer and into one cut short. The first
 * byte picks the short buffer's size; the rest is the JSON.
 *
 * Checks: the reader fails with a message or returns at most its maximum
 * of messages, each role and content a NUL-terminated string inside its
 * store; a template's result is NUL-terminated at the length it reports,
 * its spans in order inside it; a short buffer is -LLMK_ERANGE or the
 * same text; detection of the input as a template never fails.
 */
#include <stdlib.h>
#include <string.h>

#include "../../shell/json_msgs.h"

static char store[8192], json[8192], big[1 << 16], small[1 << 16];

static bool inside(const char *s)
{
	return s >= store && s < store + sizeof store && memchr(s, 0, (size_t)(store + sizeof store - s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chat_msg msgs[JSON_MSGS_MAX];
	struct tok_span spans[JSON_MSGS_MAX];
	char err[160] = "";
	size_t n, cut;

	if (size < 1 || size > sizeof json - 1)
		return 0;
	cut = (size_t)data[0] * 16;
	memcpy(json, data + 1, size - 1);
	json[size - 1] = 0;
	(void)chat_detect(json);
	if (json_msgs_parse(json, msgs, JSON_MSGS_MAX, &n, store, sizeof store, err, sizeof err)) {
		if (!err[0])
			abort();
		return 0;
	}
	if (n > JSON_MSGS_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!inside(msgs[i].role) || !inside(msgs[i].content))
			abort();
	for (int t = 1; t < CHAT_N; t++) {
		size_t len = 0, ns = 0, len2 = 0;
		int r = chat_format_spans((enum chat_tmpl)t, msgs, n, true, big, sizeof big, &len, spans,
					  JSON_MSGS_MAX, &ns);
		if (r == -LLMK_EINVAL)
			continue; /* a role that is no word, or a detection-only row */
		if (r)
			abort();
		if (len >= sizeof big || big[len] || strlen(big) != len || ns > JSON_MSGS_MAX)
			abort();
		for (size_t i = 0; i < ns; i++)
			if (spans[i].off + spans[i].len > len ||
			    (i && spans[i].off < spans[i - 1].off + spans[i - 1].len))
				abort();
		r = chat_format((enum chat_tmpl)t, msgs, n, true, small, cut, &len2);
		if (r == 0 && (len2 != len || memcmp(small, big, len)))
			abort();
		if (r && r != -LLMK_ERANGE)
			abort();
	}
	return 0;
}
