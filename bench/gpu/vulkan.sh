#!/usr/bin/env bash
# vulkan.sh: the Vulkan backend on a machine with a GPU and a Vulkan driver, from the
# repository root, with a devkit built with --vulkan beside it (the loader travels in
# .devkit/debs):
#
#   ../shared/tools/devkit --vulkan build/bin/* build/lib/*.so*     # on the build machine
#   bash bench/gpu/vulkan.sh [GROUP...]                             # on the GPU machine
#
# Groups (default: devices sweep prefill decode):
#   devices  polyattn devices: the vulkan backend must be usable on a GPU (not a CPU
#            driver); which cooperative-matrix dialect the device takes
#   sweep    test_vulkan; the forward sweep with the default choice, on the scalar
#            kernel, on the decode kernel and on the cooperative-matrix kernels (forced
#            by POLYATTN_VULKAN_KERNEL: cases a kernel does not take are SKIPPED;
#            coopmat2 is the subgroup-scope kernel where it takes the case, and
#            sweep-coopmat2-wg forces the workgroup-scope one), and with
#            POLYATTN_VULKAN_LIMITS=mobile
#   prefill  hd128 S=8192 (f16, B=2, Hq=16, non-causal and causal) on the coopmat2
#            (also hd64, Hq=32), cooperative-matrix and scalar kernels and on CUDA (issue 6's target: coopmat >= 50%
#            of CUDA)
#   tiles    the coopmat2 kernel at hd128 S=8192 with each tile shape
#            (POLYATTN_VULKAN_COOPMAT2_TILES)
#   decode   f16 and bf16, B=8, Hq=32, Hkv=8, D=128, Sq=1, Sk=32768: the default
#            choice (the decode kernel), the scalar kernel, CUDA (target: >= 60% of
#            the 4.2 TB/s copy bandwidth, as K+V bytes / median time)
#   bench    the standard sweep (f16, D 64 and 128) on vulkan-coopmat, vulkan-scalar and
#            cuda: JSON lines in $LOG/bench-*.json
#   speed    attn_speed (bench/gpu/attn_speed.c: one process per shape, continuous work,
#            several settings): decode at Sk 4k, 32k, 128k (f16) and 32k (bf16); the
#            prefill at hd128 and hd64, S=8192, plain and causal; tables in
#            $LOG/speed-*.log
# Times are host-measured around one synchronised call (submission included).
# Exit status: 0 only if every step passed; SUMMARY.txt lists them.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=bench/gpu/lib.sh
source bench/gpu/lib.sh
pa_gpu_setup vulkan polyattn test_forward test_vulkan attn_speed
# The NVIDIA driver's ICD is not where the Debian loader looks by default.
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi

group_devices() {
  nvidia-smi >"$LOG/nvidia-smi.txt" 2>&1 || true
  step devices 60 bash -c 'POLYATTN_LOG=debug polyattn devices && polyattn devices | grep -E "^vulkan +yes +yes" | grep -vq "CPU"'
}

group_sweep() {
  step test-vulkan 240 test_vulkan --verbose
  step sweep-default 400 env POLYATTN_TEST_BACKENDS=vulkan \
    test_forward --verbose --filter 'forward/sweep' --jobs 8
  step sweep-decode 400 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=decode \
    test_forward --verbose --filter 'forward/sweep' --jobs 8
  step sweep-scalar 400 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=scalar \
    test_forward --verbose --filter 'forward/sweep' --jobs 8
  step sweep-coopmat2 400 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=coopmat2 \
    test_forward --verbose --filter 'forward/sweep' --jobs 8
  step sweep-coopmat2-wg 400 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=coopmat2 \
    POLYATTN_VULKAN_COOPMAT2_SCOPE=workgroup test_forward --verbose --filter 'forward/sweep' --jobs 8
  step sweep-coopmat 400 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_KERNEL=coopmat \
    test_forward --verbose --filter 'forward/sweep' --jobs 8
  step sweep-mobile 400 env POLYATTN_TEST_BACKENDS=vulkan POLYATTN_VULKAN_LIMITS=mobile \
    test_forward --verbose --filter 'forward/sweep' --jobs 8
}

# perf_run NAME BACKEND KERNEL ARGS...: one polyattn run (KERNEL: scalar, decode,
# coopmat, coopmat2 or - for the default choice). Vulkan runs print each forward's
# GPU time (timestamp queries, POLYATTN_VULKAN_TIMESTAMPS=1).
perf_run() {
  local name=$1 backend=$2 kernel=$3
  shift 3
  local env=(env POLYATTN_VULKAN_TIMESTAMPS=1)
  [ "$kernel" = - ] || env+=(POLYATTN_VULKAN_KERNEL="$kernel")
  step "$name" 120 "${env[@]}" polyattn run --backend "$backend" "$@"
}

# perf_table: per run, the host-timed median (the CLI's) and, for Vulkan, the median
# GPU time of its forwards (timestamps) with the rate from it, to $LOG/perf.txt.
perf_table() {
  local f n gpu
  {
    printf '%-28s %10s %10s %14s\n' run "host ms" "gpu ms" "rate (gpu)"
    for f in "$LOG"/prefill-*.log "$LOG"/decode-*.log; do
      [ -f "$f" ] || continue
      n=$(basename "$f" .log)
      # the timed runs' GPU times: the N (the CLI's "median of N") before the last
      # line (the oracle check's run); warm-up runs come first
      gpu=$(awk '/^polyattn vulkan: forward gpu/ { t[++k] = $5 / 1000 }
                 $1 == "forward" && $2 != "gpu" { n = $6 + 0 }
                 END { for (i = k - n; i < k; ++i) if (i >= 1) print t[i] }' "$f" | sort -g |
            awk '{ t[NR] = $1 } END { if (NR) print (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
      awk -v n="$n" -v gpu="$gpu" '
        $1 == "problem:" { for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] } }
        $1 == "forward" && $2 != "gpu" { host = $2 }
        END {
          g = gpu != "" ? gpu : host
          if (g == "") exit
          if (n ~ /^decode/) rate = sprintf("%.3f TB/s", 2 * v["B"] * v["Sk"] * v["Hkv"] * v["D"] * 2 / (g * 1e-3) / 1e12)
          else rate = sprintf("%.1f TFLOP/s", 4 * v["B"] * v["Hq"] * v["Sq"] * v["Sk"] * v["D"] * (n ~ /causal/ ? 0.5 : 1) / (g * 1e-3) / 1e12)
          printf "%-28s %10s %10.4f %14s\n", n, host, g, rate }' "$f"
    done
  } | tee "$LOG/perf.txt"
}

group_prefill() {
  local prefill="--dtype f16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 20"
  local c
  for c in "" --causal; do
    # shellcheck disable=SC2086 # one word per option
    {
      perf_run "prefill-coopmat2$c" vulkan coopmat2 $prefill $c
      perf_run "prefill-coopmat2-hd64$c" vulkan coopmat2 ${prefill/--heads 16 --dim 128/--heads 32 --dim 64} $c
      perf_run "prefill-coopmat$c" vulkan coopmat $prefill $c
      perf_run "prefill-scalar$c" vulkan scalar $prefill $c
      perf_run "prefill-cuda$c" cuda - $prefill $c
    }
  done
  perf_table
}

# The coopmat2 kernel's tiles (POLYATTN_VULKAN_COOPMAT2_TILES=BQxBK) at hd128 S=8192.
group_tiles() {
  local prefill="--dtype f16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 20" t
  for t in 64x64 64x32 128x64 128x32 64x128 32x64; do
    # shellcheck disable=SC2086
    step "tiles-$t" 120 env POLYATTN_VULKAN_KERNEL=coopmat2 POLYATTN_VULKAN_COOPMAT2_TILES=$t \
      polyattn run --backend vulkan $prefill
  done
  perf_table
}

group_decode() {
  local decode="--dtype f16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 32768 --repeat 50"
  # shellcheck disable=SC2086
  {
    perf_run decode-vulkan vulkan - $decode
    perf_run decode-vulkan-bf16 vulkan - ${decode/f16/bf16}
    perf_run decode-scalar vulkan scalar $decode
    perf_run decode-cuda cuda - $decode
  }
  perf_table
}

group_bench() {
  step bench-coopmat 300 env POLYATTN_VULKAN_KERNEL=coopmat polyattn bench --backend vulkan \
    --dtype f16 --dims 64,128 --repeat 10 --json "$LOG/bench-vulkan-coopmat.json"
  step bench-scalar 300 env POLYATTN_VULKAN_KERNEL=scalar polyattn bench --backend vulkan \
    --dtype f16 --dims 64,128 --repeat 5 --json "$LOG/bench-vulkan-scalar.json"
  step bench-cuda 200 polyattn bench --backend cuda --dtype f16 --dims 64,128 --repeat 20 \
    --json "$LOG/bench-cuda.json"
}

group_speed() {
  local dec="--backend vulkan --dtype f16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1"
  local pre="--backend vulkan --dtype f16 --batch 2 --heads 16 --dim 128 --seq 8192" sk c
  # shellcheck disable=SC2086 # one word per option
  {
    for sk in 4096 32768 131072; do
      step "speed-decode-$sk" 60 attn_speed $dec --seq-k $sk --iters 100 --warm 1 -
    done
    step speed-decode-32768-bf16 60 attn_speed ${dec/f16/bf16} --seq-k 32768 --iters 100 --warm 1 -
    for c in "" --causal; do
      step "speed-prefill-hd128$c" 60 attn_speed $pre $c --iters 20 --warm 1 -
      step "speed-prefill-hd64$c" 60 attn_speed ${pre/--heads 16 --dim 128/--heads 32 --dim 64} $c \
        --iters 20 --warm 1 -
    done
  }
  grep -h -A1 '^variant' "$LOG"/speed-*.log | grep -v '^variant\|^--'
}

GROUPS_TO_RUN=("$@")
[ ${#GROUPS_TO_RUN[@]} -gt 0 ] || GROUPS_TO_RUN=(devices sweep prefill decode)
for g in "${GROUPS_TO_RUN[@]}"; do
  case $g in
    devices | sweep | prefill | tiles | decode | bench | speed) "group_$g" ;;
    *) echo "vulkan.sh: unknown group '$g' (devices, sweep, prefill, tiles, decode, bench, speed)"; exit 2 ;;
  esac
done
pa_gpu_finish
