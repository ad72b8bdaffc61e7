#!/bin/bash
# Thirtieth session, R2 (issue 9, short sequences at hd128): the lag of decision 121 where
# four 128-key stages do not fit beside two Q buffers. The K and V rings apart in shared
# memory with one of them a stage deeper (PA_HV_K3 / PA_HV_V3; 227 KB exactly at hd128):
# "pingpong-rel-p-q2-os-lag-v3", "-lag-k3", the third V stage alone "-v3", the lag on two
# stages "-lag2" (now at hd128 too), and at hd64 the lag on three stages "-lag3" (bf16
# tuning variants). Correctness first, in parallel: the forward sweep forced onto "-lag-v3",
# "-lag-k3" (both rings apart, hd64 and hd128), "-lag3" and "-lag2" (3 blocks), sanitizers
# on "-lag-v3" over hd128 and hd64 cases (3 blocks); then timings alone (clock_probe).
# As run: on bench/gpu/kv_s30_r2.patch (applies to 461f41a; not kept).
# Run: source .devkit/env; OUT=dir bash bench/gpu/kv_s30_r2.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup kv_s30_r2 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
CASES=d128_s128_b2,s1000_causal_d128,s2048_d128,strided_gqa_causal,block128_hopper_list_empty_rows,varlen_empty,varlen_causal_gqa,d64_s64_h4,causal_sq113_sk64_emptyrows,softcap5
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
for x in lag-v3 lag-k3 lag3 lag2; do
  step_bg sweep-$x 300 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-$x POLYATTN_CUDA_HOPPER_BLOCKS=3 \
    test_forward --verbose --filter 'forward/sweep' --jobs 3
done
pa_hopper_sanitizers_bg lagv3 300 "$CASES" $V=pingpong-rel-p-q2-os-lag-v3 POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
[ "$FAILED" = 0 ] && step probe 260 python3 bench/gpu/clock_probe.py --rounds 2 \
  --cases kv512,kv1k,kv2k,kvc1k,kvc2k,kw512,kw1k
pa_gpu_pack_keep probe.log
pa_gpu_finish
