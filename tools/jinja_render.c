/*
 * tools/jinja_render.c — run a chat template file through llm/jinja.c for one
 * of a few fixed conversations, as tools/jinja_ref.mjs runs it through
 * @huggingface/jinja (HF's own JS port), so tools/jinja_ref.sh can compare.
 *
 *   jinja_render TEMPLATE.jinja sys|nosys|tools [--chat]
 *
 * sys: a system message, then user/assistant/user; nosys: the same without
 * the system message; tools: nosys with a tools array. The context is
 * messages, bos_token "<s>", eos_token "</s>", add_generation_prompt true,
 * strftime_now's date today's (local), as the reference's. Raw (as the reference) unless --chat (then
 * llama.cpp's system-role merge). Prints the text, or "ERROR: ..." (exit 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../llm/jinja.h"

#define TOOLS "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": " \
	"\"The weather in a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": " \
	"{\"type\": \"string\"}}, \"required\": [\"city\"]}}}]"

static const struct chat_msg conv[] = {
	{"system", "You are a helpful assistant"},
	{"user", "Hello"},
	{"assistant", "Hi there"},
	{"user", "Who are you"},
};

int main(int argc, char **argv)
{
	static char src[1 << 20], out[1 << 18], err[256];
	size_t n;
	FILE *f;

	if (argc < 3 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: jinja_render TEMPLATE sys|nosys|tools [--chat]\n");
		return 2;
	}
	n = fread(src, 1, sizeof src, f);
	fclose(f);
	char today[16];
	time_t now = time(NULL);
	strftime(today, sizeof today, "%Y-%m-%d", localtime(&now));
	bool sys = strcmp(argv[2], "sys") == 0;
	struct jinja_input in = {sys ? conv : conv + 1, sys ? 4 : 3, true, "<s>", "</s>",
				 strcmp(argv[2], "tools") == 0 ? TOOLS : NULL, false, today, NULL, false};
	struct jinja_limits lim = {malloc(JINJA_ARENA_DEFAULT), JINJA_ARENA_DEFAULT, JINJA_STEPS_DEFAULT};
	struct jinja_out o = {out, sizeof out, 0, NULL, 0, 0};
	bool chat = argc > 3 && strcmp(argv[3], "--chat") == 0;
	int r = chat ? jinja_chat(src, n, &in, &lim, &o, err, sizeof err)
		     : jinja_render(src, n, &in, &lim, &o, err, sizeof err);
	if (r) {
		printf("ERROR: %s\n", err);
		return 1;
	}
	fwrite(out, 1, o.len, stdout);
	return 0;
}
