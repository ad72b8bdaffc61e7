/* Command-line parsing helpers shared by the subcommands: "--name VALUE" or
 * "--name=VALUE", numbers with range checks, comma lists, and the names of
 * backends, dtypes and sparsity modes. Every parser prints what was wrong to
 * stderr and returns 0 on failure, 1 on success. */
#ifndef CLI_ARGS_H
#define CLI_ARGS_H

#include <stdint.h>

#include "polyattn.h"

/* A cursor over argv. */
typedef struct arg_cursor {
  int argc;
  char **argv;
  int i;             /* the argument being looked at */
  const char *inline_value; /* the VALUE of "--name=VALUE", else NULL */
} arg_cursor;

/* 1 if argv[i] is the flag `name` ("--name" or "--name=..."). */
int arg_is(arg_cursor *c, const char *name);
/* The flag's value: the text after '=' or the next argument (consumed). */
const char *arg_value(arg_cursor *c);

int arg_parse_int(const char *flag, const char *text, int64_t min, int64_t max, int64_t *out);
int arg_parse_i32(const char *flag, const char *text, int32_t min, int32_t max, int32_t *out);
int arg_parse_float(const char *flag, const char *text, double min, double max, double *out);
/* "64,128,256" into at most `cap` values in [min, max]; *n receives the count. */
int arg_parse_list(const char *flag, const char *text, int32_t min, int32_t max, int32_t *vals,
                   int cap, int *n);
/* "L,R" with -1 meaning unbounded. */
int arg_parse_window(const char *flag, const char *text, int32_t *left, int32_t *right);

int arg_parse_backend(const char *text, polyattn_backend_kind *out);
int arg_parse_dtype(const char *text, polyattn_dtype *out);
/* none | block | auto | 2:4 */
int arg_parse_sparsity(const char *text, polyattn_sparsity *out);
const char *sparsity_name(polyattn_sparsity s);

/* Report an unknown argument; returns 0 so callers can `return arg_unknown(...)`. */
int arg_unknown(const char *command, const char *arg);

#endif
