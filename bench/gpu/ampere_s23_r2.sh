#!/bin/bash
# Twenty-third session, R2 (issue 3): the fourteenth session's softmax rows again, now
# that POLYATTN_CUDA_AMPERE_VARIANT is read at each call (its compare_torch --variants
# rounds timed the default only): m2k64t / m2k128t (row maxima as balanced trees) and
# m2k64l / m2k128l (O's rescale skipped when no row of the warp moved its maximum).
# The forward suite forced onto each (the Ampere kernel), then the rows beside the
# default and SDPA in one process, each value twice.
# Ran on a build of this session's tree before commit 1ab5738 (not committed) with the
# four rows compiled by default; on the committed code m2k128t is hd64's default and
# the other three names run the default ("auto").
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s23_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup ampere_s23_r2 polyattn test_forward
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere
V=POLYATTN_CUDA_AMPERE_VARIANT
for v in m2k64t m2k64l m2k128t m2k128l; do
  step_bg sweep-$v 240 env $V=$v test_forward --jobs 3 --filter 'forward/sweep'
done
step_wait
step torch128 240 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 \
  --dims 128 --seqlens 2048,8192,16384 --variants "$V=auto,m2k64t,m2k64l,auto#2,m2k64t#2,m2k64l#2" \
  --json "$LOG/torch128.jsonl"
step torch64 240 python3 bench/compare_torch.py --env-kernel ampere --no-efficient --dtypes bf16 \
  --dims 64 --seqlens 2048,8192,16384 --variants "$V=auto,m2k128t,m2k128l,auto#2,m2k128t#2,m2k128l#2" \
  --json "$LOG/torch64.jsonl"
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
pa_gpu_pack_keep torch128.log torch64.log
pa_gpu_finish
