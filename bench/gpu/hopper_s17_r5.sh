#!/bin/bash
# Seventeenth session, R5 (issue 9, bf16): the FP8 kernel's ROWSUM (decision 108) on the
# bf16 Hopper kernel (PA_HV_ROWSUM, "-r": a panel of ones after V in each stage, P.V
# with 8 more columns, no FADD per element in the softmax): the forward sweep with the
# -r variants forced (LSE checked to 1e-3 as for every bf16 case), sanitizers, speed
# beside SDPA with the defaults in one process.
# Run: source .devkit/env; OUT=dir bash bench/gpu/hopper_s17_r5.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup hopper_s17_r5 test_forward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for v in serial-s3-rel-wg3-r pingpong-rel-os-r; do
  step "sweep-$v" 200 env POLYATTN_CUDA_KERNEL=hopper $V=$v test_forward --filter 'forward/sweep' --verbose --jobs 8
  grep -hE "Synthesis" "$LOG/sweep-$v.log" | sed "s/^/$v: /" | tee -a "$SUMMARY"
  grep -h "\[FAIL\]" "$LOG/sweep-$v.log" | head -5 | cut -c1-200 | tee -a "$SUMMARY"
  for tool in memcheck racecheck; do
    step "$tool-$v" 150 env POLYATTN_CUDA_KERNEL=hopper $V=$v POLYATTN_TEST_CASES=d64,d128_s128_b2,causal \
      "$SAN" --tool $tool --print-limit 10 test_forward --filter 'forward/sweep' --jobs 2
    grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|Synthesis" "$LOG/$tool-$v.log" | sed "s/^/$tool-$v: /" | tee -a "$SUMMARY"
  done
done
# registers and local memory of the -r kernels (template int V with bit 32768)
step res-usage 150 cuobjdump -res-usage .devkit/lib/libpolyattn-cuda.so
grep -A1 'pa_hopper_fwd_kernel' "$LOG/res-usage.log" | grep -B1 'REG' | paste - - | \
  grep -E 'Li(64|128)ELi(32796|49162|28|16394)E' | sed -E 's/.*kernelI//; s/STACK.*LOCAL/LOCAL/' | \
  cut -c1-160 | tee -a "$SUMMARY"
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step torch 300 python3 bench/compare_torch.py --dims 64,128 --seqlens 2048,8192,16384 --no-efficient \
  --variants "$V=default,serial-s3-rel-wg3-r,pingpong-rel-os-r,default" --json "$LOG/torch.jsonl"
grep -E "^bf16|VARIANT=" "$LOG/torch.log" | grep -v "first line" | cut -c1-150 | tee -a "$SUMMARY"
pa_gpu_pack_logs
pa_gpu_finish
