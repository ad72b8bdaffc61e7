#!/usr/bin/env bash
# hopper_s5_r1.sh: fifth session, round 1 (helper queue, 150 s). Run from an unpacked
# kit (bin/, lib/, bench/compare_torch.py, bindings/python/) as OUT=<dir> bash run.sh.
#   1. attn_speed: the Hopper variants (POLYATTN_CUDA_HOPPER_VARIANT, read per call)
#      timed in one process per shape, bf16 (the tuning variants are bf16-only)
#   2. ncu on one launch of the serial kernel, hd128 S8192 (+ the metric names of gmma)
#   3. compare_torch at S8192 (hd128, hd64; the first and best-guess variants)
#   4. SASS: HGMMA and LDL/STL counts per Hopper kernel
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
ALL="$V=serial $V=pipe $V=pingpong $V=serial-rel $V=pingpong-rel $V=serial-s3-rel $V=pingpong-s3-rel $V=serial"
step speed-d128-s8192 25 $AS --batch 2 --heads 16 --dim 128 --seq 8192 $ALL
step speed-d128-s8192-causal 20 $AS --batch 2 --heads 16 --dim 128 --seq 8192 --causal \
  $V=serial $V=pingpong $V=serial-rel $V=pingpong-rel $V=serial-s3-rel $V=pingpong-s3-rel $V=serial
step speed-d64-s8192 25 $AS --batch 2 --heads 32 --dim 64 --seq 8192 $ALL \
  $V=serial-s3-rel-wg3 $V=pipe-s3-rel-wg3
step speed-d64-s8192-causal 15 $AS --batch 2 --heads 32 --dim 64 --seq 8192 --causal \
  $V=serial $V=pingpong $V=serial-s3-rel $V=pingpong-s3-rel $V=serial-s3-rel-wg3
step speed-d128-s16384 15 $AS --batch 1 --heads 16 --dim 128 --seq 16384 \
  $V=serial $V=pingpong $V=serial-s3-rel $V=pingpong-s3-rel $V=serial
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
  --no-efficient --variants $V=serial,pingpong-s3-rel,serial-s3-rel,pingpong,serial-s3-rel-wg3 \
  --json "$OUT/torch.jsonl"
grep -vE "^\s*$" "$OUT/torch.txt" | tail -30 | tee -a "$S"
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$CUOBJ" ]; then
  timeout 20 "$CUOBJ" --dump-sass lib/libpolyattn-cuda.so > "$OUT/sass.txt" 2>&1
  awk '/Function : /{f=$3} /HGMMA/{h[f]++} /(LDL|STL)/{l[f]++} END{for (k in h) if (k ~ /hopper/) print "sass", k, "HGMMA", h[k], "LDL/STL", l[k]+0}' "$OUT/sass.txt" | sort | tee "$OUT/sass-summary.txt" | tee -a "$S"
  # the serial bf16 hd128 kernel's SASS, kept for reading the main loop
  awk '/Function : /{p = ($3 ~ /nv_bfloat16Li128ELi0E/)} p' "$OUT/sass.txt" > "$OUT/sass-bf16-d128-serial.txt"
  awk '/Function : /{p = ($3 ~ /nv_bfloat16Li128ELi14E/)} p' "$OUT/sass.txt" > "$OUT/sass-bf16-d128-pingpong-s3-rel.txt"
  rm -f "$OUT/sass.txt"
  gzip -9 "$OUT"/sass-bf16-*.txt
fi
echo "== summary"; cat "$S"
