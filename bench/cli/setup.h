/* One attention problem for the CLI: its configuration, random inputs kept on the
 * host (so the check can read them), the context's buffers and tensor views, and
 * the forward/backward calls the timer runs. */
#ifndef CLI_SETUP_H
#define CLI_SETUP_H

#include <stdint.h>

#include "polyattn.h"

typedef struct attn_config {
  polyattn_backend_kind backend;
  int32_t threads; /* CPU worker threads; 0: the library's default */
  polyattn_dtype dtype;
  int32_t batch, heads, kv_heads, seq_q, seq_k, dim, dim_v;
  int causal;
  int32_t window_left, window_right; /* -1: unbounded */
  float softcap;
  int alibi;
  polyattn_sparsity sparsity;
  double density;   /* BLOCK: fraction of blocks kept in the random mask */
  double threshold; /* AUTO_BLOCK: block_threshold (0: the library's default) */
  double cutoff;    /* AUTO_BLOCK: auto_density_cutoff (0: the library's default) */
  int32_t block;    /* block_q = block_k for BLOCK / AUTO_BLOCK */
  int backward;
  uint64_t seed;
  /* 0: i.i.d. normal inputs. 1: every block of `block` tokens of a (batch, kv
   * head) shares a random "topic" added to its q and k rows, so attention
   * concentrates on matching blocks (what AUTO_BLOCK can find; i.i.d. inputs
   * spread the mass and AUTO_BLOCK correctly runs dense). 2: structured inputs
   * (setup.c, add_structure): a few dominant topic directions over random-length
   * segments plus a positional component that varies smoothly. */
  int clustered;
} attn_config;

/* The CPU-sized default problem of `polyattn run`. */
void attn_config_defaults(attn_config *c);

/* Host copies. Inputs as stored (in the dtype); outputs as read back. */
typedef struct attn_host {
  void *q, *k, *v, *dout;
  float *alibi;     /* [heads] */
  uint8_t *mask;    /* BLOCK: [1, 1, qblocks, kblocks]; AUTO: the chosen one,
                       [batch, heads, qblocks, kblocks] */
  void *o, *dq, *dk, *dv;
  float *lse;       /* [batch, heads, seq_q] */
} attn_host;

enum { ATTN_NBUF = 13 };

typedef struct attn_run {
  attn_config cfg;
  polyattn_context *ctx;
  attn_host host;
  int64_t qblocks, kblocks;
  polyattn_buffer *bufs[ATTN_NBUF];
  polyattn_tensor q, k, v, o, lse, dout, dq, dk, dv, alibi, mask, mask_out;
  polyattn_params params;     /* forward */
  polyattn_params bwd_params; /* backward: AUTO_BLOCK becomes BLOCK with its mask */
  polyattn_buffer *fwd_ws, *bwd_ws;
} attn_run;

/* Allocate, fill with random data (seeded) and upload. On failure prints what
 * failed (with polyattn_last_error) and returns the status; attn_run_free is
 * safe either way. */
polyattn_status attn_run_setup(attn_run *r, polyattn_context *ctx, const attn_config *cfg);
void attn_run_free(attn_run *r);

/* timed_fn-compatible calls; arg is an attn_run. */
polyattn_status attn_forward(void *run);
polyattn_status attn_backward(void *run);

/* After the forward: read O, LSE (and for AUTO_BLOCK the chosen mask, which the
 * backward then uses). After the backward: read dQ, dK, dV. */
polyattn_status attn_read_forward(attn_run *r);
polyattn_status attn_read_backward(attn_run *r);

/* Forward FLOPs by DESIGN.md's count: 4 * B * Hq * pairs * (D + Dv) / 2, pairs =
 * Sq * Sk (half when causal; a window counts its kept pairs exactly). */
double attn_forward_flops(const attn_config *c);

/* Pairs (i, j) kept per (batch, head), averaged, by the causal/window masks and
 * a block mask: [1, 1, qblocks, kblocks] (per_head 0) or [batch, heads, ...]. The
 * work a block-sparse run actually does. */
double attn_kept_pairs(const attn_run *r, const uint8_t *mask, int per_head);

/* Print "f32 B=1 Hq=8 ..." describing the problem. */
void attn_config_print(const attn_config *c);

#endif
