#!/usr/bin/env bash
# persist_s7_r8_sass.sh (seventh session, R8): the SASS of the bf16 hd128 default (V = 10)
# and persistent (V = 4106) Hopper forward kernels of the final build, from a devkit.
gzip -d lib/*.gz 2>/dev/null
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
timeout 60 "$CUOBJ" -sass lib/libpolyattn-cuda.so > "$OUT/sass-all.txt" 2>&1
for k in Li128ELi10EE Li128ELi4106EE; do
  awk -v k="$k" '/Function : /{on = index($0, "bfloat16" k) > 0} on' "$OUT/sass-all.txt" | gzip -9 > "$OUT/sass-$k.txt.gz"
done
rm -f "$OUT/sass-all.txt"; ls -la $OUT
