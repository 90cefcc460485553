/* tests/unit/test_math.c — llm/math.c against libm (double, rounded to float). */
#include "test.h"

#include "../../llm/math.h"

static uint64_t rng = 88172645463325252ull;

static double urand(double lo, double hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + (hi - lo) * (double)(rng >> 11) * 0x1p-53;
}

/* Distance in representable floats (same sign region, monotone mapping). */
static int64_t ulps(float a, float b)
{
	int32_t ia, ib;

	memcpy(&ia, &a, 4);
	memcpy(&ib, &b, 4);
	if (ia < 0)
		ia = (int32_t)0x80000000 - ia;
	if (ib < 0)
		ib = (int32_t)0x80000000 - ib;
	return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

struct worst {
	int64_t ulp;
	float x;
	int n;
};

static void track(struct worst *w, float x, float got, double want)
{
	int64_t u = ulps(got, (float)want);

	w->n++;
	if (u > w->ulp) {
		w->ulp = u;
		w->x = x;
	}
}

static void report(const char *name, const struct worst *w, int64_t bound)
{
	if (w->ulp > bound) {
		fprintf(stderr, "  %s: %lld ulp at x = %a (bound %lld, %d values)\n", name,
			(long long)w->ulp, w->x, (long long)bound, w->n);
		test_failed_checks++;
	}
}

TEST(math_expf_within_1ulp)
{
	struct worst w = {0};

	for (int i = 0; i < 1000000; i++) {
		float x = (float)urand(-103.0, 88.7);
		track(&w, x, math_expf(x), exp((double)x));
	}
	for (float x = -1e-3f; x < 1e-3f; x += 1.37e-6f)
		track(&w, x, math_expf(x), exp((double)x));
	report("expf", &w, 1);
	CHECK(math_isinf(math_expf(89.0f)));
	CHECK_EQ_INT(math_expf(-104.0f), 0.0f);
	CHECK_EQ_INT(math_expf(0.0f), 1.0f);
	CHECK(math_isnan(math_expf(NAN)));
	CHECK_EQ_INT(math_expf(-INFINITY), 0.0f);
}

TEST(math_logf_within_1ulp)
{
	struct worst w = {0};

	/* Every 251st positive finite float, subnormals included. */
	for (uint32_t u = 1; u < 0x7f800000; u += 251) {
		float x;
		memcpy(&x, &u, 4);
		track(&w, x, math_logf(x), log((double)x));
	}
	report("logf", &w, 1);
	CHECK_EQ_INT(math_logf(1.0f), 0.0f);
	CHECK(math_isinf(math_logf(0.0f)) && math_logf(0.0f) < 0);
	CHECK(math_isnan(math_logf(-1.0f)));
	CHECK(math_isinf(math_logf(INFINITY)));
}

static void check_sincos(const char *name, double lo, double hi, int n, int64_t bound)
{
	struct worst ws = {0}, wc = {0};
	char nm[64];

	for (int i = 0; i < n; i++) {
		float x = (float)urand(lo, hi), s, c;
		math_sincosf(x, &s, &c);
		track(&ws, x, s, sin((double)x));
		track(&wc, x, c, cos((double)x));
		CHECK(s == math_sinf(x) && c == math_cosf(x));
	}
	snprintf(nm, sizeof nm, "sinf %s", name);
	report(nm, &ws, bound);
	snprintf(nm, sizeof nm, "cosf %s", name);
	report(nm, &wc, bound);
}

TEST(math_sincos_within_1ulp_to_2e9)
{
	check_sincos("[-10,10]", -10, 10, 300000, 1);
	check_sincos("[-1e6,1e6]", -1e6, 1e6, 300000, 1);
	check_sincos("[-2^31,2^31]", -2147483648.0, 2147483648.0, 100000, 1);
	/* RoPE angles: position x base^(-2i/d), base 1e6, positions to 128k. */
	struct worst w = {0};
	for (int pos = 0; pos < 131072; pos += 61)
		for (int i = 0; i < 64; i += 3) {
			float f = (float)pow(1e6, -2.0 * i / 128), x = (float)pos * f;
			track(&w, x, math_cosf(x), cos((double)x));
			track(&w, x, math_sinf(x), sin((double)x));
		}
	report("rope angles", &w, 1);
	/* Floats very close to multiples of pi/2 (cancellation in the reduction). */
	w = (struct worst){0};
	for (int k = 1; k < 200000; k += 7) {
		float x = (float)(k * 1.5707963267948966);
		track(&w, x, math_cosf(x), cos((double)x));
		track(&w, x, math_sinf(x), sin((double)x));
	}
	report("near k pi/2", &w, 1);
	CHECK(math_isnan(math_sinf(INFINITY)));
	CHECK_EQ_INT(math_cosf(0.0f), 1.0f);
	float nz = math_sinf(-0.0f);
	CHECK(nz == 0.0f && signbit(nz));
}

/* Past 2^32 the contract is only "in [-1, 1]": a huge RoPE angle (a file's
 * tiny rope.scaling.factor) must still rotate, not turn the row into inf. */
TEST(math_sincos_of_huge_arguments_stays_within_minus_1_and_1)
{
	int bad = 0;

	for (float x = 4294967296.0f; !math_isinf(x); x *= 1.37f)
		for (int sign = -1; sign <= 1; sign += 2) {
			float s, c, y = (float)sign * x;
			math_sincosf(y, &s, &c);
			if (!(s >= -1.0f && s <= 1.0f && c >= -1.0f && c <= 1.0f)) {
				if (bad++ < 3)
					printf("  sincos(%g) = %g, %g\n", (double)y, (double)s, (double)c);
			}
		}
	CHECK_EQ_INT(bad, 0);
	CHECK(math_fabsf(math_sinf(3.4028235e38f)) <= 1.0f);
}

TEST(math_tanhf_within_1ulp)
{
	struct worst w = {0};

	for (int i = 0; i < 500000; i++) {
		float x = (float)urand(-12, 12);
		track(&w, x, math_tanhf(x), tanh((double)x));
	}
	for (int i = 0; i < 200000; i++) {
		float x = (float)urand(-0.01, 0.01);
		track(&w, x, math_tanhf(x), tanh((double)x));
	}
	report("tanhf", &w, 1);
	CHECK_EQ_INT(math_tanhf(30.0f), 1.0f);
	CHECK_EQ_INT(math_tanhf(-30.0f), -1.0f);
	CHECK(math_isnan(math_tanhf(NAN)));
}

TEST(math_powf_within_1ulp)
{
	struct worst w = {0};

	for (int i = 0; i < 500000; i++) {
		float x = (float)urand(1e-3, 1e3), y = (float)urand(-12, 12);
		double want = pow((double)x, (double)y);
		if (want > 1e-37 && want < 1e37)
			track(&w, x, math_powf(x, y), want);
	}
	/* RoPE's base^(-2i/d) */
	for (int i = 0; i < 64; i++) {
		float y = -2.0f * i / 128;
		track(&w, 10000.0f, math_powf(10000.0f, y), pow(10000.0, (double)y));
		track(&w, 500000.0f, math_powf(500000.0f, y), pow(500000.0, (double)y));
	}
	report("powf", &w, 1);
	CHECK_EQ_INT(math_powf(-2.0f, 3.0f), -8.0f);
	CHECK_EQ_INT(math_powf(-2.0f, 2.0f), 4.0f);
	CHECK(math_isnan(math_powf(-2.0f, 0.5f)));
	CHECK_EQ_INT(math_powf(0.0f, 2.0f), 0.0f);
	CHECK(math_isinf(math_powf(0.0f, -1.0f)));
	CHECK_EQ_INT(math_powf(NAN, 0.0f), 1.0f);
	CHECK_EQ_INT(math_powf(1.0f, NAN), 1.0f);
}

TEST(math_sqrt_floor_fabs_exact)
{
	int bad = 0;

	for (int i = 0; i < 300000; i++) {
		float x = (float)urand(-1e6, 1e6), ax = fabsf(x);
		bad += math_sqrtf(ax) != sqrtf(ax);
		bad += math_floorf(x) != floorf(x);
		bad += math_fabsf(x) != ax;
		float small = (float)urand(-3, 3);
		bad += math_floorf(small) != floorf(small);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(math_isnan(math_sqrtf(-1.0f)));
	CHECK_EQ_INT(math_floorf(-0.5f), -1.0f);
	CHECK(signbit(math_floorf(-0.0f)));
	CHECK(math_floorf(1e30f) == 1e30f);
}

TEST(math_exp_and_log_in_double_match_libm)
{
	double worst = 0;

	for (int i = 0; i < 200000; i++) {
		double x = urand(-700, 700), y = urand(1e-300, 1e300);
		double e = fabs(math_exp(x) - exp(x)) / exp(x);
		double l = fabs(math_log(y) - log(y)) / fabs(log(y));
		if (e > worst)
			worst = e;
		if (l > worst)
			worst = l;
	}
	CHECK(worst < 1e-15);
	CHECK_EQ_INT(math_exp(-740.0) > 0, 1); /* subnormal result */
}

/* llm/vmath.h: the generic and the selected (AVX-512 here) builds give the
 * bits of the scalar code they replace. */
#include "../../llm/quant.h"
#include "../../llm/vmath.h"

static void vmath_check(const struct vmath_ops *vm)
{
	enum { N = 4099 };
	static float x[N], y[N], h[N], h2[N], h0[N];
	uint64_t st = 77;
	int bad = 0;

	quant_fill_random(GGML_TYPE_F32, x, 4096, 30.0f, &st);
	for (int i = 4096; i < N; i++)
		x[i] = (float)i / 100.0f;
	/* edges: the vector path's range, overflow, underflow, NaN, inf */
	const float edge[] = {690.0f, -690.0f, 690.5f, -700.0f, 88.8f, -104.0f, -0.0f, 1e-30f,
			      __builtin_nanf(""), __builtin_inff(), -__builtin_inff(), 3e38f};
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		x[100 + i] = edge[i];
	/* and each alone among ordinary values (the range check is per 8 and
	 * per 32 lanes: a NaN beside them would send their run the slow way) */
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		x[200 + 40 * i + i % 8] = edge[i];
	vm->expf_n(y, x, N);
	for (int i = 0; i < N; i++) {
		float want = math_expf(x[i]);
		if (memcmp(&want, &y[i], 4) && bad++ < 3)
			fprintf(stderr, "  %s expf(%.9g) = %.9g, math_expf %.9g\n", vm->impl, x[i],
				y[i], want);
	}
	for (int i = 0; i < N; i++) {
		h[i] = h0[i] = x[i] / 4;
		h2[i] = x[(i * 7) % N];
	}
	vm->swiglu(h, h2, N);
	for (int i = 0; i < N; i++) {
		float want = h0[i] / (1.0f + math_expf(-h0[i])) * h2[i];
		if (memcmp(&want, &h[i], 4) && bad++ < 6)
			fprintf(stderr, "  %s swiglu(%.9g) = %.9g, want %.9g\n", vm->impl, h0[i], h[i],
				want);
	}
	/* attention: hd 64 and 8, tiles of 64 and 37 positions, 1, 3 and 11
	 * heads (11: a run of VM_ATT_HEADS and a short one) */
	for (uint32_t hd = 8; hd <= 64; hd *= 8)
		for (uint32_t nt = 37; nt <= 64; nt += 27)
			for (uint32_t nh = 1; nh <= 11; nh += nh == 1 ? 2 : 8) {
				static float kT[64 * VM_ATT_LD], sc[11 * 64], o[11 * 64], o2[11 * 64],
					w[11 * 64];
				for (uint32_t i = 0; i < hd * VM_ATT_LD; i++)
					kT[i] = x[i % N] / 30;
				/* q of head h: x + h hd */
				float mx[11];
				vm->att_scores(sc, 64, mx, x, hd, nh, kT, nt, hd, 0.125f);
				for (uint32_t h = 0; h < nh; h++) {
					float m = -1e30f;
					for (uint32_t t = 0; t < nt; t++)
						m = sc[h * 64 + t] > m ? sc[h * 64 + t] : m;
					if (memcmp(&m, &mx[h], 4) && bad++ < 9)
						fprintf(stderr, "  %s head %u max %.9g vs %.9g\n", vm->impl,
							h, mx[h], m);
				}
				for (uint32_t h = 0; h < nh; h++)
					for (uint32_t t = 0; t < nt; t++) {
						float d = 0.0f;
						for (uint32_t i = 0; i < hd; i++)
							d += x[h * hd + i] * kT[i * VM_ATT_LD + t];
						d *= 0.125f;
						if (memcmp(&d, &sc[h * 64 + t], 4) && bad++ < 9)
							fprintf(stderr, "  %s head %u score %u: %.9g vs %.9g\n",
								vm->impl, h, t, sc[h * 64 + t], d);
						w[h * 64 + t] = y[(3 * t + h) % 97] / 1e10f; /* (not the edge values from 100 on) */
					}
				for (uint32_t i = 0; i < nh * hd; i++)
					o[i] = o2[i] = h2[i];
				vm->att_accum(o, hd, kT, w, 64, nh, nt, hd);
				for (uint32_t h = 0; h < nh; h++)
					for (uint32_t t = 0; t < nt; t++)
						for (uint32_t i = 0; i < hd; i++)
							o2[h * hd + i] += w[h * 64 + t] * kT[t * hd + i];
				if (memcmp(o, o2, nh * hd * 4) && bad++ < 12)
					fprintf(stderr, "  %s att_accum differs (hd %u nt %u heads %u)\n",
						vm->impl, hd, nt, nh);
			}
	/* the K tile transposed: hd 64, 8 and 72 (a 16-row tail), nt 64, 37, 16, 1 */
	{
		static float kt[64 * 72], kT[72 * VM_ATT_LD];
		const uint32_t hds[] = {64, 8, 72}, nts[] = {64, 37, 16, 1};
		for (uint32_t a = 0; a < 3; a++)
			for (uint32_t b = 0; b < 4; b++) {
				uint32_t hd = hds[a], nt = nts[b];
				for (uint32_t i = 0; i < 64 * 72; i++)
					kt[i] = x[i % N];
				vm->att_transpose(kT, kt, nt, hd);
				for (uint32_t t = 0; t < nt; t++)
					for (uint32_t i = 0; i < hd; i++)
						if (memcmp(&kT[i * VM_ATT_LD + t], &kt[t * hd + i], 4) &&
						    bad++ < 14)
							fprintf(stderr, "  %s transpose hd %u nt %u: [%u][%u]\n",
								vm->impl, hd, nt, i, t);
			}
	}
	CHECK_EQ_INT(bad, 0);
}

TEST(vmath_same_bits_as_scalar)
{
	const struct vmath_ops *vm = vmath_get(plat_cpu_features());

	vmath_check(&vmath_generic);
	vmath_check(vm);
	if (plat_cpu_features() & PLAT_CPU_AVX512BW)
		CHECK_STR(vm->impl, "avx512");
#if defined(__x86_64__)
	if (plat_cpu_features() & PLAT_CPU_AVX2) { /* the AVX2 build (Zen 2, 3) too */
		vm = vmath_get(plat_cpu_features() & ~(uint32_t)PLAT_CPU_AVX512F);
		CHECK_STR(vm->impl, "avx2");
		vmath_check(vm);
	}
#endif
	CHECK_STR(vmath_get(0)->impl, "generic");
}
