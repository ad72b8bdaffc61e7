#!/usr/bin/env bash
# hopper_s5_r2.sh: fifth session, round 2 (helper queue, 150 s), from an unpacked kit
# (bin/ attn_speed test_forward test_cuda, lib/, bench/compare_torch.py,
# bindings/python/) as OUT=<dir> bash run.sh. The module's new default variants
# (fwd_hopper.cu, PA_HOPPER_DEFAULT_D64/D128) are what this checks:
#   1. the whole forward sweep on CUDA with the default choice (the Hopper kernel with
#      its new default for what it takes), --jobs 16
#   2. compare_torch: the standard sweep's bf16 hd64/hd128 rows against SDPA flash and
#      cuDNN in the same process, the new default first, the fourth session's
#      `serial` second, then pingpong-rel-k160 and -k176 (hd64: pingpong-rel), pingpong-rel-tm
#      (tree max), serial-s3-rel-wg3-tm (hd128: falls back to the default)
#   3. compute-sanitizer memcheck and synccheck on a few forced-Hopper cases, with
#      graph capture and 100 repeats bit-identical (test_cuda) beside them
#      and the forced sweep of the 176-key tuning variant
#   4. SASS: HGMMA and LDL/STL per Hopper kernel
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
synth() { echo "$1: $(grep -E "Synthesis" "$OUT/$1.txt" | tail -1)" | tee -a "$S"; grep -E "\[FAIL\]|CRASH" "$OUT/$1.txt" | head -8 | tee -a "$S"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
V=POLYATTN_CUDA_HOPPER_VARIANT
step sweep-default 68 env POLYATTN_TEST_BACKENDS=cuda test_forward --verbose --jobs 16
synth sweep-default
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
step torch 45 python3 bench/compare_torch.py --env-kernel hopper --dims 128,64 \
  --seqlens 512,4096,8192,16384 --no-efficient --variants "$V=default,serial,pingpong-rel-k160,pingpong-rel-k176,pingpong-rel-tm,serial-s3-rel-wg3-tm" \
  --json "$OUT/torch.jsonl"
grep -vE "^\s*$" "$OUT/torch.txt" | tail -45 | tee -a "$S"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1)
HS="env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper"
if [ -n "$SAN" ]; then
  (step san-memcheck 28 $HS POLYATTN_TEST_CASES=d64_s64_h4,d128_s128_b2,s1000,varlen_empty,seqused_k "$SAN" --tool memcheck test_forward --verbose --jobs 5) &
  (step san-synccheck 28 $HS POLYATTN_TEST_CASES=d128_s128_b2,s1000,causal_sq17_sk256 "$SAN" --tool synccheck test_forward --verbose --jobs 3) &
fi
(step test-cuda 30 test_cuda --jobs 4) &
# the wide-tile tuning variant on the cases the Hopper kernel runs (bf16 plain hd128
# cases run it; the others its fallback, the default)
CASES='alibi_heads,alibi_softcap_window_gqa,bhsd,block128x32_per_batch_causal,block32x128_bh_emptyrows,block48x80_gqa_alibi,block64_bcast_diag,block_dense1_sparse,causal_s128,causal_sq113_sk64_emptyrows,causal_sq17_sk256,d128_s128_b2,d64_s64_h4,gqa_8_2,guard_strided_varlen,no_lse,packed_qkv_causal,packed_varlen,s1000,s2048_d128,scale_explicit,seqused_k,softcap5,strided_block_alibi,strided_gqa_causal,varlen_block,varlen_causal_gqa,varlen_empty,window_32_16_sq<sk,window_causal_left20,window_left16,window_right8'
(step sweep-k176 30 $HS $V=pingpong-rel-k176 "POLYATTN_TEST_CASES=$CASES" test_forward --verbose --jobs 6) &
wait
for t in memcheck synccheck; do [ -f "$OUT/san-$t.txt" ] && echo "san-$t: $(grep -E "ERROR SUMMARY" "$OUT/san-$t.txt" | sort | uniq -c | tr '\n' ' ') $(grep -E "Synthesis" "$OUT/san-$t.txt" | tail -1)" | tee -a "$S"; done
synth test-cuda
synth sweep-k176
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$CUOBJ" ]; then
  timeout 20 "$CUOBJ" --dump-sass lib/libpolyattn-cuda.so > "$OUT/sass.txt" 2>&1
  awk '/Function : /{f=$3} /HGMMA/{h[f]++} /(LDL|STL)/{l[f]++} END{for (k in h) if (k ~ /hopper/) print "sass", k, "HGMMA", h[k], "LDL/STL", l[k]+0}' "$OUT/sass.txt" | sort > "$OUT/sass-summary.txt"
  cat "$OUT/sass-summary.txt" | tee -a "$S"
  rm -f "$OUT/sass.txt"
fi
echo "== summary"; cat "$S"
