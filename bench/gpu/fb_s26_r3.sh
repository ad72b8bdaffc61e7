#!/bin/bash
# Twenty-sixth session, R3 (issue 9): a query tile's first S and last P.V issued without a
# pingpong turn (PA_HV_FREEB, bf16 tuning variants "pingpong-rel-p-q2-os-fb" on the
# persistent kernel, "pingpong-rel-k176-os-fb" / "pingpong-rel-os-fb" on the hd128 grid
# kernels): n - 1 turns per tile of n key tiles instead of n + 1, so that one consumer's
# tile boundary no longer holds the other's next turn. clock_probe's f* cases in two
# rounds (sustained, beside cuDNN), the forward suite with the persistent -fb variant (also
# on 3 blocks: many tiles per block) and the 128-key grid one forced, compute-sanitizer on
# the persistent -fb kernel on 3 blocks. (The 176-key -fb is timed only.)
# Needs a build with -DPOLYATTN_CUDA_TUNING_VARIANTS=ON and bench/gpu/fb_s26_r3.patch (on
# 1a75a0e; the -fb variants were removed after R3: slower everywhere, bench/RESULTS.md
# twenty-sixth session); without the patch their names run the default. As run, the
# build held both this patch and fma_s26_r1.patch (they touch the same lines; each
# applies to 1a75a0e alone).
# Run: source .devkit/env; OUT=dir bash bench/gpu/fb_s26_r3.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup fb_s26_r3 python3 nvidia-smi test_forward test_cuda
STEP_TAIL=0
export POLYATTN_TEST_BACKENDS=cuda
V=POLYATTN_CUDA_HOPPER_VARIANT
pa_hopper_sweep fbp $V=pingpong-rel-p-q2-os-fb
pa_hopper_sweep fbp-b3 $V=pingpong-rel-p-q2-os-fb POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_sweep fbg $V=pingpong-rel-os-fb
grep -hE "Synthesis" "$LOG"/sweep-*.log | tee -a "$SUMMARY"
unset POLYATTN_TEST_BACKENDS
step probe 300 python3 bench/gpu/clock_probe.py --rounds 2 --cases f512,f2k,fc4k,f64s512,f64s1k,f64c2k,f8k,fc16k
export POLYATTN_TEST_BACKENDS=cuda
pa_hopper_sanitizers gqa_8_2,causal_sq113_sk64_emptyrows,s1500_causal_d64,s1000_causal_d128 $V=pingpong-rel-p-q2-os-fb POLYATTN_CUDA_HOPPER_BLOCKS=3
unset POLYATTN_TEST_BACKENDS
pa_gpu_pack_keep probe.log
pa_gpu_finish
