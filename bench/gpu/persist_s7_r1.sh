#!/usr/bin/env bash
# persist_s7_r1.sh (seventh session, R1): the Hopper forward's persistent variants
# (PA_HV_PERSIST: "pingpong-rel-p", "serial-s3-rel-wg3-p"). From an unpacked kit (bin/
# test_forward test_cuda, lib/, bench/compare_torch.py, bindings/python/) as
# OUT=<dir> bash run.sh:
#   1. forced Hopper sweeps with each persistent variant, the grid capped at a few
#      blocks (POLYATTN_CUDA_HOPPER_BLOCKS) so every block walks many tiles and pairs
#   2. compare_torch, bf16, same process: default vs persistent, S 512..16384
#   3. memcheck, synccheck and racecheck on small cases, grid capped at 3 blocks
set -u
gzip -d lib/*.gz 2>/dev/null
OUT=${OUT:-./out}; mkdir -p "$OUT"; S="$OUT/SUMMARY.txt"
step() { local name=$1 t=$2; shift 2; local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1; echo "$name: rc=$? ($((SECONDS - t0)) s)" | tee -a "$S"
  grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY|\[FAIL\]|CRASH" "$OUT/$name.txt" | head -6 | cut -c1-200 | tee -a "$S"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_LIB=$PWD/lib/libpolyattn.so
step sweep-pp-p7 50 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 16
step sweep-wg3-p5 40 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3-p POLYATTN_CUDA_HOPPER_BLOCKS=5 test_forward --filter 'forward/sweep' --jobs 16
step torch-128 75 python3 bench/compare_torch.py --dims 128 --seqlens 512,2048,8192,16384 --no-efficient \
  --variants "$V=default,pingpong-rel-p" --json "$OUT/torch-128.jsonl"
grep -E "^bf16" "$OUT/torch-128.txt" | cut -c1-200 | tee -a "$S"
step torch-64 35 python3 bench/compare_torch.py --dims 64 --seqlens 512,8192 --no-efficient \
  --variants "$V=default,serial-s3-rel-wg3-p,pingpong-rel-p" --json "$OUT/torch-64.jsonl"
grep -E "^bf16" "$OUT/torch-64.txt" | cut -c1-200 | tee -a "$S"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
C=d128_s128_b2,s1000,causal_sq17_sk256,varlen_empty,d64_s64_h4,d256_s3
for tool in memcheck synccheck racecheck; do
  step $tool 25 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=$C \
    $SAN --tool $tool --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
done

echo "== summary"; cat "$S"
