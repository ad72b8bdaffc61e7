/* The subcommands of the polyattn command; each returns the process exit status. */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

int cmd_devices(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Shared by run and bench: a context on `backend` (threads 0 = default), or NULL
 * after printing why not. */
struct polyattn_context;
struct polyattn_context *cli_context(int backend, int threads);

/* "12.3 GFLOP/s" or "1.23 TFLOP/s" into buf. */
const char *cli_rate(double flops_per_s, char *buf, unsigned len);

#endif
