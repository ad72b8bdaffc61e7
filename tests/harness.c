/* The oracle-driven test machinery (harness.h): backend selection, parameters,
 * the whole forward/backward tests and the runner. The run itself is in
 * harness_run.c, the comparison with the oracle in harness_check.c. */
#include "harness_internal.h"

#include <criterion/alloc.h>
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- backends */

static int backend_from_name(const char *s, size_t n, polyattn_backend_kind *kind) {
  for (int k = POLYATTN_BACKEND_CPU; k <= POLYATTN_BACKEND_VULKAN; ++k) {
    const char *name = polyattn_backend_name((polyattn_backend_kind)k);
    if (name && strlen(name) == n && !strncmp(name, s, n)) {
      *kind = (polyattn_backend_kind)k;
      return 1;
    }
  }
  return 0;
}

const polyattn_backend_info *th_backend_find(polyattn_backend_kind kind) {
  const polyattn_backend_info *list = NULL;
  size_t count = 0;
  if (polyattn_backends(&list, &count) != POLYATTN_OK) return NULL;
  const polyattn_backend_info *best = NULL;
  for (size_t i = 0; i < count; ++i) {
    if (list[i].kind != kind) continue;
    if (!best || (list[i].usable && !best->usable)) best = &list[i];
  }
  return best;
}

size_t th_selected_backends(polyattn_backend_kind kinds[8]) {
  size_t n = 0;
  const char *env = getenv("POLYATTN_TEST_BACKENDS");
  if (env && *env) {
    const char *s = env;
    while (*s && n < 8) {
      size_t len = strcspn(s, ",");
      polyattn_backend_kind k;
      if (backend_from_name(s, len, &k)) {
        int dup = 0;
        for (size_t i = 0; i < n; ++i) dup |= kinds[i] == k;
        if (!dup) kinds[n++] = k;
      } else if (len) {
        fprintf(stderr, "POLYATTN_TEST_BACKENDS: unknown backend '%.*s' ignored\n", (int)len, s);
      }
      s += len;
      if (*s == ',') ++s;
    }
    return n;
  }
  for (int k = POLYATTN_BACKEND_CPU; k <= POLYATTN_BACKEND_VULKAN; ++k) {
    const polyattn_backend_info *info = th_backend_find((polyattn_backend_kind)k);
    if (info && info->built) kinds[n++] = (polyattn_backend_kind)k;
  }
  return n;
}

static int backend_usable(polyattn_backend_kind kind) {
  const polyattn_backend_info *info = th_backend_find(kind);
  return info && info->built && info->usable;
}

static void th_skip_unusable(polyattn_backend_kind kind) {
  const char *name = polyattn_backend_name(kind);
  const polyattn_backend_info *info = th_backend_find(kind);
  if (!info || !info->built)
    cr_skip_test("SKIPPED: backend %s is not built: %s", name,
                 info && info->reason && *info->reason ? info->reason : "not listed by polyattn_backends()");
  if (!info->usable)
    cr_skip_test("SKIPPED: backend %s is built (%s) but unusable here: %s", name,
                 info->module_path ? info->module_path : "?",
                 info->reason && *info->reason ? info->reason : "(no reason given)");
}

polyattn_context *th_context_or_skip(polyattn_backend_kind kind) {
  /* POLYATTN_BACKEND would override the kind asked for. */
  unsetenv("POLYATTN_BACKEND");
  if (!backend_usable(kind)) th_skip_unusable(kind);
  polyattn_context_desc desc;
  polyattn_context_desc_init(&desc);
  desc.backend = kind;
  polyattn_context *ctx = NULL;
  polyattn_status st = polyattn_context_create(&desc, &ctx);
  cr_assert_eq(st, POLYATTN_OK, "backend %s is listed usable but context creation failed: %s: %s",
               polyattn_backend_name(kind), polyattn_status_string(st), polyattn_last_error(NULL));
  cr_assert_not_null(ctx);
  cr_assert_eq(polyattn_context_backend(ctx), kind, "context bound to %s, asked for %s",
               polyattn_backend_name(polyattn_context_backend(ctx)), polyattn_backend_name(kind));
  return ctx;
}

/* POLYATTN_TEST_CASES=a,b,...: only the cases whose name contains one of the
 * substrings (a reduced sweep, e.g. under compute-sanitizer); unset: every case. */
static int case_selected(const th_case *c) {
  const char *env = getenv("POLYATTN_TEST_CASES");
  if (!env || !*env) return 1;
  for (const char *s = env; *s;) {
    size_t len = strcspn(s, ",");
    if (len && len < 128) {
      char want[128];
      memcpy(want, s, len);
      want[len] = '\0';
      if (strstr(c->name, want)) return 1;
    }
    s += len;
    if (*s == ',') ++s;
  }
  return 0;
}

size_t th_make_params(const th_case *cases, size_t ncases, th_param **out) {
  polyattn_backend_kind kinds[8];
  size_t nk = th_selected_backends(kinds);
  size_t n = 0;
  for (size_t b = 0; b < nk; ++b) {
    if (!backend_usable(kinds[b])) {
      ++n;
      continue;
    }
    for (size_t i = 0; i < ncases; ++i)
      for (int d = 0; d < 3; ++d) n += case_selected(&cases[i]) && ((cases[i].dtypes >> d) & 1u);
  }
  th_param *p = cr_malloc(sizeof(th_param) * (n ? n : 1));
  size_t j = 0;
  for (size_t b = 0; b < nk; ++b) {
    if (!backend_usable(kinds[b])) {
      p[j++] = (th_param){-1, POLYATTN_DTYPE_F32, kinds[b]};
      continue;
    }
    for (size_t i = 0; i < ncases; ++i)
      for (int d = 0; d < 3; ++d)
        if (case_selected(&cases[i]) && ((cases[i].dtypes >> d) & 1u))
          p[j++] = (th_param){(int)i, (polyattn_dtype)d, kinds[b]};
  }
  *out = p;
  return n;
}

/* ------------------------------------------------------------------- cases */

int th_repeats(int fallback) {
  const char *env = getenv("POLYATTN_TEST_REPEAT");
  const int n = env ? atoi(env) : 0;
  return n > 1 ? n : fallback;
}

th_case th_case_resolve(const th_case *in, polyattn_dtype dtype) {
  th_case c = *in;
  c.dtype = dtype;
  if (c.batch <= 0) c.batch = 1;
  if (c.heads_q <= 0) c.heads_q = 1;
  if (c.heads_kv <= 0) c.heads_kv = c.heads_q;
  if (c.head_dim_v <= 0) c.head_dim_v = c.head_dim;
  if (!c.window) c.window_left = c.window_right = -1;
  if (c.mask_density <= 0) c.mask_density = 0.5;
  if (c.naive_factor <= 0) c.naive_factor = 2.0;
  if (c.atol_factor <= 0) c.atol_factor = c.softcap > 0 ? 3.0 : 2.0;
  return c;
}

void th_case_label(const th_case *c, polyattn_backend_kind kind, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s/%s", c->name, polyattn_dtype_name(c->dtype), polyattn_backend_name(kind));
}

/* ------------------------------------------------------------ whole tests */

/* POLYATTN_TEST_NO_LSE=1: the forward sweep without LSE (harness.h). */
static int no_lse_forced(void) {
  const char *env = getenv("POLYATTN_TEST_NO_LSE");
  return env && !strcmp(env, "1");
}

void th_forward_test(const th_case *table, const th_param *p) {
  if (p->case_index < 0) th_skip_unusable(p->backend);
  th_case c = th_case_resolve(&table[p->case_index], p->dtype);
  if (no_lse_forced()) c.no_lse = 1;
  char label[200];
  th_case_label(&c, p->backend, label, sizeof label);
  polyattn_context *ctx = th_context_or_skip(p->backend);
  th_run *r = th_run_create(ctx, &c, 0);
  polyattn_status st = th_run_forward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s: %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  th_assert_forward_ok(r, NULL);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

void th_assert_forward_ok(th_run *r, const char *what) {
  char summary[2048];
  int ok = th_check_forward(r, summary, sizeof summary);
  cr_log_info("%s%s%s", what ? what : "", what ? ": " : "", summary);
  cr_assert(ok, "%s%s%s", what ? what : "", what ? ": " : "", summary);
}

th_run *th_run_checked(polyattn_context *ctx, const th_case *table, polyattn_dtype dt) {
  th_case c = th_case_resolve(table, dt);
  th_run *r = th_run_create(ctx, &c, 0);
  polyattn_status st = th_run_forward(r);
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", c.name, th_run_message(r));
  th_assert_forward_ok(r, NULL);
  return r;
}

void th_backward_test(const th_case *table, const th_param *p) {
  if (p->case_index < 0) th_skip_unusable(p->backend);
  th_case c = th_case_resolve(&table[p->case_index], p->dtype);
  char label[200];
  th_case_label(&c, p->backend, label, sizeof label);
  polyattn_context *ctx = th_context_or_skip(p->backend);
  th_run *r = th_run_create(ctx, &c, 1);
  polyattn_status st = th_run_forward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s (forward): %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  st = th_run_backward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s (backward): %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  char summary[2048];
  int ok = th_check_backward(r, summary, sizeof summary);
  cr_log_info("%s", summary);
  cr_assert(ok, "%s", summary);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

/* --------------------------------------------------------------- the runner */

static size_t g_tests, g_skipped;

ReportHook(POST_TEST)(struct criterion_test_stats *s) {
  if (s->test_status == CR_STATUS_SKIPPED)
    fprintf(stderr, "[SKIP] %s::%s: %s\n", s->test->category, s->test->name,
            s->message ? s->message : "(no reason)");
}

ReportHook(POST_ALL)(struct criterion_global_stats *g) {
  g_tests = g->nb_tests;
  g_skipped = g->tests_skipped;
  if (g_skipped)
    fprintf(stderr, "[====] %zu of %zu tests SKIPPED (reasons above); skipped is not passed\n",
            g_skipped, g_tests);
}

int th_all_skipped(void) { return g_tests > 0 && g_skipped == g_tests; }
