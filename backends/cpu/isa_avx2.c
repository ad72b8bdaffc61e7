/* The CPU kernels built for AVX2 + FMA. CMake compiles this file
 * with the matching -m flags; the sources are shared by all instruction sets, and
 * pa_cpu_isa_select() picks one at run time. */
#include "cpu_tune.h"

#define PA_VL PA_CPU_AVX2_VL
#define PA_MR PA_CPU_AVX2_MR
#define PA_NV PA_CPU_AVX2_NV
#define PA_CPU_FN(name) name##_avx2

#include "kernel_forward.c"
#include "kernel_backward.c"

const pa_cpu_isa pa_cpu_isa_avx2 = {
    .name = "avx2",
    .vl = PA_VL,
    .mr = PA_MR,
    .nr = PA_NR,
    .prefer_block_q = PA_CPU_AVX2_BQ,
    .prefer_block_k = PA_CPU_AVX2_BK,
    .scratch_bytes = pa_cpu_scratch_bytes_avx2,
    .forward_task = pa_cpu_forward_task_avx2,
    .forward_merge_task = pa_cpu_forward_merge_task_avx2,
    .backward_kv_task = pa_cpu_backward_kv_task_avx2,
    .backward_q_task = pa_cpu_backward_q_task_avx2,
};
