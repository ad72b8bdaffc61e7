#!/bin/bash
# Eleventh session R1 (issue 4): where the Hopper backward's tile time goes. Knock-out
# builds of the main kernel (POLYATTN_CUDA_HOPPER_BWD_KO, a measurement-only patch:
# bench/gpu/bwd_ko_s11.patch; the gradients of a knocked-out run are wrong and its
# check says so): red = no dQ adds, dq = no dQ phase (dS^T store, barrier, products,
# adds), exp = no exponentials / dS arithmetic, dkv = no dV/dK products; v4 = dQ by
# red.global.add.v4.f32 after a lane exchange (correct; its suite runs first).
# Then ncu of the default main kernel (warp states, tensor pipe).
# Needs the measurement patch: `git checkout eb1be17 && patch -p1 < bench/gpu/bwd_ko_s11.patch`
# (the knock-outs and variants; R1-R4 ran parts of it), a build and a devkit; then
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_r1.sh
# Logs: bench/results/2026-12-01s11-bwd/r1/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_r1 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1
step_bg suite-v4 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper POLYATTN_CUDA_HOPPER_BWD_KO=v4 POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 8
step_bg suite-default 60 test_backward --jobs 8
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
K=POLYATTN_CUDA_HOPPER_BWD_KO
step torch-bwd 200 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192 --variants "$K=none,red,dq,exp,dkv,v4,none#2" --json "$LOG/torch-bwd.jsonl"
grep -E "^bf16|BWD_KO|geomean" "$LOG/torch-bwd.log" | cut -c1-150 | tee -a "$SUMMARY"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for d in 128 64; do
  step ncu-d$d 40 "$NCU" --clock-control none --kernel-name regex:'pa_hopper_bwd_kernel' --launch-count 1 \
    --section WarpStateStats --section ComputeWorkloadAnalysis --section SpeedOfLight --section LaunchStats \
    polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 8192 --batch 2 \
    --heads $((2048/d)) --dim $d
done
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
