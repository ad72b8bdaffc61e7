/* polyattn devices: every backend polyattn_backends() knows, and which one a
 * default context would pick. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "polyattn.h"

int cmd_devices(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: polyattn devices\n\nLists every backend: built, usable, its devices, "
             "the module it comes from, and why it is not usable.\n"
             "Modules are searched next to the library and in POLYATTN_BACKEND_PATH.\n");
      return 0;
    }
    fprintf(stderr, "polyattn devices: unknown argument '%s'\n", argv[i]);
    return 2;
  }
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  polyattn_status st = polyattn_backends(&list, &n);
  if (st != POLYATTN_OK) {
    fprintf(stderr, "polyattn: polyattn_backends failed: %s: %s\n", polyattn_status_string(st),
            polyattn_last_error(NULL));
    return 1;
  }
  printf("polyattn %s\n\n", polyattn_version_string());
  printf("%-8s %-6s %-7s %-6s %-7s %-28s %s\n", "backend", "built", "usable", "score",
         "devices", "device", "module");
  for (size_t i = 0; i < n; i++) {
    const polyattn_backend_info *b = &list[i];
    printf("%-8s %-6s %-7s %-6d %-7d %-28s %s\n", b->name ? b->name : "?",
           b->built ? "yes" : "no", b->usable ? "yes" : "no", b->score, b->device_count,
           b->device_name && *b->device_name ? b->device_name : "-",
           b->module_path && *b->module_path ? b->module_path : "-");
    if (!b->usable && b->reason && *b->reason) printf("         why not: %s\n", b->reason);
  }

  /* What POLYATTN_BACKEND_AUTO (or the POLYATTN_BACKEND override) picks. */
  polyattn_context *ctx = NULL;
  st = polyattn_context_create(NULL, &ctx);
  if (st == POLYATTN_OK) {
    printf("\ndefault backend: %s (%s)\n", polyattn_backend_name(polyattn_context_backend(ctx)),
           polyattn_context_device_name(ctx));
    polyattn_context_destroy(ctx);
    return 0;
  }
  printf("\ndefault backend: none: %s: %s\n", polyattn_status_string(st),
         polyattn_last_error(NULL));
  return 1;
}
