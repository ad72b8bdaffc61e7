#!/usr/bin/env bash
# persist_s7_r3.sh (seventh session, R3): why the persistent Hopper forward is 5-6%
# slower at hd128 S >= 8192 (R2). One launch each of the default and "pingpong-rel-p"
# under ncu without clock control (clock, DRAM bytes, L2 hit rate, tensor activity),
# and nvidia-smi's clock and power sampled while each runs for ~1.5 s.
set -u
gzip -d lib/*.gz 2>/dev/null
OUT=${OUT:-./out}; mkdir -p "$OUT"
V=POLYATTN_CUDA_HOPPER_VARIANT
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,sm__pipe_tensor_op_hgmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
P="polyattn run --backend cuda --dtype bf16 --no-check --seq 8192 --batch 2 --heads 16 --dim 128"
for v in default pingpong-rel-p; do
  timeout 40 env $V=$v "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M \
    $P --repeat 1 > "$OUT/ncu-$v.txt" 2>&1; echo "== ncu $v rc=$?"
  grep -E "gpu__|sm__|dram__|lts__|smsp__" "$OUT/ncu-$v.txt"
done
for v in default pingpong-rel-p default pingpong-rel-p; do
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 50 > "$OUT/smi-$v.txt" 2>&1 &
  pid=$!
  timeout 20 env $V=$v $P --repeat 600 > "$OUT/run-$v.txt" 2>&1
  kill $pid; wait $pid 2>/dev/null
  echo "== $v: $(grep -iE "TFLOP|ms" "$OUT/run-$v.txt" | head -2 | tr '\n' ' ')"
  awk -F', ' '{gsub(/ MHz/,"",$1); gsub(/ W/,"",$2); if ($1+0 > 0) {n++; c+=$1; p+=$2}} END {if (n) printf "   smi: %d samples, mean clock %.0f MHz, mean power %.0f W\n", n, c/n, p/n}' "$OUT/smi-$v.txt"
done
