/*
 * shell/json_msgs.h — an OpenAI-style messages array, as chat --messages
 * takes it: [{"role": "user", "content": "hi"}, ...].
 *
 * Small and strict on purpose (RFC 8259 grammar, no extensions): the whole
 * text is one array of objects; each object has a string "role" and a
 * string "content" (other keys, any JSON value, are skipped); nesting is at
 * most JSON_MSGS_DEPTH deep. A later OpenAI API brings a JSON parser of its
 * own; this one is kept to this use, so it can be replaced.
 */
#ifndef SHELL_JSON_MSGS_H
#define SHELL_JSON_MSGS_H

#include "../kernel/platform.h"
#include "../llm/chat.h"

#define JSON_MSGS_MAX 64
#define JSON_MSGS_DEPTH 16

/*
 * Parse json (NUL-terminated) into msgs[0..*n) (at most max), their
 * decoded strings (UTF-8, NUL-terminated) kept in store[0..cap). Returns
 * 0; -LLMK_EINVAL for malformed input or a missing role or content,
 * -LLMK_ERANGE past max messages, cap bytes or the depth. err then says
 * what and at which byte.
 */
int json_msgs_parse(const char *json, struct chat_msg *msgs, size_t max, size_t *n, char *store,
		    size_t cap, char *err, size_t errlen);

#endif
