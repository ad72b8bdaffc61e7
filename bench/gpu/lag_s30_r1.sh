#!/bin/bash
# Thirtieth session, R1 (issue 9, short sequences): the twenty-ninth session's R3 with its
# fix (consumer 1 a pingpong turn behind consumer 0 on a four-stage ring) as hd64's
# persistent default ("pingpong-rel-p-q2-os-lag", both dtypes), against the kernel without
# it ("pingpong-rel-p-q2-os", at hd64 compiled in tuning builds only) and the two halves
# apart: the four-stage ring alone ("-s4") and the lag on two stages ("-lag2"; bf16 tuning
# variants). Correctness first, in parallel: the forward suite by default, forced onto the
# Hopper kernels (default variants) on 3 blocks, forced onto "-s4" and "-lag2", test_cuda,
# sanitizers on the Hopper defaults (3 blocks) over hd64 cases with keyless tiles (varlen,
# block masks, empty rows); then a block mask at hd64 (polyattn run, 25% density) with and
# without the lag, and timings alone (clock_probe, two rounds, sustained).
# Run: source .devkit/env; OUT=dir bash bench/gpu/lag_s30_r1.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup lag_s30_r1 python3 nvidia-smi test_forward test_cuda polyattn
pa_gpu_state
STEP_TAIL=0
CASES=d64_s64_h4,s1500_causal_d64,varlen_empty,varlen_causal_gqa,varlen_block,block64_bcast_diag,block256x128_hopper_list_causal_gqa,causal_sq113_sk64_emptyrows,softcap5,alibi_softcap_window_gqa
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-default 300 test_forward --jobs 3
step_bg sweep-hopper-b3 300 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  test_forward --verbose --filter 'forward/sweep' --jobs 3
step_bg sweep-s4 300 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-s4 test_forward --verbose --filter 'forward/sweep' --jobs 3
step_bg sweep-lag2 300 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-lag2 POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  test_forward --verbose --filter 'forward/sweep' --jobs 3
step_bg test-cuda 200 test_cuda --filter 'cuda/*'
pa_hopper_sanitizers_bg lag 300 "$CASES" POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128 --density 0.25"
for i in 1 2; do
  step block-lag-$i 20 $B
  step block-nolag-$i 20 env $V=pingpong-rel-p-q2-os $B
done
grep -hE "^forward|^vs dense" "$LOG"/block-*.log | tee -a "$SUMMARY"
[ "$FAILED" = 0 ] && step probe 240 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases lg512,lg1k,lgc1k,lgc2k,lgs256,lgf512,lgf1k,lgfc2k
pa_gpu_pack_keep probe.log
pa_gpu_finish
