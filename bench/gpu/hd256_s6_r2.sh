#!/usr/bin/env bash
# hd256_s6_r2.sh: sixth session, round 2 (helper queue, 150 s), from an unpacked kit
# (bin/ test_forward attn_speed, lib/ or lib.tar.xz, bench/compare_torch.py,
# bindings/python/) as OUT=<dir> bash run.sh. The module with the Hopper kernel as
# the hd256 default on cc 9.0 (PA_CUDA_HOPPER_D256_DEFAULT) and the lazy O rescale
# variant (pingpong-rel-lo, fp16 and bf16 at hd256):
#   1. correctness, in parallel (nothing timed meanwhile): the whole forward sweep
#      with the default kernel choice; the hd256 cases forced on the Hopper kernel with
#      pingpong-rel-lo; memcheck on the hd256 block-list and seqused_k cases; SASS
#   2. speed, alone: compare_torch at hd256 (Hq 8, 16k tokens), bf16 S 512..16384 and
#      fp16 S 8192/16384, the default then pingpong-rel-lo, beside SDPA flash and
#      cuDNN; attn_speed at S8192 (default, -lo, pipe-rel, serial)
#   3. ncu on one launch of the default hd256 kernel (S8192): tensor pipe, shared
#      memory traffic, warp stalls
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
(step sweep-all-default 60 env POLYATTN_TEST_BACKENDS=cuda test_forward --jobs 8) &
(step sweep-d256-lo 40 $HS $V=pingpong-rel-lo POLYATTN_TEST_CASES=d256 test_forward --verbose --jobs 3) &
if [ -n "$SAN" ]; then
  (step san-memcheck 50 $HS POLYATTN_TEST_CASES=d256_block128_list,d256_seqused_k "$SAN" --tool memcheck test_forward --verbose --jobs 3) &
fi
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$CUOBJ" ]; then
  (timeout 30 "$CUOBJ" --dump-sass lib/libpolyattn-cuda.so > "$OUT/sass.txt" 2>&1
   awk '/Function : /{f=$3} /HGMMA/{h[f]++} /(LDL|STL)/{l[f]++} END{for (k in h) if (k ~ /hopper_fwd/) print "sass", k, "HGMMA", h[k], "LDL/STL", l[k]+0}' "$OUT/sass.txt" | sort > "$OUT/sass-summary.txt"
   rm -f "$OUT/sass.txt") &
fi
wait
for n in sweep-all-default sweep-d256-lo; do synth $n; done
[ -f "$OUT/san-memcheck.txt" ] && echo "san-memcheck: $(grep -E "ERROR SUMMARY" "$OUT/san-memcheck.txt" | sort | uniq -c | tr '\n' ' ') $(grep -E "Synthesis" "$OUT/san-memcheck.txt" | tail -1)" | tee -a "$S"
grep -E "Li256E" "$OUT/sass-summary.txt" 2>/dev/null | tee -a "$S"
echo "sass: $(wc -l < "$OUT/sass-summary.txt" 2>/dev/null) hopper_fwd kernels, with LDL/STL: $(awk '$NF != 0' "$OUT/sass-summary.txt" 2>/dev/null | wc -l)" | tee -a "$S"
# speed, alone
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
step torch-bf16 40 python3 bench/compare_torch.py --dims 256 --seqlens 512,1024,2048,4096,8192,16384 \
  --no-efficient --variants "$V=default,pingpong-rel-lo" --json "$OUT/torch-bf16.jsonl"
grep -vE "^\s*$" "$OUT/torch-bf16.txt" | tail -45 | tee -a "$S"
step torch-fp16 25 python3 bench/compare_torch.py --dims 256 --seqlens 8192,16384 --dtypes fp16 \
  --no-efficient --variants "$V=default,pingpong-rel-lo" --json "$OUT/torch-fp16.jsonl"
grep -vE "^\s*$" "$OUT/torch-fp16.txt" | tail -16 | tee -a "$S"
step speed-s8192 12 attn_speed --backend cuda --dtype bf16 --batch 2 --heads 8 --dim 256 --seq 8192 \
  --warm 0.3 --iters 40 - "$V=pingpong-rel-lo" "$V=pipe-rel" "$V=serial"
step speed-s8192-causal 10 attn_speed --backend cuda --dtype bf16 --batch 2 --heads 8 --dim 256 --seq 8192 \
  --causal --warm 0.3 --iters 40 - "$V=pingpong-rel-lo" "$V=pipe-rel" "$V=serial"
grep -hE "^(variant|-|POLYATTN)" "$OUT/speed-s8192.txt" "$OUT/speed-s8192-causal.txt" | tee -a "$S"
# last (what is left of the budget): ncu on one launch of the default hd256 kernel
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
if [ -n "$NCU" ]; then
  step ncu-d256 30 "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section WarpStateStats --section SchedulerStats \
    attn_speed --backend cuda --dtype bf16 --batch 2 --heads 8 --dim 256 --seq 8192 --warm 0 --iters 1 -
  grep -E "Duration|Throughput|Busy|Shared|Bank|Stall|Eligible|Issued|Tensor|highest" "$OUT/ncu-d256.txt" | head -40 | tee -a "$S"
fi
echo "== summary"; cat "$S"
