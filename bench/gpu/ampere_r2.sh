#!/usr/bin/env bash
# Round R2 (fifth session) of the helper `ampere` on the H200 (as run: the default
# merge was then the cluster merge; decision 72 kept the merge kernel), from the devkit
# directory (as ampere_r1.sh): the decode kernel with its new defaults (cluster merge,
# early K/V prologue; fwd_decode.cu) checked as decode.sh does (sweep with the kernel's
# own choice and each path forced, the merge-kernel fallback forced, determinism,
# test_cuda, racecheck, memcheck), then timed against the previous default and PyTorch
# SDPA (decode_variants.py), then the Ampere path beside SDPA flash in one process
# and the SASS of the experimental pipelined kernel. Logs under $OUT.
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
T="POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode"
step sweep 20 env $T POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-mma 20 env $T POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=$CASES \
  test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-scalar 20 env $T POLYATTN_CUDA_DECODE_PATH=scalar POLYATTN_TEST_CASES=$CASES \
  test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-mergekernel 20 env $T POLYATTN_CUDA_DECODE_MERGE=kernel POLYATTN_TEST_CASES=$CASES \
  test_forward --verbose --filter 'forward/sweep' --jobs 8
step det-mma 10 env $T POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
step det-scalar 10 env $T POLYATTN_CUDA_DECODE_PATH=scalar POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
V="base:POLYATTN_CUDA_DECODE_MERGE=kernel,POLYATTN_CUDA_DECODE_EARLY=0;"
V+="early:POLYATTN_CUDA_DECODE_MERGE=kernel,POLYATTN_CUDA_DECODE_EARLY=1;"
V+="pdl:POLYATTN_CUDA_DECODE_MERGE=pdl,POLYATTN_CUDA_DECODE_EARLY=1;"
V+="default:;"
V+="cluster-late:POLYATTN_CUDA_DECODE_MERGE=cluster,POLYATTN_CUDA_DECODE_EARLY=0"
step perf 40 python3 decode_variants.py --variants "$V" --json "$OUT/decode-variants.jsonl"
step test-cuda 15 test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$SAN" ]; then
  step racecheck 20 env $T POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500 \
    "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
  step memcheck 20 env $T POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk3000_block,decode_s1_sk3000_g16,decode_s1_sk16384 \
    "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
fi
step torch-ampere 25 python3 compare_torch.py --env-kernel ampere --dims 128 --seqlens 2048,8192 \
  --causal 0 --no-efficient --json "$OUT/torch-ampere.jsonl"
CUO=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
[ -n "$CUO" ] && step sass-pipe 10 bash -c "'$CUO' -sass lib/libpolyattn-cuda.so | awk '/Function : .*pa_ampere_pipe_kernel.*bfloat16/{f=1} /Function : /{if(!/pa_ampere_pipe_kernel.*bfloat16/)f=0} f' | gzip -9 > '$OUT/pipe-bf16.sass.gz'"
for f in sweep sweep-mma sweep-scalar sweep-mergekernel; do grep -hE "^\[====\]" "$OUT/$f.log" | sed "s/^/$f: /"; done
grep -v "^#" "$OUT/perf.log" | tail -n 30
grep -hE "^\[====\]|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/test-cuda.log" "$OUT/racecheck.log" "$OUT/memcheck.log" 2>/dev/null
grep -A12 "^dtype\|^ *dt " "$OUT/torch-ampere.log" | head -n 16
cat "$OUT/SUMMARY.txt"
