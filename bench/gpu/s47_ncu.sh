#!/bin/bash
# Forty-seventh session (issue 9): where hd128's FP8 default ("pingpong-gs-k192-t-r", 2530)
# spends a consumer's softmax, after the exponentials' turns ("-x", s47.sh) left it as
# long: ncu (clocks left alone) on one launch of bench/gpu/fp8_timeline.cu built without
# stamps (-DPA_FP8_TIMELINE=0, as fp8_timeline0; B2 H16 S8192), after three: the
# details page (pipe utilisations, warp states) and the source page (warp-state samples
# per SASS instruction, for scripts/ncu_source_classes.py).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s47_ncu.sh   (~2 min)
# (Its source-page step was written out when it ran; lib.sh's pa_fp8_ncu_source runs the same
# commands since the forty-eighth session.)
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup s47_ncu nvidia-smi fp8_timeline0
STEP_TAIL=0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
K="--clock-control none -k regex:pa_hopper_fp8 --launch-skip 3 --launch-count 1"
keep=()
for v in ${VARIANTS:-2530}; do
  # shellcheck disable=SC2086
  step "ncu-details-$v" 120 "$NCU" $K --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section InstructionStats fp8_timeline0 128 $v
  grep -E -e "Throughput|Pipe|Issue|Stall|Warp Cycles|Eligible|Active Warps|Executed Ipc" \
    -e "Duration|SM Frequency" \
    "$LOG/ncu-details-$v.log" | sed "s/^/$v: /" | tr -s ' ' | tee -a "$SUMMARY"
  pa_fp8_ncu_source "$v"
  keep+=("ncu-src-$v.csv.gz" "classes-$v.txt")
done
pa_gpu_pack_keep "${keep[@]}"
pa_gpu_finish
