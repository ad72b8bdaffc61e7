#!/bin/bash
# Eighteenth session, decode R2 (issue 3; measurement only): R1's timeline put ~3.8 us of a
# 4k call after the last warp's loop (partials 0.4, ticket CAS 1.1, the last block's merge
# 2.1). The same timeline for the cluster merge (partials in shared memory, the cluster's
# barrier, loads over distributed shared memory) and for the merge kernel, each beside the
# ticket merge in one process; then decode_variants.py's graph timer for both merges.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r2 decode_timeline decode_timeline0
STEP_TAIL=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$LOG/gpu.txt" 2>&1
C=POLYATTN_CUDA_DECODE_MERGE=cluster
K=POLYATTN_CUDA_DECODE_MERGE=kernel
step ctl-ticket-4k 60 decode_timeline0 4096
step ctl-cluster-4k 60 env $C decode_timeline0 4096
step tl-ticket-4k 60 decode_timeline 4096
step tl-cluster-4k 60 env $C decode_timeline 4096
step tl-kernel-4k 60 env $K decode_timeline 4096
step ctl-ticket-4k-b 60 decode_timeline0 4096
step ctl-cluster-4k-b 60 env $C decode_timeline0 4096
step tl-cluster-32k 60 env $C decode_timeline 32768
step ctl-cluster-32k 60 env $C decode_timeline0 32768
step ctl-ticket-32k 60 decode_timeline0 32768
for f in "$LOG"/ctl-*.log "$LOG"/tl-*.log; do
  echo "== $(basename "$f" .log)" >>"$SUMMARY"
  grep -E "^decode_timeline|^graph replay|^timeline|^  |^streaming" "$f" >>"$SUMMARY"
done
step perf 150 python3 bench/gpu/decode_variants.py --timers graph --sk 4096,32768,131072 --variants "default:;cluster:$C;default-again:" --json "$LOG/decode.jsonl"
grep -vh "^#" "$LOG/perf.log" | grep -E "^ +[0-9]" | cut -c1-110 >>"$SUMMARY"
pa_gpu_finish
