#!/bin/bash
# Nineteenth session, R2 (issue 9): R1 found every heavy kernel at the board's power cap
# (~690 W, NVML reason sw-power-cap), so a kernel's sustained rate follows its energy
# per FLOP. Variants that take instructions out of the softmax side, timed sustained with
# the clock and power beside each (bench/gpu/clock_probe.py, three rounds, cuDNN in the
# same rounds): O's rescale skipped where no row maximum moved (-lo) at hd128, hd256 and
# hd64 (causal too), the wgmma descriptors by addition in the grid kernel (-da), the
# 176-key tile with O through shared memory at hd128, FP8's row sums by the tensor cores.
# Then the forward suite with the new variants forced (the Hopper cases run them; others
# fall back as pa_hopper_effective says). The variants exist only in R2's tree: apply
# bench/gpu/clock_s19_r2.patch to d5f02fc first (in later trees those names run the
# default, and clock_probe.py labels them "(=default)").
# Run: source .devkit/env; OUT=dir bash bench/gpu/clock_s19_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup clock_s19_r2 python3 nvidia-smi test_forward
STEP_TAIL=0
step probe 420 python3 bench/gpu/clock_probe.py --rounds 3 --cases r2d128,r2d256,r2d64,r2d64c,r2fp8
export POLYATTN_TEST_BACKENDS=cuda
for v in pingpong-rel-k176-os-lo pingpong-rel-os-lo-da serial-s3-rel-wg3-lo; do
  step fwd-$v 200 env POLYATTN_CUDA_HOPPER_VARIANT=$v test_forward --jobs 8
  grep -hE "Synthesis" "$LOG/fwd-$v.log" | sed "s/^/$v: /" | tee -a "$SUMMARY"
done
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
