#!/usr/bin/env bash
# persist_s7_r5.sh (seventh session, R5): where the persistent kernel's extra
# instructions and L2 bytes (R3, R4) come from: the SASS of the bf16 hd128 default
# (V = 10) and pingpong-rel-p (V = 4106), and ncu's warp-state, source-counter and
# memory tables for one launch of each at hd128 S8192.
set -u
gzip -d lib/*.gz 2>/dev/null
OUT=${OUT:-./out}; mkdir -p "$OUT"
V=POLYATTN_CUDA_HOPPER_VARIANT
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
timeout 60 "$CUOBJ" -sass lib/libpolyattn-cuda.so > "$OUT/sass-all.txt" 2>&1
for k in Li128ELi10EE Li128ELi4106EE; do
  awk -v k="$k" '/Function : /{on = index($0, "bfloat16" k) > 0} on' "$OUT/sass-all.txt" > "$OUT/sass-$k.txt"
  echo "sass $k: $(wc -l < "$OUT/sass-$k.txt") lines"
done
rm -f "$OUT/sass-all.txt"
gzip -9 "$OUT"/sass-*.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 1"
for v in default pingpong-rel-p; do
  timeout 50 env $V=$v "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis_Tables --section InstructionStats \
    $P > "$OUT/ncu-$v.txt" 2>&1; echo "== ncu $v rc=$?"
done
