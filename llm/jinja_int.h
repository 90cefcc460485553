/*
 * llm/jinja_int.h — the Jinja interpreter's insides, shared by its parser
 * (jinja_parse.c), evaluator (jinja.c) and built-ins (jinja_fn.c).
 *
 * Every allocation is from one bump arena; nothing is freed before the
 * render ends. Strings carry a taint map (a byte per byte, NULL: none) so
 * the messages' own text is known wherever the template moved it.
 */
#ifndef LLM_JINJA_INT_H
#define LLM_JINJA_INT_H

#include "jinja.h"

#define JJ_PARSE_DEPTH 128 /* nesting of expressions, blocks and elif links */
#define JJ_CALL_DEPTH 16   /* macro calls within macro calls */
#define JJ_EVAL_DEPTH 200  /* the evaluator's recursion, all counted */

enum jj_type { JV_UNDEF, JV_NONE, JV_BOOL, JV_INT, JV_FLOAT, JV_STR, JV_LIST, JV_DICT,
	       JV_MACRO, JV_FN, JV_METHOD };

struct jj_list;
struct jj_dict;
struct jj_node;

struct jv {
	uint8_t t;
	uint8_t ns;       /* a dict made by namespace(): attributes are settable */
	uint16_t fn;      /* JV_FN, JV_METHOD: which built-in */
	uint32_t n;       /* JV_STR, JV_FLOAT: length */
	const uint8_t *tm; /* JV_STR: taint, a byte per byte; NULL: none */
	union {
		int64_t i;             /* JV_BOOL, JV_INT */
		const char *s;         /* JV_STR, JV_FLOAT (its text) */
		struct jj_list *l;
		struct jj_dict *d;
		const struct jj_node *m; /* JV_MACRO */
		struct jv *self;       /* JV_METHOD: the receiver */
	} u;
};

struct jj_list {
	uint32_t n, cap;
	struct jv *v;
};

struct jj_dict {
	uint32_t n, cap;
	struct jv *k, *v;
};

/* ---- the tree ---- */
enum jj_kind {
	/* expressions */
	N_LIT, N_NAME, N_ATTR, N_INDEX, N_SLICE, N_CALL, N_KWARG, N_FILTER, N_TEST,
	N_BIN, N_NOT, N_NEG, N_COND, N_LIST, N_DICT,
	/* statements */
	N_TEXT, N_OUT, N_IF, N_FOR, N_SET, N_SETBLOCK, N_FILTERBLOCK, N_MACRO, N_BREAK, N_CONTINUE,
	N_SEQ
};

enum jj_op { OP_ADD = 1, OP_SUB, OP_MUL, OP_DIV, OP_FDIV, OP_MOD, OP_POW, OP_CAT,
	     OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_NOTIN, OP_AND, OP_OR };

struct jj_node {
	uint8_t k, op;
	bool neg;            /* N_TEST: `is not` */
	uint32_t pos;        /* offset in the source, for errors */
	const char *s;       /* a name (N_NAME, N_ATTR, N_FILTER, N_TEST, N_KWARG, N_SET, N_MACRO)
				or text (N_TEXT) */
	uint32_t sn;
	struct jv lit;       /* N_LIT */
	struct jj_node *a, *b, *c, *d;
	struct jj_node **kid; /* args, items, statements, loop names, macro params */
	uint32_t nk;
};

/* ---- the state of one render ---- */
struct jj_var {
	const char *name;
	uint32_t n;
	struct jv v;
};

struct jj_frame {
	struct jj_frame *up;
	struct jj_var *v;
	uint32_t n, cap;
};

struct jj_buf {
	char *p;
	uint8_t *tm; /* NULL until a tainted byte comes */
	uint32_t n, cap;
};

struct jj {
	uint8_t *arena;
	size_t used, size;
	uint32_t steps, depth, calls;
	int err;                /* 0, or the first error (all work stops) */
	char *msg;
	size_t msglen;
	const char *src;
	size_t srclen;
	struct jj_frame *globals, *cur;
	struct jj_buf *out;
	uint8_t brk;            /* 1: break, 2: continue pending */
	const char *today;      /* strftime_now's date, "YYYY-MM-DD"; NULL: no such function */
};

void *jj_alloc(struct jj *j, size_t n);
void jj_fail(struct jj *j, int code, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool jj_name_is(const char *s, uint32_t n, const char *want);

/* ---- tokens (jinja_lex.c) ---- */
enum { T_EOF, T_TEXT, T_VO, T_VC, T_BO, T_BC, T_NAME, T_STR, T_INT, T_FLOAT, T_OP };

struct jj_tok {
	uint8_t t;
	uint32_t pos;   /* offset in the source */
	const char *s;  /* T_STR: its unescaped text (arena); else the source's bytes */
	uint32_t n;
	int64_t i;      /* T_INT */
};

/* the lexer's output and the parser's place in it */
struct jj_ps {
	struct jj *j;
	struct jj_tok *t;
	uint32_t nt, cap, at, depth;
	uint32_t loops; /* for bodies around the parser's place (break/continue need one) */
};

/* jinja_lex.c: the whole template as tokens into p->t (T_EOF last) */
bool jj_lex(struct jj_ps *p);

/* jinja_parse.c: the whole template as an N_SEQ, or NULL (j->err set) */
struct jj_node *jj_parse(struct jj *j);

/* jinja_value.c */
struct jv jj_str(struct jj *j, const char *s, uint32_t n, const uint8_t *tm);
struct jv jj_cstr(const char *s);
struct jv jj_int(int64_t i);
struct jv jj_bool(bool b);
struct jv jj_none(void);
bool jj_truthy(const struct jv *v);
bool jj_equal(const struct jv *a, const struct jv *b);
void jj_list_push(struct jj *j, struct jj_list *l, struct jv v);
struct jj_list *jj_list_new(struct jj *j, uint32_t cap);
struct jj_dict *jj_dict_new(struct jj *j, uint32_t cap);
void jj_dict_set(struct jj *j, struct jj_dict *d, struct jv k, struct jv v);
struct jv *jj_dict_get(struct jj_dict *d, const char *k, uint32_t n);
struct jv *jj_dict_find(struct jj_dict *d, const struct jv *k);
void jj_buf_put(struct jj *j, struct jj_buf *b, const char *s, uint32_t n, const uint8_t *tm);
void jj_buf_putc(struct jj *j, struct jj_buf *b, char c);
struct jv jj_buf_str(struct jj_buf *b);
void jj_to_str(struct jj *j, struct jj_buf *b, const struct jv *v); /* as str(v) */

/* jinja.c */
struct jv jj_getattr(struct jj *j, const struct jv *o, const char *name, uint32_t n);
struct jv jj_call_value(struct jj *j, const struct jv *f, struct jv *args, uint32_t na,
			const struct jj_node *const *kw, struct jv *kwv, uint32_t nkw, uint32_t pos);
bool jj_step(struct jj *j, uint32_t pos);

/* jinja_fn.c: built-ins */
struct jv jj_filter(struct jj *j, const char *name, uint32_t n, struct jv *args, uint32_t na,
		    const struct jj_node *const *kw, struct jv *kwv, uint32_t nkw, uint32_t pos);
bool jj_test(struct jj *j, const char *name, uint32_t n, const struct jv *v, struct jv *args,
	     uint32_t na, uint32_t pos);
struct jv jj_method(struct jj *j, const struct jv *self, const char *name, uint32_t n,
		    uint32_t pos);
struct jv jj_builtin_call(struct jj *j, const struct jv *f, struct jv *args, uint32_t na,
			  const struct jj_node *const *kw, struct jv *kwv, uint32_t nkw, uint32_t pos);
int jj_builtin_global(const char *name, uint32_t n); /* its fn id, or -1 */

/* jinja_json.c */
void jj_tojson(struct jj *j, struct jj_buf *b, const struct jv *v, int indent, int level);
struct jv jj_json_parse(struct jj *j, const char *s, size_t n);

#endif
