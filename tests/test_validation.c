/* Bad input, one test per validation rule: each asserts the exact status, a
 * message from polyattn_last_error() naming the argument, and output buffers left
 * byte for byte as they were. Then the small API: status strings, version, dtypes,
 * buffers, backend selection, logging. Everything goes through the public header
 * only, on the CPU backend (validation is the router's, the same for every backend). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "polyattn.h"

/* ------------------------------------------------------------------ fixture */

enum { B = 2, SQ = 16, SK = 24, HQ = 4, HKV = 2, D = 32, TQ = 40, TK = 50 };
#define BUF_BYTES ((size_t)512 << 10)
#define OUT_SENTINEL 0xab
#define LSE_SENTINEL 0xcd
#define GRAD_SENTINEL 0x5e

typedef struct vf {
  polyattn_context *ctx;
  polyattn_buffer *bq, *bk, *bv, *bo, *blse, *bdo, *bdq, *bdk, *bdv, *bmeta, *ws;
  polyattn_tensor q, k, v, o, lse, dout, dq, dk, dv;
  polyattn_tensor cu_q, cu_k, used, alibi, mask;
  /* what the calls receive; tests may point these elsewhere or at NULL */
  const polyattn_tensor *pq, *pk, *pv, *po, *plse, *pdout, *pdq, *pdk, *pdv;
  polyattn_params params;
  int varlen;
} vf;

static vf F;

static polyattn_buffer *alloc_filled(polyattn_context *ctx, int byte) {
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(ctx, BUF_BYTES, &b), POLYATTN_OK, "%s",
               polyattn_last_error(ctx));
  uint8_t *tmp = malloc(BUF_BYTES);
  memset(tmp, byte, BUF_BYTES);
  cr_assert_eq(polyattn_buffer_write(ctx, b, 0, tmp, BUF_BYTES), POLYATTN_OK);
  free(tmp);
  return b;
}

static polyattn_context *cpu_context(void) {
  unsetenv("POLYATTN_BACKEND");
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_CPU;
  d.num_threads = 1;
  polyattn_context *ctx = NULL;
  cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_OK, "%s", polyattn_last_error(NULL));
  return ctx;
}

static void tensor4(polyattn_tensor *t, polyattn_buffer *b, int64_t b0, int64_t s, int64_t h,
                    int64_t d) {
  int64_t shape[4] = {b0, s, h, d};
  polyattn_tensor_contiguous(t, b, 0, POLYATTN_DTYPE_F16, 4, shape);
}
static void tensor3(polyattn_tensor *t, polyattn_buffer *b, int64_t tok, int64_t h, int64_t d) {
  int64_t shape[3] = {tok, h, d};
  polyattn_tensor_contiguous(t, b, 0, POLYATTN_DTYPE_F16, 3, shape);
}

/* A valid f16 problem, fixed-length or varlen; the metadata buffer holds
 * cu_seqlens_q at 0, cu_seqlens_k at 64, seqused_k at 128, ALiBi slopes at 256
 * and a block mask at 1024. */
static void setup(int varlen) {
  memset(&F, 0, sizeof F);
  F.varlen = varlen;
  F.ctx = cpu_context();
  F.bq = alloc_filled(F.ctx, 0x3c); /* f16 0x3c3c ~ 1.06 */
  F.bk = alloc_filled(F.ctx, 0x3c);
  F.bv = alloc_filled(F.ctx, 0x3c);
  F.bdo = alloc_filled(F.ctx, 0x3c);
  F.bo = alloc_filled(F.ctx, OUT_SENTINEL);
  F.blse = alloc_filled(F.ctx, LSE_SENTINEL);
  F.bdq = alloc_filled(F.ctx, GRAD_SENTINEL);
  F.bdk = alloc_filled(F.ctx, GRAD_SENTINEL);
  F.bdv = alloc_filled(F.ctx, GRAD_SENTINEL);
  F.bmeta = alloc_filled(F.ctx, 0);

  int32_t meta_i[64] = {0};
  int32_t cuq[B + 1] = {0, 16, TQ}, cuk[B + 1] = {0, 24, TK}, used[B] = {20, 24};
  memcpy(meta_i, cuq, sizeof cuq);
  memcpy(meta_i + 16, cuk, sizeof cuk);
  memcpy(meta_i + 32, used, sizeof used);
  cr_assert_eq(polyattn_buffer_write(F.ctx, F.bmeta, 0, meta_i, sizeof meta_i), POLYATTN_OK);
  float slopes[HQ] = {0.5f, 0.25f, 0.125f, 0.0625f};
  cr_assert_eq(polyattn_buffer_write(F.ctx, F.bmeta, 256, slopes, sizeof slopes), POLYATTN_OK);
  uint8_t mask[64];
  memset(mask, 1, sizeof mask);
  cr_assert_eq(polyattn_buffer_write(F.ctx, F.bmeta, 1024, mask, sizeof mask), POLYATTN_OK);

  int64_t shp[4];
  shp[0] = B + 1;
  polyattn_tensor_contiguous(&F.cu_q, F.bmeta, 0, POLYATTN_DTYPE_I32, 1, shp);
  polyattn_tensor_contiguous(&F.cu_k, F.bmeta, 64, POLYATTN_DTYPE_I32, 1, shp);
  shp[0] = B;
  polyattn_tensor_contiguous(&F.used, F.bmeta, 128, POLYATTN_DTYPE_I32, 1, shp);
  shp[0] = HQ;
  polyattn_tensor_contiguous(&F.alibi, F.bmeta, 256, POLYATTN_DTYPE_F32, 1, shp);
  /* block mask with 8x8 blocks over max lengths 16 x 24 (varlen: 24 x 26) */
  shp[0] = 1, shp[1] = 1, shp[2] = varlen ? 3 : 2, shp[3] = varlen ? 4 : 3;
  polyattn_tensor_contiguous(&F.mask, F.bmeta, 1024, POLYATTN_DTYPE_U8, 4, shp);

  if (varlen) {
    tensor3(&F.q, F.bq, TQ, HQ, D);
    tensor3(&F.k, F.bk, TK, HKV, D);
    tensor3(&F.v, F.bv, TK, HKV, D);
    tensor3(&F.o, F.bo, TQ, HQ, D);
    tensor3(&F.dout, F.bdo, TQ, HQ, D);
    tensor3(&F.dq, F.bdq, TQ, HQ, D);
    tensor3(&F.dk, F.bdk, TK, HKV, D);
    tensor3(&F.dv, F.bdv, TK, HKV, D);
    shp[0] = HQ, shp[1] = TQ;
    polyattn_tensor_contiguous(&F.lse, F.blse, 0, POLYATTN_DTYPE_F32, 2, shp);
  } else {
    tensor4(&F.q, F.bq, B, SQ, HQ, D);
    tensor4(&F.k, F.bk, B, SK, HKV, D);
    tensor4(&F.v, F.bv, B, SK, HKV, D);
    tensor4(&F.o, F.bo, B, SQ, HQ, D);
    tensor4(&F.dout, F.bdo, B, SQ, HQ, D);
    tensor4(&F.dq, F.bdq, B, SQ, HQ, D);
    tensor4(&F.dk, F.bdk, B, SK, HKV, D);
    tensor4(&F.dv, F.bdv, B, SK, HKV, D);
    shp[0] = B, shp[1] = HQ, shp[2] = SQ;
    polyattn_tensor_contiguous(&F.lse, F.blse, 0, POLYATTN_DTYPE_F32, 3, shp);
  }
  F.pq = &F.q, F.pk = &F.k, F.pv = &F.v, F.po = &F.o, F.plse = &F.lse;
  F.pdout = &F.dout, F.pdq = &F.dq, F.pdk = &F.dk, F.pdv = &F.dv;
  polyattn_params_init(&F.params);
  if (varlen) {
    F.params.cu_seqlens_q = &F.cu_q;
    F.params.cu_seqlens_k = &F.cu_k;
  }

  /* The fixture itself must be valid, so every failure below is the mutation's. */
  size_t fw = 0, bw = 0;
  polyattn_status st = polyattn_forward_workspace_size(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po,
                                                       F.plse, &fw);
  cr_assert_eq(st, POLYATTN_OK, "valid fixture rejected: %s", polyattn_last_error(F.ctx));
  st = polyattn_backward_workspace_size(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.pdout,
                                        F.pdq, F.pdk, F.pdv, &bw);
  cr_assert_eq(st, POLYATTN_OK, "valid fixture rejected (backward): %s", polyattn_last_error(F.ctx));
  size_t need = fw > bw ? fw : bw;
  cr_assert_eq(polyattn_buffer_alloc(F.ctx, need ? need : 1, &F.ws), POLYATTN_OK);
}

static void setup_fixed(void) { setup(0); }
static void setup_varlen(void) { setup(1); }

static void teardown(void) {
  polyattn_buffer *bs[] = {F.bq, F.bk, F.bv, F.bo, F.blse, F.bdo, F.bdq, F.bdk, F.bdv, F.bmeta, F.ws};
  for (size_t i = 0; i < sizeof bs / sizeof bs[0]; ++i) polyattn_buffer_free(bs[i]);
  polyattn_context_destroy(F.ctx);
}

/* ------------------------------------------------------------------ checks */

static void assert_filled(polyattn_buffer *b, int byte, const char *name) {
  uint8_t *tmp = malloc(BUF_BYTES);
  cr_assert_eq(polyattn_buffer_read(F.ctx, b, 0, tmp, BUF_BYTES), POLYATTN_OK);
  for (size_t i = 0; i < BUF_BYTES; ++i)
    if (tmp[i] != byte) {
      free(tmp);
      cr_assert_fail("%s buffer modified by a call that failed (byte %zu)", name, i);
    }
  free(tmp);
}

static void assert_message(const polyattn_context *ctx, const char *arg) {
  const char *m = polyattn_last_error(ctx);
  cr_assert_not_null(m, "polyattn_last_error returned NULL");
  cr_assert(m[0] != '\0', "polyattn_last_error is empty");
  cr_assert_not_null(strcasestr(m, arg), "message \"%s\" does not mention \"%s\"", m, arg);
}

static void assert_status(polyattn_status got, polyattn_status want, const char *call) {
  cr_assert_eq(got, want, "%s returned %s (%d), expected %s (%d): %s", call,
               polyattn_status_string(got), (int)got, polyattn_status_string(want), (int)want,
               polyattn_last_error(F.ctx));
}

/* Both forward entry points reject the fixture as it is now with `want`, name
 * `arg`, and write nothing. */
static void expect_forward(polyattn_status want, const char *arg) {
  size_t bytes = 12345;
  polyattn_status st = polyattn_forward_workspace_size(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po,
                                                       F.plse, &bytes);
  assert_status(st, want, "polyattn_forward_workspace_size");
  assert_message(F.ctx, arg);
  cr_assert_eq(bytes, 12345, "workspace size written on failure");
  st = polyattn_forward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.ws);
  assert_status(st, want, "polyattn_forward");
  assert_message(F.ctx, arg);
  assert_filled(F.bo, OUT_SENTINEL, "out");
  assert_filled(F.blse, LSE_SENTINEL, "lse");
}

static void expect_backward(polyattn_status want, const char *arg) {
  size_t bytes = 12345;
  polyattn_status st = polyattn_backward_workspace_size(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po,
                                                        F.plse, F.pdout, F.pdq, F.pdk, F.pdv,
                                                        &bytes);
  assert_status(st, want, "polyattn_backward_workspace_size");
  assert_message(F.ctx, arg);
  cr_assert_eq(bytes, 12345, "workspace size written on failure");
  st = polyattn_backward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.pdout, F.pdq, F.pdk,
                         F.pdv, F.ws);
  assert_status(st, want, "polyattn_backward");
  assert_message(F.ctx, arg);
  assert_filled(F.bdq, GRAD_SENTINEL, "dq");
  assert_filled(F.bdk, GRAD_SENTINEL, "dk");
  assert_filled(F.bdv, GRAD_SENTINEL, "dv");
  assert_filled(F.blse, LSE_SENTINEL, "lse");
}

static void write_meta_i32(size_t byte_offset, const int32_t *vals, size_t n) {
  cr_assert_eq(polyattn_buffer_write(F.ctx, F.bmeta, byte_offset, vals, n * 4), POLYATTN_OK);
}

#define VTEST(name) Test(validation, name, .init = setup_fixed, .fini = teardown)
#define VLTEST(name) Test(validation_varlen, name, .init = setup_varlen, .fini = teardown)

/* ---------------------------------------------------- the fixture is valid */

VTEST(valid_fixture_runs) {
  polyattn_status st = polyattn_forward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.ws);
  assert_status(st, POLYATTN_OK, "polyattn_forward");
  st = polyattn_backward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.pdout, F.pdq, F.pdk,
                         F.pdv, F.ws);
  assert_status(st, POLYATTN_OK, "polyattn_backward");
}

VLTEST(valid_varlen_fixture_runs) {
  polyattn_status st = polyattn_forward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.ws);
  assert_status(st, POLYATTN_OK, "polyattn_forward");
}

/* ------------------------------------------------------------ null pointers */

VTEST(null_ctx) {
  polyattn_status st = polyattn_forward(NULL, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.ws);
  assert_status(st, POLYATTN_ERR_NULL_ARGUMENT, "polyattn_forward(NULL ctx)");
  assert_message(NULL, "ctx");
  size_t bytes = 7;
  st = polyattn_forward_workspace_size(NULL, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, &bytes);
  assert_status(st, POLYATTN_ERR_NULL_ARGUMENT, "polyattn_forward_workspace_size(NULL ctx)");
  assert_message(NULL, "ctx");
  st = polyattn_backward(NULL, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, F.pdout, F.pdq, F.pdk,
                         F.pdv, F.ws);
  assert_status(st, POLYATTN_ERR_NULL_ARGUMENT, "polyattn_backward(NULL ctx)");
  assert_message(NULL, "ctx");
  assert_filled(F.bo, OUT_SENTINEL, "out");
  assert_filled(F.bdq, GRAD_SENTINEL, "dq");
}
VTEST(null_q) { F.pq = NULL; expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "q"); }
VTEST(null_k) { F.pk = NULL; expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "k"); }
VTEST(null_v) { F.pv = NULL; expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "v"); }
VTEST(null_out) { F.po = NULL; expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "out"); }
VTEST(null_params) {
  polyattn_status st = polyattn_forward(F.ctx, NULL, F.pq, F.pk, F.pv, F.po, F.plse, F.ws);
  assert_status(st, POLYATTN_ERR_NULL_ARGUMENT, "polyattn_forward(NULL params)");
  assert_message(F.ctx, "params");
  assert_filled(F.bo, OUT_SENTINEL, "out");
}
VTEST(null_tensor_buffer) { F.k.buffer = NULL; expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "k"); }
VTEST(null_workspace_size_out) {
  polyattn_status st = polyattn_forward_workspace_size(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po,
                                                       F.plse, NULL);
  assert_status(st, POLYATTN_ERR_NULL_ARGUMENT, "polyattn_forward_workspace_size(bytes NULL)");
  assert_message(F.ctx, "bytes");
}
VTEST(backward_null_lse) { F.plse = NULL; expect_backward(POLYATTN_ERR_NULL_ARGUMENT, "lse"); }
VTEST(backward_null_dout) { F.pdout = NULL; expect_backward(POLYATTN_ERR_NULL_ARGUMENT, "dout"); }
VTEST(backward_null_dk) { F.pdk = NULL; expect_backward(POLYATTN_ERR_NULL_ARGUMENT, "dk"); }

/* -------------------------------------------------------------- shapes */

VTEST(ndim_wrong) {
  F.q.ndim = 3; /* fixed-length needs 4 */
  expect_forward(POLYATTN_ERR_SHAPE, "q");
}
VTEST(ndim_too_large) {
  F.v.ndim = 5;
  expect_forward(POLYATTN_ERR_SHAPE, "v");
}
VTEST(zero_head_dim) {
  F.q.shape[3] = 0, F.k.shape[3] = 0;
  expect_forward(POLYATTN_ERR_SHAPE, "head_dim");
}
VTEST(zero_heads) {
  F.k.shape[2] = 0, F.v.shape[2] = 0;
  expect_forward(POLYATTN_ERR_SHAPE, "k");
}
VTEST(zero_batch) {
  F.q.shape[0] = F.k.shape[0] = F.v.shape[0] = F.o.shape[0] = 0;
  F.lse.shape[0] = 0;
  expect_forward(POLYATTN_ERR_SHAPE, "batch");
}
VTEST(negative_seq) {
  F.q.shape[1] = -1;
  expect_forward(POLYATTN_ERR_SHAPE, "q");
}
VTEST(negative_head_dim_v) {
  F.v.shape[3] = -32;
  expect_forward(POLYATTN_ERR_SHAPE, "v");
}
VTEST(batch_mismatch) {
  F.k.shape[0] = 1;
  expect_forward(POLYATTN_ERR_SHAPE, "k");
}
VTEST(heads_not_multiple) {
  F.k.shape[2] = 3, F.v.shape[2] = 3;
  F.k.strides[1] = F.v.strides[1] = 3 * D, F.k.strides[0] = F.v.strides[0] = SK * 3 * D;
  expect_forward(POLYATTN_ERR_HEADS, "heads");
}
VTEST(head_dim_above_limit) {
  int64_t dd = POLYATTN_MAX_HEAD_DIM + 8;
  tensor4(&F.q, F.bq, B, SQ, HQ, dd);
  tensor4(&F.k, F.bk, B, SK, HKV, dd);
  expect_forward(POLYATTN_ERR_HEAD_DIM, "head_dim");
}
VTEST(head_dim_v_above_limit) {
  int64_t dd = POLYATTN_MAX_HEAD_DIM + 1;
  tensor4(&F.v, F.bv, B, SK, HKV, dd);
  tensor4(&F.o, F.bo, B, SQ, HQ, dd);
  expect_forward(POLYATTN_ERR_HEAD_DIM, "head_dim");
}
VTEST(k_head_dim_mismatch) {
  tensor4(&F.k, F.bk, B, SK, HKV, D / 2);
  expect_forward(POLYATTN_ERR_SHAPE, "k");
}
VTEST(v_seq_mismatch) {
  tensor4(&F.v, F.bv, B, SK - 1, HKV, D);
  expect_forward(POLYATTN_ERR_SHAPE, "v");
}
VTEST(v_heads_mismatch) {
  tensor4(&F.v, F.bv, B, SK, 1, D);
  expect_forward(POLYATTN_ERR_SHAPE, "v");
}
VTEST(out_seq_mismatch) {
  tensor4(&F.o, F.bo, B, SQ - 1, HQ, D);
  expect_forward(POLYATTN_ERR_SHAPE, "out");
}
VTEST(out_head_dim_mismatch) {
  tensor4(&F.o, F.bo, B, SQ, HQ, D + 8); /* Dv is D */
  expect_forward(POLYATTN_ERR_SHAPE, "out");
}
VTEST(lse_wrong_shape) {
  F.lse.shape[2] = SQ + 1;
  expect_forward(POLYATTN_ERR_SHAPE, "lse");
}
VTEST(lse_wrong_ndim) {
  F.lse.ndim = 2;
  expect_forward(POLYATTN_ERR_SHAPE, "lse");
}
VTEST(backward_dq_shape_mismatch) {
  tensor4(&F.dq, F.bdq, B, SQ - 1, HQ, D);
  expect_backward(POLYATTN_ERR_SHAPE, "dq");
}

/* -------------------------------------------------------------- dtypes */

VTEST(dtype_k_mismatch) {
  F.k.dtype = POLYATTN_DTYPE_F32;
  expect_forward(POLYATTN_ERR_DTYPE, "k");
}
VTEST(dtype_out_mismatch) {
  F.o.dtype = POLYATTN_DTYPE_BF16;
  expect_forward(POLYATTN_ERR_DTYPE, "out");
}
VTEST(dtype_i32_q) {
  F.q.dtype = F.k.dtype = F.v.dtype = F.o.dtype = POLYATTN_DTYPE_I32;
  expect_forward(POLYATTN_ERR_DTYPE, "q");
}
VTEST(dtype_unknown) {
  F.q.dtype = (polyattn_dtype)99;
  expect_forward(POLYATTN_ERR_DTYPE, "q");
}
VTEST(lse_wrong_dtype) {
  F.lse.dtype = POLYATTN_DTYPE_F16;
  expect_forward(POLYATTN_ERR_DTYPE, "lse");
}
VTEST(backward_dv_dtype_mismatch) {
  F.dv.dtype = POLYATTN_DTYPE_BF16;
  expect_backward(POLYATTN_ERR_DTYPE, "dv");
}

VTEST(fp8_unsupported_on_cpu) {
  /* a valid dtype (Hopper forward only) the CPU backend cannot compute: refused
   * with a message, never computed as something else */
  F.q.dtype = F.k.dtype = F.v.dtype = POLYATTN_DTYPE_FP8_E4M3;
  F.o.dtype = POLYATTN_DTYPE_BF16;
  expect_forward(POLYATTN_ERR_UNSUPPORTED, "fp8");
}
VTEST(fp8_out_must_be_bf16) {
  F.q.dtype = F.k.dtype = F.v.dtype = F.o.dtype = POLYATTN_DTYPE_FP8_E4M3;
  expect_forward(POLYATTN_ERR_DTYPE, "out");
}
VTEST(fp8_backward_unsupported) {
  F.q.dtype = F.k.dtype = F.v.dtype = POLYATTN_DTYPE_FP8_E4M3;
  F.o.dtype = POLYATTN_DTYPE_BF16;
  expect_backward(POLYATTN_ERR_UNSUPPORTED, "fp8");
}
VTEST(descale_without_fp8) {
  polyattn_tensor d = F.alibi; /* f32 */
  d.shape[0] = 1;
  F.params.q_descale = &d;
  expect_forward(POLYATTN_ERR_DTYPE, "q_descale");
}
VTEST(descale_wrong_shape) {
  F.q.dtype = F.k.dtype = F.v.dtype = POLYATTN_DTYPE_FP8_E4M3;
  F.o.dtype = POLYATTN_DTYPE_BF16;
  polyattn_tensor d = F.alibi;
  d.shape[0] = 3; /* neither [1] nor [batch, heads_kv] */
  F.params.k_descale = &d;
  expect_forward(POLYATTN_ERR_SHAPE, "k_descale");
}
VTEST(descale_wrong_dtype) {
  F.q.dtype = F.k.dtype = F.v.dtype = POLYATTN_DTYPE_FP8_E4M3;
  F.o.dtype = POLYATTN_DTYPE_BF16;
  polyattn_tensor d = F.alibi;
  d.shape[0] = 1;
  d.dtype = POLYATTN_DTYPE_F16;
  F.params.v_descale = &d;
  expect_forward(POLYATTN_ERR_DTYPE, "v_descale");
}
VTEST(descale_per_block_valid) {
  /* [batch, heads_kv] passes validation; the CPU backend then refuses fp8 */
  F.q.dtype = F.k.dtype = F.v.dtype = POLYATTN_DTYPE_FP8_E4M3;
  F.o.dtype = POLYATTN_DTYPE_BF16;
  polyattn_tensor d;
  const int64_t shp[2] = {B, HKV};
  polyattn_tensor_contiguous(&d, F.bmeta, 256, POLYATTN_DTYPE_F32, 2, shp);
  F.params.q_descale = F.params.k_descale = F.params.v_descale = &d;
  expect_forward(POLYATTN_ERR_UNSUPPORTED, "fp8");
}

/* -------------------------------------------------------------- strides */

VTEST(head_dim_stride_not_1) {
  F.q.strides[3] = 2;
  expect_forward(POLYATTN_ERR_STRIDE, "q");
}
VTEST(negative_stride) {
  F.k.strides[1] = -F.k.strides[1];
  expect_forward(POLYATTN_ERR_STRIDE, "k");
}
VTEST(out_zero_stride_aliases) {
  F.o.strides[1] = 0; /* every token would write the same row */
  expect_forward(POLYATTN_ERR_STRIDE, "out");
}
VTEST(offset_not_element_aligned) {
  F.v.offset = 1;
  expect_forward(POLYATTN_ERR_STRIDE, "v");
}

/* -------------------------------------------------------------- bounds */

VTEST(view_past_buffer_end) {
  F.q.offset = BUF_BYTES - 64; /* the view needs 8 KiB */
  expect_forward(POLYATTN_ERR_BOUNDS, "q");
}
VTEST(out_view_past_buffer_end) {
  F.o.strides[0] = (int64_t)BUF_BYTES; /* batch 1 starts past the end */
  expect_forward(POLYATTN_ERR_BOUNDS, "out");
}
VTEST(lse_view_past_buffer_end) {
  F.lse.offset = BUF_BYTES - 16;
  expect_forward(POLYATTN_ERR_BOUNDS, "lse");
}

/* -------------------------------------------------------------- overflow */

VTEST(seq_above_int32_tiny_buffer) {
  /* 2^31 tokens in a 512 KiB buffer: caught from the sizes, memory never read */
  F.q.shape[1] = (int64_t)INT32_MAX + 1;
  F.o.shape[1] = (int64_t)INT32_MAX + 1;
  expect_forward(POLYATTN_ERR_OVERFLOW, "q");
}
VTEST(seq_above_int32_zero_stride) {
  /* the view fits the buffer (stride 0), only the size overflows int32 */
  F.k.shape[1] = F.v.shape[1] = (int64_t)INT32_MAX + 1;
  F.k.strides[1] = F.v.strides[1] = 0;
  expect_forward(POLYATTN_ERR_OVERFLOW, "k");
}
VTEST(offset_overflows_int64) {
  F.q.strides[0] = (int64_t)1 << 62; /* (3 - 1) * 2^62 overflows int64 */
  F.q.shape[0] = 3;
  expect_forward(POLYATTN_ERR_OVERFLOW, "q");
}
VTEST(byte_offset_overflows) {
  F.v.offset = SIZE_MAX - 1; /* offset + extent wraps around */
  expect_forward(POLYATTN_ERR_OVERFLOW, "v");
}

/* -------------------------------------------------------------- scalars */

VTEST(window_left_below_minus_1) {
  F.params.window_left = -2;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "window_left");
}
VTEST(window_right_below_minus_1) {
  F.params.window_right = -5;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "window_right");
}
VTEST(softcap_negative) {
  F.params.softcap = -1.0f;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "softcap");
}
VTEST(softcap_nan) {
  F.params.softcap = NAN;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "softcap");
}
VTEST(scale_nan) {
  F.params.scale = NAN;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "scale");
}
VTEST(scale_inf) {
  F.params.scale = INFINITY;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "scale");
}
VTEST(causal_not_bool) {
  F.params.causal = 2;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "causal");
}
VTEST(unknown_sparsity) {
  F.params.sparsity = (polyattn_sparsity)7;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "sparsity");
}
VTEST(block_threshold_above_1) {
  F.params.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  F.params.block_threshold = 1.5f;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "block_threshold");
}
VTEST(block_threshold_negative) {
  F.params.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  F.params.block_threshold = -0.25f;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "block_threshold");
}
VTEST(block_threshold_nan) {
  F.params.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  F.params.block_threshold = NAN;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "block_threshold");
}
VTEST(auto_density_cutoff_above_1) {
  F.params.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  F.params.auto_density_cutoff = 2.0f;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "auto_density_cutoff");
}
VTEST(block_size_negative) {
  F.params.sparsity = POLYATTN_SPARSITY_BLOCK;
  F.params.block_mask = &F.mask;
  F.params.block_q = -8;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "block_q");
}
VTEST(deterministic_not_bool) {
  F.params.deterministic = 3;
  expect_backward(POLYATTN_ERR_INVALID_VALUE, "deterministic");
}

/* -------------------------------------------------------------- sparsity */

VTEST(block_mask_missing) {
  F.params.sparsity = POLYATTN_SPARSITY_BLOCK;
  expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "block_mask");
}
VTEST(block_mask_wrong_shape) {
  F.params.sparsity = POLYATTN_SPARSITY_BLOCK;
  F.params.block_q = F.params.block_k = 8;
  F.mask.shape[3] = 2; /* ceil(24 / 8) = 3 key blocks */
  F.params.block_mask = &F.mask;
  expect_forward(POLYATTN_ERR_SHAPE, "block_mask");
}
VTEST(block_mask_wrong_heads) {
  F.params.sparsity = POLYATTN_SPARSITY_BLOCK;
  F.params.block_q = F.params.block_k = 8;
  F.mask.shape[1] = HKV; /* 1 or Hq */
  F.mask.strides[0] = HKV * 2 * 3;
  F.params.block_mask = &F.mask;
  expect_forward(POLYATTN_ERR_SHAPE, "block_mask");
}
VTEST(block_mask_wrong_dtype) {
  F.params.sparsity = POLYATTN_SPARSITY_BLOCK;
  F.params.block_q = F.params.block_k = 8;
  F.mask.dtype = POLYATTN_DTYPE_I32;
  F.params.block_mask = &F.mask;
  expect_forward(POLYATTN_ERR_DTYPE, "block_mask");
}
VTEST(block_mask_without_block_sparsity) {
  F.params.block_q = F.params.block_k = 8;
  F.params.block_mask = &F.mask; /* sparsity stays NONE */
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "block_mask");
}
VTEST(backward_auto_block_unsupported) {
  F.params.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  expect_backward(POLYATTN_ERR_UNSUPPORTED, "AUTO_BLOCK");
}

/* -------------------------------------------------------------- ALiBi */

VTEST(alibi_wrong_shape) {
  F.alibi.shape[0] = HQ - 1;
  F.params.alibi_slopes = &F.alibi;
  expect_forward(POLYATTN_ERR_SHAPE, "alibi_slopes");
}
VTEST(alibi_wrong_dtype) {
  F.alibi.dtype = POLYATTN_DTYPE_F16;
  F.params.alibi_slopes = &F.alibi;
  expect_forward(POLYATTN_ERR_DTYPE, "alibi_slopes");
}

/* -------------------------------------------------------------- seqused_k */

VTEST(seqused_k_above_length) {
  int32_t used[B] = {SK + 1, 3};
  write_meta_i32(128, used, B);
  F.params.seqused_k = &F.used;
  expect_forward(POLYATTN_ERR_SEQLENS, "seqused_k");
}
VTEST(seqused_k_negative) {
  int32_t used[B] = {4, -1};
  write_meta_i32(128, used, B);
  F.params.seqused_k = &F.used;
  expect_forward(POLYATTN_ERR_SEQLENS, "seqused_k");
}
VTEST(seqused_k_wrong_length) {
  F.used.shape[0] = B + 1;
  F.params.seqused_k = &F.used;
  expect_forward(POLYATTN_ERR_SHAPE, "seqused_k");
}

/* -------------------------------------------------------------- varlen */

VLTEST(cu_seqlens_not_starting_at_0) {
  int32_t cu[B + 1] = {1, 16, TQ};
  write_meta_i32(0, cu, B + 1);
  expect_forward(POLYATTN_ERR_SEQLENS, "cu_seqlens_q");
}
VLTEST(cu_seqlens_decreasing) {
  int32_t cu[B + 1] = {0, 30, 26};
  write_meta_i32(64, cu, B + 1);
  F.params.max_seqlen_k = 30;
  expect_forward(POLYATTN_ERR_SEQLENS, "cu_seqlens_k");
}
VLTEST(cu_seqlens_last_not_total) {
  int32_t cu[B + 1] = {0, 16, TQ - 1};
  write_meta_i32(0, cu, B + 1);
  expect_forward(POLYATTN_ERR_SEQLENS, "cu_seqlens_q");
}
VLTEST(cu_seqlens_wrong_dtype) {
  F.cu_k.dtype = POLYATTN_DTYPE_F32;
  expect_forward(POLYATTN_ERR_DTYPE, "cu_seqlens_k");
}
VLTEST(cu_seqlens_batch_mismatch) {
  F.cu_k.shape[0] = B; /* cu_seqlens_q has B + 1 entries */
  expect_forward(POLYATTN_ERR_SHAPE, "cu_seqlens_k");
}
VLTEST(only_cu_seqlens_q) {
  /* "Both NULL or both set": with q's given, k's is a required pointer. */
  F.params.cu_seqlens_k = NULL;
  expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "cu_seqlens_k");
}
VLTEST(only_cu_seqlens_k) {
  F.params.cu_seqlens_q = NULL;
  expect_forward(POLYATTN_ERR_NULL_ARGUMENT, "cu_seqlens_q");
}
VLTEST(max_seqlen_below_actual) {
  F.params.max_seqlen_q = 10; /* a sequence has 24 rows */
  expect_forward(POLYATTN_ERR_SEQLENS, "max_seqlen_q");
}
VLTEST(max_seqlen_negative) {
  F.params.max_seqlen_k = -3;
  expect_forward(POLYATTN_ERR_INVALID_VALUE, "max_seqlen");
}
VLTEST(varlen_with_4d_tensors) {
  tensor4(&F.q, F.bq, B, SQ, HQ, D);
  expect_forward(POLYATTN_ERR_SHAPE, "q");
}
VLTEST(varlen_seqused_k_above_length) {
  int32_t used[B] = {24, TK - 24 + 1}; /* entry 1 has 26 keys */
  write_meta_i32(128, used, B);
  F.params.seqused_k = &F.used;
  expect_forward(POLYATTN_ERR_SEQLENS, "seqused_k");
}

/* -------------------------------------------------------------- ABI, context */

VTEST(params_struct_size_wrong) {
  F.params.struct_size = sizeof(polyattn_params) - 4;
  expect_forward(POLYATTN_ERR_ABI, "struct_size");
}
VTEST(params_struct_size_zero) {
  F.params.struct_size = 0;
  expect_backward(POLYATTN_ERR_ABI, "struct_size");
}
VTEST(context_desc_struct_size_wrong) {
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.struct_size = 3;
  polyattn_context *ctx = (polyattn_context *)&d; /* must be overwritten with NULL */
  polyattn_status st = polyattn_context_create(&d, &ctx);
  cr_assert_eq(st, POLYATTN_ERR_ABI, "got %s", polyattn_status_string(st));
  cr_assert_null(ctx);
  assert_message(NULL, "struct_size");
}
VTEST(buffer_from_another_context) {
  polyattn_context *other = cpu_context();
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(other, BUF_BYTES, &b), POLYATTN_OK);
  F.k.buffer = b;
  expect_forward(POLYATTN_ERR_CONTEXT, "k");
  polyattn_buffer_free(b);
  polyattn_context_destroy(other);
}
VTEST(metadata_from_another_context) {
  polyattn_context *other = cpu_context();
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(other, 64, &b), POLYATTN_OK);
  float s[HQ] = {1, 1, 1, 1};
  cr_assert_eq(polyattn_buffer_write(other, b, 0, s, sizeof s), POLYATTN_OK);
  F.alibi.buffer = b;
  F.alibi.offset = 0;
  F.params.alibi_slopes = &F.alibi;
  expect_forward(POLYATTN_ERR_CONTEXT, "alibi_slopes");
  polyattn_buffer_free(b);
  polyattn_context_destroy(other);
}
VTEST(workspace_from_another_context) {
  polyattn_context *other = cpu_context();
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(other, (size_t)16 << 20, &b), POLYATTN_OK);
  polyattn_status st = polyattn_forward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, b);
  assert_status(st, POLYATTN_ERR_CONTEXT, "polyattn_forward");
  assert_message(F.ctx, "workspace");
  assert_filled(F.bo, OUT_SENTINEL, "out");
  polyattn_buffer_free(b);
  polyattn_context_destroy(other);
}
VTEST(workspace_too_small) {
  size_t need = 0;
  cr_assert_eq(polyattn_forward_workspace_size(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse,
                                               &need),
               POLYATTN_OK);
  if (need == 0) cr_skip_test("SKIPPED: this backend needs no workspace for the fixture");
  polyattn_buffer *small = NULL;
  cr_assert_eq(polyattn_buffer_alloc(F.ctx, need - 1, &small), POLYATTN_OK);
  polyattn_status st = polyattn_forward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse, small);
  assert_status(st, POLYATTN_ERR_WORKSPACE, "polyattn_forward");
  assert_message(F.ctx, "workspace");
  assert_filled(F.bo, OUT_SENTINEL, "out");
  assert_filled(F.blse, LSE_SENTINEL, "lse");
  polyattn_buffer_free(small);
}
VTEST(backward_workspace_too_small) {
  size_t need = 0;
  cr_assert_eq(polyattn_backward_workspace_size(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse,
                                                F.pdout, F.pdq, F.pdk, F.pdv, &need),
               POLYATTN_OK);
  if (need == 0) cr_skip_test("SKIPPED: this backend needs no backward workspace here");
  polyattn_buffer *small = NULL;
  cr_assert_eq(polyattn_buffer_alloc(F.ctx, need - 1, &small), POLYATTN_OK);
  polyattn_status st = polyattn_backward(F.ctx, &F.params, F.pq, F.pk, F.pv, F.po, F.plse,
                                         F.pdout, F.pdq, F.pdk, F.pdv, small);
  assert_status(st, POLYATTN_ERR_WORKSPACE, "polyattn_backward");
  assert_message(F.ctx, "workspace");
  assert_filled(F.bdq, GRAD_SENTINEL, "dq");
  assert_filled(F.bdk, GRAD_SENTINEL, "dk");
  polyattn_buffer_free(small);
}

/* ================================================================ small API */

Test(api, status_strings) {
  for (int s = POLYATTN_OK; s <= POLYATTN_ERR_INTERNAL; ++s) {
    const char *m = polyattn_status_string((polyattn_status)s);
    cr_assert_not_null(m, "status %d has no string", s);
    cr_assert(m[0] != '\0', "status %d has an empty string", s);
    for (int t = POLYATTN_OK; t < s; ++t)
      cr_assert_str_neq(m, polyattn_status_string((polyattn_status)t),
                        "statuses %d and %d share the string \"%s\"", t, s, m);
  }
  const char *u = polyattn_status_string((polyattn_status)1000);
  cr_assert(u && u[0], "an unknown status needs a non-empty string too");
}

Test(api, version) {
  cr_assert_eq(polyattn_version(), (unsigned)POLYATTN_VERSION_HEX);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", POLYATTN_VERSION_MAJOR, POLYATTN_VERSION_MINOR,
           POLYATTN_VERSION_PATCH);
  cr_assert_str_eq(polyattn_version_string(), want);
  cr_assert_eq(POLYATTN_VERSION_HEX, (POLYATTN_VERSION_MAJOR << 16) | (POLYATTN_VERSION_MINOR << 8) |
                                         POLYATTN_VERSION_PATCH);
}

Test(api, dtype_sizes_and_names) {
  cr_assert_eq(polyattn_dtype_size(POLYATTN_DTYPE_F32), 4);
  cr_assert_eq(polyattn_dtype_size(POLYATTN_DTYPE_F16), 2);
  cr_assert_eq(polyattn_dtype_size(POLYATTN_DTYPE_BF16), 2);
  cr_assert_eq(polyattn_dtype_size(POLYATTN_DTYPE_FP8_E4M3), 1);
  cr_assert_eq(polyattn_dtype_size(POLYATTN_DTYPE_I32), 4);
  cr_assert_eq(polyattn_dtype_size(POLYATTN_DTYPE_U8), 1);
  cr_assert_eq(polyattn_dtype_size((polyattn_dtype)42), 0);
  for (int d = POLYATTN_DTYPE_F32; d <= POLYATTN_DTYPE_U8; ++d) {
    const char *n = polyattn_dtype_name((polyattn_dtype)d);
    cr_assert(n && n[0], "dtype %d has no name", d);
  }
}

Test(api, backend_names) {
  cr_assert_str_eq(polyattn_backend_name(POLYATTN_BACKEND_CPU), "cpu");
  cr_assert_str_eq(polyattn_backend_name(POLYATTN_BACKEND_CUDA), "cuda");
  cr_assert_str_eq(polyattn_backend_name(POLYATTN_BACKEND_HIP), "hip");
  cr_assert_str_eq(polyattn_backend_name(POLYATTN_BACKEND_VULKAN), "vulkan");
  cr_assert_null(polyattn_backend_name((polyattn_backend_kind)77));
}

Test(api, init_helpers) {
  polyattn_params p;
  memset(&p, 0x7f, sizeof p);
  polyattn_params_init(&p);
  cr_assert_eq(p.struct_size, sizeof p);
  cr_assert_eq(p.scale, 0.0f);
  cr_assert_eq(p.causal, 0);
  cr_assert_eq(p.window_left, -1);
  cr_assert_eq(p.window_right, -1);
  cr_assert_eq(p.softcap, 0.0f);
  cr_assert_eq(p.sparsity, POLYATTN_SPARSITY_NONE);
  cr_assert_null(p.alibi_slopes);
  cr_assert_null(p.cu_seqlens_q);
  cr_assert_null(p.block_mask);
  polyattn_context_desc d;
  memset(&d, 0x7f, sizeof d);
  polyattn_context_desc_init(&d);
  cr_assert_eq(d.struct_size, sizeof d);
  cr_assert_eq(d.backend, POLYATTN_BACKEND_AUTO);
  cr_assert_eq(d.device, 0);
  cr_assert_null(d.native_stream);
  cr_assert_eq(d.num_threads, 0);
  polyattn_tensor t;
  int64_t shape[4] = {2, 3, 4, 5};
  polyattn_tensor_contiguous(&t, NULL, 16, POLYATTN_DTYPE_BF16, 4, shape);
  cr_assert_eq(t.offset, 16);
  cr_assert_eq(t.ndim, 4);
  cr_assert_eq(t.strides[3], 1);
  cr_assert_eq(t.strides[2], 5);
  cr_assert_eq(t.strides[1], 20);
  cr_assert_eq(t.strides[0], 60);
}

Test(api, buffer_round_trip_and_bounds) {
  polyattn_context *ctx = cpu_context();
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(ctx, 1000, &b), POLYATTN_OK);
  cr_assert_eq(polyattn_buffer_size(b), 1000);
  uint8_t src[1000], dst[1000];
  for (int i = 0; i < 1000; ++i) src[i] = (uint8_t)(i * 37 + 11);
  cr_assert_eq(polyattn_buffer_write(ctx, b, 0, src, 1000), POLYATTN_OK);
  memset(dst, 0, sizeof dst);
  cr_assert_eq(polyattn_buffer_read(ctx, b, 0, dst, 1000), POLYATTN_OK);
  cr_assert_arr_eq(src, dst, 1000);
  /* a partial write at an offset */
  uint8_t patch[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  cr_assert_eq(polyattn_buffer_write(ctx, b, 990, patch, 10), POLYATTN_OK);
  cr_assert_eq(polyattn_buffer_read(ctx, b, 985, dst, 15), POLYATTN_OK);
  cr_assert_arr_eq(dst, src + 985, 5);
  cr_assert_arr_eq(dst + 5, patch, 10);
  /* out of range: rejected, buffer untouched */
  polyattn_status st = polyattn_buffer_write(ctx, b, 995, patch, 10);
  cr_assert_eq(st, POLYATTN_ERR_BOUNDS, "write past the end: %s", polyattn_status_string(st));
  const char *m = polyattn_last_error(ctx);
  cr_assert(m && m[0], "no message for an out-of-range write");
  st = polyattn_buffer_write(ctx, b, SIZE_MAX - 2, patch, 10);
  cr_assert_eq(st, POLYATTN_ERR_BOUNDS, "offset + bytes wrapping: %s", polyattn_status_string(st));
  st = polyattn_buffer_read(ctx, b, 1001, dst, 0);
  cr_assert_eq(st, POLYATTN_ERR_BOUNDS, "read at offset past the end: %s", polyattn_status_string(st));
  st = polyattn_buffer_read(ctx, b, 0, dst, 1001);
  cr_assert_eq(st, POLYATTN_ERR_BOUNDS);
  cr_assert_eq(polyattn_buffer_read(ctx, b, 985, dst, 15), POLYATTN_OK);
  cr_assert_arr_eq(dst + 5, patch, 10, "failed write modified the buffer");
  polyattn_buffer_free(b);
  polyattn_context_destroy(ctx);
}

Test(api, buffer_wrap) {
  polyattn_context *ctx = cpu_context();
  float host[16] = {0};
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, host, sizeof host, &b), POLYATTN_OK);
  float v = 3.5f;
  cr_assert_eq(polyattn_buffer_write(ctx, b, 4 * sizeof(float), &v, sizeof v), POLYATTN_OK);
  cr_assert_eq(host[4], 3.5f, "wrapping must not copy");
  polyattn_buffer_free(b); /* must not free host[] */
  polyattn_status st = polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, NULL, 16, &b);
  cr_assert_eq(st, POLYATTN_ERR_NULL_ARGUMENT);
  cr_assert_null(b);
  st = polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_CUDA_DEVICE, host, sizeof host, &b);
  cr_assert_eq(st, POLYATTN_ERR_UNSUPPORTED, "CPU wrapping CUDA memory: %s", polyattn_status_string(st));
  assert_message(ctx, "");
  cr_assert_null(b);
  polyattn_context_destroy(ctx);
}

Test(api, buffer_copy_across_contexts) {
  polyattn_context *a = cpu_context(), *c = cpu_context();
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(a, 64, &b), POLYATTN_OK);
  uint8_t x[8] = {0};
  polyattn_status st = polyattn_buffer_write(c, b, 0, x, 8);
  cr_assert_eq(st, POLYATTN_ERR_CONTEXT, "%s", polyattn_status_string(st));
  polyattn_buffer_free(b);
  polyattn_context_destroy(a);
  polyattn_context_destroy(c);
}

static const polyattn_backend_info *find_backend(polyattn_backend_kind kind) {
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  cr_assert_eq(polyattn_backends(&list, &n), POLYATTN_OK);
  for (size_t i = 0; i < n; ++i)
    if (list[i].kind == kind && list[i].usable) return &list[i];
  for (size_t i = 0; i < n; ++i)
    if (list[i].kind == kind) return &list[i];
  return NULL;
}

Test(api, backends_list) {
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  cr_assert_eq(polyattn_backends(&list, &n), POLYATTN_OK);
  cr_assert_gt(n, 0);
  const polyattn_backend_info *cpu = find_backend(POLYATTN_BACKEND_CPU);
  cr_assert_not_null(cpu, "the CPU backend is not listed");
  cr_assert(cpu->built && cpu->usable, "CPU backend unusable: %s", cpu->reason);
  cr_assert(cpu->device_count >= 1);
  cr_assert(cpu->device_name && cpu->device_name[0]);
  for (size_t i = 0; i < n; ++i) {
    cr_assert(list[i].name && list[i].reason && list[i].module_path && list[i].device_name,
              "entry %zu has a NULL string", i);
    if (!list[i].usable) cr_assert(list[i].reason[0], "%s is unusable without a reason", list[i].name);
    cr_log_info("backend %s: built %d usable %d score %d devices %d (%s) %s", list[i].name,
                list[i].built, list[i].usable, list[i].score, list[i].device_count,
                list[i].device_name, list[i].reason);
  }
  cr_assert_eq(polyattn_backends(NULL, &n), POLYATTN_ERR_NULL_ARGUMENT);
  cr_assert_eq(polyattn_backends(&list, NULL), POLYATTN_ERR_NULL_ARGUMENT);
}

Test(api, context_cuda_unavailable) {
  unsetenv("POLYATTN_BACKEND");
  const polyattn_backend_info *cuda = find_backend(POLYATTN_BACKEND_CUDA);
  if (cuda && cuda->usable) cr_skip_test("SKIPPED: CUDA is usable on this machine");
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_CUDA;
  polyattn_context *ctx = (polyattn_context *)&d;
  polyattn_status st = polyattn_context_create(&d, &ctx);
  cr_assert_eq(st, POLYATTN_ERR_BACKEND, "got %s", polyattn_status_string(st));
  cr_assert_null(ctx, "*out must be NULL on failure");
  assert_message(NULL, "cuda");
}

Test(api, context_defaults_and_device_name) {
  unsetenv("POLYATTN_BACKEND");
  polyattn_context *ctx = NULL;
  cr_assert_eq(polyattn_context_create(NULL, &ctx), POLYATTN_OK, "%s", polyattn_last_error(NULL));
  cr_assert_not_null(ctx);
  const char *n = polyattn_context_device_name(ctx);
  cr_assert(n && n[0]);
  cr_assert_eq(polyattn_synchronize(ctx), POLYATTN_OK);
  polyattn_context_destroy(ctx);
  polyattn_context_destroy(NULL); /* no-op */
  cr_assert_eq(polyattn_context_create(NULL, NULL), POLYATTN_ERR_NULL_ARGUMENT);
}

Test(api, context_bad_device) {
  unsetenv("POLYATTN_BACKEND");
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_CPU;
  d.device = -1;
  polyattn_context *ctx = NULL;
  cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_ERR_INVALID_VALUE);
  assert_message(NULL, "device");
  d.device = 0;
  d.backend = (polyattn_backend_kind)9;
  cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_ERR_INVALID_VALUE);
  assert_message(NULL, "backend");
}

Test(api, env_backend_override) {
  setenv("POLYATTN_BACKEND", "cpu", 1);
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  polyattn_context *ctx = NULL;
  cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_OK, "%s", polyattn_last_error(NULL));
  cr_assert_eq(polyattn_context_backend(ctx), POLYATTN_BACKEND_CPU);
  polyattn_context_destroy(ctx);

  setenv("POLYATTN_BACKEND", "not-a-backend", 1);
  cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_ERR_BACKEND);
  assert_message(NULL, "POLYATTN_BACKEND");
  cr_assert_null(ctx);

  const polyattn_backend_info *cuda = find_backend(POLYATTN_BACKEND_CUDA);
  if (!cuda || !cuda->usable) {
    /* the environment wins over the descriptor's explicit CPU */
    setenv("POLYATTN_BACKEND", "cuda", 1);
    d.backend = POLYATTN_BACKEND_CPU;
    cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_ERR_BACKEND,
                 "POLYATTN_BACKEND=cuda did not override the descriptor");
    cr_assert_null(ctx);
  }
  unsetenv("POLYATTN_BACKEND");
}

typedef struct log_seen {
  int count, bad_level, empty;
} log_seen;

static void log_cb(polyattn_log_level level, const char *message, void *user) {
  log_seen *s = (log_seen *)user;
  s->count++;
  if ((int)level < POLYATTN_LOG_ERROR || (int)level > POLYATTN_LOG_DEBUG) s->bad_level++;
  if (!message || !message[0]) s->empty++;
}

Test(api, log_callback) {
  log_seen seen = {0, 0, 0};
  polyattn_set_log_callback(log_cb, POLYATTN_LOG_DEBUG, &seen);
  polyattn_context *ctx = cpu_context();
  polyattn_buffer *b = NULL;
  /* a failing call, which the library reports at debug level */
  (void)polyattn_buffer_write(ctx, b, 0, &seen, 1);
  polyattn_context_destroy(ctx);
  cr_assert_gt(seen.count, 0, "the log callback received no message");
  cr_assert_eq(seen.bad_level, 0);
  cr_assert_eq(seen.empty, 0, "empty log messages");
  /* restored default: no more calls to the callback */
  polyattn_set_log_callback(NULL, POLYATTN_LOG_ERROR, NULL);
  int before = seen.count;
  ctx = cpu_context();
  polyattn_context_destroy(ctx);
  cr_assert_eq(seen.count, before, "callback called after being removed");
}

Test(api, log_callback_level_filter) {
  log_seen seen = {0, 0, 0};
  polyattn_set_log_callback(log_cb, POLYATTN_LOG_ERROR, &seen);
  polyattn_context *ctx = cpu_context(); /* info-level message: filtered */
  polyattn_context_destroy(ctx);
  polyattn_set_log_callback(NULL, POLYATTN_LOG_ERROR, NULL);
  cr_assert_eq(seen.count, 0, "info/debug messages passed an error-level filter");
}
