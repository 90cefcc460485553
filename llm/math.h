/*
 * llm/math.h — the float math the engine needs, without libm.
 *
 * Our own code so that the host build and the kernel compute the same bits.
 * Each function works in double internally and rounds once to float, which
 * keeps the error within about 1 ulp (bounds stated per function, checked
 * against libm by tests/unit/test_math.c). Special values follow C99 Annex F
 * where the engine could meet them (NaN in, NaN out; exp overflow to inf).
 */
#ifndef LLM_MATH_H
#define LLM_MATH_H

#include "../kernel/platform.h"

float math_fabsf(float x);
float math_sqrtf(float x);      /* correctly rounded (one hardware instruction) */
float math_expf(float x);       /* <= 1 ulp */
float math_logf(float x);       /* <= 1 ulp; log(0) = -inf, log(x < 0) = NaN */
float math_powf(float x, float y); /* <= 1 ulp for results in the normal range */
float math_tanhf(float x);      /* <= 1 ulp */
/* sin and cos with exact-enough range reduction (pi/2 in six 21-bit pieces):
 * <= 1 ulp for |x| < 2^32, the range RoPE angles (position x frequency) live
 * in; beyond that the result is a value in [-1, 1] but not accurate. */
float math_sinf(float x);
float math_cosf(float x);
void math_sincosf(float x, float *s, float *c);
float math_floorf(float x);
bool math_isnan(float x);
bool math_isinf(float x);

/* Double-precision kernels the float functions are built on (about 1e-15
 * relative error); exposed for code that wants more than float precision,
 * e.g. RoPE frequency tables and sampling. */
double math_exp(double x);
double math_log(double x);

#endif
