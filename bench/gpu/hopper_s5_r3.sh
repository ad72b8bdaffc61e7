#!/usr/bin/env bash
# hopper_s5_r3.sh: fifth session, a third request (if the queue runs it), from an
# unpacked kit (bin/ test_forward, lib/, bench/compare_torch.py, bindings/python/) as
# OUT=<dir> bash run.sh. Whether the spill-free wide-tile variant should become the
# hd128 default:
#   1. compare_torch, bf16 hd128/hd64, S 512/4096/8192/16384, causal off/on: the
#      default first, then pingpong-rel-k176, pingpong-rel-k160, pingpong-rel-tm,
#      serial-s3-rel-wg3-tm (hd128: falls back to the default), serial
#   2. the whole forward sweep, default kernel choice, with
#      POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-k176 (hd128 plain problems run the
#      176-key tile, other hd128 problems and hd64 run pingpong-rel)
#   3. SASS: HGMMA and LDL/STL per Hopper kernel
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
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
step torch 50 python3 bench/compare_torch.py --env-kernel hopper --dims 128,64 \
  --seqlens 512,4096,8192,16384 --no-efficient \
  --variants "$V=default,pingpong-rel-k176,pingpong-rel-k160,pingpong-rel-tm,serial-s3-rel-wg3-tm,serial" \
  --json "$OUT/torch.jsonl"
grep -vE "^\s*$" "$OUT/torch.txt" | tail -60 | tee -a "$S"
step sweep-k176 70 env POLYATTN_TEST_BACKENDS=cuda $V=pingpong-rel-k176 test_forward --verbose --jobs 16
synth sweep-k176
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$CUOBJ" ]; then
  timeout 20 "$CUOBJ" --dump-sass lib/libpolyattn-cuda.so > "$OUT/sass.txt" 2>&1
  awk '/Function : /{f=$3} /HGMMA/{h[f]++} /(LDL|STL)/{l[f]++} END{for (k in h) if (k ~ /hopper/) print "sass", k, "HGMMA", h[k], "LDL/STL", l[k]+0}' "$OUT/sass.txt" | sort > "$OUT/sass-summary.txt"
  cat "$OUT/sass-summary.txt" | tee -a "$S"
  rm -f "$OUT/sass.txt"
fi
echo "== summary"; cat "$S"
