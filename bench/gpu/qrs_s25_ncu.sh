#!/bin/bash
# Twenty-fifth session, R2 (issue 9): how busy shared memory is, with and without Q in
# registers for S = Q.K^T ("-qrs": R1's tree, bench/gpu/qrs_s25_r1.patch on e395431, built
# with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON; without the patch the -qrs names run the
# default). ncu (its clocks left alone) on one launch after
# four in compare_torch's process: hd128 S8192 on the 128-key grid kernel with and without
# -qrs, and cuDNN; hd64 S512 on the persistent kernel with and without, and cuDNN (bf16,
# non-causal, 16k tokens, hidden 2048). Sections SpeedOfLight, MemoryWorkloadAnalysis
# (+ tables), ComputeWorkloadAnalysis, and the L1 data banks' reads and writes as a share of
# their peak where this ncu knows those metrics (listed first, step metrics).
# Run: source .devkit/env; OUT=dir bash bench/gpu/qrs_s25_ncu.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup qrs_s25_ncu python3 nvidia-smi
STEP_TAIL=0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
step metrics 60 sh -c "'$NCU' --query-metrics --chip gh100 | grep -E '^l1tex__data_bank|^l1tex__data_pipe_lsu_wavefronts_mem_shared |^sm__pipe_tensor_op_gmma|^smsp__inst_executed '"
M=""
for m in l1tex__data_bank_reads l1tex__data_bank_writes sm__pipe_tensor_op_gmma_cycles_active; do
  grep -q "^$m " "$LOG/metrics.log" && M="$M${M:+,}$m.avg.pct_of_peak_sustained_elapsed"
done
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis ${M:+--metrics $M}"
V=POLYATTN_CUDA_HOPPER_VARIANT
prof() { # NAME D S KERNEL_REGEX [ENV...]
  local name=$1 d=$2 s=$3 k=$4
  shift 4
  # shellcheck disable=SC2086
  step "ncu-$name" 150 env "$@" "$NCU" --clock-control none -k regex:"$k" --launch-skip 4 --launch-count 1 $S \
    python3 bench/compare_torch.py --dims "$d" --seqlens "$s" --causal 0 --min-runs 5 --rep-ms 5 --warmup-ms 2
}
prof d128-os 128 8192 pa_hopper_fwd $V=pingpong-rel-os
prof d128-os-qrs 128 8192 pa_hopper_fwd $V=pingpong-rel-os-qrs
prof d128-cudnn 128 8192 'sdpa|fprop|cudnn' $V=pingpong-rel-os
prof d64s512-default 64 512 pa_hopper_fwd $V=default
prof d64s512-qrs 64 512 pa_hopper_fwd $V=pingpong-rel-p-q2-os-qrs
prof d64s512-cudnn 64 512 'sdpa|fprop|cudnn' $V=default
pa_ncu_summary "^  [a-zA-Z_].*\(|Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache Throughput|Mem Pipes Busy|Mem Busy|Shared|Issue Slots Busy|Executed Ipc A|pct_of_peak"
pa_gpu_pack_logs
pa_gpu_finish
