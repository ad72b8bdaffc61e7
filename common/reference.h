/* What the float64 oracle, the naive reference and the AUTO_BLOCK estimator share.
 *
 * The oracle and the naive reference are one computation at two precisions: the
 * naive reference (DESIGN.md, Tests) is the oracle with float32 arithmetic and with
 * S, P, dS and the outputs rounded to the input dtype. So the steps are written
 * once (common/oracle.c), and every place where the naive reference rounds is a
 * call to pa_ref_fp() (float32 arithmetic) or pa_ref_io() (stored in the dtype),
 * both the identity for the oracle. Internal to common/; not for backends. */
#ifndef PA_REFERENCE_H
#define PA_REFERENCE_H

#include <math.h>
#include <stdint.h>

#include "convert.h"
#include "mask.h"
#include "problem.h"

typedef enum pa_ref_precision {
  PA_REF_F64 = 0,  /* the oracle: every step in double */
  PA_REF_NAIVE = 1 /* float32 arithmetic; S, P, dS, outputs rounded to the dtype */
} pa_ref_precision;

/* Float32 arithmetic, simulated in double: each operation's double result is
 * rounded to float. For + - * / this equals the float operation exactly (double
 * rounding is innocuous since 53 >= 2 * 24 + 2). */
static inline double pa_ref_fp(pa_ref_precision prec, double x) {
  return prec == PA_REF_F64 ? x : (double)(float)x;
}

/* A value the naive reference holds in the input dtype (S, P, dS, outputs). */
static inline double pa_ref_io(pa_ref_precision prec, polyattn_dtype dtype, double x) {
  return prec == PA_REF_F64 ? x : pa_round_to_dtype(x, dtype);
}

/* acc + a * b, each operation in the working precision (no fused multiply-add:
 * the naive reference is a plain loop). */
static inline double pa_ref_madd(pa_ref_precision prec, double acc, double a, double b) {
  return pa_ref_fp(prec, acc + pa_ref_fp(prec, a * b));
}

static inline double pa_ref_exp(pa_ref_precision prec, double x) {
  return prec == PA_REF_F64 ? exp(x) : (double)expf((float)x);
}

static inline double pa_ref_log(pa_ref_precision prec, double x) {
  return prec == PA_REF_F64 ? log(x) : (double)logf((float)x);
}

/* One (batch entry, query head): what all its rows share. */
typedef struct pa_ref_head {
  int32_t b, h, hk; /* batch entry, query head, the kv head it reads */
  pa_seq seq;
  pa_mask mask;     /* causal / window / len_k; the block mask is separate */
  double slope;     /* ALiBi slope; 0 when off */
  int64_t q_row0;   /* canonical output row of query 0 (oracle.h layout) */
  int64_t k_row0;   /* canonical dk/dv row of key 0 */
} pa_ref_head;

static inline pa_ref_head pa_ref_head_make(const pa_problem *p, int32_t b, int32_t h) {
  pa_ref_head hd;
  hd.b = b;
  hd.h = h;
  hd.hk = h / (p->heads_q / p->heads_kv);
  hd.seq = pa_problem_seq(p, b);
  hd.mask = pa_problem_mask(p, &hd.seq);
  hd.slope = pa_problem_alibi_slope(p, b, h);
  hd.q_row0 = p->varlen ? hd.seq.q_start : (int64_t)b * p->seqlen_q;
  hd.k_row0 = p->varlen ? hd.seq.k_start : (int64_t)b * p->seqlen_k;
  return hd;
}

/* The longest used key range of any batch entry (scratch sizing). */
static inline int32_t pa_ref_max_len_k(const pa_problem *p) {
  int32_t m = 0;
  for (int32_t b = 0; b < p->batch; ++b) {
    int32_t l = pa_problem_seq(p, b).len_k;
    if (l > m) m = l;
  }
  return m;
}

/* The engine behind pa_oracle_* and pa_naive_* (common/oracle.c). */
void pa_reference_forward(const pa_problem *p, pa_ref_precision prec, double *out,
                          double *lse);
void pa_reference_backward(const pa_problem *p, pa_ref_precision prec, double *dq,
                           double *dk, double *dv);

#endif
