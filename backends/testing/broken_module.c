/* A backend module that is broken on purpose, one way per build:
 *   PA_BROKEN_NO_INIT      exports the score function but no init function;
 *   PA_BROKEN_BAD_VERSION  hands back an ops table of a future API version;
 *   PA_BROKEN_INIT_FAILS   init reports a device error.
 * The loader must list each as unusable, with a reason, and carry on. */
#include "backend.h"

#if defined(__GNUC__)
#  define PA_MODULE_EXPORT __attribute__((visibility("default")))
#else
#  define PA_MODULE_EXPORT
#endif

PA_MODULE_EXPORT int polyattn_module_score(void) { return 1000; }

#if defined(PA_BROKEN_BAD_VERSION)
static const pa_backend_ops future_ops = {
    .api_version = PA_BACKEND_API_VERSION + 98,
    .kind = POLYATTN_BACKEND_AUTO,
    .name = "broken-bad_version",
};
#endif

#if !defined(PA_BROKEN_NO_INIT)
PA_MODULE_EXPORT polyattn_status polyattn_module_init(uint32_t core_api_version,
                                                      const pa_backend_ops **ops) {
  (void)core_api_version;
#  if defined(PA_BROKEN_BAD_VERSION)
  *ops = &future_ops;
  return POLYATTN_OK;
#  else
  *ops = 0;
  return POLYATTN_ERR_DEVICE;
#  endif
}
#endif
