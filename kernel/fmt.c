/*
 * kernel/fmt.c — formatted output for the kernel and the host alike.
 *
 * One implementation linked into both, so a number prints the same bits on
 * bare metal and on Linux. C11 7.21.6.1 semantics for the subset we use:
 * flags - 0 + space #, width and precision (numbers or *), length modifiers
 * hh h l ll z j t, conversions d i u x X o p s c f F e E g G %.
 * Floats are printed exactly enough for logs and tables (17 significant
 * digits at most), not as a full correctly-rounded dtoa.
 */
#include "platform.h"

struct out {
	char *buf;
	size_t cap;
	size_t len; /* would-be length, may exceed cap */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len] = c;
	o->len++;
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

struct spec {
	bool left, zero, plus, space, alt;
	int width;
	int prec; /* -1: none */
};

/* Emit prefix (sign, 0x) and body with width padding as the flags say. */
static void emit(struct out *o, const struct spec *sp, const char *prefix, const char *body,
		 size_t blen)
{
	size_t plen = strlen(prefix);
	int fill = sp->width - (int)(plen + blen);

	if (!sp->left && !sp->zero)
		pad(o, ' ', fill);
	for (size_t i = 0; i < plen; i++)
		put(o, prefix[i]);
	if (!sp->left && sp->zero)
		pad(o, '0', fill);
	for (size_t i = 0; i < blen; i++)
		put(o, body[i]);
	if (sp->left)
		pad(o, ' ', fill);
}

static void fmt_uint(struct out *o, struct spec *sp, uint64_t v, unsigned base, bool upper,
		     const char *sign)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[72];
	int n = 0;
	char prefix[4] = "";

	while (v) {
		tmp[sizeof tmp - 1 - n++] = digits[v % base];
		v /= base;
	}
	/* Precision is the minimum digit count; "%.0d" of 0 prints nothing. */
	int prec = sp->prec < 0 ? 1 : sp->prec;
	while (n < prec && n < (int)sizeof tmp)
		tmp[sizeof tmp - 1 - n++] = '0';
	if (sp->prec >= 0)
		sp->zero = false;
	size_t pl = 0;
	for (const char *s = sign; *s; s++)
		prefix[pl++] = *s;
	if (sp->alt && base == 16 && n) {
		prefix[pl++] = '0';
		prefix[pl++] = upper ? 'X' : 'x';
	}
	prefix[pl] = 0;
	emit(o, sp, prefix, tmp + sizeof tmp - n, (size_t)n);
}

static const char *sign_of(const struct spec *sp, bool neg)
{
	if (neg)
		return "-";
	if (sp->plus)
		return "+";
	if (sp->space)
		return " ";
	return "";
}

/* Veltkamp split: a = ah + al with ah holding the top 26 bits. */
static void split(double a, double *ah, double *al)
{
	double t = 134217729.0 * a; /* 2^27 + 1 */
	*ah = t - (t - a);
	*al = a - *ah;
}

/* The rounding error of p = a * b: a * b == p + err exactly. */
static double two_prod_err(double a, double b, double p)
{
	double ah, al, bh, bl;
	split(a, &ah, &al);
	split(b, &bh, &bl);
	return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

/* Decimal digits of x (0 <= x < 1e17 after scaling) rounded to prec places. */
static int fixed_digits(double x, int prec, char *out, size_t cap)
{
	double scale = 1.0;
	int zeros = 0;
	for (int i = 0; i < prec; i++)
		scale *= 10.0;
	/* Keep the scaled value inside uint64_t; digits past ~18 significant
	 * ones are noise in a double anyway and print as zeros. */
	while (prec > 0 && x * scale >= 1e18) {
		scale /= 10.0;
		prec--;
		zeros++;
	}
	/* x * scale exactly as hi + lo (Dekker's product; scale is an exact power
	 * of ten up to 1e22), so the rounding decision sees the true value: 0.35
	 * is really 0.34999999999999997 and prints as 0.3 with "%.1f". */
	double hi = x * scale, lo = two_prod_err(x, scale, hi);
	uint64_t v = (uint64_t)hi;
	/* hi - v is exact; (hi - v - 0.5) + lo has the sign of the true
	 * fraction minus one half. A true value just below an integer v
	 * (lo < 0, hi == v) still rounds to v. */
	double t = ((hi - (double)v) - 0.5) + lo;
	if (t > 0.0 || (t == 0.0 && (v & 1)))
		v++;
	char tmp[40];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n < prec + 1)
		tmp[n++] = '0';
	size_t k = 0;
	for (int i = n - 1; i >= 0 && k + 2 < cap; i--) {
		out[k++] = tmp[i];
		if (i == prec && prec > 0)
			out[k++] = '.';
	}
	if (zeros && prec == 0 && k + 1 < cap)
		out[k++] = '.';
	while (zeros-- > 0 && k + 1 < cap)
		out[k++] = '0';
	out[k] = 0;
	return (int)k;
}

/* Normalize x > 0 to m in [1, 10) and return the decimal exponent. */
static int decompose(double x, double *m)
{
	int e = 0;
	while (x >= 1e16) {
		x /= 1e16;
		e += 16;
	}
	while (x >= 10.0) {
		x /= 10.0;
		e++;
	}
	while (x < 1e-16) {
		x *= 1e16;
		e -= 16;
	}
	while (x < 1.0) {
		x *= 10.0;
		e--;
	}
	*m = x;
	return e;
}

static int exp_digits(double x, int prec, bool upper, char *out, size_t cap)
{
	double m = 0;
	int e = x == 0.0 ? 0 : decompose(x, &m);
	char body[48];

	if (x == 0.0)
		m = 0;
	int n = fixed_digits(m, prec, body, sizeof body);
	if (body[0] == '1' && body[1] == '0') {
		/* Rounding carried into a new digit: 9.99 -> 10.0 -> 1.00e+1. */
		e++;
		n = fixed_digits(m / 10.0, prec, body, sizeof body);
	}
	int k = plat_snprintf(out, cap, "%s%c%c%02d", body, upper ? 'E' : 'e', e < 0 ? '-' : '+',
			      e < 0 ? -e : e);
	(void)n;
	return k;
}

static void strip_zeros(char *s, int *n)
{
	char *dot = NULL;
	for (int i = 0; i < *n; i++)
		if (s[i] == '.')
			dot = s + i;
	if (!dot)
		return;
	char *end = s + *n;
	char *e = dot;
	while (e < end && *e != 'e' && *e != 'E')
		e++;
	char *z = e;
	while (z > dot + 1 && z[-1] == '0')
		z--;
	if (z == dot + 1)
		z = dot;
	size_t tail = (size_t)(end - e);
	memmove(z, e, tail);
	*n = (int)((z - s) + (long)tail);
	s[*n] = 0;
}

static void fmt_float(struct out *o, struct spec *sp, double x, char conv)
{
	bool upper = conv == 'F' || conv == 'E' || conv == 'G';
	bool neg = x < 0 || (x == 0 && 1.0 / x < 0);
	char body[64];
	int n;

	if (neg)
		x = -x;
	if (x != x || x > 1.7976931348623157e308) {
		const char *s = x != x ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
		sp->zero = false;
		emit(o, sp, sign_of(sp, neg && x == x), s, 3);
		return;
	}
	int prec = sp->prec < 0 ? 6 : sp->prec;
	if (prec > 17)
		prec = 17;
	char c = conv | 32;
	if (c == 'g') {
		if (prec == 0)
			prec = 1;
		int e = 0;
		/* C11 7.21.6.1p8: style e if X < -4 or X >= P. Rounding may bump X. */
		char probe[48];
		exp_digits(x, prec - 1, false, probe, sizeof probe);
		for (const char *q = probe; *q; q++) {
			if (*q != 'e')
				continue;
			int v = 0;
			for (const char *d = q + 2; *d >= '0' && *d <= '9'; d++)
				v = v * 10 + (*d - '0');
			e = q[1] == '-' ? -v : v;
			break;
		}
		if (e < -4 || e >= prec) {
			n = exp_digits(x, prec - 1, upper, body, sizeof body);
		} else {
			n = x >= 1e17 ? exp_digits(x, prec - 1, upper, body, sizeof body)
				      : fixed_digits(x, prec - 1 - e, body, sizeof body);
		}
		if (!sp->alt)
			strip_zeros(body, &n);
	} else if (c == 'e') {
		n = exp_digits(x, prec, upper, body, sizeof body);
	} else if (x >= 1e17) {
		n = exp_digits(x, prec, upper, body, sizeof body);
	} else {
		n = fixed_digits(x, prec, body, sizeof body);
	}
	emit(o, sp, sign_of(sp, neg), body, (size_t)n);
}

int plat_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = {buf, cap, 0};

	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			put(&o, *p);
			continue;
		}
		struct spec sp = {.prec = -1};
		for (p++;; p++) {
			if (*p == '-')
				sp.left = true;
			else if (*p == '0')
				sp.zero = true;
			else if (*p == '+')
				sp.plus = true;
			else if (*p == ' ')
				sp.space = true;
			else if (*p == '#')
				sp.alt = true;
			else
				break;
		}
		if (*p == '*') {
			sp.width = va_arg(ap, int);
			if (sp.width < 0) {
				sp.left = true;
				sp.width = -sp.width;
			}
			p++;
		} else {
			while (*p >= '0' && *p <= '9')
				sp.width = sp.width * 10 + (*p++ - '0');
		}
		if (*p == '.') {
			p++;
			sp.prec = 0;
			if (*p == '*') {
				sp.prec = va_arg(ap, int);
				p++;
			} else {
				while (*p >= '0' && *p <= '9')
					sp.prec = sp.prec * 10 + (*p++ - '0');
			}
		}
		if (sp.left)
			sp.zero = false;
		int lng = 0; /* 0 int, 1 long, 2 long long / size_t / intmax / ptrdiff */
		int shrt = 0;
		for (;; p++) {
			if (*p == 'l')
				lng++;
			else if (*p == 'z' || *p == 'j' || *p == 't')
				lng = 2;
			else if (*p == 'h')
				shrt++;
			else
				break;
		}
		char conv = *p;
		if (!conv)
			break;
		switch (conv) {
		case 'd':
		case 'i': {
			int64_t v = lng == 0 ? va_arg(ap, int) : lng == 1 ? va_arg(ap, long) : va_arg(ap, long long);
			if (shrt == 1)
				v = (short)v;
			else if (shrt >= 2)
				v = (signed char)v;
			uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
			fmt_uint(&o, &sp, u, 10, false, sign_of(&sp, v < 0));
			break;
		}
		case 'u':
		case 'x':
		case 'X':
		case 'o': {
			uint64_t v = lng == 0 ? va_arg(ap, unsigned) : lng == 1 ? va_arg(ap, unsigned long)
										    : va_arg(ap, unsigned long long);
			if (shrt == 1)
				v = (unsigned short)v;
			else if (shrt >= 2)
				v = (unsigned char)v;
			unsigned base = conv == 'u' ? 10 : conv == 'o' ? 8 : 16;
			fmt_uint(&o, &sp, v, base, conv == 'X', "");
			break;
		}
		case 'p': {
			uintptr_t v = (uintptr_t)va_arg(ap, void *);
			sp.alt = true;
			fmt_uint(&o, &sp, v, 16, false, "");
			break;
		}
		case 'c': {
			char c = (char)va_arg(ap, int);
			sp.zero = false;
			emit(&o, &sp, "", &c, 1);
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			size_t n = 0;
			while (s[n] && (sp.prec < 0 || n < (size_t)sp.prec))
				n++;
			sp.zero = false;
			emit(&o, &sp, "", s, n);
			break;
		}
		case 'f':
		case 'F':
		case 'e':
		case 'E':
		case 'g':
		case 'G':
			fmt_float(&o, &sp, va_arg(ap, double), conv);
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			/* Unknown conversion: print it as written so the bug is visible. */
			put(&o, '%');
			put(&o, conv);
			break;
		}
	}
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = 0;
	return (int)o.len;
}

int plat_snprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = plat_vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

int plat_printf(const char *fmt, ...)
{
	char small[512];
	va_list ap, ap2;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = plat_vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < (int)sizeof small) {
		plat_write(small, (size_t)n);
	} else {
		/* Long output (a token table, a JSON bench line): format in pieces
		 * would change semantics, so take a page for it. */
		size_t cap = (size_t)n + 1;
		char *big = plat_alloc(cap, 16);
		if (big) {
			plat_vsnprintf(big, cap, fmt, ap2);
			plat_write(big, (size_t)n);
			plat_free(big, cap);
		} else {
			plat_write(small, sizeof small - 1);
		}
	}
	va_end(ap2);
	return n;
}

const char *plat_strerror(int err)
{
	static const char *const names[] = {
		[LLMK_OK] = "ok",
		[LLMK_EINVAL] = "invalid argument",
		[LLMK_ENOMEM] = "out of memory",
		[LLMK_EIO] = "I/O error",
		[LLMK_ERANGE] = "out of range",
		[LLMK_EFORMAT] = "malformed data",
		[LLMK_ENOTSUP] = "not supported",
		[LLMK_EAUTH] = "authentication failed",
		[LLMK_ENOENT] = "not found",
		[LLMK_EBUDGET] = "over the memory budget",
		[LLMK_ECANCEL] = "cancelled",
		[LLMK_EBUSY] = "busy",
		[LLMK_ESHORT] = "the disk ends before its capacity (truncated since attached?)",
	};
	if (err < 0)
		err = -err;
	if (err >= (int)(sizeof names / sizeof names[0]) || !names[err])
		return "unknown error";
	return names[err];
}
