#!/usr/bin/env bash
# hopper_check.sh: the Hopper forward's checks on an H200 (cc 9.0), about 60-90 s.
# Run from the repository root with the build's bin/ on PATH and its lib/ on
# LD_LIBRARY_PATH (e.g. a devkit: source .devkit/env), logs to $OUT (default
# ./hopper-check-logs). Each step has its own timeout; exit 0 only if all passed.
#   1. the forward sweep with POLYATTN_CUDA_KERNEL=hopper (default schedule, serial) on
#      the cases the kernel runs, + seqlen_k_0 (declined: SKIPPED with the reason).
#      Alone with --jobs 16 the whole unfiltered sweep took 32 s (R1); run next to
#      other sweeps it did not finish in 60 s (R2), so it is filtered here.
#   2. the pingpong schedule on the cases its R2 sweep did not reach
#   2b. the persistent variant (pingpong-rel-p, decision 89) on the same cases with its
#      grid capped at 7 blocks (POLYATTN_CUDA_HOPPER_BLOCKS), so that every block walks
#      many query tiles and causal pairs: the test problems alone are too small to give
#      a block more than one tile (pingpong-rel-p is a bf16-only tuning variant: since
#      decision 112 it needs a build with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON, else this
#      step runs the default)
#   3. test_cuda: graph capture and 100 runs bit-identical, bf16 hd128 (the default
#      choice, i.e. the Hopper kernel on cc 9.0)
#   4. one benchmark line: bf16 hd128 S=8192, default choice
set -u
OUT=${OUT:-./hopper-check-logs}
mkdir -p "$OUT"
fail=0
step() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || fail=1
  echo "$name: rc=$rc ($((SECONDS - t0)) s) $(grep -E 'Synthesis' "$OUT/$name.txt" | tail -1)" | tee -a "$OUT/SUMMARY.txt"
}
CASES='alibi_heads,alibi_softcap_window_gqa,bhsd,block128x32_per_batch_causal,block32x128_bh_emptyrows,block48x80_gqa_alibi,block64_bcast_diag,block_dense1_sparse,causal_s128,causal_sq113_sk64_emptyrows,causal_sq17_sk256,d128_s128_b2,d64_s64_h4,decode_s1_sk2048_mqa,decode_sq2_sk1500_gqa4_causal_alibi_softcap,decode_sq2_sk2000_gqa2_block_causal,decode_sq4_sk4096_gqa8_causal_alibi_softcap,decode_varlen_seqused_gqa,det_decode_split,det_prefill,gqa_8_2,guard_strided_varlen,no_lse,packed_qkv_causal,packed_varlen,s1000,s2048_d128,scale_explicit,seqused_k,softcap5,strided_block_alibi,strided_gqa_causal,varlen_block,varlen_causal_gqa,varlen_empty,window_32_16_sq<sk,window_causal_left20,window_left16,window_right8,seqlen_k_0'
step sweep-hopper 40 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper \
  "POLYATTN_TEST_CASES=$CASES" test_forward --jobs 16
step sweep-pingpong-rest 15 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper \
  POLYATTN_CUDA_HOPPER_VARIANT=pingpong POLYATTN_TEST_CASES=bhsd,no_lse,packed_varlen,strided_block_alibi,packed_qkv_causal \
  test_forward --jobs 8
step sweep-persistent 45 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper \
  POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=7 \
  "POLYATTN_TEST_CASES=$CASES" test_forward --jobs 16
step test-cuda-graph 12 test_cuda --filter 'cuda/graph_capture_bf16'
step test-cuda-repeat 15 test_cuda --filter 'cuda/repeat_100_bf16'
step bench 10 polyattn bench --backend cuda --dims 128 --seqs 8192 --causal off --repeat 20
grep -E '^ +128 ' "$OUT/bench.txt" | tee -a "$OUT/SUMMARY.txt"
exit $fail
