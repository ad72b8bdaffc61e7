/* The CPU kernels built for the baseline target (SSE2 on x86-64, NEON on AArch64),
 * with no -m flags; the sources are shared by all instruction sets, and
 * pa_cpu_isa_select() picks one at run time. */
#include "cpu_tune.h"

#define PA_VL PA_CPU_GENERIC_VL
#define PA_MR PA_CPU_GENERIC_MR
#define PA_NV PA_CPU_GENERIC_NV
#define PA_CPU_FN(name) name##_generic

#include "kernel_forward.c"
#include "kernel_backward.c"

const pa_cpu_isa pa_cpu_isa_generic = {
    .name = "generic",
    .vl = PA_VL,
    .mr = PA_MR,
    .nr = PA_NR,
    .prefer_block_q = PA_CPU_GENERIC_BQ,
    .prefer_block_k = PA_CPU_GENERIC_BK,
    .scratch_bytes = pa_cpu_scratch_bytes_generic,
    .forward_task = pa_cpu_forward_task_generic,
    .forward_merge_task = pa_cpu_forward_merge_task_generic,
    .backward_kv_task = pa_cpu_backward_kv_task_generic,
    .backward_q_task = pa_cpu_backward_q_task_generic,
};
