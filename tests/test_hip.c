/* What only the HIP backend has: the module's state without an AMD GPU, the
 * POLYATTN_HIP_KERNEL override (the MFMA kernel checked against the oracle), the
 * unsupported combinations, and run-to-run bit identity.
 *
 * Two ctest entries run this binary: hip-module (suite hip_module, on every machine
 * with the module built) and hip (suite hip: skipped, exit 77, where no AMD GPU is
 * usable, which is every machine this project has had so far: the hip suite has
 * not yet run). The forward sweeps are test_forward with POLYATTN_TEST_BACKENDS=hip
 * (ctest forward-hip, and forward-hip-mfma with POLYATTN_HIP_KERNEL=mfma). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef __HIP_PLATFORM_AMD__
#  define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include "backend.h"
#include "harness_internal.h"
#include "hip/hip_arch.h"

/* ------------------------------------------------- hip_module (any machine) */

/* The module is built and listed; without an AMD GPU it is unusable, its score is
 * 0, and its probe's reason carries the HIP runtime's own error. */
Test(hip_module, reports_its_state) {
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n);
  th_gpu_module m;
  th_gpu_module_open(&m, POLYATTN_BACKEND_HIP, "libpolyattn-hip.so", "pa_hip_probe");
  const pa_backend_ops *ops = (const pa_backend_ops *)m.ops;
  cr_assert_str_eq(ops->name, "hip");
  cr_assert_eq(ops->memory_kind, POLYATTN_MEMORY_HIP_DEVICE);
  if (e != hipSuccess || n == 0) {
    th_gpu_module_check_unusable(&m, POLYATTN_BACKEND_HIP,
                                 e != hipSuccess ? hipGetErrorString(e) : "no AMD GPU");
  } else {
    const polyattn_backend_info *info = m.info;
    cr_log_info("%d HIP device(s): %s", n, m.devices ? m.name : m.reason);
    /* A device of a target the module was not built for is unusable, with a reason. */
    if (m.devices) {
      cr_assert(info->usable, "an AMD GPU is present but the backend is unusable: %s",
                info->reason);
      cr_assert_gt(info->score, 1, "a usable GPU should outrank the CPU backend");
    } else {
      cr_assert(strstr(m.reason, "POLYATTN_HIP_ARCHS"), "reason: %s", m.reason);
    }
  }
}

/* Target names as the runtime reports them (hipDeviceProp_t.gcnArchName), the
 * module's encoding of them, its list check, and which have the MFMA kernel's
 * instructions: the decisions the probe and pa_hip_mfma_supports rest on. */
Test(hip_module, target_names) {
  static const struct {
    const char *name;
    int major, minor, f16, bf16;
  } ok[] = {
      {"gfx908", 9, 0x08, 1, 0},  {"gfx90a", 9, 0x0a, 1, 1},
      {"gfx90a:sramecc+:xnack-", 9, 0x0a, 1, 1},
      {"gfx940", 9, 0x40, 1, 1},  {"gfx942:sramecc+:xnack-", 9, 0x42, 1, 1},
      {"gfx906", 9, 0x06, 0, 0},  {"gfx900", 9, 0x00, 0, 0},
      {"gfx1030", 10, 0x30, 0, 0}, {"gfx1100", 11, 0x00, 0, 0}, {"gfx1201", 12, 0x01, 0, 0},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
    int major = -1, minor = -1;
    cr_assert(pa_hip_parse_arch(ok[i].name, &major, &minor), "%s not parsed", ok[i].name);
    cr_assert(major == ok[i].major && minor == ok[i].minor, "%s: %d, 0x%02x", ok[i].name, major,
              minor);
    cr_assert_eq(pa_hip_arch_has_mfma(major, minor, POLYATTN_DTYPE_F16), ok[i].f16, "%s f16",
                 ok[i].name);
    cr_assert_eq(pa_hip_arch_has_mfma(major, minor, POLYATTN_DTYPE_BF16), ok[i].bf16, "%s bf16",
                 ok[i].name);
    cr_assert_eq(pa_hip_arch_has_mfma(major, minor, POLYATTN_DTYPE_F32), 0, "%s f32", ok[i].name);
  }
  static const char *bad[] = {"", "gfx", "gfx9", "gfx90", "sm_80", "gfx90z", "gfx0908x", "GFX90a"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    int major, minor;
    cr_assert_not(pa_hip_parse_arch(bad[i], &major, &minor), "'%s' parsed", bad[i]);
  }

  char base[64];
  pa_hip_base_arch("gfx90a:sramecc+:xnack-", base, sizeof base);
  cr_assert_str_eq(base, "gfx90a");
  pa_hip_base_arch("gfx1030", base, sizeof base);
  cr_assert_str_eq(base, "gfx1030");

  const char *list = "gfx90a;gfx908;gfx1030";
  cr_assert(pa_hip_arch_listed("gfx90a", list) && pa_hip_arch_listed("gfx908", list) &&
            pa_hip_arch_listed("gfx1030", list));
  cr_assert_not(pa_hip_arch_listed("gfx90", list), "a prefix is not a target");
  cr_assert_not(pa_hip_arch_listed("gfx103", list));
  cr_assert_not(pa_hip_arch_listed("gfx942", list));
  cr_assert(pa_hip_arch_listed("gfx942", "gfx942"));
  cr_assert_not(pa_hip_arch_listed("gfx942", ""));
}

/* ------------------------------------------------------- hip (needs a GPU) */


/* POLYATTN_HIP_KERNEL=mfma on an MFMA target: the oracle's tolerance on a case with
 * every runtime feature; f32 and a target without the instruction are refused. */
Test(hip, forced_mfma_kernel, .timeout = 120) {
  static const th_case fc = {.name = "forced_mfma", .batch = 2, .heads_q = 4, .heads_kv = 1,
                             .seq_q = 255, .seq_k = 300, .head_dim = 96, .causal = 1,
                             .window = 1, .window_left = 64, .window_right = -1,
                             .softcap = 8.0f, .alibi = TH_ALIBI_HEADS};
  polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_HIP);
  setenv("POLYATTN_HIP_KERNEL", "mfma", 1);
  for (int dt = POLYATTN_DTYPE_F16; dt <= POLYATTN_DTYPE_BF16; ++dt) {
    th_case c = th_case_resolve(&fc, (polyattn_dtype)dt);
    th_run *r = th_run_create(ctx, &c, 0);
    polyattn_status st = th_run_forward(r);
    if (st == POLYATTN_ERR_UNSUPPORTED) {
      cr_log_warn("%s/%s: %s", c.name, polyattn_dtype_name((polyattn_dtype)dt), th_run_message(r));
      cr_assert(strstr(th_run_message(r), "gfx"), "only the target may refuse: %s",
                th_run_message(r));
    } else {
      cr_assert_eq(st, POLYATTN_OK, "%s", th_run_message(r));
      th_assert_forward_ok(r, NULL);
    }
    th_run_destroy(r);
  }
  th_case c = th_case_resolve(&fc, POLYATTN_DTYPE_F32);
  th_run *r = th_run_create(ctx, &c, 0);
  cr_assert_eq(th_run_forward(r), POLYATTN_ERR_UNSUPPORTED);
  th_run_destroy(r);
  setenv("POLYATTN_HIP_KERNEL", "bogus", 1);
  c = th_case_resolve(&fc, POLYATTN_DTYPE_F16);
  r = th_run_create(ctx, &c, 0);
  cr_assert_eq(th_run_forward(r), POLYATTN_ERR_UNSUPPORTED);
  cr_assert(strstr(th_run_message(r), "POLYATTN_HIP_KERNEL=bogus"), "%s", th_run_message(r));
  th_run_destroy(r);
  unsetenv("POLYATTN_HIP_KERNEL");
  polyattn_context_destroy(ctx);
}

/* 2:4 and AUTO_BLOCK are refused with a message, as on CUDA. */
Test(hip, unsupported_is_refused, .timeout = 120) {
  static const th_case nm = {.name = "nm24", .seq_q = 64, .seq_k = 64, .head_dim = 64,
                             .sparsity = POLYATTN_SPARSITY_NM_2_4};
  static const th_case ab = {.name = "auto", .seq_q = 256, .seq_k = 256, .head_dim = 64,
                             .sparsity = POLYATTN_SPARSITY_AUTO_BLOCK};
  polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_HIP);
  const th_case *sparse[] = {&nm, &ab};
  for (int i = 0; i < 2; ++i) {
    th_case c = th_case_resolve(sparse[i], POLYATTN_DTYPE_F16);
    th_run *r = th_run_create(ctx, &c, 0);
    cr_assert_eq(th_run_forward(r), POLYATTN_ERR_UNSUPPORTED, "%s", c.name);
    cr_assert(strstr(th_run_message(r), "sparsity"), "message: %s", th_run_message(r));
    th_run_destroy(r);
  }
  polyattn_context_destroy(ctx);
}

/* A large case 20 times with each kernel: out bit-identical every time. */
static void repeat(const char *kernel, polyattn_dtype dt) {
  static const th_case big = {.name = "repeat_gqa_causal", .batch = 2, .heads_q = 8,
                              .heads_kv = 2, .seq_q = 1024, .seq_k = 1024, .head_dim = 128,
                              .causal = 1};
  polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_HIP);
  setenv("POLYATTN_HIP_KERNEL", kernel, 1);
  th_case c = th_case_resolve(&big, dt);
  th_run *probe = th_run_create(ctx, &c, 0);
  if (th_run_forward(probe) == POLYATTN_ERR_UNSUPPORTED)
    cr_skip_test("SKIPPED: %s kernel: %s", kernel, th_run_message(probe));
  th_run_destroy(probe);
  th_run *r = th_run_checked(ctx, &big, dt);
  size_t no;
  const uint8_t *out = th_run_bytes(r, 0, &no);
  uint8_t *o0 = th_xcalloc(no, 1);
  memcpy(o0, out, no);
  for (int it = 1; it < 20; ++it) {
    cr_assert_eq(th_run_forward(r), POLYATTN_OK, "run %d: %s", it, th_run_message(r));
    cr_assert(memcmp(o0, th_run_bytes(r, 0, &no), no) == 0, "out differs at run %d", it);
  }
  free(o0);
  th_run_destroy(r);
  unsetenv("POLYATTN_HIP_KERNEL");
  polyattn_context_destroy(ctx);
}

Test(hip, repeat_simple_bf16, .timeout = 300) { repeat("simple", POLYATTN_DTYPE_BF16); }
Test(hip, repeat_mfma_f16, .timeout = 300) { repeat("mfma", POLYATTN_DTYPE_F16); }

TH_DEFINE_MAIN
