/*
 * llm/math.c — float math without libm (llm/math.h).
 *
 * Method: reduce the argument exactly (or to ~1e-16 relative), evaluate a
 * short polynomial in double, round once to float. Polynomials are Taylor
 * series cut where the next term is below 2^-53 on the reduced interval,
 * so they need no fitted coefficients.
 */
#include "fp_exact.h"
#include "math.h"

#define LN2_HI 6.93147180369123816490e-01 /* 32 bits: k * LN2_HI is exact */
#define LN2_LO 1.90821492927058770002e-10
#define INV_LN2 1.44269504088896338700e+00
#define SQRT1_2 0.70710678118654752440

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

static double bitsd(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float bitsf(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Round to the nearest integer (ties to even) for |x| < 2^51. */
static double rint_d(double x)
{
	const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
	volatile double t = x + magic;           /* volatile: keep the rounding step */

	return t - magic;
}

/* 2^k for -1022 <= k <= 1023. */
static double pow2i(int k)
{
	return bitsd((uint64_t)(k + 1023) << 52);
}

bool math_isnan(float x)
{
	return (fbits(x) & 0x7fffffff) > 0x7f800000;
}

bool math_isinf(float x)
{
	return (fbits(x) & 0x7fffffff) == 0x7f800000;
}

float math_fabsf(float x)
{
	return bitsf(fbits(x) & 0x7fffffff);
}

/* An instruction, not a libm call: __builtin_sqrtf may call sqrtf to set errno. */
float math_sqrtf(float x)
{
#if defined(__x86_64__)
	__asm__("sqrtss %1, %0" : "=x"(x) : "x"(x));
	return x;
#elif defined(__aarch64__)
	__asm__("fsqrt %s0, %s1" : "=w"(x) : "w"(x));
	return x;
#else
#error "math_sqrtf: no square root instruction for this architecture"
#endif
}

float math_floorf(float x)
{
	uint32_t u = fbits(x), e = (u >> 23) & 0xff;
	float t;

	if (e >= 150)                      /* |x| >= 2^23, inf, NaN: already integral */
		return x;
	if (e < 127)                       /* |x| < 1 */
		return (u >> 31) && (u << 1) ? -1.0f : bitsf(u & 0x80000000);
	t = bitsf(u & ~((1u << (150 - e)) - 1)); /* truncate toward zero */
	return (t != x && (u >> 31)) ? t - 1.0f : t;
}

static const double inv_fact[14] = {
	1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
	1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600,
	1.0 / 6227020800.0,
};

/* e^x = 2^k e^r, r = x - k ln2 in [-ln2/2, ln2/2]; Taylor to r^13. */
double math_exp(double x)
{
	double k, r, p;
	int ki;

	if (x != x)
		return x;
	if (x > 709.782712893384)
		return bitsd(0x7ff0000000000000ull);
	if (x < -745.2)
		return 0.0;
	k = rint_d(x * INV_LN2);
	r = (x - k * LN2_HI) - k * LN2_LO;
	p = inv_fact[13];
	for (int i = 12; i >= 0; i--)
		p = p * r + inv_fact[i];
	ki = (int)k;
	/* Split the scaling so 2^k never leaves the normal double range. */
	if (ki < -1000)
		return p * pow2i(ki + 600) * pow2i(-600);
	if (ki > 1000)
		return p * pow2i(ki - 100) * pow2i(100);
	return p * pow2i(ki);
}

/* log x = e ln2 + log m, m in [sqrt(1/2), sqrt 2); log m = 2 atanh(s),
 * s = (m - 1)/(m + 1), |s| <= 0.1716: the odd series to s^23. */
double math_log(double x)
{
	uint64_t u = dbits(x);
	int e;
	double m, s, s2, p;

	if (x != x || x == bitsd(0x7ff0000000000000ull))
		return x;
	if (x == 0)
		return -bitsd(0x7ff0000000000000ull);
	if (u >> 63)
		return bitsd(0x7ff8000000000000ull);
	e = 0;
	if ((u >> 52) == 0) {              /* subnormal: scale up by 2^54 */
		x *= 18014398509481984.0;
		u = dbits(x);
		e = -54;
	}
	e += (int)(u >> 52) - 1023;
	m = bitsd((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1.0) / (m + 1.0);
	s2 = s * s;
	p = 1.0 / 23;
	for (int k = 21; k >= 1; k -= 2)
		p = p * s2 + 1.0 / k;
	return (double)e * LN2_HI + ((double)e * LN2_LO + 2.0 * s * p);
}

float math_expf(float x)
{
	return (float)math_exp(x);
}

float math_logf(float x)
{
	return (float)math_log(x);
}

float math_tanhf(float x)
{
	float ax = math_fabsf(x);
	double e, t;

	if (math_isnan(x))
		return x;
	if (ax < 0x1p-12f)                 /* tanh x = x - x^3/3: below half an ulp */
		return x;
	if (ax > 9.1f)                     /* 1 - tanh(9.1) < 2^-25 */
		return x > 0 ? 1.0f : -1.0f;
	e = math_exp(2.0 * ax);
	t = (e - 1.0) / (e + 1.0);         /* e - 1 loses < 13 of 53 bits here */
	return (float)(x < 0 ? -t : t);
}

static bool is_int(float y)
{
	return math_floorf(y) == y;
}

static bool is_odd_int(float y)
{
	/* |y| >= 2^24 floats are all even integers */
	return is_int(y) && math_fabsf(y) < 16777216.0f &&
	       ((int32_t)y & 1);
}

/* C99 F.9.4.4 for the special cases; otherwise exp(y log|x|) in double. */
float math_powf(float x, float y)
{
	const float inf = bitsf(0x7f800000);
	double r;

	if (y == 0.0f || x == 1.0f)
		return 1.0f;
	if (math_isnan(x) || math_isnan(y))
		return x + y;
	if (x == 0.0f) {
		if (y < 0)
			return is_odd_int(y) ? bitsf((fbits(x) & 0x80000000) | 0x7f800000) : inf;
		return is_odd_int(y) ? x : 0.0f;
	}
	if (x < 0 && !is_int(y) && !math_isinf(y))
		return bitsf(0x7fc00000);
	r = math_exp((double)y * math_log(math_fabsf(x)));
	if (x < 0 && is_odd_int(y))
		r = -r;
	return (float)r;
}

/* ---- sin, cos ---- */

/* pi/2 as six 21-bit pieces: k * piece is exact for k < 2^32. */
static const double pio2_pieces[6] = {
	0x1.921fbp+0, 0x1.5110bp-22, 0x1.18469p-44, 0x1.13198p-65, 0x1.45c06p-86, 0x1.c1cd1p-107,
};

/* x = k pi/2 + r, |r| <= pi/4 (slightly more past 2^32); returns k mod 4. */
static int reduce_pio2(double x, double *r)
{
	int q = 0;

	/* Below 2^32 one pass. Past it k * piece is no longer exact and the
	 * remainder is not small (up to |x| 2^-52): reduce it again, each pass
	 * taking ~50 bits off, so the kernels below see |r| <= pi/4 and the
	 * result stays in [-1, 1] (not accurate there: the contract). */
	for (int pass = 0; pass < 4; pass++) {
		double k = rint_d(x * 0x1.45f306dc9c883p-1); /* 2/pi */
		for (int i = 0; i < 6; i++)
			x -= k * pio2_pieces[i];
		/* Past 2^55 every double is a multiple of 4. */
		q += (k < 0 ? -k : k) < 0x1p62 ? (int)((int64_t)k & 3) : 0;
		if (x >= -0.79 && x <= 0.79)
			break;
	}
	*r = x;
	return q & 3;
}

/* Taylor on |r| <= pi/4: sin to r^17, cos to r^18 (next terms < 2^-56). */
static double sin_kernel(double r)
{
	double r2 = r * r, p = -1.0 / 121645100408832000.0;  /* -1/19! */
	static const double c[] = {1.0 / 355687428096000.0, -1.0 / 1307674368000.0,
		1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0,
		1.0 / 120.0, -1.0 / 6.0};

	for (int i = 0; i < 8; i++)
		p = p * r2 + c[i];
	return r + r * r2 * p;
}

static double cos_kernel(double r)
{
	double r2 = r * r, p = 1.0 / 6402373705728000.0;     /* 1/18! */
	static const double c[] = {-1.0 / 20922789888000.0, 1.0 / 87178291200.0,
		-1.0 / 479001600.0, 1.0 / 3628800.0, -1.0 / 40320.0, 1.0 / 720.0,
		-1.0 / 24.0, 0.5};

	for (int i = 0; i < 8; i++)
		p = p * r2 + c[i];
	return 1.0 - r2 * p;
}

void math_sincosf(float x, float *s, float *c)
{
	double r, sr, cr;
	int q;

	if (math_isnan(x) || math_isinf(x)) {
		*s = *c = bitsf(0x7fc00000);
		return;
	}
	if (math_fabsf(x) < 0x1p-12f) {    /* x^3/6 and x^2/2 are below half an ulp */
		*s = x;                    /* keeps the sign of -0 */
		*c = 1.0f;
		return;
	}
	q = reduce_pio2(x, &r);
	sr = sin_kernel(r);
	cr = cos_kernel(r);
	switch (q) {
	case 0: *s = (float)sr; *c = (float)cr; break;
	case 1: *s = (float)cr; *c = (float)-sr; break;
	case 2: *s = (float)-sr; *c = (float)-cr; break;
	default: *s = (float)-cr; *c = (float)sr; break;
	}
}

float math_sinf(float x)
{
	float s, c;

	math_sincosf(x, &s, &c);
	return s;
}

float math_cosf(float x)
{
	float s, c;

	math_sincosf(x, &s, &c);
	return c;
}
