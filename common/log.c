#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static polyattn_log_fn log_fn;
static void *log_user;
static int log_max = -1; /* -1: not yet read from POLYATTN_LOG */

static int level_from_env(void) {
  const char *e = getenv("POLYATTN_LOG");
  if (!e || !*e) return -2; /* silent */
  if (!strcmp(e, "error")) return POLYATTN_LOG_ERROR;
  if (!strcmp(e, "warn")) return POLYATTN_LOG_WARN;
  if (!strcmp(e, "info")) return POLYATTN_LOG_INFO;
  return POLYATTN_LOG_DEBUG; /* "debug", "1", anything else */
}

POLYATTN_API void polyattn_set_log_callback(polyattn_log_fn fn, polyattn_log_level max_level,
                                            void *user_data) {
  pthread_mutex_lock(&log_lock);
  log_fn = fn;
  log_user = user_data;
  log_max = fn ? (int)max_level : -1;
  pthread_mutex_unlock(&log_lock);
}

void pa_log(polyattn_log_level level, const char *fmt, ...) {
  pthread_mutex_lock(&log_lock);
  if (log_max == -1 && !log_fn) log_max = level_from_env();
  polyattn_log_fn fn = log_fn;
  void *user = log_user;
  int max = log_max;
  pthread_mutex_unlock(&log_lock);
  if ((int)level > max) return;

  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (fn) {
    fn(level, msg, user);
  } else {
    static const char *names[] = {"error", "warn", "info", "debug"};
    fprintf(stderr, "polyattn %s: %s\n", names[level], msg);
  }
}
