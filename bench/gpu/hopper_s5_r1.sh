#!/usr/bin/env bash
# hopper_s5_r1.sh: fifth session, round 1 (helper queue, 150 s). Run from an unpacked
# kit (bin/, lib/, bench/compare_torch.py, bindings/python/) as OUT=<dir> bash run.sh.
#   1. attn_speed: the Hopper variants (POLYATTN_CUDA_HOPPER_VARIANT, read per call)
#      timed in one process per shape, bf16 (the tuning variants are bf16-only)
#   2. ncu on one launch of the serial kernel, hd128 S8192 (+ the metric names of gmma)
#      and of the multicast one (serial-s3-rel-mc), to compare L2 traffic
#   3. compare_torch at S8192 (hd128, hd64; the first and best-guess variants)
#   4. the forward sweep (forced Hopper, the cases it runs) with two candidates
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
S="$OUT/SUMMARY.txt"
step() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc ($((SECONDS - t0)) s)" | tee -a "$S"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_CUDA_KERNEL=hopper
AS="attn_speed --backend cuda --dtype bf16 --warm 0.3 --iters 100"
step speed-d128-s8192 25 $AS --batch 2 --heads 16 --dim 128 --seq 8192 \
  $V=serial $V=pipe $V=pingpong $V=serial-rel $V=pingpong-rel $V=serial-s3-rel $V=pingpong-s3-rel \
  $V=serial $V=serial-e16 $V=pingpong-s3-rel-e16 $V=serial-s3-rel-mc $V=pingpong-s3-rel-mc $V=pingpong-s3-rel-mc-e16
step speed-d128-s8192-causal 15 $AS --batch 2 --heads 16 --dim 128 --seq 8192 --causal \
  $V=serial $V=pingpong $V=serial-s3-rel $V=pingpong-s3-rel $V=pingpong-s3-rel-e16 $V=serial
step speed-d64-s8192 25 $AS --batch 2 --heads 32 --dim 64 --seq 8192 \
  $V=serial $V=pingpong $V=serial-s3-rel $V=pingpong-s3-rel $V=serial $V=serial-e16 $V=pingpong-s3-rel-e16 \
  $V=serial-s3-rel-wg3 $V=serial-s3-rel-wg3-e16 $V=pipe-s3-rel-wg3 \
  $V=serial-s3-rel-mc $V=pingpong-s3-rel-mc-e16 $V=serial-s3-rel-wg3-mc
step speed-d64-s8192-causal 15 $AS --batch 2 --heads 32 --dim 64 --seq 8192 --causal \
  $V=serial $V=pingpong $V=pingpong-s3-rel-e16 $V=serial-s3-rel-wg3 $V=serial-s3-rel-wg3-e16
step speed-d128-s16384 15 $AS --batch 1 --heads 16 --dim 128 --seq 16384 \
  $V=serial $V=pingpong-s3-rel $V=pingpong-s3-rel-e16 $V=serial $V=pingpong-s3-rel-mc $V=pingpong-s3-rel-mc-e16
for f in "$OUT"/speed-*.txt; do echo "== $(basename "$f")"; grep -E "^(attn_speed|POLYATTN)" "$f"; done | tee -a "$S"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
if [ -n "$NCU" ]; then
  step ncu-serial-d128 45 "$NCU" --clock-control none --kernel-name regex:pa_hopper --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --section InstructionStats \
    $AS --warm 0 --iters 1 --batch 2 --heads 16 --dim 128 --seq 8192 $V=serial
  grep -E "Duration|Throughput|Busy|Stall|Warp Cycles|Issued|Eligible|Active Warps|Executed Ipc|Registers" "$OUT/ncu-serial-d128.txt" | head -60 | tee -a "$S"
  ( timeout 15 "$NCU" --query-metrics --chip gh100 2>&1 | grep -iE "gmma|tensor_op|pipe_tensor|lts__t_bytes|xbar2l1" > "$OUT/ncu-metric-names.txt" ) || true
fi
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
step torch 40 python3 bench/compare_torch.py --env-kernel hopper --dims 128,64 --seqlens 8192 \
  --no-efficient --variants $V=serial,pingpong-s3-rel-e16,pingpong-s3-rel-mc-e16,serial-s3-rel-wg3-e16,pingpong-s3-rel-mc \
  --json "$OUT/torch.jsonl"
grep -vE "^\s*$" "$OUT/torch.txt" | tail -30 | tee -a "$S"
# correctness of two candidates (forced Hopper kernel, the cases it runs; bf16 cases
# run the variant, fp16 ones the default: the tuning variants are bf16-only)
CASES='alibi_heads,alibi_softcap_window_gqa,bhsd,block128x32_per_batch_causal,block32x128_bh_emptyrows,block48x80_gqa_alibi,block64_bcast_diag,block_dense1_sparse,causal_s128,causal_sq113_sk64_emptyrows,causal_sq17_sk256,d128_s128_b2,d64_s64_h4,decode_s1_sk2048_mqa,decode_sq2_sk1500_gqa4_causal_alibi_softcap,decode_sq2_sk2000_gqa2_block_causal,decode_sq4_sk4096_gqa8_causal_alibi_softcap,decode_varlen_seqused_gqa,det_decode_split,det_prefill,gqa_8_2,guard_strided_varlen,no_lse,packed_qkv_causal,packed_varlen,s1000,s2048_d128,scale_explicit,seqused_k,softcap5,strided_block_alibi,strided_gqa_causal,varlen_block,varlen_causal_gqa,varlen_empty,window_32_16_sq<sk,window_causal_left20,window_left16,window_right8'
(step sweep-pingpong-s3-rel-mc-e16 40 env POLYATTN_TEST_BACKENDS=cuda $V=pingpong-s3-rel-mc-e16 "POLYATTN_TEST_CASES=$CASES" test_forward --verbose --jobs 8) &
(step sweep-serial-s3-rel-wg3-mc 40 env POLYATTN_TEST_BACKENDS=cuda $V=serial-s3-rel-wg3-mc "POLYATTN_TEST_CASES=$CASES" test_forward --verbose --jobs 8) &
wait
for f in sweep-pingpong-s3-rel-mc-e16 sweep-serial-s3-rel-wg3-mc; do
  echo "$f: $(grep -E "Synthesis" "$OUT/$f.txt" | tail -1)" | tee -a "$S"
  grep -E "\[FAIL\]|CRASH" "$OUT/$f.txt" | head -8 | tee -a "$S"
done
echo "== summary"; cat "$S"
