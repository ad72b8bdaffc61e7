/* polyattn: the command-line front end of the library.
 *
 *   polyattn devices   what is built and usable here
 *   polyattn run       one problem: time it and check it against the oracle
 *   polyattn bench     DESIGN.md's standard sweep: a table and JSON lines */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "polyattn.h"

polyattn_context *cli_context(int backend, int threads) {
  polyattn_context_desc desc;
  polyattn_context_desc_init(&desc);
  desc.backend = (polyattn_backend_kind)backend;
  desc.num_threads = threads;
  polyattn_context *ctx = NULL;
  polyattn_status st = polyattn_context_create(&desc, &ctx);
  if (st != POLYATTN_OK) {
    fprintf(stderr, "polyattn: no context on backend '%s': %s: %s\n",
            backend == POLYATTN_BACKEND_AUTO ? "auto" : polyattn_backend_name(desc.backend),
            polyattn_status_string(st), polyattn_last_error(NULL));
    fprintf(stderr, "(run 'polyattn devices' to see what is usable here)\n");
    return NULL;
  }
  return ctx;
}

const char *cli_rate(double flops_per_s, char *buf, unsigned len) {
  if (flops_per_s >= 1e12)
    snprintf(buf, len, "%.2f TFLOP/s", flops_per_s * 1e-12);
  else
    snprintf(buf, len, "%.1f GFLOP/s", flops_per_s * 1e-9);
  return buf;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: polyattn <command> [options]\n"
          "\n"
          "commands:\n"
          "  devices   list the backends: built, usable, devices, and why not\n"
          "  run       run one attention problem on random inputs, print its time,\n"
          "            FLOP rate and error against the float64 oracle\n"
          "  bench     the standard sweep (16k tokens, hidden 2048, D 64/128/256,\n"
          "            S 512..16384, causal and not): a table and JSON lines\n"
          "  version   print the library version\n"
          "\n"
          "'polyattn <command> --help' lists a command's options.\n"
          "Environment: POLYATTN_BACKEND, POLYATTN_BACKEND_PATH, POLYATTN_THREADS, "
          "POLYATTN_LOG.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "devices")) return cmd_devices(argc - 1, argv + 1);
  if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
  if (!strcmp(cmd, "bench")) return cmd_bench(argc - 1, argv + 1);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("polyattn %s (header %d.%d.%d)\n", polyattn_version_string(),
           POLYATTN_VERSION_MAJOR, POLYATTN_VERSION_MINOR, POLYATTN_VERSION_PATCH);
    return 0;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "polyattn: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return 2;
}
