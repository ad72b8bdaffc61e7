#!/usr/bin/env bash
# Round R1 (seventh session) of the helper `decode` on the H200, run from the devkit
# directory (../shared/tools/devkit, with decode_variants.py, compare_torch.py and the
# polyattn package copied beside this file). The code of 7b322b9: the tensor-core
# split kernel's bulk-copy variant (decode_mma.cuh, POLYATTN_CUDA_DECODE_COPY=bulk: one
# cp.async.bulk per K/V row on a per-slot mbarrier) checked on the decode sweep,
# determinism, graph capture, memcheck and racecheck; then timed in one process
# (decode_variants.py: graph replay, scrub, do_bench) against the default (cp.async)
# and SDPA flash/cuDNN, with the grid-shape tuning aids POLYATTN_CUDA_DECODE_WARPS
# (warps per block) and _SPLITS, the merge kernel and the late Q with bulk; then ncu (instruction counts, warp states) of the
# 4k call with each copy variant, and the default's sweep.
# As run in R1: the bulk variant was removed after it (bench/RESULTS.md, seventh
# session; docs/decisions.md 84), so against later code COPY=bulk runs the default.
# Budget 90 s; most important first. Logs under $OUT.
set -uo pipefail
gzip -d lib/*.gz bin/*.gz 2>/dev/null
chmod +x bin/*
export PATH=$PWD/bin:$PATH POLYATTN_LIB=$PWD/lib
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
step() { # step NAME TIMEOUT CMD...
  local n=$1 t=$2; shift 2
  local s=$(date +%s)
  timeout "$t" "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  printf '%-20s rc=%-3d %3ds\n' "$n" "$rc" "$(( $(date +%s) - s ))" | tee -a "$OUT/SUMMARY.txt"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse
T="POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode"
B="POLYATTN_CUDA_DECODE_COPY=bulk"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
# A bulk copy that never completes hangs its warp: a smoke test first, and the bulk
# steps only if it passes (else the default's timing and a memcheck of the smoke).
step smoke-bulk 6 env $B polyattn run --backend cuda --dtype bf16 --batch 2 --heads 8 --kv-heads 2 \
  --dim 128 --seq-q 1 --seq-k 1000 --repeat 3
if ! grep -q "^PASS" "$OUT/smoke-bulk.log"; then
  B=POLYATTN_CUDA_DECODE_COPY=async
  step smoke-memcheck 15 env POLYATTN_CUDA_DECODE_COPY=bulk "$SAN" --tool memcheck \
    polyattn run --backend cuda --dtype bf16 --batch 1 --heads 4 --kv-heads 1 --dim 128 --seq-q 1 --seq-k 100 --repeat 1
fi
step sweep-bulk 10 env $T $B POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
V="default:;"
V+="bulk:$B;"
V+="bulk-w2:$B,POLYATTN_CUDA_DECODE_WARPS=2;"
V+="bulk-w1:$B,POLYATTN_CUDA_DECODE_WARPS=1;"
V+="bulk-s16:$B,POLYATTN_CUDA_DECODE_SPLITS=16;"
V+="bulk-w2-s16:$B,POLYATTN_CUDA_DECODE_WARPS=2,POLYATTN_CUDA_DECODE_SPLITS=16;"
V+="bulk-s12:$B,POLYATTN_CUDA_DECODE_SPLITS=12;"
V+="async-w2:POLYATTN_CUDA_DECODE_WARPS=2;"
V+="bulk-mergekernel:$B,POLYATTN_CUDA_DECODE_MERGE=kernel;"
V+="bulk-early0:$B,POLYATTN_CUDA_DECODE_EARLY=0"
step perf 30 python3 decode_variants.py --variants "$V" --json "$OUT/decode-variants.jsonl"
step graph-bulk 6 env $B test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
step det-bulk 5 env $T $B POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
if [ -n "$SAN" ]; then
  step memcheck-bulk 12 env $T $B POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk3000_block,decode_s1_sk16384,d96,d40_softcap \
    "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
  step racecheck-bulk 11 env $T $B POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500 \
    "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
fi
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
PROB="--backend cuda --repeat 3 --no-check --dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 4096"
if [ -n "$NCU" ]; then
  step ncu-4k-bulk 8 env $B "$NCU" -k regex:decode --launch-skip 4 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats --section LaunchStats polyattn run $PROB
  step ncu-4k-async 8 "$NCU" -k regex:decode --launch-skip 4 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats polyattn run $PROB
fi
step sweep-default 8 env $T POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
grep -h "PASS\|FAIL" "$OUT"/smoke-bulk.log; grep -hE "^\[====\]" "$OUT"/sweep-bulk.log "$OUT"/graph-bulk.log "$OUT"/det-bulk.log "$OUT"/sweep-default.log 2>/dev/null
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/memcheck-bulk.log" "$OUT/racecheck-bulk.log" 2>/dev/null
grep -v "^#" "$OUT/perf.log" | cut -c1-150
grep -hE "Duration|DRAM Throughput|Warp Cycles Per Issued|Executed Instructions  " "$OUT"/ncu-4k-*.log 2>/dev/null
cat "$OUT/SUMMARY.txt"
