#!/usr/bin/env bash
# Round R1 (sixth session) of the helper `decode` on the H200, run from the devkit
# directory (../shared/tools/devkit, with decode_variants.py, compare_torch.py and the
# polyattn package copied beside this file): the ticket merge (the last block of each
# (batch, kv head) merges; fwd_decode.cu, decode_mma.cuh, POLYATTN_CUDA_DECODE_MERGE=
# ticket) checked on the decode sweep, then timed against the merge kernel and PyTorch
# SDPA (decode_variants.py, three timers), with the experiments POLYATTN_CUDA_DECODE_
# TICKET_ZERO, _MERGE_CARVEOUT, _INTERLEAVE and _L2HINT (fwd_decode.cu), then graph capture, determinism, the
# tensor-core path forced, memcheck (ticket + interleave) and racecheck, and an ncu profile of the 4k call.
# As run in R1 (code of aa6248b): INTERLEAVE, L2HINT and MERGE_CARVEOUT were removed after it
# (bench/RESULTS.md, sixth session; docs/decisions.md 82), so against later code they are no-ops.
# Budget 80 s; most important first. Logs under $OUT.
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
T="POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_MERGE=ticket"
step sweep-ticket 12 env $T POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
V="kernel:POLYATTN_CUDA_DECODE_MERGE=kernel;"
V+="ticket:POLYATTN_CUDA_DECODE_MERGE=ticket;"
V+="ticket-zero:POLYATTN_CUDA_DECODE_MERGE=ticket,POLYATTN_CUDA_DECODE_TICKET_ZERO=1;"
V+="kernel-carve:POLYATTN_CUDA_DECODE_MERGE=kernel,POLYATTN_CUDA_DECODE_MERGE_CARVEOUT=1;"
V+="ticket-inter:POLYATTN_CUDA_DECODE_MERGE=ticket,POLYATTN_CUDA_DECODE_INTERLEAVE=1;"
V+="ticket-l2:POLYATTN_CUDA_DECODE_MERGE=ticket,POLYATTN_CUDA_DECODE_L2HINT=1"
step perf 32 python3 decode_variants.py --variants "$V" --json "$OUT/decode-variants.jsonl"
step sweep-inter 10 env $T POLYATTN_CUDA_DECODE_INTERLEAVE=1 POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
step graph-ticket 8 env POLYATTN_CUDA_DECODE_MERGE=ticket test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
step det-ticket 6 env $T POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
step sweep-ticket-zero 8 env $T POLYATTN_CUDA_DECODE_TICKET_ZERO=1 POLYATTN_TEST_CASES=decode_s1,decode_varlen \
  test_forward --verbose --filter 'forward/sweep' --jobs 8
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$SAN" ]; then
  step memcheck 14 env $T POLYATTN_CUDA_DECODE_INTERLEAVE=1 POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk3000_block,decode_s1_sk16384 \
    "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
  step racecheck 12 env $T POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500 \
    "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
fi
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
[ -n "$NCU" ] && step ncu-4k 12 env POLYATTN_CUDA_DECODE_MERGE=ticket "$NCU" -k regex:decode --launch-skip 4 --launch-count 2 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats \
  polyattn run --backend cuda --repeat 3 --no-check --dtype bf16 --batch 8 --heads 32 --kv-heads 8 \
  --dim 128 --seq-q 1 --seq-k 4096
grep -hE "^\[====\]" "$OUT"/sweep-ticket.log "$OUT"/sweep-inter.log "$OUT"/sweep-ticket-zero.log "$OUT"/graph-ticket.log "$OUT"/det-ticket.log 2>/dev/null
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/memcheck.log" "$OUT/racecheck.log" 2>/dev/null
grep -v "^#" "$OUT/perf.log" | cut -c1-150
cat "$OUT/SUMMARY.txt"
