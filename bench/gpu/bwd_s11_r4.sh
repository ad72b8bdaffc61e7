#!/bin/bash
# Eleventh session R4 (issue 4): dQ's products issued before dV's and dK's, whose wait
# moves to the next tile (POLYATTN_CUDA_HOPPER_BWD_KO=defer, PA_HBWD_DEFER; three-stage
# Q / dO ring). ptxas: hd128 no serialisation (140 bytes of spill), hd64 serialised
# (C7511), so hd64's figures show the cost of that. Suites and memcheck with defer, then
# compare_torch --backward: none, defer, none again, defer again; and the HGMMA count of
# every backward kernel in the module's SASS (is R1's "red" knock-out also without dQ's
# products, i.e. did ptxas drop wgmmas whose results are unused?).
# Needs the measurement patch: `git checkout eb1be17 && patch -p1 < bench/gpu/bwd_ko_s11.patch`
# (the knock-outs and variants; R1-R4 ran parts of it), a build and a devkit; then
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_r4.sh
# Logs: bench/results/2026-12-01s11-bwd/r4/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_r4 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
K=POLYATTN_CUDA_HOPPER_BWD_KO
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step_bg suite-defer-hopper3 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=defer POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 6
step_bg suite-defer-default 60 env $K=defer test_backward --jobs 6
step_bg memcheck-defer 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=defer POLYATTN_TEST_CASES='bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3' "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg sass 60 bash -c "cuobjdump -sass .devkit/lib/libpolyattn-cuda.so | awk '/Function :/ {f=\$3} /HGMMA/ {n[f]++} END {for (k in n) print n[k], k}' | grep bwd | sort -k2"
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step torch-bwd 240 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192,16384 --variants "$K=none,defer,none#2,defer#2" --json "$LOG/torch-bwd.jsonl"
grep -E "^bf16|BWD_KO|geomean" "$LOG/torch-bwd.log" | cut -c1-150 | tee -a "$SUMMARY"
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
