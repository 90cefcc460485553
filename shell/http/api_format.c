/*
 * shell/http/api_format.c — response_format, tools and tool_choice
 * (api_format.h): the request's answer shape as a grammar and a prompt,
 * and the reply's tool calls.
 */
#include "api_format.h"

/* ---- JSON values written back (for prompts, schemas and arguments) ---- */

static void indent(struct json_out *o, uint32_t depth)
{
	json_out_lit(o, "\n");
	for (uint32_t i = 0; i < depth; i++)
		json_out_lit(o, "    ");
}

/* A number as Python's repr writes it, as near as %g allows: the fewest
 * digits that read back the same, ".0" on a whole non-integer literal. */
static void num_out(struct json_out *o, const struct json_node *n)
{
	char b[40];
	int k = 0;

	if (n->is_int) {
		json_out_i64(o, n->i);
		return;
	}
	for (int p = 1; p <= 17; p++) {
		struct json_node nd[2];
		char st[8], e[64];
		struct json_doc d = {nd, 2, 0, st, sizeof st, 0, 1, sizeof b};
		k = plat_snprintf(b, sizeof b, "%.*g", p, n->num);
		if (json_parse(&d, b, (size_t)k, e, sizeof e) == 0 && nd[0].num == n->num)
			break;
	}
	json_out_raw(o, b, (size_t)k);
	bool whole = true;
	for (int i = 0; i < k; i++)
		whole &= b[i] != '.' && b[i] != 'e' && b[i] != 'n';
	if (whole)
		json_out_lit(o, ".0");
}

static void dump(struct json_out *o, const struct json_doc *d, const struct json_node *n,
		 enum api_json_style st, uint32_t depth)
{
	static const char *const sep[] = {",", ", ", ","};
	static const char *const col[] = {":", ": ", ": "};

	switch (n->type) {
	case JSON_NULL: json_out_lit(o, "null"); return;
	case JSON_TRUE: json_out_lit(o, "true"); return;
	case JSON_FALSE: json_out_lit(o, "false"); return;
	case JSON_NUMBER: num_out(o, n); return;
	case JSON_STRING: json_out_str(o, n->str, n->len); return;
	default: break;
	}
	bool obj = n->type == JSON_OBJECT;
	json_out_raw(o, obj ? "{" : "[", 1);
	for (const struct json_node *x = json_first(d, n); x; x = json_next(d, x)) {
		if (x != json_first(d, n))
			json_out_raw(o, sep[st], strlen(sep[st]));
		if (st == API_JSON_INDENT4)
			indent(o, depth + 1);
		if (obj) {
			json_out_cstr(o, x->key);
			json_out_raw(o, col[st], strlen(col[st]));
		}
		dump(o, d, x, st, depth + 1);
	}
	if (st == API_JSON_INDENT4 && n->count)
		indent(o, depth);
	json_out_raw(o, obj ? "}" : "]", 1);
}

void api_json_dump(struct json_out *o, const struct json_doc *d, const struct json_node *n,
		   enum api_json_style style)
{
	dump(o, d, n, style, 0);
}

/* ---- refusals ---- */

static int refuse(struct api_fmt *f, const char *param, const char *msg)
{
	plat_snprintf(f->param, sizeof f->param, "%s", param);
	plat_snprintf(f->err, sizeof f->err, "'%s' %s", param, msg);
	return -LLMK_EINVAL;
}

/* ---- the made text: NUL-terminated pieces in f->text ---- */

struct piece {
	struct json_out o;
	size_t at;
};

static void piece_open(struct api_fmt *f, struct piece *p)
{
	p->at = f->text_len;
	json_out_init(&p->o, f->text + f->text_len, sizeof f->text - f->text_len - 1);
}

/* The piece, NUL-terminated; NULL when it did not fit. */
static const char *piece_close(struct api_fmt *f, struct piece *p)
{
	if (p->o.overflow)
		return NULL;
	f->text_len += p->o.len;
	f->text[f->text_len++] = 0;
	return f->text + p->at;
}

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n > API_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* ---- response_format ---- */

/* f->gram parsed here, so a grammar the engine would refuse is the
 * client's 400; then it is the run's. */
static int check_grammar(struct api_fmt *f, const char *param, struct llm_mem *mem)
{
	char why[200];
	struct gram g;
	int r;

	if ((r = gram_parse(&g, mem, f->gram, strlen(f->gram), why, sizeof why))) {
		plat_snprintf(f->param, sizeof f->param, "%s", param);
		plat_snprintf(f->err, sizeof f->err, "'%s': %s", param, why);
		return r == -LLMK_ERANGE ? r : -LLMK_EINVAL;
	}
	gram_free(&g);
	f->grammar = f->gram;
	return 0;
}

/* The schema's grammar into f->gram (tools: a call's, wrapped per the
 * format). schema: JSON text in f->schema. */
static int convert(struct api_fmt *f, const char *param, struct llm_mem *mem, const char *wrap)
{
	char why[200];
	size_t len = strlen(f->schema), room = sizeof f->gram - 256;
	int r = gram_schema(f->schema, len, f->gram, room, mem, why, sizeof why);

	if (r) {
		plat_snprintf(f->param, sizeof f->param, "%s", param);
		plat_snprintf(f->err, sizeof f->err, "'%s': %s", param, why);
		return r == -LLMK_ERANGE ? r : -LLMK_EINVAL;
	}
	if (wrap) {
		/* the converter's last rule is "root ::= rN": it becomes "call" */
		char *root = NULL;
		size_t n = strlen(f->gram);
		for (size_t i = 0; i + 9 <= n; i++)
			if (memcmp(f->gram + i, "root ::= ", 9) == 0 && (i == 0 || f->gram[i - 1] == '\n'))
				root = f->gram + i;
		if (!root)
			return refuse(f, param, "could not be converted");
		memcpy(root, "call", 4);
		len = strlen(f->gram);
		plat_snprintf(f->gram + len, sizeof f->gram - len, "%s", wrap);
	}
	return check_grammar(f, param, mem);
}

static int schema_text(struct api_fmt *f, const struct json_doc *d, const struct json_node *s,
		       const char *param)
{
	struct json_out o;

	json_out_init(&o, f->schema, sizeof f->schema - 1);
	if (s)
		api_json_dump(&o, d, s, API_JSON_COMPACT);
	else
		json_out_lit(&o, "{}");
	if (o.overflow)
		return refuse(f, param, "is too large");
	f->schema[o.len] = 0;
	return 0;
}

static int response_format(struct api_fmt *f, const struct json_doc *d, struct llm_mem *mem)
{
	const struct json_node *rf = json_get(d, &d->nodes[0], "response_format"), *t, *js, *x;
	int r;

	/* llama-server's own members: a GBNF grammar, or a schema */
	const struct json_node *gx = json_get(d, &d->nodes[0], "grammar");
	const struct json_node *jx = json_get(d, &d->nodes[0], "json_schema");
	if (gx && gx->type == JSON_NULL)
		gx = NULL;
	if (jx && jx->type == JSON_NULL)
		jx = NULL;
	if (rf && rf->type == JSON_NULL)
		rf = NULL;
	if ((gx != NULL) + (jx != NULL) + (rf != NULL) > 1)
		return refuse(f, gx ? "grammar" : "json_schema",
			      "goes alone: one of grammar, json_schema and response_format");
	if (gx) {
		if (gx->type != JSON_STRING || gx->len + 1 > sizeof f->gram)
			return refuse(f, "grammar", "must be a GBNF grammar string (at most 256 KiB)");
		memcpy(f->gram, gx->str, gx->len + 1);
		return check_grammar(f, "grammar", mem);
	}
	if (jx) {
		if (jx->type != JSON_OBJECT)
			return refuse(f, "json_schema", "must be a JSON schema object");
		if ((r = schema_text(f, d, jx, "json_schema")))
			return r;
		return convert(f, "json_schema", mem, NULL);
	}
	if (!rf)
		return 0;
	if (rf->type != JSON_OBJECT)
		return refuse(f, "response_format", "must be an object");
	t = json_get(d, rf, "type");
	if (!t || t->type != JSON_STRING)
		return refuse(f, "response_format.type", "must be 'text', 'json_object' or 'json_schema'");
	if (strcmp(t->str, "text") == 0)
		return 0;
	if (strcmp(t->str, "json_object") == 0) {
		/* any JSON object; llama-server's "schema" member narrows it */
		x = json_get(d, rf, "schema");
		if (x && x->type != JSON_OBJECT && x->type != JSON_NULL)
			return refuse(f, "response_format.schema", "must be an object");
		if (x && x->type == JSON_OBJECT) {
			if ((r = schema_text(f, d, x, "response_format.schema")))
				return r;
			return convert(f, "response_format.schema", mem, NULL);
		}
		plat_snprintf(f->schema, sizeof f->schema, "{\"type\":\"object\"}");
		return convert(f, "response_format", mem, NULL);
	}
	if (strcmp(t->str, "json_schema") != 0)
		return refuse(f, "response_format.type", "must be 'text', 'json_object' or 'json_schema'");
	js = json_get(d, rf, "json_schema");
	if (!js || js->type != JSON_OBJECT)
		return refuse(f, "response_format.json_schema", "must be an object");
	x = json_get(d, js, "name");
	if (!x || x->type != JSON_STRING || !name_ok(x->str, x->len))
		return refuse(f, "response_format.json_schema.name",
			      "must be a name of a-z, A-Z, 0-9, '_' or '-' (at most 64)");
	x = json_get(d, js, "strict");
	if (x && x->type != JSON_TRUE && x->type != JSON_FALSE && x->type != JSON_NULL)
		return refuse(f, "response_format.json_schema.strict", "must be a boolean");
	x = json_get(d, js, "description");
	if (x && x->type != JSON_STRING)
		return refuse(f, "response_format.json_schema.description", "must be a string");
	x = json_get(d, js, "schema");
	if (x && x->type != JSON_OBJECT && x->type != JSON_NULL)
		return refuse(f, "response_format.json_schema.schema", "must be an object");
	if ((r = schema_text(f, d, x && x->type == JSON_OBJECT ? x : NULL,
			     "response_format.json_schema.schema")))
		return r;
	return convert(f, "response_format.json_schema.schema", mem, NULL);
}

/* ---- tools and tool_choice ---- */

static int read_tools(struct api_fmt *f, const struct json_doc *d, const struct json_node *tools)
{
	char p[64];
	uint32_t i = 0;

	if (tools->type != JSON_ARRAY)
		return refuse(f, "tools", "must be an array of function tools");
	if (tools->count > API_MAX_TOOLS)
		return refuse(f, "tools", "holds at most 32 tools");
	for (const struct json_node *t = json_first(d, tools); t; t = json_next(d, t), i++) {
		const struct json_node *ty = json_get(d, t, "type"), *fn = json_get(d, t, "function"), *x;
		plat_snprintf(p, sizeof p, "tools[%u]", i);
		if (t->type != JSON_OBJECT || !ty || ty->type != JSON_STRING || strcmp(ty->str, "function"))
			return refuse(f, p, "must be an object of type 'function'");
		plat_snprintf(p, sizeof p, "tools[%u].function", i);
		if (!fn || fn->type != JSON_OBJECT)
			return refuse(f, p, "must be an object");
		x = json_get(d, fn, "name");
		plat_snprintf(p, sizeof p, "tools[%u].function.name", i);
		if (!x || x->type != JSON_STRING || !name_ok(x->str, x->len))
			return refuse(f, p, "must be a name of a-z, A-Z, 0-9, '_' or '-' (at most 64)");
		for (size_t k = 0; k < f->n_tools; k++)
			if (strcmp(f->names[k], x->str) == 0)
				return refuse(f, p, "names a function listed before");
		memcpy(f->names[f->n_tools++], x->str, x->len + 1);
		x = json_get(d, fn, "description");
		plat_snprintf(p, sizeof p, "tools[%u].function.description", i);
		if (x && x->type != JSON_STRING)
			return refuse(f, p, "must be a string");
		x = json_get(d, fn, "parameters");
		plat_snprintf(p, sizeof p, "tools[%u].function.parameters", i);
		if (x && x->type != JSON_OBJECT)
			return refuse(f, p, "must be a JSON schema object");
	}
	return 0;
}

static int read_choice(struct api_fmt *f, const struct json_doc *d, const struct json_node *c,
		       const char **named)
{
	*named = NULL;
	f->choice = API_CHOICE_AUTO;
	if (!c || c->type == JSON_NULL)
		return 0;
	if (c->type == JSON_STRING) {
		if (strcmp(c->str, "auto") == 0)
			f->choice = API_CHOICE_AUTO;
		else if (strcmp(c->str, "none") == 0)
			f->choice = API_CHOICE_NONE;
		else if (strcmp(c->str, "required") == 0)
			f->choice = API_CHOICE_REQUIRED;
		else
			return refuse(f, "tool_choice", "must be 'none', 'auto', 'required' or "
				      "{\"type\": \"function\", \"function\": {\"name\": ...}}");
		return 0;
	}
	const struct json_node *ty = json_get(d, c, "type"), *fn = json_get(d, c, "function");
	const struct json_node *name = fn ? json_get(d, fn, "name") : NULL;
	if (c->type != JSON_OBJECT || !ty || ty->type != JSON_STRING || strcmp(ty->str, "function") ||
	    !fn || !name || name->type != JSON_STRING)
		return refuse(f, "tool_choice", "must be 'none', 'auto', 'required' or "
			      "{\"type\": \"function\", \"function\": {\"name\": ...}}");
	for (size_t k = 0; k < f->n_tools; k++)
		if (strcmp(f->names[k], name->str) == 0) {
			f->choice = API_CHOICE_NAMED;
			*named = f->names[k];
			return 0;
		}
	return refuse(f, "tool_choice.function.name", "names no function in 'tools'");
}

/* The grammar of a call (tool_choice required or named): the schema of
 * {"name": NAME, "arguments"/"parameters": ITS PARAMETERS} for each tool
 * allowed, converted, wrapped as the format writes a call. */
static int call_grammar(struct api_fmt *f, const struct json_doc *d, const struct json_node *tools,
			const char *named, struct llm_mem *mem)
{
	const char *args = f->style == API_TOOLS_LLAMA3 ? "parameters" : "arguments";
	struct json_out o;

	json_out_init(&o, f->schema, sizeof f->schema - 1);
	json_out_lit(&o, "{\"anyOf\":[");
	bool first = true;
	for (const struct json_node *t = json_first(d, tools); t; t = json_next(d, t)) {
		const struct json_node *fn = json_get(d, t, "function");
		const struct json_node *name = json_get(d, fn, "name"), *par = json_get(d, fn, "parameters");
		if (named && strcmp(name->str, named) != 0)
			continue;
		if (!first)
			json_out_lit(&o, ",");
		first = false;
		json_out_lit(&o, "{\"type\":\"object\",\"properties\":{\"name\":{\"const\":");
		json_out_str(&o, name->str, name->len);
		json_out_lit(&o, "},\"");
		json_out_raw(&o, args, strlen(args));
		json_out_lit(&o, "\":");
		if (par)
			api_json_dump(&o, d, par, API_JSON_COMPACT);
		else
			json_out_lit(&o, "{\"type\":\"object\"}");
		if (f->style == API_TOOLS_MISTRAL)
			json_out_lit(&o, ",\"id\":{\"type\":\"string\",\"pattern\":\"^[a-zA-Z0-9]{9}$\"}");
		json_out_lit(&o, "},\"required\":[\"name\",\"");
		json_out_raw(&o, args, strlen(args));
		if (f->style == API_TOOLS_MISTRAL)
			json_out_lit(&o, "\",\"id\"]}");
		else
			json_out_lit(&o, "\"]}");
	}
	json_out_lit(&o, "]");
	/* each tool's $defs / definitions move to the root, where its $refs
	 * ("#/$defs/X") are resolved; a name two tools define is refused */
	for (int k = 0; k < 2; k++) {
		const char *defs = k ? "definitions" : "$defs";
		const char *seen[128];
		uint32_t n_seen = 0;
		bool open = false;
		for (const struct json_node *t = json_first(d, tools); t; t = json_next(d, t)) {
			const struct json_node *fn = json_get(d, t, "function");
			const struct json_node *par = json_get(d, fn, "parameters");
			const struct json_node *df = par ? json_get(d, par, defs) : NULL;
			if (!df || df->type != JSON_OBJECT)
				continue;
			for (const struct json_node *x = json_first(d, df); x; x = json_next(d, x)) {
				for (uint32_t i = 0; i < n_seen; i++)
					if (strcmp(seen[i], x->key) == 0)
						return refuse(f, "tools", "define one $defs name twice");
				if (n_seen == 128)
					return refuse(f, "tools", "define over 128 $defs together");
				seen[n_seen++] = x->key;
				if (!open) {
					json_out_lit(&o, ",\"");
					json_out_raw(&o, defs, strlen(defs));
					json_out_lit(&o, "\":{");
					open = true;
				} else {
					json_out_lit(&o, ",");
				}
				json_out_cstr(&o, x->key);
				json_out_lit(&o, ":");
				api_json_dump(&o, d, x, API_JSON_COMPACT);
			}
		}
		if (open)
			json_out_lit(&o, "}");
	}
	json_out_lit(&o, "}");
	if (o.overflow)
		return refuse(f, "tools", "are too large together");
	f->schema[o.len] = 0;
	/* auto (lazy, from the first call on): chatml's further calls may
	 * follow, and Mistral's array may hold several */
	if (f->style == API_TOOLS_HERMES && f->choice == API_CHOICE_AUTO && !f->one_call)
		return convert(f, "tools", mem, "call-tag ::= \"<tool_call>\\n\" call "
			       "\"\\n</tool_call>\"\nroot ::= call-tag (\"\\n\" call-tag)*\n");
	if (f->style == API_TOOLS_MISTRAL && f->choice == API_CHOICE_AUTO && !f->one_call)
		return convert(f, "tools", mem, "root ::= \" \"? \"[\" call (\",\" \" \"? call)* \"]\"\n");
	/* mistral: the array after [TOOL_CALLS], a control token no grammar
	 * can match (its piece is no text): the model writes the array */
	return convert(f, "tools", mem, f->style == API_TOOLS_HERMES ?
		       "root ::= \"<tool_call>\\n\" call \"\\n</tool_call>\"\n" :
		       f->style == API_TOOLS_MISTRAL ? "root ::= \" \"? \"[\" call \"]\"\n" :
		       "root ::= call\n");
}

/* ---- messages ---- */

static const char TOOLS_HEAD[] =
	"# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
	"You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
static const char TOOLS_TAIL[] =
	"\n</tools>\n\nFor each function call, return a json object with function name and "
	"arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
	"{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
static const char LLAMA3_SYS[] =
	"Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
static const char LLAMA3_USER[] =
	"Given the following functions, please respond with a JSON for a function call with its "
	"proper arguments that best answers the given prompt.\n\n"
	"Respond in the format {\"name\": function name, \"parameters\": dictionary of argument "
	"name and its value}.Do not use variables.\n\n";

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Jinja's trim: s[0..*n) without its outer whitespace. */
static const char *trim(const char *s, size_t *n)
{
	while (*n && is_space(*s))
		s++, (*n)--;
	while (*n && is_space(s[*n - 1]))
		(*n)--;
	return s;
}

static int add_msg(struct api_fmt *f, const char *role, const char *content)
{
	if (!content)
		return refuse(f, "messages", "make a prompt too large");
	if (f->n_msgs >= ENGINE_MAX_MSGS)
		return refuse(f, "messages", "holds at most 256 messages");
	f->msgs[f->n_msgs].role = role;
	f->msgs[f->n_msgs++].content = content;
	return 0;
}

/* Mistral's templates take a call id of 9 letters and digits (and raise
 * on any other): one such is kept, another becomes 9 of them derived from
 * it (FNV-1a), the same for the call and for its result. */
static void id9(const char *s, size_t n, char out[10])
{
	static const char digits[] =
		"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	bool ok = n == 9;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		ok &= (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		h = (h ^ (uint8_t)c) * 0x100000001b3ull;
	}
	for (int i = 0; i < 9; i++, h /= 62)
		out[i] = ok ? s[i] : digits[h % 62];
	out[9] = 0;
}

/* One assistant tool call written as the format does, into p. */
static int write_call(struct api_fmt *f, struct piece *p, const struct json_doc *d,
		      const struct json_node *tc, uint32_t mi, uint32_t ci)
{
	const struct json_node *fn = json_get(d, tc, "function");
	const struct json_node *name = fn ? json_get(d, fn, "name") : NULL;
	const struct json_node *args = fn ? json_get(d, fn, "arguments") : NULL;
	char param[96], err[128];
	struct json_doc a = {f->nodes, API_FMT_NODES, 0, f->store, sizeof f->store, 0, 32,
			     sizeof f->store};

	plat_snprintf(param, sizeof param, "messages[%u].tool_calls[%u]", mi, ci);
	if (tc->type != JSON_OBJECT || !fn || fn->type != JSON_OBJECT || !name ||
	    name->type != JSON_STRING || !name_ok(name->str, name->len))
		return refuse(f, param, "must be {\"type\": \"function\", \"function\": {\"name\": .., "
			      "\"arguments\": ..}}");
	plat_snprintf(param, sizeof param, "messages[%u].tool_calls[%u].function.arguments", mi, ci);
	if (!args || args->type != JSON_STRING ||
	    json_parse(&a, args->str, args->len, err, sizeof err) || a.nodes[0].type != JSON_OBJECT)
		return refuse(f, param, "must be a string of a JSON object");
	if (f->style == API_TOOLS_MISTRAL) {
		/* tool_call.function|tojson less its "}", then the id */
		const struct json_node *id = json_get(d, tc, "id");
		char id_s[10];
		plat_snprintf(param, sizeof param, "messages[%u].tool_calls[%u].id", mi, ci);
		if (!id || id->type != JSON_STRING)
			return refuse(f, param, "must be a string (Mistral's template needs the id)");
		id9(id->str, id->len, id_s);
		json_out_lit(&p->o, "{\"name\": \"");
		json_out_raw(&p->o, name->str, name->len);
		json_out_lit(&p->o, "\", \"arguments\": ");
		api_json_dump(&p->o, &a, &a.nodes[0], API_JSON_PY);
		json_out_lit(&p->o, ", \"id\": \"");
		json_out_raw(&p->o, id_s, 9);
		json_out_lit(&p->o, "\"}");
	} else if (f->style == API_TOOLS_LLAMA3) {
		json_out_lit(&p->o, "{\"name\": \"");
		json_out_raw(&p->o, name->str, name->len);
		json_out_lit(&p->o, "\", \"parameters\": ");
		api_json_dump(&p->o, &a, &a.nodes[0], API_JSON_PY);
		json_out_lit(&p->o, "}");
	} else {
		json_out_lit(&p->o, "<tool_call>\n{\"name\": \"");
		json_out_raw(&p->o, name->str, name->len);
		json_out_lit(&p->o, "\", \"arguments\": ");
		api_json_dump(&p->o, &a, &a.nodes[0], API_JSON_PY);
		json_out_lit(&p->o, "}\n</tool_call>");
	}
	return 0;
}

/* The model's own (Jinja) template writes the tools and calls: the
 * messages as they are, with their other members as llama.cpp's --jinja
 * gives them (common_chat_msg::to_json_oaicompat): an assistant's
 * tool_calls [{"type", "function": {"name", "arguments"}, "id"}] (the
 * arguments the client's text, made an object by jinja.c for a template
 * that reads one), a tool message's name and tool_call_id; the tools as
 * llama.cpp normalizes them: {"type", "function": {"name", "description",
 * "parameters"}}. */
static int read_msgs_jinja(struct api_fmt *f, const struct json_doc *d,
			   const struct json_node *tools)
{
	const struct json_node *m = json_get(d, &d->nodes[0], "messages");
	uint32_t i = 0;
	char param[96];
	struct piece p;
	int r;

	if (f->tools_on) {
		piece_open(f, &p);
		json_out_lit(&p.o, "[");
		for (const struct json_node *t = json_first(d, tools); t; t = json_next(d, t)) {
			const struct json_node *fn = json_get(d, t, "function");
			const struct json_node *nm = json_get(d, fn, "name");
			const struct json_node *ds = json_get(d, fn, "description");
			const struct json_node *pa = json_get(d, fn, "parameters");
			if (t != json_first(d, tools))
				json_out_lit(&p.o, ",");
			json_out_lit(&p.o, "{\"type\":\"function\",\"function\":{\"name\":");
			json_out_str(&p.o, nm->str, nm->len);
			json_out_lit(&p.o, ",\"description\":");
			json_out_str(&p.o, ds ? ds->str : "", ds ? ds->len : 0);
			json_out_lit(&p.o, ",\"parameters\":");
			if (pa)
				api_json_dump(&p.o, d, pa, API_JSON_COMPACT);
			else
				json_out_lit(&p.o, "{}");
			json_out_lit(&p.o, "}}");
		}
		json_out_lit(&p.o, "]");
		if (!(f->tools_json = piece_close(f, &p)))
			return refuse(f, "tools", "are too large together");
	}
	for (const struct json_node *x = json_first(d, m); x; x = json_next(d, x), i++) {
		const char *role = json_get(d, x, "role")->str;
		const struct json_node *c = json_get(d, x, "content"), *tc = json_get(d, x, "tool_calls");
		const char *extra = NULL;

		if (tc && tc->type != JSON_NULL && !(tc->type == JSON_ARRAY && !tc->count) &&
		    strcmp(role, "assistant") == 0) {
			plat_snprintf(param, sizeof param, "messages[%u].tool_calls", i);
			if (tc->type != JSON_ARRAY)
				return refuse(f, param, "must be an array");
			if (f->style == API_TOOLS_NONE)
				return refuse(f, param, "need a chat template with a tool-call format "
					      "(chatml, llama3, mistral-v3[-tekken] or jinja)");
			piece_open(f, &p);
			json_out_lit(&p.o, "{\"tool_calls\":[");
			uint32_t ci = 0;
			for (const struct json_node *y = json_first(d, tc); y; y = json_next(d, y), ci++) {
				const struct json_node *fn = json_get(d, y, "function");
				const struct json_node *nm = fn ? json_get(d, fn, "name") : NULL;
				const struct json_node *args = fn ? json_get(d, fn, "arguments") : NULL;
				const struct json_node *id = json_get(d, y, "id");
				struct json_doc a = {f->nodes, API_FMT_NODES, 0, f->store, sizeof f->store,
						     0, 32, sizeof f->store};
				char e[128];
				plat_snprintf(param, sizeof param, "messages[%u].tool_calls[%u]", i, ci);
				if (y->type != JSON_OBJECT || !fn || fn->type != JSON_OBJECT || !nm ||
				    nm->type != JSON_STRING || !name_ok(nm->str, nm->len) ||
				    (id && id->type != JSON_STRING && id->type != JSON_NULL))
					return refuse(f, param, "must be {\"type\": \"function\", \"function\": "
						      "{\"name\": .., \"arguments\": ..}}");
				plat_snprintf(param, sizeof param,
					      "messages[%u].tool_calls[%u].function.arguments", i, ci);
				if (!args || args->type != JSON_STRING ||
				    json_parse(&a, args->str, args->len, e, sizeof e) ||
				    a.nodes[0].type != JSON_OBJECT)
					return refuse(f, param, "must be a string of a JSON object");
				if (ci)
					json_out_lit(&p.o, ",");
				json_out_lit(&p.o, "{\"type\":\"function\",\"function\":{\"name\":");
				json_out_str(&p.o, nm->str, nm->len);
				json_out_lit(&p.o, ",\"arguments\":");
				json_out_str(&p.o, args->str, args->len);
				json_out_lit(&p.o, "}");
				if (id && id->type == JSON_STRING && id->len) {
					char k[10];
					json_out_lit(&p.o, ",\"id\":");
					if (f->style == API_TOOLS_MISTRAL) /* as the built-in does */
						id9(id->str, id->len, k), json_out_str(&p.o, k, 9);
					else
						json_out_str(&p.o, id->str, id->len);
				}
				json_out_lit(&p.o, "}");
			}
			json_out_lit(&p.o, "]}");
			if (!(extra = piece_close(f, &p)))
				return refuse(f, "messages", "make a prompt too large");
		} else if (strcmp(role, "tool") == 0) {
			const struct json_node *id = json_get(d, x, "tool_call_id");
			const struct json_node *nm = json_get(d, x, "name");
			plat_snprintf(param, sizeof param, "messages[%u].tool_call_id", i);
			if (id && id->type != JSON_STRING && id->type != JSON_NULL)
				return refuse(f, param, "must be a string");
			plat_snprintf(param, sizeof param, "messages[%u].name", i);
			if (nm && nm->type != JSON_STRING && nm->type != JSON_NULL)
				return refuse(f, param, "must be a string");
			bool has_id = id && id->type == JSON_STRING && id->len;
			bool has_nm = nm && nm->type == JSON_STRING && nm->len;
			if (has_id || has_nm) {
				piece_open(f, &p);
				json_out_lit(&p.o, "{");
				if (has_nm) {
					json_out_lit(&p.o, "\"name\":");
					json_out_str(&p.o, nm->str, nm->len);
				}
				if (has_id) {
					char k[10];
					if (has_nm)
						json_out_lit(&p.o, ",");
					json_out_lit(&p.o, "\"tool_call_id\":");
					if (f->style == API_TOOLS_MISTRAL)
						id9(id->str, id->len, k), json_out_str(&p.o, k, 9);
					else
						json_out_str(&p.o, id->str, id->len);
				}
				json_out_lit(&p.o, "}");
				if (!(extra = piece_close(f, &p)))
					return refuse(f, "messages", "make a prompt too large");
			}
		}
		if ((r = add_msg(f, role, c && c->type == JSON_STRING ? c->str : "")))
			return r;
		f->extra[f->n_msgs - 1] = extra;
	}
	return 0;
}

static int read_msgs(struct api_fmt *f, const struct json_doc *d, const struct json_node *tools)
{
	const struct json_node *m = json_get(d, &d->nodes[0], "messages");
	const struct json_node *first = NULL, *x;
	const char *mi_sys = NULL, *mi_tools = NULL, *last_user = NULL;
	bool sys_done = false, user_done = false;
	uint32_t i = 0;
	char param[64];
	struct piece p;
	int r;

	if (!m || m->type != JSON_ARRAY || m->count == 0)
		return refuse(f, "messages", "must be a non-empty array");
	if (m->count > ENGINE_MAX_MSGS)
		return refuse(f, "messages", "holds at most 256 messages");
	for (x = json_first(d, m); x; x = json_next(d, x)) {
		const struct json_node *role = json_get(d, x, "role"), *content = json_get(d, x, "content");
		if (!role || role->type != JSON_STRING) {
			plat_snprintf(f->param, sizeof f->param, "messages");
			plat_snprintf(f->err, sizeof f->err, "each message needs a string 'role'");
			return -LLMK_EINVAL;
		}
		if (chat_role_reserved(role->str)) {
			plat_snprintf(f->param, sizeof f->param, "messages");
			plat_snprintf(f->err, sizeof f->err, "'%.32s' is a role the server writes for "
				      "tools, not one a message may have", role->str);
			return -LLMK_EINVAL;
		}
		if (content && content->type != JSON_STRING && content->type != JSON_NULL) {
			plat_snprintf(f->param, sizeof f->param, "messages");
			plat_snprintf(f->err, sizeof f->err, "a message's 'content' must be a string");
			return -LLMK_EINVAL;
		}
	}
	if (f->jinja)
		return read_msgs_jinja(f, d, tools);
	first = json_first(d, m);
	if (f->tools_on && f->style == API_TOOLS_MISTRAL) {
		/* as Mistral's templates: the system text joins the last message
		 * if that is a user one (else it is left out), the tools go before
		 * the last user message (and any other with the same text) */
		const struct json_node *c = json_get(d, first, "content");
		if (strcmp(json_get(d, first, "role")->str, "system") == 0) {
			mi_sys = c && c->type == JSON_STRING ? c->str : "";
			sys_done = true;
		}
		for (x = sys_done ? json_next(d, first) : first; x; x = json_next(d, x)) {
			c = json_get(d, x, "content");
			if (strcmp(json_get(d, x, "role")->str, "user") == 0)
				last_user = c && c->type == JSON_STRING ? c->str : "";
		}
		piece_open(f, &p);
		json_out_lit(&p.o, "[");
		for (const struct json_node *t = json_first(d, tools); t; t = json_next(d, t)) {
			const struct json_node *fn = json_get(d, t, "function");
			const struct json_node *ds = json_get(d, fn, "description");
			const struct json_node *pa = json_get(d, fn, "parameters");
			/* llama.cpp's tool: name, description ("" if none), parameters
			 * ({} if none); the template writes strings unescaped */
			if (t != json_first(d, tools))
				json_out_lit(&p.o, ", ");
			json_out_lit(&p.o, "{\"type\": \"function\", \"function\": {\"name\": \"");
			json_out_raw(&p.o, json_get(d, fn, "name")->str, strlen(json_get(d, fn, "name")->str));
			json_out_lit(&p.o, "\", \"description\": \"");
			json_out_raw(&p.o, ds ? ds->str : "", ds ? ds->len : 0);
			json_out_lit(&p.o, "\", \"parameters\": ");
			if (pa)
				api_json_dump(&p.o, d, pa, API_JSON_PY);
			else
				json_out_lit(&p.o, "{}");
			json_out_lit(&p.o, "}}");
		}
		json_out_lit(&p.o, "]");
		if (!(mi_tools = piece_close(f, &p)))
			return refuse(f, "tools", "make a prompt too large");
	} else if (f->tools_on) {
		/* the system message, with the tools (and, llama3, its dates) */
		const struct json_node *c = json_get(d, first, "content");
		bool sys = strcmp(json_get(d, first, "role")->str, "system") == 0;
		const char *s = sys && c && c->type == JSON_STRING ? c->str : "";
		size_t sn = strlen(s);
		piece_open(f, &p);
		if (f->style == API_TOOLS_HERMES) {
			if (sys) {
				json_out_raw(&p.o, s, sn);
				json_out_lit(&p.o, "\n\n");
			}
			json_out_lit(&p.o, TOOLS_HEAD);
			for (const struct json_node *t = json_first(d, tools); t; t = json_next(d, t)) {
				json_out_lit(&p.o, "\n");
				api_json_dump(&p.o, d, t, API_JSON_PY);
			}
			json_out_lit(&p.o, TOOLS_TAIL);
		} else {
			json_out_lit(&p.o, LLAMA3_SYS);
			s = trim(s, &sn);
			json_out_raw(&p.o, s, sn);
		}
		if ((r = add_msg(f, "system", piece_close(f, &p))))
			return r;
		sys_done = sys;
	}
	for (x = first; x; x = json_next(d, x), i++) {
		const char *role = json_get(d, x, "role")->str;
		const struct json_node *c = json_get(d, x, "content"), *tc = json_get(d, x, "tool_calls");
		const char *text = c && c->type == JSON_STRING ? c->str : "";
		size_t tn = strlen(text);

		if (sys_done && x == first)
			continue;
		if (tc && tc->type != JSON_NULL && !(tc->type == JSON_ARRAY && !tc->count) &&
		    strcmp(role, "assistant") == 0) {
			plat_snprintf(param, sizeof param, "messages[%u].tool_calls", i);
			if (tc->type != JSON_ARRAY)
				return refuse(f, param, "must be an array");
			if (f->style == API_TOOLS_NONE)
				return refuse(f, param, "need a chat template with a tool-call format "
					      "(chatml, llama3, mistral-v3[-tekken] or jinja)");
			if (f->style == API_TOOLS_LLAMA3 && tc->count != 1)
				return refuse(f, param, "must hold one call (llama3 makes one at a time)");
			piece_open(f, &p);
			if (f->style == API_TOOLS_HERMES && tn) {
				json_out_raw(&p.o, text, tn);
				json_out_lit(&p.o, "\n");
			}
			bool mi = f->style == API_TOOLS_MISTRAL; /* [{..}, {..}], the text left out */
			uint32_t ci = 0;
			if (mi)
				json_out_lit(&p.o, "[");
			for (const struct json_node *y = json_first(d, tc); y; y = json_next(d, y), ci++) {
				if (ci)
					json_out_raw(&p.o, mi ? ", " : "\n", mi ? 2 : 1);
				if ((r = write_call(f, &p, d, y, i, ci)))
					return r;
			}
			if (mi)
				json_out_lit(&p.o, "]");
			if ((r = add_msg(f, mi ? "tool_calls" : "assistant", piece_close(f, &p))))
				return r;
			continue;
		}
		if (strcmp(role, "tool") == 0 && f->style != API_TOOLS_NONE) {
			const struct json_node *id = json_get(d, x, "tool_call_id");
			plat_snprintf(param, sizeof param, "messages[%u].tool_call_id", i);
			if (id && id->type != JSON_STRING)
				return refuse(f, param, "must be a string");
			piece_open(f, &p);
			if (f->style == API_TOOLS_MISTRAL) {
				/* {"content": TEXT, "call_id": ID}, the text as it is */
				char id_s[10];
				if (!id)
					return refuse(f, param, "must be a string (Mistral's template needs it)");
				id9(id->str, id->len, id_s);
				json_out_lit(&p.o, "{\"content\": ");
				json_out_raw(&p.o, text, tn);
				json_out_lit(&p.o, ", \"call_id\": \"");
				json_out_raw(&p.o, id_s, 9);
				json_out_lit(&p.o, "\"}");
				if ((r = add_msg(f, "tool_results", piece_close(f, &p))))
					return r;
				continue;
			}
			if (f->style == API_TOOLS_LLAMA3) {
				/* the template's tojson of the content */
				json_out_str(&p.o, text, tn);
				if ((r = add_msg(f, "ipython", piece_close(f, &p))))
					return r;
				continue;
			}
			/* hermes: a run of results is one user turn */
			for (;;) {
				json_out_lit(&p.o, "<tool_response>\n");
				json_out_raw(&p.o, text, tn);
				json_out_lit(&p.o, "\n</tool_response>");
				const struct json_node *nx = json_next(d, x);
				if (!nx || strcmp(json_get(d, nx, "role")->str, "tool") != 0)
					break;
				x = nx, i++;
				c = json_get(d, x, "content");
				text = c && c->type == JSON_STRING ? c->str : "";
				tn = strlen(text);
				json_out_lit(&p.o, "\n");
			}
			if ((r = add_msg(f, "user", piece_close(f, &p))))
				return r;
			continue;
		}
		if (f->tools_on && f->style == API_TOOLS_LLAMA3 && !user_done) {
			/* the first message after the system one carries the tools */
			piece_open(f, &p);
			json_out_lit(&p.o, LLAMA3_USER);
			for (const struct json_node *t = json_first(d, tools); t; t = json_next(d, t)) {
				api_json_dump(&p.o, d, t, API_JSON_INDENT4);
				json_out_lit(&p.o, "\n\n");
			}
			text = trim(text, &tn);
			json_out_raw(&p.o, text, tn);
			user_done = true;
			if ((r = add_msg(f, "user", piece_close(f, &p))))
				return r;
			continue;
		}
		if (mi_tools && strcmp(role, "user") == 0) {
			if (strcmp(text, last_user) == 0 && (r = add_msg(f, "available_tools", mi_tools)))
				return r;
			if (mi_sys && !json_next(d, x)) {
				piece_open(f, &p);
				json_out_raw(&p.o, mi_sys, strlen(mi_sys));
				json_out_lit(&p.o, "\n\n");
				json_out_raw(&p.o, text, tn);
				if ((r = add_msg(f, role, piece_close(f, &p))))
					return r;
				continue;
			}
		}
		if ((r = add_msg(f, role, text)))
			return r;
	}
	if (f->tools_on && f->style == API_TOOLS_LLAMA3 && !user_done)
		return refuse(f, "messages", "need a user message after the system one to carry "
			      "the tools (llama3)");
	return 0;
}

/* Whether s[0..n) holds lit. */
static bool holds(const char *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);

	for (size_t i = 0; s && i + k <= n; i++)
		if (memcmp(s + i, lit, k) == 0)
			return true;
	return false;
}

int api_fmt_request(struct api_fmt *f, const struct json_doc *d, bool chat, enum chat_tmpl t,
		    const char *src, size_t len, struct llm_mem *mem)
{
	const struct json_node *root = &d->nodes[0];
	const struct json_node *tools = json_get(d, root, "tools");
	const struct json_node *choice = json_get(d, root, "tool_choice");
	const char *named = NULL;
	int r;

	f->grammar = NULL;
	f->n_triggers = 0;
	f->style = t == CHAT_CHATML ? API_TOOLS_HERMES : t == CHAT_LLAMA3 ? API_TOOLS_LLAMA3
		 : t == CHAT_MISTRAL_V3 || t == CHAT_MISTRAL_V3_TEKKEN ? API_TOOLS_MISTRAL
		 : API_TOOLS_NONE;
	/* the model's own template: the format its text implies */
	f->jinja = t == CHAT_JINJA && src;
	if (f->jinja)
		f->style = holds(src, len, "<tool_call>") ? API_TOOLS_HERMES :
			   holds(src, len, "[TOOL_CALLS]") ? API_TOOLS_MISTRAL :
			   holds(src, len, "tools") ? API_TOOLS_LLAMA3 : API_TOOLS_NONE;
	f->tools_json = NULL;
	f->choice = API_CHOICE_AUTO;
	f->tools_on = f->one_call = false;
	f->n_msgs = f->n_tools = f->n_calls = f->text_len = f->calls_len = 0;
	f->content_len = 0;
	f->err[0] = f->param[0] = 0;
	if ((r = response_format(f, d, mem)))
		return r;
	if (tools && tools->type == JSON_NULL)
		tools = NULL;
	if (!chat) {
		if (tools)
			return refuse(f, "tools", "are for /v1/chat/completions");
		return 0;
	}
	if (tools && (r = read_tools(f, d, tools)))
		return r;
	const struct json_node *par = json_get(d, root, "parallel_tool_calls");
	if (par && par->type != JSON_TRUE && par->type != JSON_FALSE && par->type != JSON_NULL)
		return refuse(f, "parallel_tool_calls", "must be a boolean");
	f->one_call = par && par->type == JSON_FALSE;
	if ((r = read_choice(f, d, choice, &named)))
		return r;
	if ((!tools || !tools->count) && choice && choice->type != JSON_NULL &&
	    f->choice != API_CHOICE_NONE && f->choice != API_CHOICE_AUTO)
		return refuse(f, "tool_choice", "needs 'tools'");
	f->tools_on = tools && tools->count && f->choice != API_CHOICE_NONE;
	if (f->tools_on && f->style == API_TOOLS_NONE) {
		char msg[200];
		plat_snprintf(msg, sizeof msg, "need a chat template with a tool-call format (chatml, "
			      "llama3, mistral-v3[-tekken], or a model's own jinja one that speaks of "
			      "tools); the model's is %s", chat_tmpl_name(t));
		return refuse(f, "tools", msg);
	}
	if (f->tools_on && f->grammar)
		return refuse(f, json_get(d, root, "grammar") ? "grammar" :
			      json_get(d, root, "json_schema") ? "json_schema" : "response_format",
			      "cannot be combined with tools");
	if ((r = read_msgs(f, d, tools)))
		return r;
	if (f->tools_on && (f->choice == API_CHOICE_REQUIRED || f->choice == API_CHOICE_NAMED)) {
		/* Mistral's built-in formats: the reply opens with [TOOL_CALLS], a
		 * control token no grammar can ask for (it has no text), so the
		 * prompt ends with it and the model writes the array */
		if (f->style == API_TOOLS_MISTRAL && !f->jinja &&
		    (r = add_msg(f, "tool_calls_open", "")))
			return r;
		return call_grammar(f, d, tools, named, mem);
	}
	/* auto: the same grammar, lazy: free text until a call starts (for
	 * llama3 a reply that opens as its JSON call), then a whole call; tools
	 * the converter cannot draw leave the reply free, as before */
	if (!f->tools_on)
		return 0;
	if (call_grammar(f, d, tools, NULL, mem) == 0) {
		/* mistral: the reply that opens as the array (after [TOOL_CALLS],
		 * which leaves no text) */
		f->triggers[f->n_triggers++] = f->style == API_TOOLS_HERMES ? "<tool_call>" :
					       f->style == API_TOOLS_MISTRAL ? "^[{" : "^{\"name\"";
		if (f->style == API_TOOLS_LLAMA3)
			f->triggers[f->n_triggers++] = "^{ \"name\"";
		if (f->style == API_TOOLS_MISTRAL)
			f->triggers[f->n_triggers++] = "^ [{";
	} else {
		f->grammar = NULL;
		f->err[0] = f->param[0] = 0;
	}
	return 0;
}

/* ---- the reply's calls ---- */

/* A call's object x of a: name and arguments (and Mistral's id) into f->calls. */
static bool take_call(struct api_fmt *f, const struct json_doc *a, const struct json_node *x,
		      const char *id_base)
{
	const struct json_node *name, *args, *id;
	struct api_call *c;
	struct json_out o;

	if (f->n_calls >= API_MAX_CALLS || x->type != JSON_OBJECT)
		return false;
	name = json_get(a, x, "name");
	args = json_get(a, x, f->style == API_TOOLS_LLAMA3 ? "parameters" : "arguments");
	if (!args)
		args = json_get(a, x, f->style == API_TOOLS_LLAMA3 ? "arguments" : "parameters");
	if (!name || name->type != JSON_STRING || !name_ok(name->str, name->len) || !args ||
	    args->type != JSON_OBJECT)
		return false;
	c = &f->calls[f->n_calls];
	memcpy(c->name, name->str, name->len + 1);
	id = json_get(a, x, "id");
	plat_snprintf(c->id, sizeof c->id, "call_%s_%u", id_base, (unsigned)f->n_calls);
	if (f->style == API_TOOLS_MISTRAL) {
		/* Mistral's templates take 9 letters and digits: the model's own
		 * id when it wrote one, else 9 derived from ours */
		bool own = id && id->type == JSON_STRING && id->len == 9;
		char k[10];
		id9(own ? id->str : c->id, own ? 9 : strlen(c->id), k);
		memcpy(c->id, k, 10);
	}
	json_out_init(&o, f->calls_text + f->calls_len, sizeof f->calls_text - f->calls_len);
	api_json_dump(&o, a, args, API_JSON_COMPACT);
	if (o.overflow)
		return false;
	c->args = f->calls_len;
	c->args_len = o.len;
	f->calls_len += o.len;
	f->n_calls++;
	return true;
}

/* A call's JSON object at text[0..n). */
static bool parse_call(struct api_fmt *f, const char *text, size_t n, const char *id_base)
{
	struct json_doc a = {f->nodes, API_FMT_NODES, 0, f->store, sizeof f->store, 0, 32, n};
	char e[64];

	return json_parse(&a, text, n, e, sizeof e) == 0 && take_call(f, &a, &a.nodes[0], id_base);
}

/* Mistral's [{..}, {..}] at text[0..n): every element a call, or none is. */
static bool parse_calls(struct api_fmt *f, const char *text, size_t n, const char *id_base)
{
	struct json_doc a = {f->nodes, API_FMT_NODES, 0, f->store, sizeof f->store, 0, 32, n};
	char e[64];

	if (json_parse(&a, text, n, e, sizeof e) || a.nodes[0].type != JSON_ARRAY ||
	    !a.nodes[0].count)
		return false;
	for (const struct json_node *x = json_first(&a, &a.nodes[0]); x; x = json_next(&a, x))
		if (!take_call(f, &a, x, id_base)) {
			f->n_calls = f->calls_len = 0;
			return false;
		}
	return true;
}

static const char *find(const char *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);

	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(s + i, lit, k) == 0)
			return s + i;
	return NULL;
}

void api_fmt_reply(struct api_fmt *f, const char *out, size_t n, const char *id_base)
{
	f->n_calls = f->calls_len = 0;
	f->content_len = n;
	if (!f->tools_on)
		return;
	if (f->style == API_TOOLS_MISTRAL) {
		/* [TOOL_CALLS] is a control token: the reply's text has it only
		 * when the model spelled it; else the calls are the whole reply */
		const char *at = find(out, n, "[TOOL_CALLS]"), *s = at ? at + 12 : find(out, n, "[{");
		if (!s)
			return;
		/* without the marker the calls are the reply's tail from its first "[{" */
		size_t k = n - (size_t)(s - out), content = (size_t)((at ? at : s) - out);
		s = trim(s, &k);
		if (!k || s[0] != '[' || !parse_calls(f, s, k, id_base))
			return;
		while (content && is_space(out[content - 1]))
			content--;
		f->content_len = content;
		if (f->one_call && f->n_calls > 1)
			f->n_calls = 1;
		return;
	}
	if (f->style == API_TOOLS_LLAMA3) {
		size_t k = n;
		const char *s = trim(out, &k);
		if (k >= 14 && memcmp(s, "<|python_tag|>", 14) == 0) /* as Llama 3.1 may open it */
			s += 14, k -= 14;
		if (k && s[0] == '{' && parse_call(f, s, k, id_base))
			f->content_len = 0;
		return;
	}
	const char *at = find(out, n, "<tool_call>");
	if (!at)
		return;
	size_t content = (size_t)(at - out);
	while (at) {
		const char *body = at + 11, *end = find(body, n - (size_t)(body - out), "</tool_call>");
		size_t len = end ? (size_t)(end - body) : n - (size_t)(body - out);
		if (!parse_call(f, body, len, id_base)) {
			f->n_calls = f->calls_len = 0; /* all of it is content */
			return;
		}
		if (!end)
			break;
		const char *next = end + 12;
		size_t rest = n - (size_t)(next - out);
		while (rest && is_space(*next))
			next++, rest--;
		at = rest ? find(next, rest, "<tool_call>") : NULL;
		if (rest && at != next) {
			f->n_calls = f->calls_len = 0; /* text after a call: not a call */
			return;
		}
	}
	while (content && is_space(out[content - 1]))
		content--;
	f->content_len = content;
	if (f->one_call && f->n_calls > 1)
		f->n_calls = 1;
}

void api_fmt_message(const struct api_fmt *f, struct json_out *o, const char *out, size_t n)
{
	json_out_lit(o, ",\"content\":");
	if (f->tools_on)
		n = f->content_len;
	if (f->n_calls && !n)
		json_out_lit(o, "null");
	else
		json_out_str(o, out, n);
	if (!f->n_calls)
		return;
	json_out_lit(o, ",\"tool_calls\":[");
	for (size_t i = 0; i < f->n_calls; i++) {
		const struct api_call *c = &f->calls[i];
		if (i)
			json_out_lit(o, ",");
		json_out_lit(o, "{\"id\":");
		json_out_cstr(o, c->id);
		json_out_lit(o, ",\"type\":\"function\",\"function\":{\"name\":");
		json_out_cstr(o, c->name);
		json_out_lit(o, ",\"arguments\":");
		json_out_str(o, f->calls_text + c->args, c->args_len);
		json_out_lit(o, "}}");
	}
	json_out_lit(o, "]");
}
