#!/usr/bin/env bash
# persist_s7_r2.sh (seventh session, R2): the persistent Hopper forward after R1 —
# pingpong turns that run on across a block's tiles (the default's code changed too),
# "pingpong-rel-p240" (24/240 registers), pairs off (POLYATTN_CUDA_HOPPER_PAIR=0).
# From an unpacked kit (bin/ test_forward test_cuda, lib/, bench/compare_torch.py,
# bindings/python/) as OUT=<dir> bash run.sh.
set -u
gzip -d lib/*.gz 2>/dev/null
OUT=${OUT:-./out}; mkdir -p "$OUT"; S="$OUT/SUMMARY.txt"
step() { local name=$1 t=$2; shift 2; local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1; echo "$name: rc=$? ($((SECONDS - t0)) s)" | tee -a "$S"
  grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY|\[FAIL\]|CRASH" "$OUT/$name.txt" | head -6 | cut -c1-200 | tee -a "$S"; }
tab() { grep -E "^bf16|VARIANT=" "$OUT/$1.txt" | cut -c1-130 | tee -a "$S"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_LIB=$PWD/lib/libpolyattn.so
step torch-128 60 python3 bench/compare_torch.py --dims 128 --seqlens 512,2048,8192,16384 --no-efficient \
  --variants "$V=default,pingpong-rel-p,pingpong-rel-p240" --json "$OUT/torch-128.jsonl"; tab torch-128
step torch-128-nopair 30 env POLYATTN_CUDA_HOPPER_PAIR=0 python3 bench/compare_torch.py --dims 128 --causal 1 \
  --seqlens 512,2048,16384 --no-efficient --variants "$V=pingpong-rel-p" --json "$OUT/torch-128-nopair.jsonl"; tab torch-128-nopair
step torch-64 40 python3 bench/compare_torch.py --dims 64 --seqlens 512,2048,8192 --no-efficient \
  --variants "$V=default,serial-s3-rel-wg3-p,pingpong-rel-p" --json "$OUT/torch-64.jsonl"; tab torch-64
step torch-256 30 python3 bench/compare_torch.py --dims 256 --seqlens 512,2048,8192 --no-efficient \
  --variants "$V=default,pingpong-rel-p" --json "$OUT/torch-256.jsonl"; tab torch-256
step sweep-pp-p7 45 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16
step sweep-default 60 test_forward --jobs 16
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step racecheck 40 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=d128_s128_b2 \
  $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
echo "== summary"; cat "$S"
