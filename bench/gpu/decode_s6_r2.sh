#!/usr/bin/env bash
# Round R2 (sixth session) of the helper `decode` on the H200, run from the devkit
# directory (as decode_s6_r1.sh): the decode kernel with the ticket merge as its
# default (fwd_decode.cu kMergeDefault; R1's experiments removed, the split loop
# again c79829a's; the arrival now one acq_rel compare-and-swap instead of fences)
# checked (sweep, determinism, graph capture, memcheck, racecheck), timed against
# the merge kernel (POLYATTN_CUDA_DECODE_MERGE=kernel) and PyTorch SDPA flash/cuDNN in
# one process (decode_variants.py: graph replay, scrub, do_bench), then
# compare_torch.py --decode (do_bench) with each, then the merge-kernel sweep.
# Budget 80 s. Logs under $OUT.
set -uo pipefail
gzip -d lib/*.gz bin/*.gz 2>/dev/null
for f in lib/*.xz; do [ -e "$f" ] && { xz -d "$f" 2>/dev/null || python3 -c \
  'import lzma,sys; open(sys.argv[1][:-3],"wb").write(lzma.open(sys.argv[1]).read())' "$f"; }; done
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
step sweep 10 env $T POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
V="default:;"
V+="kernel:POLYATTN_CUDA_DECODE_MERGE=kernel"
step perf 24 python3 decode_variants.py --variants "$V" --json "$OUT/decode-variants.jsonl"
step graph 6 test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
step det-mma 5 env $T POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$SAN" ]; then
  step memcheck 13 env $T POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk3000_block,decode_s1_sk16384 \
    "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
  step racecheck 11 env $T POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500 \
    "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
fi
step torch-decode 12 python3 compare_torch.py --decode --no-efficient --json "$OUT/torch-decode.jsonl"
step torch-decode-kernel 12 env POLYATTN_CUDA_DECODE_MERGE=kernel python3 compare_torch.py --decode \
  --no-efficient --json "$OUT/torch-decode-kernel.jsonl"
step sweep-kernel 8 env $T POLYATTN_CUDA_DECODE_MERGE=kernel POLYATTN_TEST_CASES=$CASES \
  test_forward --verbose --filter 'forward/sweep' --jobs 8
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
[ -n "$NCU" ] && step ncu-4k 10 "$NCU" -k regex:decode --launch-skip 4 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats polyattn run --backend cuda --repeat 3 --no-check \
  --dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 4096
grep -hE "^\[====\]" "$OUT"/sweep.log "$OUT"/graph.log "$OUT"/det-mma.log "$OUT"/sweep-kernel.log 2>/dev/null
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/memcheck.log" "$OUT/racecheck.log" 2>/dev/null
grep -v "^#" "$OUT/perf.log" | cut -c1-150
grep -A6 "^decode:" "$OUT/torch-decode.log" "$OUT/torch-decode-kernel.log" | cut -c1-170
cat "$OUT/SUMMARY.txt"
