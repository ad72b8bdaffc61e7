#!/bin/bash
# Eighteenth session, decode R4 (issue 3; measurement only): every block's stamps of a
# 4k and a 32k graph replay as CSV (which SM, which (batch, kv head, block of splits), when
# its loop ended), to see whether the late blocks of R1-R3's tail (loop ends from the
# median to +3 us) are the same SMs or the same pairs from call to call; the SASS of the
# kernel for the instruction count of the ticket merge.
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s18_r4.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s18_r4 decode_timeline
STEP_TAIL=0
step tl-4k-a 60 env DECODE_TL_CSV=$LOG/tl-4k-a.csv decode_timeline 4096
step tl-4k-b 60 env DECODE_TL_CSV=$LOG/tl-4k-b.csv decode_timeline 4096
step tl-32k 60 env DECODE_TL_CSV=$LOG/tl-32k.csv decode_timeline 32768
step tl-4k-c24 60 env DECODE_TL_CSV=$LOG/tl-4k-c24.csv decode_timeline 4096 24 15
for f in "$LOG"/tl-*.log; do
  echo "== $(basename "$f" .log)" >>"$SUMMARY"
  grep -E "^graph replay|^  |^streaming" "$f" >>"$SUMMARY"
done
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
"$CUOBJ" -sass "$(command -v decode_timeline)" >"$LOG/sass.txt" 2>&1 && gzip "$LOG/sass.txt"
gzip "$LOG"/*.csv
pa_gpu_finish
