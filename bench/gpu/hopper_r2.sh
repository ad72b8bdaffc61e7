#!/usr/bin/env bash
# hopper_r2.sh: the second GPU check of the Hopper forward, run from an unpacked kit
# (bin/, lib/, bench/compare_torch.py, bindings/python/) as OUT=<dir> bash hopper_r2.sh.
# Logs in $OUT, each step under its own timeout, correctness first:
#   1. three forward sweeps at once: the default kernel choice (Hopper by default on
#      cc 9.0, serial schedule; the rest falls back), and the pipe and pingpong
#      schedules forced on the cases the Hopper kernel runs (R1's list + seqlen_k_0)
#   2. compute-sanitizer memcheck, synccheck, racecheck on a few forced-hopper cases
#   3. SASS: HGMMA count, LDL/STL in the Hopper kernels
#   4. polyattn bench per schedule at bf16 hd128/hd64 S=8192 (causal off/on); the
#      fastest schedule at hd128 non-causal whose sweep passed is used for step 5
#   5. compare_torch: same process as SDPA flash and cuDNN, bf16 hd64/hd128,
#      S 8192/16384, causal off and on
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
step() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc ($((SECONDS - t0)) s)" | tee -a "$OUT/SUMMARY.txt"
}
synth() { echo "$1: $(grep -E "Synthesis" "$OUT/$1.txt" | tail -1)"; grep -E "\[FAIL\]|CRASH" "$OUT/$1.txt" | head -8; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
CASES='alibi_heads,alibi_softcap_window_gqa,bhsd,block128x32_per_batch_causal,block32x128_bh_emptyrows,block48x80_gqa_alibi,block64_bcast_diag,block_dense1_sparse,causal_s128,causal_sq113_sk64_emptyrows,causal_sq17_sk256,d128_s128_b2,d64_s64_h4,decode_s1_sk2048_mqa,decode_sq2_sk1500_gqa4_causal_alibi_softcap,decode_sq2_sk2000_gqa2_block_causal,decode_sq4_sk4096_gqa8_causal_alibi_softcap,decode_varlen_seqused_gqa,det_decode_split,det_prefill,gqa_8_2,guard_strided_varlen,no_lse,packed_qkv_causal,packed_varlen,s1000,s2048_d128,scale_explicit,seqused_k,softcap5,strided_block_alibi,strided_gqa_causal,varlen_block,varlen_causal_gqa,varlen_empty,window_32_16_sq<sk,window_causal_left20,window_left16,window_right8,seqlen_k_0'
t0=$SECONDS
(step sweep-default 60 env POLYATTN_TEST_BACKENDS=cuda test_forward --verbose --jobs 8) &
(step sweep-pipe 60 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=pipe "POLYATTN_TEST_CASES=$CASES" test_forward --verbose --jobs 4) &
(step sweep-pingpong 60 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=pingpong "POLYATTN_TEST_CASES=$CASES" test_forward --verbose --jobs 4) &
wait
echo "sweeps: $((SECONDS - t0)) s"
for s in sweep-default sweep-pipe sweep-pingpong; do synth $s; done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$SAN" ]; then
  HS="env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper"
  (step san-memcheck 25 $HS POLYATTN_TEST_CASES=d64_s64_h4,varlen_empty,seqused_k_varlen "$SAN" --tool memcheck test_forward --verbose --jobs 3) &
  (step san-synccheck 25 $HS POLYATTN_CUDA_HOPPER_VARIANT=pingpong POLYATTN_TEST_CASES=d128_s128_b2,causal_sq17 "$SAN" --tool synccheck test_forward --verbose --jobs 2) &
  (step san-racecheck 25 $HS POLYATTN_TEST_CASES=d64_s64_h4 "$SAN" --tool racecheck test_forward --verbose --jobs 2) &
  wait
  for t in memcheck synccheck racecheck; do echo "san-$t: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/san-$t.txt" | tail -1) $(grep -E "Synthesis" "$OUT/san-$t.txt" | tail -1)"; done
else
  echo "no compute-sanitizer" | tee -a "$OUT/SUMMARY.txt"
fi
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$CUOBJ" ]; then
  "$CUOBJ" --dump-sass lib/libpolyattn-cuda.so > "$OUT/sass.txt" 2>&1
  awk '/Function : /{f=$3} /HGMMA/{h[f]++} /(LDL|STL)/{l[f]++} END{for (k in h) if (k ~ /hopper/) print "sass", k, "HGMMA", h[k], "LDL/STL", l[k]+0}' "$OUT/sass.txt" | tee "$OUT/sass-summary.txt"
  rm -f "$OUT/sass.txt"
fi
best=serial; bestt=0
for v in serial pipe pingpong; do
  step bench-$v 20 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=$v polyattn bench --backend cuda --dims 128,64 --seqs 8192 --repeat 20
  grep -E "^ +(64|128) " "$OUT/bench-$v.txt" | sed "s/^/$v /"
  tf=$(awk '$1 == 128 && $2 == "no" && $3 == 8192 {print $8}' "$OUT/bench-$v.txt")
  ok=1
  [ "$v" != serial ] && ! grep -q "Failing: 0 | Crashing: 0" "$OUT/sweep-$v.txt" && ok=0
  if [ -n "$tf" ] && [ "$ok" = 1 ] && awk -v a="$tf" -v b="$bestt" 'BEGIN{exit !(a > b)}'; then best=$v; bestt=$tf; fi
done
echo "schedule for compare_torch: $best ($bestt TFLOP/s at hd128 S=8192 non-causal)" | tee -a "$OUT/SUMMARY.txt"
export POLYATTN_LIB=$PWD/lib/libpolyattn.so POLYATTN_CUDA_HOPPER_VARIANT=$best
step torch 50 python3 bench/compare_torch.py --env-kernel hopper --dims 128,64 --seqlens 8192,16384 --no-efficient --json "$OUT/torch.jsonl"
grep -vE "^\s*$" "$OUT/torch.txt" | tail -22
echo "== summary"; cat "$OUT/SUMMARY.txt"
