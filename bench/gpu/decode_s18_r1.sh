#!/bin/bash
# Eighteenth session, decode R1 (issue 3; measurement only): where a 4k decode call's
# ~40 us go, by global-timer stamps (bench/gpu/decode_timeline.cu) under graph replay:
# the gap between calls, the blocks' start, the first tile, the loop ends, the ticket, the
# merge; the same harness without stamps as the control; 32k for the streaming rate; two
# other grid shapes (2 warps per block, 16-key tiles); and decode_variants.py's graph timer
# (default, flash, cuDNN) for the same session's reference.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r1 decode_timeline decode_timeline0
STEP_TAIL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$LOG/gpu.txt" 2>&1
step tl-4k-ctl 60 decode_timeline0 4096
step tl-4k 60 decode_timeline 4096
step tl-4k-ctl-b 60 decode_timeline0 4096
step tl-4k-b 60 decode_timeline 4096
step tl-32k 60 decode_timeline 32768
step tl-32k-ctl 60 decode_timeline0 32768
step tl-4k-w2 60 env POLYATTN_CUDA_DECODE_WARPS=2 decode_timeline 4096
step tl-4k-k16 60 env POLYATTN_CUDA_DECODE_VARIANT=k16 decode_timeline 4096
step tl-4k-c24 60 decode_timeline 4096 24 15
for f in "$LOG"/tl-*.log; do
  echo "== $(basename "$f" .log)" >>"$SUMMARY"
  grep -E "^decode_timeline|^graph replay|^timeline|^  |^streaming" "$f" >>"$SUMMARY"
done
step perf 120 python3 bench/gpu/decode_variants.py --timers graph --sk 4096,32768 --variants "default:" --json "$LOG/decode.jsonl"
grep -vh "^#" "$LOG/perf.log" | grep -E "^ +[0-9]" | cut -c1-110 >>"$SUMMARY"
pa_gpu_finish
