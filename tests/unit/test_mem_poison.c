/*
 * tests/unit/test_mem_poison.c — the sanitizer build's poisoning (llm/mem.h,
 * LLMK_POISON): AddressSanitizer sees one byte past an object in the
 * engine's page-backed memory (an llm_mem allocation, an arena object).
 *
 * Each bad access runs in a child process (a death test): the child must die
 * with ASan's report (use-after-poison) and a non-zero status, and the same
 * access one byte earlier must leave it alive and silent, so a test that
 * passes shows the byte itself is what was caught. Built in the ASan
 * flavor only: elsewhere there is nothing to catch the write.
 */
#include "test.h"
#include "../../llm/mem.h"

#if LLM_MEM_REDZONE
#include <sys/wait.h>
#include <unistd.h>

/* fn(arg) in a child with its stderr in report[cap]: the child's exit
 * status, 128 + the signal that ended it, or -1 if it could not run. */
static int in_child(void (*fn)(void *), void *arg, char *report, size_t cap)
{
	int pfd[2], st;
	size_t got = 0;
	char sink[512];
	pid_t pid;

	report[0] = 0;
	if (pipe(pfd))
		return -1;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		close(pfd[0]);
		dup2(pfd[1], 2);
		fn(arg);
		_exit(0); /* not caught: no atexit handlers, no leak check */
	}
	close(pfd[1]);
	for (;;) {
		bool room = got + 1 < cap;
		ssize_t k = read(pfd[0], room ? report + got : sink, room ? cap - 1 - got : sizeof sink);
		if (k <= 0)
			break;
		if (room)
			got += (size_t)k;
	}
	report[got] = 0;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct poke {
	volatile uint8_t *p; /* the byte written (or, if read, read) */
	bool read;
};

static void poke_run(void *arg)
{
	struct poke *k = arg;

	if (k->read) {
		uint8_t v = *k->p;
		__asm__ volatile("" : : "r"(v));
	} else {
		*k->p = 0x5a;
	}
}

/* The access to the last byte of an object passes; the access to the byte
 * after it (at bad) dies with ASan's report of a poisoned byte. */
static bool caught(const char *what, volatile uint8_t *good, volatile uint8_t *bad, bool read)
{
	struct poke ok = {good, read}, no = {bad, read};
	char report[8192];
	int st;

	st = in_child(poke_run, &ok, report, sizeof report);
	if (st != 0) {
		fprintf(stderr, "  %s: the access in bounds ended the child (%d):\n%.600s\n", what,
			st, report);
		return false;
	}
	st = in_child(poke_run, &no, report, sizeof report);
	if (st == 0 || !strstr(report, "ERROR: AddressSanitizer: use-after-poison")) {
		fprintf(stderr, "  %s: the access one byte past was not caught (status %d):\n%.600s\n",
			what, st, report);
		return false;
	}
	return true;
}

TEST(poison_catches_a_write_past_an_allocation)
{
	struct llm_mem m;
	uint8_t *a, *b;

	llm_mem_init(&m, 0);
	a = llm_mem_alloc(&m, 5000, NULL); /* the tail of its second page */
	b = llm_mem_alloc(&m, 8192, NULL); /* whole pages: the guard page after */
	CHECK(a && b);
	CHECK(caught("5000 bytes, byte 5000", a + 4999, a + 5000, false));
	CHECK(caught("8192 bytes, byte 8192", b + 8191, b + 8192, false));
	CHECK(caught("8192 bytes, byte -1", b, b - 1, false));
	CHECK(caught("8192 bytes, reading byte 8192", b + 8191, b + 8192, true));
	llm_mem_free(&m, a, 5000);
	llm_mem_free(&m, b, 8192);
	CHECK_EQ_INT(m.used, 0);
}

TEST(poison_catches_a_write_past_an_arena_object)
{
	struct llm_mem m;
	struct llm_arena a;
	uint8_t *x, *y, *big;
	char *s;

	llm_mem_init(&m, 0);
	llm_arena_init(&a, &m);
	x = llm_arena_alloc(&a, 24, 8);
	y = llm_arena_alloc(&a, 24, 8); /* the next object, right after x's redzone */
	s = llm_arena_strndup(&a, "hello world", 5);
	big = llm_arena_alloc(&a, 3 << 20, 64); /* a chunk of its own */
	CHECK(x && y && s && big);
	CHECK((size_t)(y - x) >= 24 + LLM_MEM_REDZONE);
	CHECK(caught("24-byte object, byte 24", x + 23, x + 24, false));
	CHECK(caught("24-byte object, byte 24 read", x + 23, x + 24, true));
	CHECK(caught("strndup of 5, byte 6", (uint8_t *)s + 5, (uint8_t *)s + 6, false));
	CHECK(caught("3 MiB object, the byte after", big + (3 << 20) - 1, big + (3 << 20), false));
	/* the next object stays usable, and so does a chunk's free tail */
	y[0] = 1;
	CHECK(llm_arena_alloc(&a, 100, 1) != NULL);
	llm_arena_free(&a);
	CHECK_EQ_INT(m.used, 0);
}

#endif
