#!/usr/bin/env bash
# persist_s7_r6.sh (seventh session, R6): the persistent kernel with the ring stage made
# warp-uniform (__shfl_sync) so that its wgmma descriptors are built on the uniform
# datapath as in the default kernel (R5's SASS). Sustained timing, ncu counts, the SASS
# of the bf16 hd128 -p kernel, compare_torch at hd 128/64/256, forced sweep.
set -u
gzip -d lib/*.gz 2>/dev/null
OUT=${OUT:-./out}; mkdir -p "$OUT"
V=POLYATTN_CUDA_HOPPER_VARIANT
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,lts__t_bytes.sum,smsp__inst_executed.sum
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128"
for v in default pingpong-rel-p; do
  timeout 40 env $V=$v "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M \
    $P --seq 8192 --batch 2 --repeat 1 > "$OUT/ncu-$v.txt" 2>&1; echo "== ncu $v rc=$?"
  grep -E "gpu__|lts__|smsp__" "$OUT/ncu-$v.txt"
done
for v in default pingpong-rel-p default pingpong-rel-p; do
  timeout 20 env $V=$v $P --seq 8192 --batch 2 --repeat 600 > "$OUT/run-$v.txt" 2>&1
  echo "== $v S8192: $(grep -oE "forward +[0-9.]+ ms.*TFLOP/s" "$OUT/run-$v.txt")"
done
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
timeout 60 "$CUOBJ" -sass lib/libpolyattn-cuda.so > "$OUT/sass-all.txt" 2>&1
awk '/Function : /{on = index($0, "bfloat16Li128ELi4106EE") > 0} on' "$OUT/sass-all.txt" > "$OUT/sass-p.txt"; rm -f "$OUT/sass-all.txt"; gzip -9 "$OUT/sass-p.txt"
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
tab() { grep -E "^bf16|VARIANT=" "$OUT/$1.txt" | grep -v "first line" | cut -c1-130; }
timeout 60 python3 bench/compare_torch.py --dims 128 --seqlens 512,2048,8192,16384 --no-efficient \
  --variants "$V=default,pingpong-rel-p" --json "$OUT/torch-128.jsonl" > "$OUT/torch-128.txt" 2>&1; tab torch-128
timeout 40 python3 bench/compare_torch.py --dims 64 --seqlens 512,2048,8192 --no-efficient \
  --variants "$V=default,serial-s3-rel-wg3-p,pingpong-rel-p" --json "$OUT/torch-64.jsonl" > "$OUT/torch-64.txt" 2>&1; tab torch-64
timeout 30 python3 bench/compare_torch.py --dims 256 --seqlens 512,2048,8192 --no-efficient \
  --variants "$V=default,pingpong-rel-p" --json "$OUT/torch-256.jsonl" > "$OUT/torch-256.txt" 2>&1; tab torch-256
export POLYATTN_TEST_BACKENDS=cuda
timeout 45 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16 > "$OUT/sweep-p.txt" 2>&1
echo "== sweep -p rc=$? $(grep Synthesis "$OUT/sweep-p.txt")"
