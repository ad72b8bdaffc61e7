#!/usr/bin/env bash
# persist_s7_r4.sh (seventh session, R4): after R3 (the persistent kernel executed 15%
# more instructions and moved 16% more L2 bytes than the default at hd128 S8192), the
# general score pass made the problem's, not the tile's, and the block-mask path compiled
# out of PERSIST. Sustained timing (polyattn run, median of 600), ncu counts, sweeps.
set -u
gzip -d lib/*.gz 2>/dev/null
OUT=${OUT:-./out}; mkdir -p "$OUT"
V=POLYATTN_CUDA_HOPPER_VARIANT
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,smsp__inst_executed.sum
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128"
for v in default pingpong-rel-p; do
  timeout 40 env $V=$v "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M \
    $P --seq 8192 --batch 2 --repeat 1 > "$OUT/ncu-$v.txt" 2>&1; echo "== ncu $v rc=$?"
  grep -E "gpu__|sm__|dram__|lts__|smsp__" "$OUT/ncu-$v.txt"
done
for s in 8192:2 512:32; do for v in default pingpong-rel-p default pingpong-rel-p; do
  timeout 20 env $V=$v $P --seq ${s%%:*} --batch ${s##*:} --repeat 600 > "$OUT/run-$v-${s%%:*}.txt" 2>&1
  echo "== $v S${s%%:*}: $(grep -oE "forward +[0-9.]+ ms.*TFLOP/s" "$OUT/run-$v-${s%%:*}.txt")"
done; done
export POLYATTN_TEST_BACKENDS=cuda
for v in default pingpong-rel-p; do
  timeout 45 env POLYATTN_CUDA_KERNEL=hopper $V=$v POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16 > "$OUT/sweep-$v.txt" 2>&1
  echo "== sweep $v rc=$? $(grep Synthesis "$OUT/sweep-$v.txt")"
done
