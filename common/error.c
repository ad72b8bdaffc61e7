/* pa_fail(): the one printf-style error helper. Compiled into libpolyattn (through
 * pa_common) and, as its own copy with hidden visibility, into each backend module,
 * which is a separate shared object and cannot call into the core's internals. */
#include <stdarg.h>
#include <stdio.h>

#include "problem.h"

polyattn_status pa_fail(pa_error *err, polyattn_status status, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return status;
}
