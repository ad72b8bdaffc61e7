// The online softmax of common/softmax.h, step for step and name for name, for the
// Vulkan shaders. One query row sees its scores a tile at a time and keeps the
// running maximum m and the running sum l = sum exp(s - m):
//   1. update max  (pa_softmax_update_max)  2. rescale  (pa_softmax_rescale)
//   3. accumulate  (pa_softmax_accumulate)  4. normalise (pa_softmax_normaliser, _lse)
// Masked scores are -inf and give p = 0; a row that never saw a kept score keeps
// m = -inf, l = 0, and step 4 gives O = 0 and LSE = -inf, never NaN.
#ifndef PA_SOFTMAX_GLSL
#define PA_SOFTMAX_GLSL

#define PA_NEG_INF uintBitsToFloat(0xff800000u)

// exp(x) to within about 1 ulp on every device. GLSL's exp() may be an
// approximation (Vulkan allows 3 + 2|x| ulp; lavapipe's is a short polynomial),
// which the fp32 tolerance rule notices. Cody-Waite reduction x = n ln2 + r,
// |r| <= ln2 / 2, then a degree-7 Taylor polynomial (truncation < 4e-9 relative).
float pa_exp(float x) {
  if (x < -104.0) return 0.0; // below the smallest subnormal; also exp(-inf)
  if (x > 88.8) return uintBitsToFloat(0x7f800000u);
  const float n = roundEven(x * 1.4426950408889634);
  float r = fma(n, -0.693145751953125, x); // ln2, high part (exact product)
  r = fma(n, -1.4286067653302e-6, r);      // ln2, low part
  float p = 1.0 / 5040.0;
  p = fma(p, r, 1.0 / 720.0);
  p = fma(p, r, 1.0 / 120.0);
  p = fma(p, r, 1.0 / 24.0);
  p = fma(p, r, 1.0 / 6.0);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  const int e = int(n); // in [-150, 128]: scale in two steps so 2^e never overflows
  return ldexp(ldexp(p, e / 2), e - e / 2);
}

// The exponential of the steps below. A kernel whose P is rounded to fp16 or bf16
// may define PA_SOFTMAX_EXP as the device's exp() before including this file: its
// error (a few fp32 ulp) is far below that rounding (docs/decisions.md 44).
#ifndef PA_SOFTMAX_EXP
#define PA_SOFTMAX_EXP pa_exp
#endif

struct pa_softmax_row {
  float m; // running maximum of the kept scores; -inf before any
  float l; // running sum of exp(s - m)
};

pa_softmax_row pa_softmax_start() { return pa_softmax_row(PA_NEG_INF, 0.0); }

// Step 1: fold the tile's maximum in; returns alpha, the factor that rescales the
// row's previous l and accumulator (1 when the maximum did not move).
float pa_softmax_update_max(inout pa_softmax_row r, float tile_max) {
  float m_new = r.m > tile_max ? r.m : tile_max;
  float alpha = (r.m == m_new) ? 1.0 : PA_SOFTMAX_EXP(r.m - m_new);
  r.m = m_new;
  return alpha;
}

// The reference point of this tile's exponentials: 0 while the maximum is -inf.
float pa_softmax_ref(pa_softmax_row r) { return r.m == PA_NEG_INF ? 0.0 : r.m; }

// Step 2: rescale the running sum (the caller rescales its accumulator by alpha).
void pa_softmax_rescale(inout pa_softmax_row r, float alpha) { r.l *= alpha; }

// Step 3: add the tile's sum of p.
void pa_softmax_accumulate(inout pa_softmax_row r, float p_sum) { r.l += p_sum; }

// Two partial rows of one query (split-KV) merged; scale_a/scale_b multiply the
// two accumulators before they are added.
pa_softmax_row pa_softmax_merge(pa_softmax_row a, pa_softmax_row b, out float scale_a,
                                out float scale_b) {
  pa_softmax_row r;
  r.m = a.m > b.m ? a.m : b.m;
  scale_a = a.m == PA_NEG_INF ? 0.0 : PA_SOFTMAX_EXP(a.m - r.m);
  scale_b = b.m == PA_NEG_INF ? 0.0 : PA_SOFTMAX_EXP(b.m - r.m);
  r.l = a.l * scale_a + b.l * scale_b;
  return r;
}

// Step 4: the factor that turns the accumulator into O (0 for an empty row).
float pa_softmax_normaliser(pa_softmax_row r) { return r.l > 0.0 ? 1.0 / r.l : 0.0; }

// Step 4: the row's log-sum-exp (-inf for an empty row).
float pa_softmax_lse(pa_softmax_row r) { return r.l > 0.0 ? r.m + log(r.l) : PA_NEG_INF; }

#endif
