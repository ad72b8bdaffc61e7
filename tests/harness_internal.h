/* What the harness's files share: the state of one run. Not for the suites,
 * which use harness.h. */
#ifndef PA_TESTS_HARNESS_INTERNAL_H
#define PA_TESTS_HARNESS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"


/* Buffers (device + host image). Packed QKV puts q, k, v in TB_Q and dq, dk, dv
 * in TB_DQ; TB_K, TB_V, TB_DK, TB_DV then stay unused. */
enum { TB_Q, TB_K, TB_V, TB_O, TB_LSE, TB_DO, TB_DQ, TB_DK, TB_DV, TB_CUQ, TB_CUK,
       TB_USED, TB_ALIBI, TB_MASK, TB_MASKOUT, TB_COUNT };

extern const char *const th_buf_names[TB_COUNT];

/* The poison of outputs: every byte 0xff is a NaN in f32, f16 and bf16. Bytes of
 * an output buffer outside its views get the guard pattern instead. */
#define TH_POISON 0xffu
#define TH_GUARD 0xa5u
#define TH_MASK_POISON 0xcdu

typedef struct th_buf {
  size_t size;       /* bytes; 0: unused */
  uint8_t *img;      /* inputs as written; outputs as last read back */
  uint8_t *init;     /* outputs: the image written before each call */
  uint8_t *inview;   /* outputs: 1 for bytes inside a view */
  int output;
  int used;
  polyattn_buffer *dev;
  polyattn_buffer *host; /* wraps img on the host context, for the oracle */
} th_buf;

/* A q/k/v-like view: element (b, tok, h, d) of a sequence at
 * off + b*sb + (start_b + tok)*ss + h*sh + d (sb = 0 when varlen). */
typedef struct th_tv {
  int buf;
  int kv; /* 1: rows are keys (k, v, dk, dv) */
  int64_t off, sb, ss, sh;
  int32_t heads, dim;
} th_tv;

struct th_run {
  th_case c;
  int backward;
  polyattn_context *ctx, *host_ctx;
  size_t esize;
  int32_t B, Sq, Sk; /* varlen: the maximum lengths */
  int32_t Hq, Hkv, D, Dv;
  int64_t total_q, total_k;
  int64_t *q_start, *k_start; /* [B + 1] */
  int32_t *len_q, *len_k;     /* [B], before seqused_k */
  th_tv q, k, v, o, dout, dq, dk, dv;
  int64_t lse_off, lse_sb, lse_sh, lse_ss;
  int want_lse;
  int32_t mask_b, mask_h, nqb, nkb;
  th_buf bufs[TB_COUNT];
  uint8_t *oracle_mask_out;
  polyattn_tensor dev_t[TB_COUNT], host_t[TB_COUNT];
  polyattn_params dev_params, host_params;
  polyattn_buffer *ws;
  size_t ws_size;
  uint64_t rng;
  char msg[1024];
};

/* calloc that fails the test instead of returning NULL */
void *th_xcalloc(size_t n, size_t size);

/* Index arithmetic of the views (harness_run.c). */
int64_t th_tv_start(const th_run *r, const th_tv *v, int32_t b);
int32_t th_tv_len(const th_run *r, const th_tv *v, int32_t b);
int64_t th_tv_index(const th_run *r, const th_tv *v, int32_t b, int64_t tok, int32_t h, int32_t d);
/* The row of the oracle's canonical layout ([total, heads, dim]). */
int64_t th_tv_canon_row(const th_run *r, const th_tv *v, int32_t b, int64_t tok);
int64_t th_lse_index(const th_run *r, int32_t b, int32_t h, int64_t i);

/* The independent reading of the semantics (semantics.c): forward of the run's
 * host inputs into the oracle's canonical layout. Returns 0 when the case uses
 * something it does not model (AUTO_BLOCK). */
int th_semantics_forward(const th_run *r, double *out, double *lse);

/* ---- GPU modules (harness_module.c): what every <backend>_module suite checks */

/* The listing of backend `kind` (its usable entry if it has several), or NULL. */
const polyattn_backend_info *th_backend_find(polyattn_backend_kind kind);
/* The same, a failed assertion if it is missing. */
const polyattn_backend_info *th_backend_info(polyattn_backend_kind kind);

/* A GPU module opened as the registry opens it. */
typedef struct th_gpu_module {
  const polyattn_backend_info *info;
  int (*score)(void);     /* its polyattn_module_score */
  const void *ops;        /* its pa_backend_ops (backend.h) */
  char name[256], reason[512];
  int devices;            /* what its probe counted */
} th_gpu_module;

/* Asserts that backend `kind` is listed and built from a module whose path names
 * `file`, that the module opens and exports both entry points but not `internal`
 * (one of its internal symbols), and that init refuses the next API version and
 * gives the ops of `kind`; then runs its probe into m->name / m->reason. */
void th_gpu_module_open(th_gpu_module *m, polyattn_backend_kind kind, const char *file,
                        const char *internal);

/* Without a device (`why`: the runtime's own error, or a "no device" text): the
 * module is listed unusable with score 0 and no devices, its score() is 0, both the
 * probe's and the listing's reasons carry `why`, and a context asked for by kind is
 * refused with a message. */
void th_gpu_module_check_unusable(const th_gpu_module *m, polyattn_backend_kind kind,
                                  const char *why);

#endif
