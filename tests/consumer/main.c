/* consumer: a program built against the installed polyattn package (CMake or
 * pkg-config). It checks that the header and the library it links agree on the
 * version, that the CPU backend runs, and one result it can predict: with every
 * row of V equal to the same vector, attention returns that vector whatever the
 * scores. Exit status 0 on success. */
#include <math.h>
#include <stdio.h>

#include <polyattn.h>

#define S 33
#define H 2
#define D 16

int main(void) {
  if (polyattn_version() != POLYATTN_VERSION_HEX) {
    fprintf(stderr, "header 0x%06x but library 0x%06x\n", POLYATTN_VERSION_HEX,
            polyattn_version());
    return 1;
  }
  static float q[S * H * D], k[S * H * D], v[S * H * D], o[S * H * D];
  for (int i = 0; i < S * H * D; i++) {
    q[i] = sinf(0.37f * (float)i);
    k[i] = cosf(0.11f * (float)i);
    v[i] = (float)(i % D) - 7.5f; /* the same vector in every row */
    o[i] = NAN;
  }
  polyattn_context_desc desc;
  polyattn_context_desc_init(&desc);
  desc.backend = POLYATTN_BACKEND_CPU;
  polyattn_context *ctx = NULL;
  polyattn_status st = polyattn_context_create(&desc, &ctx);
  if (st != POLYATTN_OK) {
    fprintf(stderr, "context: %s: %s\n", polyattn_status_string(st), polyattn_last_error(NULL));
    return 1;
  }
  polyattn_buffer *b[4] = {0};
  float *mem[4] = {q, k, v, o};
  polyattn_tensor t[4];
  const int64_t shape[4] = {1, S, H, D};
  for (int i = 0; i < 4 && st == POLYATTN_OK; i++) {
    st = polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, mem[i], sizeof q, &b[i]);
    if (st == POLYATTN_OK) polyattn_tensor_contiguous(&t[i], b[i], 0, POLYATTN_DTYPE_F32, 4, shape);
  }
  polyattn_params p;
  polyattn_params_init(&p);
  p.causal = 1;
  if (st == POLYATTN_OK) st = polyattn_forward(ctx, &p, &t[0], &t[1], &t[2], &t[3], NULL, NULL);
  if (st == POLYATTN_OK) st = polyattn_synchronize(ctx);
  int bad = 0;
  for (int i = 0; st == POLYATTN_OK && i < S * H * D; i++)
    if (!(fabsf(o[i] - v[i]) <= 1e-5f)) bad++;
  if (st != POLYATTN_OK)
    fprintf(stderr, "forward: %s: %s\n", polyattn_status_string(st), polyattn_last_error(ctx));
  for (int i = 0; i < 4; i++) polyattn_buffer_free(b[i]);
  polyattn_context_destroy(ctx);
  if (st != POLYATTN_OK || bad) {
    fprintf(stderr, "consumer: %d wrong outputs\n", bad);
    return 1;
  }
  printf("consumer: polyattn %s, %d outputs ok\n", polyattn_version_string(), S * H * D);
  return 0;
}
