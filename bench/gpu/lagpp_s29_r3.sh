#!/bin/bash
# Twenty-ninth session, R3 (issue 9, short sequences): the persistent pingpong kernel with
# consumer 1 one key tile behind consumer 0, held there by the turns (consumer 1 takes an
# empty first turn, consumer 0 an empty last one; four ring stages; hd64 only:
# "pingpong-rel-p-q2-os-lag"), so that at each query-tile boundary one more of the other
# consumer's turns runs on the tensor cores. Correctness first (forward suite forced onto
# it, also on 3 blocks; sanitizers), then timings alone (clock_probe, two rounds).
# As run (R3, on lagpp_s29_r3.patch): 150 s limits and no --verbose, so the sweeps that did
# not finish named no test; now 300 s and --verbose, for the next session's run of the fix
# (lagpp_s29_r3b.patch; "varlen_empty" is the case the deadlock analysis points at).
# Thirtieth session: run on the fix, the probe also on n64c1k and n64f512.
# Run: source .devkit/env; OUT=dir bash bench/gpu/lagpp_s29_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup lagpp_s29_r3 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
CASES=d64_s64_h4,gqa_8_2,s1500_d64,s1500_causal_d64,varlen_causal_gqa,softcap5,causal_sq113_sk64_emptyrows
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
step_bg sweep-lagpp 300 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-lag test_forward --verbose --filter 'forward/sweep' --jobs 4
step_bg sweep-lagpp-b3 300 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-p-q2-os-lag POLYATTN_CUDA_HOPPER_BLOCKS=3 \
  test_forward --verbose --filter 'forward/sweep' --jobs 4
pa_hopper_sanitizers_bg lagpp 300 "$CASES" $V=pingpong-rel-p-q2-os-lag POLYATTN_CUDA_HOPPER_BLOCKS=3
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
[ "$FAILED" = 0 ] && step probe 200 python3 bench/gpu/clock_probe.py --rounds 2 --cases n64s512,n64s1k,n64c2k,n64c1k,n64f512
pa_gpu_pack_keep probe.log
pa_gpu_finish
