#!/bin/bash
# Fourteenth session, R1 (issue 3; measurement only): where the Ampere path's time goes
# against FlashAttention-2 on the same shape, and what cuDNN's decode kernel is.
#   ampere-*: our Ampere kernel forced (hd128 S8192 B2 H16 bf16): a timing, then ncu's
#     summary sections and the source page (SASS with execution counts and warp-state
#     samples per instruction, for scripts/ncu_source_classes.py and an opcode count);
#   fa2-*:    PyTorch's flash SDPA kernel (FlashAttention-2) on the same tensors' shape,
#     the same ncu pages (torch_one.py brackets its calls by the profiler API);
#   decode-*: the 4k decode problem (B8 Hq32 Hkv8 D128 Sq1 Sk4096 bf16), ours and
#     cuDNN's and flash's kernels: launch shape, duration, DRAM throughput.
# Clocks are left as they are (--clock-control none).
# Run: source .devkit/env; OUT=dir bash bench/gpu/profile_s14_r1.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup profile_s14_r1 polyattn
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis"
SRC="--section WarpStateStats --section SourceCounters --page source --csv --print-source sass"
A="polyattn run --backend cuda --dtype bf16 --no-check --batch 2 --heads 16 --dim 128 --seq 8192"
T="python3 bench/gpu/torch_one.py --b 2 --hq 16 --hkv 16 --sq 8192 --sk 8192 --d 128"
export POLYATTN_CUDA_KERNEL=ampere
timed ampere-time $A --repeat 30
step ampere-ncu 60 "$NCU" --clock-control none -k regex:pa_ampere_fwd --launch-skip 1 --launch-count 1 $SEC $A --repeat 2
step ampere-src 90 sh -c "\"$NCU\" --clock-control none -k regex:pa_ampere_fwd --launch-skip 1 --launch-count 1 $SRC $A --repeat 2 > \"$LOG/ampere-src.csv\""
unset POLYATTN_CUDA_KERNEL
step fa2-ncu 90 "$NCU" --clock-control none --profile-from-start off -k regex:flash --launch-count 1 $SEC $T --backend flash
step fa2-src 120 sh -c "\"$NCU\" --clock-control none --profile-from-start off -k regex:flash --launch-count 1 $SRC $T --backend flash > \"$LOG/fa2-src.csv\""
D="--b 8 --hq 32 --hkv 8 --sq 1 --sk 4096 --d 128"
step decode-ours 60 "$NCU" --clock-control none -k regex:decode --launch-skip 2 --launch-count 2 $SEC \
  polyattn run --backend cuda --repeat 3 --no-check --dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 4096
step decode-cudnn 90 "$NCU" --clock-control none --profile-from-start off --launch-count 6 $SEC python3 bench/gpu/torch_one.py --backend cudnn $D --calls 2
step decode-flash 90 "$NCU" --clock-control none --profile-from-start off --launch-count 6 $SEC python3 bench/gpu/torch_one.py --backend flash $D --calls 2
gzip -f "$LOG"/*.csv
for f in ampere-ncu fa2-ncu decode-ours decode-cudnn decode-flash; do
  echo "== $f"; grep -E "^  [a-zA-Z_].*\(|Duration  |DRAM Throughput|Registers Per|Grid Size|Block Size|Dynamic Shared|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued|Eligible Warps|Achieved Occupancy" "$LOG/$f.log" | cut -c1-150
done
# (R1 as run left this out and the `run` tool dropped four files for their count:
# the FA2 source page among them)
pa_gpu_pack_logs
pa_gpu_finish
