/* The shared machinery of the oracle-driven suites (test_forward, test_backward).
 *
 * A th_case describes one attention problem: sizes, masks, sparsity, varlen,
 * layout and its own tolerance factors. The harness builds fresh random inputs
 * for it, poisons every output with NaN, runs it through the public API on one
 * backend, runs the float64 oracle and the naive low-precision reference of
 * common/ on the same host data, and applies DESIGN.md's tolerance rule:
 *
 *   pass iff max|out - ref| <= naive_factor * max|naive - ref| + atol,
 *            atol = atol_factor * max|round_to_dtype(ref) - ref|   (2, 3 with softcap)
 *        and sum (out - ref)^2 / sum ref^2 <= 5e-4                 (when sum ref^2 > 0)
 *        and |lse - ref_lse| <= 1e-3, -inf exactly where ref is -inf
 *        and no NaN/Inf where ref is finite (a NaN left from the poison fails)
 *        and no byte of an output buffer outside its view changed.
 *
 * The backend list is data: one parameter per (case, dtype, backend), over the
 * backends polyattn_backends() reports as built, restricted by the environment
 * variable POLYATTN_TEST_BACKENDS=cpu,cuda,... when set. A selected backend that is
 * absent or unusable yields one loud skip with the reason, never a pass.
 * POLYATTN_TEST_CASES=sub1,sub2 keeps only the cases whose name contains one of
 * the substrings (a reduced sweep, e.g. under compute-sanitizer).
 * POLYATTN_TEST_NO_LSE=1 runs the forward sweep (th_forward_test) without asking for
 * the LSE, as the no_lse cases do: kernels that take another path then (the CUDA
 * Ampere rows with the tensor cores' row sums) get the whole sweep. */
#ifndef PA_TESTS_HARNESS_H
#define PA_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "polyattn.h"

#define TH_MAX_SEQS 8

typedef enum th_layout {
  TH_CONTIGUOUS = 0, /* [B, S, H, D] dense */
  TH_STRIDED,        /* padding between heads, tokens and batches (multiples of 8) */
  TH_STRIDED_ODD,    /* odd padding and an odd element offset */
  TH_PACKED_QKV,     /* q, k, v (and dq, dk, dv) views into one [B, S, Hq+2Hkv, D] */
  TH_BHSD            /* storage order [B, H, S, D] */
} th_layout;

typedef enum th_alibi {
  TH_ALIBI_NONE = 0,
  TH_ALIBI_HEADS,      /* slopes [Hq], 2^(-8(h+1)/Hq) */
  TH_ALIBI_BATCH_HEADS /* slopes [B, Hq], the per-head slopes scaled per batch entry */
} th_alibi;

/* Dtype sets of a table row: the row is expanded once per dtype in the set. */
#define TH_F32 (1u << POLYATTN_DTYPE_F32)
#define TH_F16 (1u << POLYATTN_DTYPE_F16)
#define TH_BF16 (1u << POLYATTN_DTYPE_BF16)
#define TH_ALL (TH_F32 | TH_F16 | TH_BF16)

/* Zero is the default of every field: batch/heads_q 0 mean 1, heads_kv 0 means
 * heads_q, head_dim_v 0 means head_dim, scale 0 means 1/sqrt(D). */
typedef struct th_case {
  const char *name;
  unsigned dtypes;       /* TH_* set the row expands to */
  polyattn_dtype dtype;  /* filled per expansion */
  int32_t batch, seq_q, seq_k, heads_q, heads_kv, head_dim, head_dim_v;
  float scale;
  int causal;
  int window; /* 1: window_left/right below apply; 0: (-1, -1) */
  int32_t window_left, window_right;
  float softcap;
  th_alibi alibi;

  polyattn_sparsity sparsity;
  int32_t block_q, block_k;   /* 0: library default (64) */
  int mask_per_batch;         /* BLOCK mask: mask_batch = B (else 1) */
  int mask_per_head;          /* BLOCK mask: mask_heads = Hq (else 1) */
  double mask_density;        /* fraction of blocks set at random (0: 0.5) */
  int mask_keep_diag;         /* also set the blocks on the diagonal */
  int mask_empty_rows;        /* clear every third query-block row */
  float block_threshold, auto_density_cutoff; /* AUTO_BLOCK */
  int mask_out;               /* AUTO_BLOCK: request block_mask_out and check it */

  int varlen;                 /* seqlens_q/k[0..batch) give the sequences */
  int32_t seqlens_q[TH_MAX_SEQS], seqlens_k[TH_MAX_SEQS];
  int no_max_seqlen;          /* varlen: pass max_seqlen_* = 0 (library computes; CPU only,
                               * GPU runs pass it: their cu_seqlens live on the device) */
  int seqused;                /* seqused_k[0..batch) given */
  int32_t seqused_k[TH_MAX_SEQS];

  th_layout layout;
  int no_lse;                 /* forward: do not request the LSE */
  int deterministic;          /* params.deterministic (backward) */
  /* q and k rows of the same 64-row band share one of four random directions, so
   * attention is peaky and block-structured: AUTO_BLOCK then finds real sparsity
   * (with plain random inputs the mass is spread evenly and it keeps ~all blocks) */
  int clustered;
  int no_workspace;           /* pass workspace = NULL (the context allocates) */

  double naive_factor;        /* 0: 2 */
  double atol_factor;         /* 0: 2, or 3 with softcap */
  uint32_t seed;
} th_case;

/* One test parameter: a case (index into the suite's table; -1 means "this
 * backend cannot run here", which skips with the reason), a dtype and a backend. */
typedef struct th_param {
  int case_index;
  polyattn_dtype dtype;
  polyattn_backend_kind backend;
} th_param;

/* Expand a table into parameters (cr_malloc'd, as Criterion requires). */
size_t th_make_params(const th_case *cases, size_t ncases, th_param **out);

/* The selected backends: kinds named in POLYATTN_TEST_BACKENDS, or every kind
 * polyattn_backends() lists as built. Returns how many were written. */
size_t th_selected_backends(polyattn_backend_kind kinds[8]);

/* A context on `kind`; when the backend is absent or unusable the test is
 * skipped (cr_skip_test) with the reason. Never returns NULL. */
polyattn_context *th_context_or_skip(polyattn_backend_kind kind);

/* Runs of a determinism test: POLYATTN_TEST_REPEAT when it is above 1, else
 * `fallback` (CI's lavapipe stage sets 3: decision 114). */
int th_repeats(int fallback);

/* The case as it is run: a copy with the dtype and defaults filled in. */
th_case th_case_resolve(const th_case *c, polyattn_dtype dtype);
/* "name/f16/cpu" */
void th_case_label(const th_case *c, polyattn_backend_kind kind, char *buf, size_t n);

/* Measured errors of one output against the oracle. */
typedef struct th_check {
  const char *what;
  long count;          /* elements compared */
  long nonfinite;      /* NaN/Inf where ref is finite (includes unwritten poison) */
  double max_err;      /* max |out - ref| */
  double naive_err;    /* max |naive - ref| */
  double atol;
  double bound;        /* naive_factor * naive_err + atol */
  double nmse;         /* sum (out-ref)^2 / sum ref^2, 0 when sum ref^2 == 0 */
  int pass;
} th_check;

typedef struct th_run th_run;

/* Build the inputs of `c` (resolved) on `ctx`: random data, poisoned outputs.
 * `backward` also prepares dout and the gradient buffers. */
th_run *th_run_create(polyattn_context *ctx, const th_case *c, int backward);
void th_run_destroy(th_run *r);

/* Poison the outputs, query the workspace, run, synchronise and read back. The
 * status is that of the first failing call; th_run_message() has the text. */
polyattn_status th_run_forward(th_run *r);
polyattn_status th_run_backward(th_run *r);
const char *th_run_message(const th_run *r);

/* Compare against the oracle. Fills `summary` with one line of measured errors
 * and returns 1 on pass. */
int th_check_forward(th_run *r, char *summary, size_t n);
int th_check_backward(th_run *r, char *summary, size_t n);
/* th_check_forward as a test assertion: logs the summary (after `what: ` when
 * `what` is not NULL) and fails the test unless it passed. */
void th_assert_forward_ok(th_run *r, const char *what);
/* Resolve table[0] for `dt`, run it on ctx (asserting success), check it against
 * the oracle (th_assert_forward_ok) and return the run (outputs read back). */
th_run *th_run_checked(polyattn_context *ctx, const th_case *table, polyattn_dtype dt);

/* Whether every byte of the output buffers outside the views kept its value. */
int th_guard_ok(const th_run *r, char *msg, size_t n);

/* Raw output bytes as last read back, for the bit-identity tests:
 * which = 0 out, 1 lse, 2 dq, 3 dk, 4 dv. */
const void *th_run_bytes(const th_run *r, int which, size_t *bytes);

/* Finite differences: tensor 0 q, 1 k, 2 v; (b, token, head, d) with token the
 * row within entry b. get/set work on the input (set rewrites the device copy);
 * grad reads the last backward's dq/dk/dv; loss is sum(out * dout) in double from
 * the last forward. */
double th_input_get(const th_run *r, int tensor, int32_t b, int64_t tok, int32_t h, int32_t d);
void th_input_set(th_run *r, int tensor, int32_t b, int64_t tok, int32_t h, int32_t d,
                  double value);
double th_grad_get(const th_run *r, int tensor, int32_t b, int64_t tok, int32_t h, int32_t d);
double th_loss(const th_run *r);

/* The whole forward test of one parameter: context (or skip), run, unsupported
 * -> skip with the message, check, log the summary, assert. */
void th_forward_test(const th_case *table, const th_param *p);
void th_backward_test(const th_case *table, const th_param *p);

/* 1 when the run had tests and every one of them was skipped. */
int th_all_skipped(void);

/* The suites' main: Criterion's, plus exit code 77 (ctest's SKIP_RETURN_CODE) when
 * every test was skipped, so a backend that cannot run here shows as Skipped.
 * main() must stay visible: Criterion's BoxFort finds it by name to start its
 * workers, and the project builds with hidden visibility by default. */
#define TH_DEFINE_MAIN                                                              \
  __attribute__((visibility("default"))) int main(int argc, char *argv[]) {        \
    struct criterion_test_set *tests = criterion_initialize();                      \
    int result = 0;                                                                 \
    if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests); \
    criterion_finalize(tests);                                                      \
    if (result == 0 && th_all_skipped()) return 77;                                 \
    return result;                                                                  \
  }

#endif
