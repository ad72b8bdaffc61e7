/* Library diagnostics: through the user's callback, or to stderr only when the
 * POLYATTN_LOG environment variable asks for it. Never printed otherwise. */
#ifndef PA_LOG_H
#define PA_LOG_H

#include "polyattn.h"

void pa_log(polyattn_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define PA_LOG_DEBUG(...) pa_log(POLYATTN_LOG_DEBUG, __VA_ARGS__)
#define PA_LOG_INFO(...) pa_log(POLYATTN_LOG_INFO, __VA_ARGS__)
#define PA_LOG_WARN(...) pa_log(POLYATTN_LOG_WARN, __VA_ARGS__)

#endif
