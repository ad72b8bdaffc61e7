/* What only the CUDA backend has: the module's state without a driver, CUDA graph
 * capture, caller-owned device memory, the POLYATTN_CUDA_KERNEL override, the
 * unsupported combinations, and run-to-run bit identity on a large case.
 *
 * Two ctest entries run this binary: cuda-module (suite cuda_module, runs on every
 * machine, with or without a GPU) and cuda (suite cuda: skipped, exit 77, where no
 * CUDA device is usable). The forward sweep itself is test_forward with
 * POLYATTN_TEST_BACKENDS=cuda (ctest forward-cuda). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_internal.h"

/* ------------------------------------------------------------------ helpers */

static const polyattn_backend_info *cuda_info(void) {
  return th_backend_info(POLYATTN_BACKEND_CUDA);
}

/* Skip the test, loudly, when no CUDA device is usable here. */
static void need_cuda(void) {
  const polyattn_backend_info *info = cuda_info();
  if (!info->usable)
    cr_skip_test("SKIPPED: no usable CUDA device: %s", info->reason ? info->reason : "?");
}

/* A context of the cuda suite on `stream` (NULL: its own), or a skip. */
static polyattn_context *cuda_context(cudaStream_t stream) {
  need_cuda();
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_CUDA;
  d.native_stream = stream;
  polyattn_context *ctx = NULL;
  polyattn_status st = polyattn_context_create(&d, &ctx);
  cr_assert_eq(st, POLYATTN_OK, "context: %s", polyattn_last_error(NULL));
  return ctx;
}

#define CUDA_OK(call)                                                                    \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    cr_assert_eq(e_, cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));              \
  } while (0)

/* Write the poison image of out and lse (as th_run_forward does). */
static void poison_outputs(th_run *r) {
  static const int outs[] = {TB_O, TB_LSE};
  for (int i = 0; i < 2; ++i) {
    th_buf *b = &r->bufs[outs[i]];
    if (!b->size) continue;
    cr_assert_eq(polyattn_buffer_write(r->ctx, b->dev, 0, b->init, b->size), POLYATTN_OK, "%s",
                 polyattn_last_error(r->ctx));
  }
}

/* A malloc'd copy of an output buffer's current device contents. */
static uint8_t *read_output(th_run *r, int id) {
  th_buf *b = &r->bufs[id];
  uint8_t *host = th_xcalloc(b->size, 1);
  cr_assert_eq(polyattn_buffer_read(r->ctx, b->dev, 0, host, b->size), POLYATTN_OK, "%s",
               polyattn_last_error(r->ctx));
  return host;
}

static uint8_t *copy_bytes(const void *src, size_t n) {
  uint8_t *p = th_xcalloc(n, 1);
  memcpy(p, src, n);
  return p;
}

/* ------------------------------------------------- cuda_module (any machine) */

/* The module is built and listed; without a driver or device it is unusable, its
 * score is 0, and its probe's reason is the CUDA runtime's own error. */
Test(cuda_module, reports_its_state) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  th_gpu_module m;
  th_gpu_module_open(&m, POLYATTN_BACKEND_CUDA, "libpolyattn-cuda.so", "pa_cuda_probe");
  if (e != cudaSuccess || n == 0) {
    th_gpu_module_check_unusable(&m, POLYATTN_BACKEND_CUDA,
                                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
  } else {
    const polyattn_backend_info *info = m.info;
    cr_log_info("%d CUDA device(s): %s", n, m.name);
    cr_assert(info->usable, "a CUDA device is present but the backend is unusable: %s",
              info->reason);
    cr_assert_gt(info->score, 1, "a usable GPU should outrank the CPU backend");
    cr_assert_gt(m.devices, 0);
    cr_assert(info->device_name && *info->device_name);
  }
}

/* ------------------------------------------------------- cuda (needs a GPU) */

static const th_case graph_case = {
    .name = "graph_gqa_causal_alibi", .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 300,
    .seq_k = 300, .head_dim = 128, .causal = 1, .alibi = TH_ALIBI_HEADS};
/* decode: two kernels (splits, then their merge) and a workspace */
static const th_case graph_decode_case = {
    .name = "graph_decode_gqa", .batch = 2, .heads_q = 8, .heads_kv = 2, .seq_q = 1,
    .seq_k = 3000, .head_dim = 128};

/* polyattn_forward captured into a CUDA graph and replayed gives the eager result,
 * bit for bit: the call enqueues only, with no allocation and no synchronisation. */
static void graph_equals_eager(const th_case *gc, polyattn_dtype dt) {
  need_cuda(); /* before any CUDA call of the test's own */
  cudaStream_t stream = NULL;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  polyattn_context *ctx = cuda_context(stream);
  th_run *r = th_run_checked(ctx, gc, dt);
  uint8_t *eager_o = read_output(r, TB_O), *eager_l = read_output(r, TB_LSE);

  const polyattn_tensor *T = r->dev_t;
  size_t need = 0;
  cr_assert_eq(polyattn_forward_workspace_size(ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V],
                                               &T[TB_O], &T[TB_LSE], &need),
               POLYATTN_OK, "%s", polyattn_last_error(ctx));
  polyattn_buffer *ws = NULL;
  if (need) cr_assert_eq(polyattn_buffer_alloc(ctx, need, &ws), POLYATTN_OK);

  poison_outputs(r);
  cudaGraph_t graph;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  polyattn_status st = polyattn_forward(ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V],
                                        &T[TB_O], &T[TB_LSE], ws);
  cudaError_t end = cudaStreamEndCapture(stream, &graph);
  cr_assert_eq(st, POLYATTN_OK, "forward under capture: %s", polyattn_last_error(ctx));
  CUDA_OK(end);
  size_t nodes = 0;
  CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes));
  cr_assert_gt(nodes, 0, "the capture recorded no work");
  /* nothing ran during the capture: out still holds the poison */
  uint8_t *o = read_output(r, TB_O);
  cr_assert(memcmp(o, r->bufs[TB_O].init, r->bufs[TB_O].size) == 0,
            "out changed during capture: the call ran eagerly");
  free(o);

  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    poison_outputs(r);
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    uint8_t *go = read_output(r, TB_O), *gl = read_output(r, TB_LSE);
    cr_assert(memcmp(go, eager_o, r->bufs[TB_O].size) == 0, "replay %d: out != eager", replay);
    cr_assert(memcmp(gl, eager_l, r->bufs[TB_LSE].size) == 0, "replay %d: lse != eager", replay);
    free(go), free(gl);
  }
  cr_log_info("%zu graph node(s), 3 replays bit-identical to eager", nodes);
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  polyattn_buffer_free(ws);
  free(eager_o), free(eager_l);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
  CUDA_OK(cudaStreamDestroy(stream));
}

/* AUTO_BLOCK: the estimator (a memset and four kernels, the dense-or-sparse choice
 * made on the device) is captured with the attention kernel. */
static const th_case graph_auto_case = {
    .name = "graph_auto_clustered", .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 512,
    .seq_k = 512, .head_dim = 64, .sparsity = POLYATTN_SPARSITY_AUTO_BLOCK,
    .block_threshold = 0.9f, .auto_density_cutoff = 1.0f, .clustered = 1};

Test(cuda, graph_capture_auto_block_bf16, .timeout = 120) {
  graph_equals_eager(&graph_auto_case, POLYATTN_DTYPE_BF16);
}
Test(cuda, graph_capture_bf16, .timeout = 120) {
  graph_equals_eager(&graph_case, POLYATTN_DTYPE_BF16);
}
Test(cuda, graph_capture_f32, .timeout = 120) {
  graph_equals_eager(&graph_case, POLYATTN_DTYPE_F32);
}
Test(cuda, graph_capture_decode_bf16, .timeout = 120) {
  graph_equals_eager(&graph_decode_case, POLYATTN_DTYPE_BF16);
}

/* polyattn_backward captured and replayed gives the eager gradients bit for bit
 * (several kernels and a workspace; GQA so dK/dV sum over the group). deterministic
 * = 1: without it the Ampere backward adds dQ with atomics, in no fixed order. */
Test(cuda, graph_capture_backward_bf16, .timeout = 120) {
  static const th_case bc = {.name = "graph_bw_gqa_causal", .batch = 2, .heads_q = 4,
                             .heads_kv = 2, .seq_q = 130, .seq_k = 200, .head_dim = 64,
                             .causal = 1, .deterministic = 1};
  need_cuda();
  cudaStream_t stream = NULL;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  polyattn_context *ctx = cuda_context(stream);
  th_case c = th_case_resolve(&bc, POLYATTN_DTYPE_BF16);
  th_run *r = th_run_create(ctx, &c, 1);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  cr_assert_eq(th_run_backward(r), POLYATTN_OK, "%s", th_run_message(r));
  char summary[2048];
  const int ok = th_check_backward(r, summary, sizeof summary);
  cr_log_info("%s", summary);
  cr_assert(ok, "%s", summary);
  static const int grads[] = {TB_DQ, TB_DK, TB_DV};
  uint8_t *eager[3];
  for (int g = 0; g < 3; ++g) eager[g] = read_output(r, grads[g]);

  const polyattn_tensor *T = r->dev_t;
  size_t need = 0;
  cr_assert_eq(polyattn_backward_workspace_size(ctx, &r->dev_params, &T[TB_Q], &T[TB_K],
                                                &T[TB_V], &T[TB_O], &T[TB_LSE], &T[TB_DO],
                                                &T[TB_DQ], &T[TB_DK], &T[TB_DV], &need),
               POLYATTN_OK, "%s", polyattn_last_error(ctx));
  polyattn_buffer *ws = NULL;
  if (need) cr_assert_eq(polyattn_buffer_alloc(ctx, need, &ws), POLYATTN_OK);
  cudaGraph_t graph;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  polyattn_status st = polyattn_backward(ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V],
                                         &T[TB_O], &T[TB_LSE], &T[TB_DO], &T[TB_DQ], &T[TB_DK],
                                         &T[TB_DV], ws);
  cudaError_t end = cudaStreamEndCapture(stream, &graph);
  cr_assert_eq(st, POLYATTN_OK, "backward under capture: %s", polyattn_last_error(ctx));
  CUDA_OK(end);
  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    for (int g = 0; g < 3; ++g) { /* back to the poison: the replay must rewrite them */
      th_buf *b = &r->bufs[grads[g]];
      cr_assert_eq(polyattn_buffer_write(ctx, b->dev, 0, b->init, b->size), POLYATTN_OK);
    }
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    for (int g = 0; g < 3; ++g) {
      uint8_t *got = read_output(r, grads[g]);
      cr_assert(memcmp(got, eager[g], r->bufs[grads[g]].size) == 0, "replay %d: %s != eager",
                replay, th_buf_names[grads[g]]);
      free(got);
    }
  }
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  polyattn_buffer_free(ws);
  for (int g = 0; g < 3; ++g) free(eager[g]);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
  CUDA_OK(cudaStreamDestroy(stream));
}

/* Buffers wrapping the caller's cudaMalloc memory compute what the library's own
 * buffers compute; host memory cannot be wrapped on this backend. */
Test(cuda, wrap_caller_device_pointers, .timeout = 120) {
  static const th_case wc = {.name = "wrap_gqa", .batch = 2, .heads_q = 4, .heads_kv = 2,
                             .seq_q = 113, .seq_k = 255, .head_dim = 64};
  polyattn_context *ctx = cuda_context(NULL);
  th_run *r = th_run_checked(ctx, &wc, POLYATTN_DTYPE_F16);
  uint8_t *want = read_output(r, TB_O);

  static const int ids[] = {TB_Q, TB_K, TB_V, TB_O, TB_LSE};
  void *mem[5];
  polyattn_buffer *wrapped[5];
  polyattn_tensor T[TB_COUNT];
  memcpy(T, r->dev_t, sizeof T);
  for (int i = 0; i < 5; ++i) {
    th_buf *b = &r->bufs[ids[i]];
    CUDA_OK(cudaMalloc(&mem[i], b->size));
    CUDA_OK(cudaMemcpy(mem[i], b->output ? b->init : b->img, b->size, cudaMemcpyHostToDevice));
    cr_assert_eq(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_CUDA_DEVICE, mem[i], b->size,
                                      &wrapped[i]),
                 POLYATTN_OK, "%s", polyattn_last_error(ctx));
    T[ids[i]].buffer = wrapped[i];
  }
  polyattn_status st = polyattn_forward(ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V],
                                        &T[TB_O], &T[TB_LSE], NULL);
  cr_assert_eq(st, POLYATTN_OK, "%s", polyattn_last_error(ctx));
  cr_assert_eq(polyattn_synchronize(ctx), POLYATTN_OK);
  uint8_t *got = th_xcalloc(r->bufs[TB_O].size, 1);
  CUDA_OK(cudaMemcpy(got, mem[3], r->bufs[TB_O].size, cudaMemcpyDeviceToHost));
  cr_assert(memcmp(got, want, r->bufs[TB_O].size) == 0,
            "out through wrapped pointers differs from out through owned buffers");

  char host[64];
  polyattn_buffer *hb = NULL;
  cr_assert_eq(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, host, sizeof host, &hb),
               POLYATTN_ERR_UNSUPPORTED, "wrapping host memory on CUDA must be refused");
  cr_assert_null(hb);

  for (int i = 0; i < 5; ++i) {
    polyattn_buffer_free(wrapped[i]);
    CUDA_OK(cudaFree(mem[i]));
  }
  free(got), free(want);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

/* POLYATTN_CUDA_KERNEL=simple runs the simple kernel where the default would pick a
 * tensor-core one; an unknown name is refused, not ignored. (Each test runs in its
 * own process, so setenv stays here.) */
Test(cuda, forced_simple_kernel, .timeout = 120) {
  static const th_case fc = {.name = "forced_simple", .batch = 2, .heads_q = 4, .heads_kv = 1,
                             .seq_q = 255, .seq_k = 300, .head_dim = 96, .causal = 1,
                             .window = 1, .window_left = 64, .window_right = -1,
                             .softcap = 8.0f};
  polyattn_context *ctx = cuda_context(NULL);
  setenv("POLYATTN_CUDA_KERNEL", "simple", 1);
  for (int dt = POLYATTN_DTYPE_F32; dt <= POLYATTN_DTYPE_BF16; ++dt)
    th_run_destroy(th_run_checked(ctx, &fc, (polyattn_dtype)dt));

  setenv("POLYATTN_CUDA_KERNEL", "bogus", 1);
  th_case c = th_case_resolve(&fc, POLYATTN_DTYPE_F16);
  th_run *r = th_run_create(ctx, &c, 0);
  cr_assert_eq(th_run_forward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "POLYATTN_CUDA_KERNEL=bogus"), "message: %s",
            th_run_message(r));
  th_run_destroy(r);
  unsetenv("POLYATTN_CUDA_KERNEL");
  polyattn_context_destroy(ctx);
}

/* What is left out is refused with a message saying why; device-resident
 * cu_seqlens need max_seqlen. */
Test(cuda, unsupported_is_refused, .timeout = 120) {
  static const th_case bw = {.name = "bw", .seq_q = 64, .seq_k = 64, .head_dim = 64};
  static const th_case nm = {.name = "nm24", .seq_q = 64, .seq_k = 64, .head_dim = 64,
                             .sparsity = POLYATTN_SPARSITY_NM_2_4};
  static const th_case ab = {.name = "auto", .seq_q = 256, .seq_k = 256, .head_dim = 64,
                             .sparsity = POLYATTN_SPARSITY_AUTO_BLOCK};
  static const th_case vl = {.name = "varlen", .batch = 2, .head_dim = 64, .varlen = 1,
                             .seqlens_q = {17, 64}, .seqlens_k = {33, 64}};
  polyattn_context *ctx = cuda_context(NULL);
  unsetenv("POLYATTN_CUDA_BACKWARD_KERNEL"); /* it would override the forcing below */

  /* The backward has the simple, ampere, volta and hopper kernels: forcing a
   * forward-only kernel is refused, and so are volta on bf16 and ampere and hopper
   * on f32 (POLYATTN_CUDA_BACKWARD_KERNEL forces the backward alone). */
  th_case c = th_case_resolve(&bw, POLYATTN_DTYPE_F16);
  th_run *r = th_run_create(ctx, &c, 1);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  cr_assert_eq(th_run_backward(r), POLYATTN_OK, "%s", th_run_message(r));
  setenv("POLYATTN_CUDA_KERNEL", "decode", 1);
  cr_assert_eq(th_run_backward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "simple, ampere, volta and hopper"), "message: %s",
            th_run_message(r));
  unsetenv("POLYATTN_CUDA_KERNEL");
  th_run_destroy(r);
  c = th_case_resolve(&bw, POLYATTN_DTYPE_BF16);
  r = th_run_create(ctx, &c, 1);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  setenv("POLYATTN_CUDA_KERNEL", "volta", 1);
  cr_assert_eq(th_run_backward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "fp16 only"), "message: %s", th_run_message(r));
  unsetenv("POLYATTN_CUDA_KERNEL");
  th_run_destroy(r);
  c = th_case_resolve(&bw, POLYATTN_DTYPE_F32);
  r = th_run_create(ctx, &c, 1);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  setenv("POLYATTN_CUDA_KERNEL", "ampere", 1);
  cr_assert_eq(th_run_backward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "fp16 or bf16"), "message: %s", th_run_message(r));
  unsetenv("POLYATTN_CUDA_KERNEL");
  setenv("POLYATTN_CUDA_BACKWARD_KERNEL", "hopper", 1);
  cr_assert_eq(th_run_backward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "forced backward kernel hopper"), "message: %s",
            th_run_message(r));
  unsetenv("POLYATTN_CUDA_BACKWARD_KERNEL");
  th_run_destroy(r);

  /* 2:4 runs on the Ampere and simple kernels only: a forced decode kernel refuses
   * it. AUTO_BLOCK's backward takes the forward's mask as BLOCK, as on the CPU. */
  c = th_case_resolve(&nm, POLYATTN_DTYPE_F16);
  r = th_run_create(ctx, &c, 0);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  setenv("POLYATTN_CUDA_KERNEL", "decode", 1);
  cr_assert_eq(th_run_forward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "dense and BLOCK"), "message: %s", th_run_message(r));
  unsetenv("POLYATTN_CUDA_KERNEL");
  th_run_destroy(r);
  c = th_case_resolve(&ab, POLYATTN_DTYPE_F16);
  r = th_run_create(ctx, &c, 1);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  cr_assert_eq(th_run_backward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "block_mask_out"), "message: %s", th_run_message(r));
  th_run_destroy(r);

  c = th_case_resolve(&vl, POLYATTN_DTYPE_F32);
  r = th_run_create(ctx, &c, 0);
  r->dev_params.max_seqlen_q = 0;
  cr_assert_eq(th_run_forward(r), POLYATTN_ERR_INVALID_VALUE,
               "max_seqlen_q = 0 with device cu_seqlens: %s", th_run_message(r));
  cr_assert(strstr(th_run_message(r), "max_seqlen_q"), "message: %s", th_run_message(r));
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

/* A large case 100 times: out and LSE bit-identical every time (a moving result is
 * a race), and right. The dense case is one whose query tiles the Hopper kernel's
 * stream-K tail cuts by default (decision 132: 2048 keys, 144 query tiles of 128 rows, a
 * part-full last round on 132 SMs, or on fewer with POLYATTN_CUDA_HOPPER_BLOCKS), where
 * the two pieces of a cut tile may arrive in either order. */
static const th_case repeat_causal = {.name = "repeat100_gqa_causal", .batch = 2, .heads_q = 8,
                                      .heads_kv = 2, .seq_q = 1024, .seq_k = 1024,
                                      .head_dim = 128, .causal = 1};
static const th_case repeat_dense = {.name = "repeat100_dense_d128", .batch = 4, .heads_q = 9,
                                     .heads_kv = 9, .seq_q = 512, .seq_k = 2048,
                                     .head_dim = 128};
static void repeat_100(const th_case *big, polyattn_dtype dt) {
  polyattn_context *ctx = cuda_context(NULL);
  th_run *r = th_run_checked(ctx, big, dt);
  size_t no, nl;
  /* th_run_bytes sets the size: call it before the size is read. */
  const uint8_t *out = th_run_bytes(r, 0, &no);
  uint8_t *o0 = copy_bytes(out, no);
  const uint8_t *lse = th_run_bytes(r, 1, &nl);
  uint8_t *l0 = copy_bytes(lse, nl);
  for (int it = 1; it < 100; ++it) {
    cr_assert_eq(th_run_forward(r), POLYATTN_OK, "run %d: %s", it, th_run_message(r));
    cr_assert(memcmp(o0, th_run_bytes(r, 0, &no), no) == 0, "out differs at run %d", it);
    cr_assert(memcmp(l0, th_run_bytes(r, 1, &nl), nl) == 0, "lse differs at run %d", it);
  }
  cr_log_info("%s/%s: 100 runs bit-identical", big->name, polyattn_dtype_name(dt));
  free(o0), free(l0);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

Test(cuda, repeat_100_bf16, .timeout = 300) { repeat_100(&repeat_causal, POLYATTN_DTYPE_BF16); }
Test(cuda, repeat_100_f32, .timeout = 300) { repeat_100(&repeat_causal, POLYATTN_DTYPE_F32); }
Test(cuda, repeat_100_dense_bf16, .timeout = 300) {
  repeat_100(&repeat_dense, POLYATTN_DTYPE_BF16);
}

/* Decision 134's kept maximum on the row sums (the "-ks" forms: hd128's defaults in fp16
 * and bf16, hd64's grid forms, and the bf16 tuning forms of hd64's persistent and hd256's
 * kernels, two at hd256 (decision 136), which a default build runs as the defaults), on
 * scores built to take its slow steps: every query's dimension 0 is 1 (even rows) or 0.5
 * (odd), key j's is j, so a row's scores climb by ~4-23 log2 units per key tile (the sums
 * pass 2^8 and the reference moves by powers of two), and key 1500's is 3200, 150-320 log2
 * units above the reference for the even rows (their p overflow: the warp recomputes its S
 * by mma.sync) and 80-160 for the odd ones (at hd64 these overflow too). Each form named in
 * turn (the stream-K one on 2 blocks, so that its tail runs), then the default (""); on a
 * GPU without them the names run the defaults, checked the same way. Nothing counts which
 * path ran: the inputs are built so that they must. */
static void ks_climb(int d, polyattn_dtype dt, const char *const *variants) {
  polyattn_context *ctx = cuda_context(NULL);
  const th_case kc = {.name = "ks_climb", .heads_q = 2, .seq_q = 384, .seq_k = 2048,
                      .head_dim = d};
  const th_case c = th_case_resolve(&kc, dt);
  th_run *r = th_run_create(ctx, &c, 0);
  for (int32_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < c.seq_q; ++i) th_input_set(r, 0, 0, i, h, 0, i % 2 ? 0.5 : 1.0);
    for (int64_t j = 0; j < c.seq_k; ++j)
      th_input_set(r, 1, 0, j, h, 0, j == 1500 ? 3200.0 : (double)j);
  }
  for (const char *const *v = variants; *v; ++v) {
    setenv("POLYATTN_CUDA_HOPPER_VARIANT", *v, 1);
    if (strstr(*v, "-sk-")) setenv("POLYATTN_CUDA_HOPPER_BLOCKS", "2", 1);
    cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s: %s", *v, th_run_message(r));
    th_assert_forward_ok(r, *v);
    unsetenv("POLYATTN_CUDA_HOPPER_BLOCKS");
  }
  unsetenv("POLYATTN_CUDA_HOPPER_VARIANT");
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}
Test(cuda, ks_climb_d64, .timeout = 120) {
  static const char *const v[] = {"serial-s3-rel-wg3-km-pn-ks", "serial-rel-wg3-k192-km1-ks",
                                  "pingpong-rel-p-q2-os-lag-km1-pn-ks", "", NULL};
  ks_climb(64, POLYATTN_DTYPE_BF16, v);
}
Test(cuda, ks_climb_d128, .timeout = 120) {
  static const char *const v[] = {"pingpong-rel-k176-os-km1-ks", "pingpong-rel-p-q2-os-km1-pn-ks",
                                  "pingpong-rel-p-q2-os-km1-pn-sk-ks", "", NULL};
  ks_climb(128, POLYATTN_DTYPE_BF16, v);
}
Test(cuda, ks_climb_d128_f16, .timeout = 120) {
  static const char *const v[] = {"pingpong-rel-k176-os-km1-ks", "pingpong-rel-p-q2-os-km1-pn-ks",
                                  "pingpong-rel-p-q2-os-km1-pn-sk-ks", "", NULL};
  ks_climb(128, POLYATTN_DTYPE_F16, v);
}
Test(cuda, ks_climb_d256, .timeout = 120) {
  static const char *const v[] = {"pingpong-rel-os-km-ks", "pingpong-rel-os-km-pn-ks", "", NULL};
  ks_climb(256, POLYATTN_DTYPE_BF16, v);
}

TH_DEFINE_MAIN
