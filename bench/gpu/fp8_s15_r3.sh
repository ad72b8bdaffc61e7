#!/bin/bash
# Fifteenth session, R3 (issue 9, FP8): the row maxima as trees ("-t") and the V
# transposer with hand-reduced offsets ("-v"), on the 192-key tiles of R1; fp8_check of
# the new transposer; the candidates' test_fp8 and sanitizers; the FP8 rows beside
# PyTorch (bench/fp8_torch.py: bf16 SDPA flash and cuDNN in the same process).
# (After this round "-v" became every variant's transposer: R3's "-tv" names are today's "-t".)
# Run: source .devkit/env; OUT=dir bash bench/gpu/fp8_s15_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
chmod +x .devkit/bin/* 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fp8_s15_r3 test_fp8 attn_speed fp8_check
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
step fp8_check 30 fp8_check
grep -E "^fp8_check" "$LOG/fp8_check.log" | cut -c1-200 | tee -a "$SUMMARY"
export POLYATTN_CUDA_FP8=1
V=POLYATTN_CUDA_FP8_VARIANT
AS="attn_speed --backend cuda --warm 0.3 --iters 40"
F8="$V=pipe-gs-k192 $V=pipe-gs-k192-t $V=pipe-gs-k192-v $V=pipe-gs-k192-tv $V=pingpong-gs-k192-tv $V=pingpong-gs-k192 $V=pipe-gs-tv $V=serial $V=pipe-gs-k192"
step fp8-d128 120 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 $F8
step fp8-d64 120 $AS --dtype fp8 --batch 2 --heads 32 --dim 64 --seq 8192 $F8
step fp8-d128-causal 60 $AS --dtype fp8 --batch 2 --heads 16 --dim 128 --seq 8192 --causal $V=pipe-gs-k192 $V=pipe-gs-k192-tv $V=pingpong-gs-k192-tv $V=serial
for f in fp8-d128 fp8-d64 fp8-d128-causal; do
  echo "== $f"; grep -E "^(POLYATTN|-)" "$LOG/$f.log" | cut -c1-130
done | tee -a "$SUMMARY"
for v in pipe-gs-k192-tv pingpong-gs-k192-tv pipe-gs-tv; do
  pa_fp8_test "$v"
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for v in pipe-gs-k192-tv pingpong-gs-k192-tv; do
  for tool in memcheck racecheck synccheck; do
    step "$tool-$v" 90 env $V=$v POLYATTN_TEST_CASES=d64_sq1_sk255_mqa,d128_causal_sq200_sk333_block,d128_varlen_causal_gqa_block "$CS" --tool $tool test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
    grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool-$v.log" | sed "s/^/$tool-$v: /" | tee -a "$SUMMARY"
  done
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
SRC="--section WarpStateStats --section SourceCounters --page source --csv --print-source sass"
ONE="attn_speed --backend cuda --dtype fp8 --warm 0 --iters 1 --batch 2 --heads 16 --dim 128 --seq 8192"
step src-pipe-gs-k192-tv 120 sh -c "$V=pipe-gs-k192-tv \"$NCU\" --clock-control none -k regex:fp8 --launch-count 1 $SRC $ONE - > \"$LOG/src-pipe-gs-k192-tv.csv\""
python3 scripts/ncu_source_classes.py "$LOG/src-pipe-gs-k192-tv.csv" 2>&1 | head -6 | tee -a "$SUMMARY"
step torch 240 python3 bench/fp8_torch.py --dims 128,64 --seqlens 2048,8192 --causal both --variants serial,pipe-gs-k192,pipe-gs-k192-tv,pingpong-gs-k192-tv
grep -vE "^#|^$" "$LOG/torch.log" | cut -c1-160 | tail -30 | tee -a "$SUMMARY"
cut -c1-200 "$LOG/oracle-lines.txt" >>"$SUMMARY"
gzip -f "$LOG"/*.csv
pa_gpu_pack_logs
pa_gpu_finish
