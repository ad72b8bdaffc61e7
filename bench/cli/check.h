/* The error of a run against the float64 oracle (common/oracle.h), on a sample.
 *
 * The oracle is simple and slow, so it runs on sub-problems: the last rows (at
 * least CHECK_ROWS, starting on a block boundary) of two (batch, head) pairs.
 * Taking the LAST rows keeps causal, window and ALiBi alignment exact: row i sits
 * at key i + Sk - Sq, and rows [i0, Sq) of a problem with len_q' = Sq - i0 keep
 * the same offsets. Each sub-problem is built with pa_problem_build() on host
 * views of the inputs and of the outputs read back, exactly as a backend sees it.
 *
 * The verdict follows DESIGN.md's tolerance rule: max|out - ref| <= 2 max|naive -
 * ref| + atol, atol = 2 (3 with softcap) max|round(ref) - ref|, and nmse <= 5e-4;
 * LSE within 1e-3; NaN/Inf where ref is finite fails. */
#ifndef CLI_CHECK_H
#define CLI_CHECK_H

#include <stdint.h>

#include "setup.h"

enum { CHECK_ROWS = 64 };

/* Error statistics of one output tensor against the oracle. */
typedef struct err_stats {
  double max_err;   /* max |out - ref| */
  double bound;     /* the tolerance rule's bound on max_err */
  double nmse;      /* sum (out - ref)^2 / sum ref^2 */
  long long nonfinite, count;
  int pass;
} err_stats;

typedef struct check_report {
  int ok;                /* 0: the check itself could not run (message printed) */
  int samples;           /* (batch, head) pairs checked */
  int32_t first_row;     /* rows [first_row, seq_q) were checked */
  err_stats out, lse, dq, dk, dv;
  int grads_checked;     /* dq always with --backward; dk/dv when small enough */
  int dkv_checked;
  /* AUTO_BLOCK: the reference estimator's choice, and the error against dense
   * attention (the approximation, reported, never hidden). */
  int auto_dense;        /* the reference ran dense (density above the cutoff) */
  double auto_density;
  long long auto_mask_diff; /* blocks where the backend's mask differs */
  err_stats approx;
  uint8_t *auto_mask;    /* the reference mask, [batch, heads, qblocks, kblocks] */
  int pass;              /* every checked tensor passes */
  int hopeless;          /* NaN/Inf, or nmse > 1e-2: the run is broken */
} check_report;

/* Start from a zeroed report: check_report rep = {0}; free it with
 * check_report_free. */

/* AUTO_BLOCK only, after the forward: resolve the reference estimator's choice on
 * the host inputs, compare it with the mask the backend returned, and make the
 * backward params follow it (BLOCK with the mask, or NONE when it ran dense). */
int check_resolve_auto(attn_run *r, check_report *rep);

/* Check the outputs read back by attn_read_forward / attn_read_backward. */
int check_run(const attn_run *r, check_report *rep);
void check_print(const attn_run *r, const check_report *rep);
void check_report_free(check_report *rep);

#endif
