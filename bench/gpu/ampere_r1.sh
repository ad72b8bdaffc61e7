#!/usr/bin/env bash
# Round R1 (fifth session) of the helper `ampere` on the H200, run from the devkit
# directory (../shared/tools/devkit, with decode_variants.py, compare_torch.py and
# the polyattn package copied beside this file): decode merge/prologue variants
# (fwd_decode.cu, decode_mma.cuh) checked on the decode sweep, then timed beside
# PyTorch SDPA (decode_variants.py), then determinism, graph capture and memcheck of
# the cluster merge. Logs under $OUT.
set -uo pipefail
gzip -d lib/*.gz bin/*.gz 2>/dev/null; chmod +x bin/*
export PATH=$PWD/bin:$PATH POLYATTN_LIB=$PWD/lib
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
step() { # step NAME TIMEOUT CMD...
  local n=$1 t=$2; shift 2
  local s=$(date +%s)
  timeout "$t" "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  printf '%-28s rc=%-3d %3ds\n' "$n" "$rc" "$(( $(date +%s) - s ))" | tee -a "$OUT/SUMMARY.txt"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse
C="POLYATTN_CUDA_DECODE_MERGE=cluster POLYATTN_CUDA_DECODE_EARLY=1"
step sweep-cluster 20 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode $C \
  POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-pdl 20 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode \
  POLYATTN_CUDA_DECODE_MERGE=pdl POLYATTN_CUDA_DECODE_EARLY=1 \
  POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
V="base:POLYATTN_CUDA_DECODE_MERGE=kernel,POLYATTN_CUDA_DECODE_EARLY=0;"
V+="early:POLYATTN_CUDA_DECODE_MERGE=kernel,POLYATTN_CUDA_DECODE_EARLY=1;"
V+="pdl:POLYATTN_CUDA_DECODE_MERGE=pdl,POLYATTN_CUDA_DECODE_EARLY=1;"
V+="cluster:POLYATTN_CUDA_DECODE_MERGE=cluster,POLYATTN_CUDA_DECODE_EARLY=1;"
V+="cluster-late:POLYATTN_CUDA_DECODE_MERGE=cluster,POLYATTN_CUDA_DECODE_EARLY=0;"
V+="cluster-s16:POLYATTN_CUDA_DECODE_MERGE=cluster,POLYATTN_CUDA_DECODE_EARLY=1,POLYATTN_CUDA_DECODE_SPLITS=16;"
V+="cluster-s32:POLYATTN_CUDA_DECODE_MERGE=cluster,POLYATTN_CUDA_DECODE_EARLY=1,POLYATTN_CUDA_DECODE_SPLITS=32"
step perf 55 python3 decode_variants.py --variants "$V" --json "$OUT/decode-variants.jsonl"
# The Ampere path's pipelined schedule (fwd_ampere_pipe.cu): reduced sweep forced, then
# speed against the default schedule (m2k64), both forced onto the Ampere kernel.
ACASES=d64_s64_h4,d128_s128_b2,d72_sq17_sk255,dv32_d64,s1000_causal_d128,s2048_d128,causal_sq113_sk64_emptyrows,window_32_16,alibi_softcap_window_gqa,varlen_empty,varlen_causal_gqa,seqused_k,strided_gqa_causal,bhsd
step sweep-ampere-pipe 20 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
  POLYATTN_CUDA_AMPERE_PIPE=1 POLYATTN_TEST_CASES=$ACASES test_forward --verbose --filter 'forward/sweep' --jobs 8
for cfg in "s8192|--batch 2 --heads 16 --seq 8192" "s8192c|--batch 2 --heads 16 --seq 8192 --causal" \
           "s2048b8|--batch 8 --heads 16 --seq 2048"; do
  for pipe in 0 1; do
    step "ampere-${cfg%%|*}-pipe$pipe" 8 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_CUDA_AMPERE_PIPE=$pipe \
      polyattn run --backend cuda --repeat 30 --no-check --dtype bf16 --dim 128 ${cfg#*|}
  done
done
step det-cluster 10 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode $C \
  POLYATTN_TEST_CASES=det_decode_split test_forward --verbose --filter 'forward/deterministic'
step graph-cluster 10 env $C test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
step graph-pdl 10 env POLYATTN_CUDA_DECODE_MERGE=pdl test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
[ -n "$SAN" ] && step memcheck-cluster 20 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode $C \
  POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk3000_block,decode_s1_sk3000_g16 \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
for f in sweep-cluster sweep-pdl; do grep -hE "^\[====\]" "$OUT/$f.log" | sed "s/^/$f: /"; done
grep -v "^#" "$OUT/perf.log" | tail -n 60
grep -H "^forward" "$OUT"/ampere-*.log | sed "s|$OUT/||"
grep -hE "^\[====\]" "$OUT/sweep-ampere-pipe.log" | sed "s/^/sweep-ampere-pipe: /"
cat "$OUT/SUMMARY.txt"
