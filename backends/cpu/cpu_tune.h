/* Tuning table of the CPU kernels, one row per instruction set.
 *
 * VL  fp32 lanes per vector.
 * MR  rows of the register-blocked microkernel C[MR x NV*VL] += A[MR x K] B[K x NV*VL]:
 * NV  MR * NV accumulators stay in registers next to NV loaded B vectors and one
 *     broadcast. AVX-512 has 32 zmm registers: 8 x 2 = 16 accumulators keep both
 *     FMA pipes busy through the 4-cycle latency with room to spare. AVX2 and the
 *     baseline (SSE2 / NEON view) have 16 registers: 4 x 2 = 8 accumulators.
 * BQ, BK  the preferred query rows / keys per tile handed to the planner, which
 *     shrinks them to fit half of L2 (hd 128 gets 128 x 128). A larger BQ amortises
 *     packing each K/V tile over more query rows. AVX-512: fp32 forward, one thread,
 *     B=1 Hq=8 S=2048, on the 2-core AMD EPYC (Zen 5) dev machine, GFLOP/s at
 *     hd 64 / hd 128 (see backends/cpu/README.md):
 *       64x64 99/108, 128x64 109/110, 128x128 117/127, 256x64 116/138, 256x128 124/135.
 *     AVX2 and the baseline rows are not tuned (no such machine measured yet).
 * The planner rounds BQ to a multiple of MR and BK to a multiple of NV * VL, so the
 * microkernel never sees a partial row block or a partial vector. */
#ifndef PA_CPU_TUNE_H
#define PA_CPU_TUNE_H

#define PA_CPU_AVX512_VL 16
#define PA_CPU_AVX512_MR 8
#define PA_CPU_AVX512_NV 2
#define PA_CPU_AVX512_BQ 256
#define PA_CPU_AVX512_BK 128

#define PA_CPU_AVX2_VL 8
#define PA_CPU_AVX2_MR 4
#define PA_CPU_AVX2_NV 2
#define PA_CPU_AVX2_BQ 128
#define PA_CPU_AVX2_BK 64

#define PA_CPU_GENERIC_VL 4
#define PA_CPU_GENERIC_MR 4
#define PA_CPU_GENERIC_NV 2
#define PA_CPU_GENERIC_BQ 64
#define PA_CPU_GENERIC_BK 64

/* L2 size assumed when the system does not report one. */
#define PA_CPU_DEFAULT_L2_BYTES (1 << 20)

#endif
