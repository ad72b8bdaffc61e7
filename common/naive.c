/* The "naive" reference of the tolerance rule (DESIGN.md, Tests): attention as a
 * plain implementation in the input precision would compute it, the yardstick for
 * how far from the float64 oracle a correct kernel may land.
 *
 * Forward: inputs as stored; q.k accumulated in float32; S (after scale, softcap,
 * ALiBi) rounded to the dtype; softmax in float32 and P rounded to the dtype;
 * O = P.V accumulated in float32 and rounded to the dtype; LSE in float32.
 * Backward: P recomputed the same way; dP = dO.V in float32; dS rounded to the
 * dtype; dQ, dK, dV accumulated in float32 (dK, dV over the GQA group too) and
 * rounded to the dtype. Masks and 2:4 follow the oracle (2:4 chosen on the float32
 * scores).
 *
 * The steps are the oracle's (common/oracle.c) with these rounding points switched
 * on, so the two can never disagree about which pairs are kept. */
#include "oracle.h"
#include "reference.h"

void pa_naive_forward(const pa_problem *p, double *out, double *lse) {
  pa_reference_forward(p, PA_REF_NAIVE, out, lse);
}

void pa_naive_backward(const pa_problem *p, double *dq, double *dk, double *dv) {
  pa_reference_backward(p, PA_REF_NAIVE, dq, dk, dv);
}
