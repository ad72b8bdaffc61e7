/* The checks every GPU module's <backend>_module suite shares (harness_internal.h):
 * the module is listed, opens as the registry opens it, exports only its entry
 * points, and without a device reports itself unusable with the runtime's reason. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dlfcn.h>
#include <string.h>

#include "backend.h"
#include "harness_internal.h"

const polyattn_backend_info *th_backend_info(polyattn_backend_kind kind) {
  const polyattn_backend_info *info = th_backend_find(kind);
  cr_assert_not_null(info, "polyattn_backends() does not list backend %d", (int)kind);
  return info;
}

void th_gpu_module_open(th_gpu_module *m, polyattn_backend_kind kind, const char *file,
                        const char *internal) {
  memset(m, 0, sizeof *m);
  const polyattn_backend_info *info = m->info = th_backend_info(kind);
  cr_assert(info->built, "the %s module is built but polyattn_backends() says not: %s", file,
            info->reason);
  cr_assert(info->module_path && strstr(info->module_path, file), "module path '%s'",
            info->module_path ? info->module_path : "(null)");
  /* dlclose is skipped: the registry holds the same module open. */
  void *dl = dlopen(info->module_path, RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(dl, "dlopen(%s): %s", info->module_path, dlerror());
  pa_module_score_fn score = (pa_module_score_fn)(size_t)dlsym(dl, PA_MODULE_SCORE_SYMBOL);
  pa_module_init_fn init = (pa_module_init_fn)(size_t)dlsym(dl, PA_MODULE_INIT_SYMBOL);
  cr_assert(score && init, "the module does not export its entry points");
  cr_assert_null(dlsym(dl, internal), "internal symbols must stay hidden (%s)", internal);
  const pa_backend_ops *ops = NULL;
  cr_assert_eq(init(PA_BACKEND_API_VERSION + 1, &ops), POLYATTN_ERR_BACKEND);
  cr_assert_eq(init(PA_BACKEND_API_VERSION, &ops), POLYATTN_OK);
  cr_assert_eq(ops->kind, kind);
  m->score = score;
  m->ops = ops;
  m->devices = ops->probe(m->name, sizeof m->name, m->reason, sizeof m->reason);
}

void th_gpu_module_check_unusable(const th_gpu_module *m, polyattn_backend_kind kind,
                                  const char *why) {
  const polyattn_backend_info *info = m->info;
  cr_log_info("no device here (%s): the module must report itself unusable", why);
  cr_assert_eq(info->usable, 0);
  cr_assert_eq(info->score, 0);
  cr_assert_eq(info->device_count, 0);
  cr_assert_eq(m->score(), 0, "score must be 0 without a device");
  cr_assert_eq(m->devices, 0);
  cr_assert(strstr(m->reason, why), "the probe's reason '%s' should carry the runtime's '%s'",
            m->reason, why);
  cr_assert(info->reason && strstr(info->reason, why),
            "polyattn_backends() gives '%s', which lacks the runtime's '%s'",
            info->reason ? info->reason : "(null)", why);
  /* Asking for the backend by kind fails with a status and a message, no crash. */
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = kind;
  polyattn_context *ctx = NULL;
  cr_assert_neq(polyattn_context_create(&d, &ctx), POLYATTN_OK);
  cr_assert_null(ctx);
  cr_assert(*polyattn_last_error(NULL), "a refused context needs a message");
}
