/* The float64 oracle, the naive low-precision reference, and the AUTO_BLOCK
 * estimator — the definition of what every backend computes (docs/semantics.md).
 *
 * All take a pa_problem whose views are host-addressable (ptr != NULL) and write
 * results in one canonical dense layout, whatever the strides of the inputs:
 *   out, dq:  [total_q, Hq, D or Dv]     (row t = b * Sq + i, or q_start + i varlen)
 *   dk, dv:   [total_k, Hkv, D or Dv]
 *   lse:      [Hq, total_q]
 * The oracle is written to be obviously right, not fast: one (row, key) pair at a
 * time, in double, straight from the semantics. */
#ifndef PA_ORACLE_H
#define PA_ORACLE_H

#include <stdint.h>

#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward in float64 from the inputs as stored (rounded values of their dtype).
 * AUTO_BLOCK problems run the estimator first (pa_auto_block_resolve). */
void pa_oracle_forward(const pa_problem *p, double *out, double *lse);

/* Backward in float64: gradients of sum(out * dout) with dout read from p->dout,
 * recomputed from Q, K, V alone (p->o and p->lse are not read). */
void pa_oracle_backward(const pa_problem *p, double *dq, double *dk, double *dv);

/* The "naive" reference of the tolerance rule: inputs in their dtype, products
 * accumulated in float32, S and P rounded to the dtype, outputs rounded to the
 * dtype. Same layout; values returned as double. */
void pa_naive_forward(const pa_problem *p, double *out, double *lse);
void pa_naive_backward(const pa_problem *p, double *dq, double *dk, double *dv);

/* AUTO_BLOCK estimator (DESIGN.md): per (batch, head, query block) keep the
 * smallest set of key blocks whose estimated softmax mass reaches
 * p->block_threshold, always keeping the first key block and the diagonal ones.
 * Writes mask[((b * Hq + h) * mask_qblocks + qb) * mask_kblocks + kb] and returns
 * the density: kept blocks / blocks the structural masks allow. */
double pa_auto_block_estimate(const pa_problem *p, uint8_t *mask);

/* Bytes of storage pa_auto_block_resolve needs: the mask (first, laid out as for
 * pa_auto_block_estimate) followed by the estimator's scratch, so that a backend
 * resolving from its workspace allocates nothing. */
int64_t pa_auto_block_mask_bytes(const pa_problem *p);

/* Turn an AUTO_BLOCK problem into the problem that is actually computed: BLOCK
 * with the estimated mask held in `mask` (pa_auto_block_mask_bytes bytes), or
 * NONE when the density exceeds p->auto_density_cutoff. Copies the chosen mask to
 * p->block_mask_out when given (host-addressable):
 * the mask actually computed, so all ones when it falls back to dense. Other problems are copied
 * unchanged. Returns the density (1 for non-AUTO problems). */
double pa_auto_block_resolve(const pa_problem *p, pa_problem *resolved, uint8_t *mask);
/* (`mask` must be 16-byte aligned and hold pa_auto_block_mask_bytes bytes.) */

#ifdef __cplusplus
}
#endif
#endif
