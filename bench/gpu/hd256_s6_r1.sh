#!/usr/bin/env bash
# hd256_s6_r1.sh: sixth session, round 1 (helper queue, 150 s), from an unpacked kit
# (bin/ test_forward attn_speed, lib/, bench/compare_torch.py, bindings/python/) as
# OUT=<dir> bash run.sh. The Hopper forward at head dim 256 (fwd_hopper.cu, 80-key
# tiles), first run on a GPU:
#   1. correctness, in parallel (nothing timed meanwhile): the hd256 cases of the
#      forward sweep with POLYATTN_CUDA_KERNEL=hopper for the default (pingpong-rel),
#      serial and pingpong-rel-k64 (bf16 only; fp16 cases run the default); memcheck
#      and synccheck on small hd256 cases; the whole sweep with the default choice
#      (hd64/hd128 on their unchanged defaults; hd256 still on the Ampere kernel by
#      default); SASS (HGMMA, LDL/STL per Hopper kernel)
#   2. speed, alone: compare_torch at hd256 (Hq 8, 16k tokens), Hopper then Ampere in
#      the same process beside SDPA flash and cuDNN; attn_speed at S8192 for the
#      Hopper variants (default, serial, pingpong-rel-k64, pipe-rel) and the Ampere
#      kernel
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
# the kit's lib/ travels as one xz tarball (under the queue's 14 MiB; python3 unpacks it)
[ -f lib.tar.xz ] && python3 -c "import tarfile; tarfile.open('lib.tar.xz').extractall('.')"
S="$OUT/SUMMARY.txt"
step() { # name timeout cmd...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc ($((SECONDS - t0)) s)" | tee -a "$S"
}
synth() { echo "$1: $(grep -E "Synthesis" "$OUT/$1.txt" | tail -1)" | tee -a "$S"; grep -E "\[FAIL\]|CRASH|SKIP" "$OUT/$1.txt" | head -12 | tee -a "$S"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/nvidia-smi.txt" 2>&1
V=POLYATTN_CUDA_HOPPER_VARIANT
HS="env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=hopper"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1)
(step sweep-d256-default 40 $HS POLYATTN_TEST_CASES=d256 test_forward --verbose --jobs 4) &
(step sweep-d256-serial 40 $HS $V=serial POLYATTN_TEST_CASES=d256 test_forward --verbose --jobs 3) &
(step sweep-d256-k64 40 $HS $V=pingpong-rel-k64 POLYATTN_TEST_CASES=d256 test_forward --verbose --jobs 3) &
if [ -n "$SAN" ]; then
  (step san-memcheck 45 $HS POLYATTN_TEST_CASES=d256_s255,d256_varlen_causal_gqa "$SAN" --tool memcheck test_forward --verbose --jobs 2) &
  (step san-synccheck 45 $HS POLYATTN_TEST_CASES=d256_s255 "$SAN" --tool synccheck test_forward --verbose --jobs 2) &
fi
(step sweep-all-default 45 env POLYATTN_TEST_BACKENDS=cuda test_forward --jobs 6) &
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$CUOBJ" ]; then
  (timeout 30 "$CUOBJ" --dump-sass lib/libpolyattn-cuda.so > "$OUT/sass.txt" 2>&1
   awk '/Function : /{f=$3} /HGMMA/{h[f]++} /(LDL|STL)/{l[f]++} END{for (k in h) if (k ~ /hopper_fwd/) print "sass", k, "HGMMA", h[k], "LDL/STL", l[k]+0}' "$OUT/sass.txt" | sort > "$OUT/sass-summary.txt"
   rm -f "$OUT/sass.txt") &
fi
wait
for n in sweep-d256-default sweep-d256-serial sweep-d256-k64 sweep-all-default; do synth $n; done
for t in memcheck synccheck; do [ -f "$OUT/san-$t.txt" ] && echo "san-$t: $(grep -E "ERROR SUMMARY" "$OUT/san-$t.txt" | sort | uniq -c | tr '\n' ' ') $(grep -E "Synthesis" "$OUT/san-$t.txt" | tail -1)" | tee -a "$S"; done
grep -E "Li256E" "$OUT/sass-summary.txt" 2>/dev/null | tee -a "$S"
echo "sass: $(wc -l < "$OUT/sass-summary.txt" 2>/dev/null) hopper_fwd kernels, with LDL/STL: $(awk '$NF != 0' "$OUT/sass-summary.txt" 2>/dev/null | wc -l)" | tee -a "$S"
# speed, alone
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
step torch 45 python3 bench/compare_torch.py --dims 256 --seqlens 512,2048,8192,16384 \
  --no-efficient --variants "POLYATTN_CUDA_KERNEL=hopper,ampere" --json "$OUT/torch.jsonl"
grep -vE "^\s*$" "$OUT/torch.txt" | tail -30 | tee -a "$S"
H="POLYATTN_CUDA_KERNEL=hopper"
step speed-s8192 14 attn_speed --backend cuda --dtype bf16 --batch 2 --heads 8 --dim 256 --seq 8192 \
  --warm 0.3 --iters 40 "$H" "$H,$V=serial" "$H,$V=pingpong-rel-k64" "$H,$V=pipe-rel" POLYATTN_CUDA_KERNEL=ampere
step speed-s8192-causal 12 attn_speed --backend cuda --dtype bf16 --batch 2 --heads 8 --dim 256 --seq 8192 \
  --causal --warm 0.3 --iters 40 "$H" "$H,$V=serial" "$H,$V=pingpong-rel-k64" "$H,$V=pipe-rel" POLYATTN_CUDA_KERNEL=ampere
cat "$OUT/speed-s8192.txt" "$OUT/speed-s8192-causal.txt" | tail -18 | tee -a "$S"
echo "== summary"; cat "$S"
