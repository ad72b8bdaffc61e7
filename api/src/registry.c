/* The backend registry: the built-in CPU backend plus loadable GPU modules.
 *
 * Modules are files named libpolyattn-<name>.so, looked for in the directories of
 * POLYATTN_BACKEND_PATH (colon-separated, searched first) and then next to
 * libpolyattn itself. The first file of a name wins. Each module is opened once per
 * process; one that is missing, is not a shared object, lacks the entry points,
 * speaks another API version or sees no device is listed as unusable with the
 * reason, and never takes the process down. */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

#define PA_MAX_BACKENDS 16
#define PA_MODULE_PREFIX "libpolyattn-"
#define PA_MODULE_SUFFIX ".so"

typedef struct entry {
  polyattn_backend_info info;
  const pa_backend_ops *ops; /* NULL when not usable */
  char name[64];
  char path[PATH_MAX];
  char device[256];
  char reason[512];
} entry;

static entry entries[PA_MAX_BACKENDS];
static polyattn_backend_info infos[PA_MAX_BACKENDS];
static size_t n_entries;
static pthread_once_t scan_once = PTHREAD_ONCE_INIT;

/* GPU backends the project ships; listed even when their module is absent. */
static const struct {
  const char *name;
  polyattn_backend_kind kind;
} known[] = {{"cuda", POLYATTN_BACKEND_CUDA},
             {"hip", POLYATTN_BACKEND_HIP},
             {"vulkan", POLYATTN_BACKEND_VULKAN}};

static polyattn_backend_kind kind_of(const char *name) {
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
    if (!strcmp(name, known[i].name)) return known[i].kind;
  return POLYATTN_BACKEND_AUTO; /* not a backend the core knows */
}

static entry *add_entry(const char *name) {
  if (n_entries == PA_MAX_BACKENDS) return NULL;
  entry *e = &entries[n_entries++];
  memset(e, 0, sizeof *e);
  snprintf(e->name, sizeof e->name, "%s", name);
  e->info.kind = kind_of(name);
  return e;
}

static entry *find_entry(const char *name) {
  for (size_t i = 0; i < n_entries; ++i)
    if (!strcmp(entries[i].name, name)) return &entries[i];
  return NULL;
}

/* Probe a backend whose ops table we hold: device count, name, reason. */
static void probe(entry *e, const pa_backend_ops *ops, int score) {
  int n = ops->probe(e->device, sizeof e->device, e->reason, sizeof e->reason);
  e->info.kind = ops->kind;
  e->info.device_count = n;
  if (n > 0) {
    e->ops = ops;
    e->info.usable = 1;
    e->info.score = score;
    e->reason[0] = '\0';
  } else if (!e->reason[0]) {
    snprintf(e->reason, sizeof e->reason, "no %s device found", ops->name);
  }
}

/* Open one module file and fill its entry; every failure becomes a reason. */
static void load_module(entry *e) {
  e->info.built = 1;
  void *dl = dlopen(e->path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *why = dlerror();
    snprintf(e->reason, sizeof e->reason, "cannot load module: %s", why ? why : "dlopen failed");
    return;
  }
  pa_module_score_fn score_fn = (pa_module_score_fn)(size_t)dlsym(dl, PA_MODULE_SCORE_SYMBOL);
  pa_module_init_fn init_fn = (pa_module_init_fn)(size_t)dlsym(dl, PA_MODULE_INIT_SYMBOL);
  if (!score_fn || !init_fn) {
    snprintf(e->reason, sizeof e->reason, "module does not export %s", 
             !score_fn ? PA_MODULE_SCORE_SYMBOL : PA_MODULE_INIT_SYMBOL);
    dlclose(dl);
    return;
  }
  int score = score_fn();
  const pa_backend_ops *ops = NULL;
  polyattn_status st = init_fn(PA_BACKEND_API_VERSION, &ops);
  if (score <= 0) {
    /* The module's own probe knows why (e.g. the driver is missing). */
    char why[400] = "", dev[8];
    if (st == POLYATTN_OK && ops && ops->api_version == PA_BACKEND_API_VERSION)
      ops->probe(dev, sizeof dev, why, sizeof why);
    snprintf(e->reason, sizeof e->reason, "module reports it cannot run here%s%s",
             why[0] ? ": " : " (score 0)", why);
    dlclose(dl);
    return;
  }
  if (st != POLYATTN_OK || !ops) {
    snprintf(e->reason, sizeof e->reason, "module init failed: %s (core API version %u)",
             polyattn_status_string(st), PA_BACKEND_API_VERSION);
    dlclose(dl);
    return;
  }
  if (ops->api_version != PA_BACKEND_API_VERSION) {
    snprintf(e->reason, sizeof e->reason, "module speaks backend API %u, the core %u",
             ops->api_version, PA_BACKEND_API_VERSION);
    dlclose(dl);
    return;
  }
  probe(e, ops, score);
}

static void scan_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  size_t pre = strlen(PA_MODULE_PREFIX), suf = strlen(PA_MODULE_SUFFIX);
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len <= pre + suf || strncmp(de->d_name, PA_MODULE_PREFIX, pre) != 0 ||
        strcmp(de->d_name + len - suf, PA_MODULE_SUFFIX) != 0)
      continue;
    char name[64];
    size_t nlen = len - pre - suf;
    if (nlen >= sizeof name) continue;
    memcpy(name, de->d_name + pre, nlen);
    name[nlen] = '\0';
    if (!strcmp(name, "cpu")) continue; /* built in */
    entry *e = find_entry(name);
    if (e && e->info.built) continue; /* an earlier directory won */
    if (!e && !(e = add_entry(name))) break;
    snprintf(e->path, sizeof e->path, "%s/%s", dir, de->d_name);
    e->reason[0] = '\0';
    load_module(e);
  }
  closedir(d);
}

/* The directory holding libpolyattn itself. */
static void library_dir(char *out, size_t n) {
  Dl_info info;
  out[0] = '\0';
  if (dladdr((void *)(size_t)&library_dir, &info) && info.dli_fname) {
    snprintf(out, n, "%s", info.dli_fname);
    char *slash = strrchr(out, '/');
    if (slash) *slash = '\0';
    else snprintf(out, n, ".");
  }
}

static void scan(void) {
  entry *cpu = add_entry("cpu"); /* the table is empty here: never NULL */
  if (!cpu) return;
  snprintf(cpu->path, sizeof cpu->path, "(built in)");
  cpu->info.built = 1;
  probe(cpu, pa_cpu_backend(), 1);
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) add_entry(known[i].name);

  char searched[2 * PATH_MAX] = "";
  const char *env = getenv("POLYATTN_BACKEND_PATH");
  if (env && *env) {
    char *copy = strdup(env), *save = NULL;
    for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
         dir = strtok_r(NULL, ":", &save))
      scan_dir(dir);
    free(copy);
    snprintf(searched, sizeof searched, "%s:", env);
  }
  char libdir[PATH_MAX];
  library_dir(libdir, sizeof libdir);
  if (libdir[0]) scan_dir(libdir);
  size_t used = strlen(searched);
  snprintf(searched + used, sizeof searched - used, "%s", libdir);

  for (size_t i = 0; i < n_entries; ++i) {
    entry *e = &entries[i];
    if (!e->info.built)
      snprintf(e->reason, sizeof e->reason, "module " PA_MODULE_PREFIX "%s" PA_MODULE_SUFFIX
               " not found (searched %s)", e->name, searched);
    e->info.name = e->name;
    e->info.module_path = e->path;
    e->info.device_name = e->device;
    e->info.reason = e->reason;
    infos[i] = e->info;
    PA_LOG_DEBUG("backend %s: %s%s", e->name, e->info.usable ? "usable, " : "unusable: ",
                 e->info.usable ? e->device : e->reason);
  }
}

POLYATTN_API polyattn_status polyattn_backends(const polyattn_backend_info **list,
                                               size_t *count) {
  if (!list || !count)
    return pa_ctx_fail(NULL, POLYATTN_ERR_NULL_ARGUMENT, "%s is NULL", list ? "count" : "list");
  pthread_once(&scan_once, scan);
  *list = infos;
  *count = n_entries;
  return POLYATTN_OK;
}

polyattn_status pa_registry_select(polyattn_backend_kind kind, const pa_backend_ops **ops,
                                   pa_error *err) {
  pthread_once(&scan_once, scan);
  const entry *best = NULL;
  for (size_t i = 0; i < n_entries; ++i) {
    const entry *e = &entries[i];
    if (!e->info.usable) continue;
    if (kind == POLYATTN_BACKEND_AUTO) {
      if (!best || e->info.score > best->info.score) best = e;
    } else if (e->info.kind == kind && !best) {
      best = e;
    }
  }
  if (best) {
    *ops = best->ops;
    return POLYATTN_OK;
  }
  for (size_t i = 0; i < n_entries; ++i)
    if (entries[i].info.kind == kind)
      return pa_fail(err, POLYATTN_ERR_BACKEND, "backend %s is not available: %s",
                     entries[i].name, entries[i].reason);
  return pa_fail(err, POLYATTN_ERR_BACKEND, "no usable backend for %s",
                 polyattn_backend_name(kind) ? polyattn_backend_name(kind) : "this request");
}
