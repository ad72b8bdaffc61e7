#!/bin/bash
# Eleventh session, after the review: the stmatrix stores of dS moved before the dK
# product that takes the same registers as its A operand (PTX leaves reading an in-flight
# wgmma's A registers undefined; the old dS^T stores did the same). Suites, memcheck,
# racecheck on the new build; then compare_torch --backward (flash only) for the new
# module, the previous one (.devkit/old, f381168's kernels, via POLYATTN_BACKEND_PATH),
# and the new one again.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_order.sh
# Logs: bench/results/2026-12-01s11-bwd/order/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_order test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step_bg bwd-default 90 test_backward --jobs 5
step_bg bwd-hopper3 90 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 5
step_bg bwd-ksplit 90 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_VARIANT=ksplit test_backward --jobs 3
step_wait
step_bg memcheck 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg racecheck 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d96_sq113_sk3 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
C="python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384"
step torch-new-1 60 $C --json "$LOG/torch-new-1.jsonl"
step torch-old 60 env POLYATTN_BACKEND_PATH=$PWD/.devkit/old $C --json "$LOG/torch-old.jsonl"
step torch-new-2 60 $C --json "$LOG/torch-new-2.jsonl"
for n in torch-new-1 torch-old torch-new-2; do
  echo "$n $(python3 -c "
import json
out=[]
for l in open('$LOG/$n.jsonl'):
    r=json.loads(l)
    if 'polyattn_bwd_ms' in r and 'flash_bwd_ms' in r:
        out.append('%.3f' % (r['flash_bwd_ms']/r['polyattn_bwd_ms']))
print(' '.join(out))")" | tee -a "$SUMMARY"
  grep -h 'cuda_module' "$LOG/$n.jsonl" | head -1 | grep -o '"cuda_module": "[^"]*"' | tee -a "$SUMMARY"
done
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
