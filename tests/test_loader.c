/* The backend module loader, with the deliberately broken modules that
 * backends/testing/ builds into ${CMAKE_BINARY_DIR}/testing-modules:
 *   libpolyattn-broken-no_init.so      no init symbol
 *   libpolyattn-broken-bad_version.so  hands back an ops table of another API version
 *   libpolyattn-broken-init_fails.so   score > 0, but init fails
 *   libpolyattn-garbage.so             not an ELF file at all
 * Each must be listed as unusable with a reason; the CPU backend stays usable, AUTO
 * still picks it, and nothing crashes. polyattn_backends() scans once per process;
 * Criterion runs each test in its own process, so setting the path at the start of
 * a test is enough. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdlib.h>
#include <string.h>

#include "polyattn.h"

#ifndef PA_TEST_MODULE_DIR
#  error "PA_TEST_MODULE_DIR must name the directory of the broken test modules"
#endif

static const char *const broken[] = {
    "libpolyattn-broken-no_init.so",
    "libpolyattn-broken-bad_version.so",
    "libpolyattn-broken-init_fails.so",
    "libpolyattn-garbage.so",
};

static void use_test_modules(void) {
  setenv("POLYATTN_BACKEND_PATH", PA_TEST_MODULE_DIR, 1);
  unsetenv("POLYATTN_BACKEND");
}

static const polyattn_backend_info *entry_for_file(const polyattn_backend_info *list, size_t n,
                                                   const char *file) {
  for (size_t i = 0; i < n; ++i) {
    const char *path = list[i].module_path;
    size_t lp = path ? strlen(path) : 0, lf = strlen(file);
    if (lp >= lf && !strcmp(path + lp - lf, file) && (lp == lf || path[lp - lf - 1] == '/'))
      return &list[i];
  }
  return NULL;
}

Test(loader, broken_modules_listed_unusable, .init = use_test_modules) {
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  cr_assert_eq(polyattn_backends(&list, &n), POLYATTN_OK);
  for (size_t i = 0; i < n; ++i)
    cr_log_info("%s: %s built %d usable %d score %d: %s", list[i].name, list[i].module_path,
                list[i].built, list[i].usable, list[i].score, list[i].reason);
  for (size_t b = 0; b < sizeof broken / sizeof broken[0]; ++b) {
    const polyattn_backend_info *e = entry_for_file(list, n, broken[b]);
    cr_assert_not_null(e, "%s (in %s) is not listed by polyattn_backends()", broken[b],
                       PA_TEST_MODULE_DIR);
    cr_assert(e->built, "%s: found, so built must be 1", broken[b]);
    cr_assert_eq(e->usable, 0, "%s is listed as usable", broken[b]);
    cr_assert_eq(e->score, 0, "%s: an unusable backend must score 0", broken[b]);
    cr_assert(e->name && e->name[0], "%s has no name", broken[b]);
    cr_assert(e->reason && e->reason[0], "%s is unusable without a reason", broken[b]);
  }
}

Test(loader, reasons_say_what_failed, .init = use_test_modules) {
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  cr_assert_eq(polyattn_backends(&list, &n), POLYATTN_OK);
  const polyattn_backend_info *e = entry_for_file(list, n, "libpolyattn-broken-no_init.so");
  cr_assert_not_null(e);
  cr_assert_not_null(strstr(e->reason, "init"), "no_init reason: \"%s\"", e->reason);
  e = entry_for_file(list, n, "libpolyattn-broken-bad_version.so");
  cr_assert_not_null(e);
  cr_assert(strstr(e->reason, "version") || strstr(e->reason, "API"),
            "bad_version reason does not name the version mismatch: \"%s\"", e->reason);
  e = entry_for_file(list, n, "libpolyattn-broken-init_fails.so");
  cr_assert_not_null(e);
  cr_assert_not_null(strstr(e->reason, "init"), "init_fails reason: \"%s\"", e->reason);
}

Test(loader, cpu_stays_usable, .init = use_test_modules) {
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  cr_assert_eq(polyattn_backends(&list, &n), POLYATTN_OK);
  int found = 0;
  for (size_t i = 0; i < n; ++i)
    if (list[i].kind == POLYATTN_BACKEND_CPU) {
      found = 1;
      cr_assert(list[i].built && list[i].usable, "CPU unusable: %s", list[i].reason);
      cr_assert_gt(list[i].score, 0);
    }
  cr_assert(found, "no CPU entry");
}

Test(loader, auto_picks_cpu, .init = use_test_modules) {
  /* The broken modules all claim score 1000 through polyattn_module_score; none
   * can run, so AUTO must still land on the CPU. */
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_AUTO;
  polyattn_context *ctx = NULL;
  polyattn_status st = polyattn_context_create(&d, &ctx);
  cr_assert_eq(st, POLYATTN_OK, "AUTO failed: %s: %s", polyattn_status_string(st),
               polyattn_last_error(NULL));
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  polyattn_backends(&list, &n);
  int gpu_usable = 0;
  for (size_t i = 0; i < n; ++i)
    gpu_usable |= list[i].usable && list[i].kind != POLYATTN_BACKEND_CPU;
  if (!gpu_usable) cr_assert_eq(polyattn_context_backend(ctx), POLYATTN_BACKEND_CPU);
  /* and the context works */
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(ctx, 64, &b), POLYATTN_OK);
  polyattn_buffer_free(b);
  polyattn_context_destroy(ctx);
}

Test(loader, explicit_gpu_kinds_fail_cleanly, .init = use_test_modules) {
  for (int k = POLYATTN_BACKEND_CUDA; k <= POLYATTN_BACKEND_VULKAN; ++k) {
    const polyattn_backend_info *list = NULL;
    size_t n = 0;
    polyattn_backends(&list, &n);
    int usable = 0;
    for (size_t i = 0; i < n; ++i) usable |= list[i].kind == (polyattn_backend_kind)k && list[i].usable;
    if (usable) continue;
    polyattn_context_desc d;
    polyattn_context_desc_init(&d);
    d.backend = (polyattn_backend_kind)k;
    polyattn_context *ctx = NULL;
    polyattn_status st = polyattn_context_create(&d, &ctx);
    cr_assert_eq(st, POLYATTN_ERR_BACKEND, "%s: %s", polyattn_backend_name(d.backend),
                 polyattn_status_string(st));
    cr_assert_null(ctx);
    const char *m = polyattn_last_error(NULL);
    cr_assert(m && m[0], "no message for an unavailable %s", polyattn_backend_name(d.backend));
  }
}

Test(loader, missing_directory_is_harmless) {
  setenv("POLYATTN_BACKEND_PATH", "/nonexistent/polyattn:" PA_TEST_MODULE_DIR ":", 1);
  unsetenv("POLYATTN_BACKEND");
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  cr_assert_eq(polyattn_backends(&list, &n), POLYATTN_OK);
  cr_assert_not_null(entry_for_file(list, n, "libpolyattn-garbage.so"));
  polyattn_context *ctx = NULL;
  cr_assert_eq(polyattn_context_create(NULL, &ctx), POLYATTN_OK, "%s", polyattn_last_error(NULL));
  polyattn_context_destroy(ctx);
}

Test(loader, scan_once_same_list, .init = use_test_modules) {
  /* the first call scans; a second call returns the same list */
  const polyattn_backend_info *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  cr_assert_eq(polyattn_backends(&a, &na), POLYATTN_OK);
  cr_assert_eq(polyattn_backends(&b, &nb), POLYATTN_OK);
  cr_assert_eq(a, b);
  cr_assert_eq(na, nb);
}
