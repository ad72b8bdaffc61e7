# Build options of polyattn, in one place.
option(POLYATTN_BUILD_TESTS "Build the Criterion test suites" ON)
option(POLYATTN_BUILD_BENCH "Build the polyattn command and benchmarks" ON)
option(POLYATTN_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(POLYATTN_WERROR "Treat warnings as errors" OFF)

set(POLYATTN_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter)
if(POLYATTN_WERROR)
  list(APPEND POLYATTN_WARNINGS -Werror)
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${POLYATTN_WARNINGS}>")

if(POLYATTN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# The CUDA backend module (backends/cuda): AUTO builds it when CMake finds nvcc (on
# PATH, in CUDACXX, or at /usr/local/cuda/bin/nvcc); ON requires it; OFF skips it.
set(POLYATTN_CUDA AUTO CACHE STRING "Build the CUDA backend module (AUTO, ON, OFF)")
set_property(CACHE POLYATTN_CUDA PROPERTY STRINGS AUTO ON OFF)
# Real architectures compiled into the module (SASS for each, plus PTX of each for
# the driver to JIT on newer GPUs). CUDA 13's lowest target is sm_75; with a CUDA
# 11.8 or 12.x toolkit pass "70;80;90" for Volta.
set(POLYATTN_CUDA_ARCHS "75;80;90" CACHE STRING "CUDA architectures of the CUDA module")
option(POLYATTN_CUDA_PTXAS_VERBOSE "Print ptxas register and shared-memory use (-Xptxas -v)" OFF)
# The forward kernels' tuning-only variants, for comparing them on a GPU: the Ampere
# rows that the default choice ("auto") never runs (hd64 base, m2, m2j, m2k128 and
# m2k128t, hd128 base, m2 and m2k64j: backends/cuda/ampere_tune.cuh;
# bench/gpu/ampere_variants.sh) and the Hopper kernel's bf16-only variants (those
# PA_HOPPER_VARIANT_LIST in fwd_hopper.cu does not mark "full"; decision 112), and the
# FP8 forward's, the Hopper backward's and the decode kernel's tuning variants (decision
# 114). Off: not compiled (build time), and asking for one runs the default.
option(POLYATTN_CUDA_TUNING_VARIANTS "Compile the CUDA kernels' tuning-only variants" OFF)

# The HIP backend module (backends/hip): AUTO builds it when hipcc and the HIP
# runtime (libamdhip64) are found; ON requires them; OFF skips it. The targets are
# gfx names; the defaults are what CI compiles with Debian 12's ROCm 5.2 (CDNA1,
# CDNA2 with MFMA; RDNA2 without matrix cores). Its clang 15 knows gfx940 but not
# gfx941/942 nor RDNA3's WMMA builtins (backends/hip/README.md).
set(POLYATTN_HIP AUTO CACHE STRING "Build the HIP backend module (AUTO, ON, OFF)")
set_property(CACHE POLYATTN_HIP PROPERTY STRINGS AUTO ON OFF)
set(POLYATTN_HIP_ARCHS "gfx90a;gfx908;gfx1030" CACHE STRING "AMD GPU targets of the HIP module")
