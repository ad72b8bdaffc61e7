#!/bin/bash
# Thirty-eighth session (issue 9): bench/gpu/s37.sh's question and the answer's check in
# one call (this session's device time allowed one). The module is a tuning build
# (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON, sm_90) with bench/gpu/adopt_s38.patch applied: the
# three candidates of the thirty-seventh session are the defaults (the persistent
# kernels' and hd256's plain-only score pass "-pn", plain problems only, the others run
# the forms without it; hd64's 192-key kernel peeled, "-km1-pl"; fp16 too), and the
# defaults they replace run by name. (A second module, the build CI ships with the patch,
# did not fit the 64 MiB carried beside the tree.)
# First, alone on the GPU: clock_probe's ad* cases (two rounds, sustained at the power
# cap): each adopted default ("pa") beside the default it replaces ("old") and cuDNN;
# hd256 with "pingpong-rel-os-km1" too. Then the checks, in parallel: the suite by default
# (the adopted kernels), test_cuda, the forward sweep forced onto the persistent "-pn"
# kernels on 3 blocks and onto hd256's "-km1"; memcheck / racecheck / synccheck by default
# over cases that run each adopted kernel and cases that fall back from it, and on hd256's
# "-km1". ~9 min.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s38.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
for f in .devkit/lib/*.xz; do # the module, xz-compressed to fit beside the tree
  [ -f "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"
done
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup s38 python3 nvidia-smi test_forward test_cuda
pa_gpu_state
STEP_TAIL=0
pa_require_kernels 'pa_hopper_fwd_kernelI13__nv_bfloat16Li(64ELi1605656|256ELi540682|256ELi2375690|128ELi2650122|64ELi2846730)E' 5
[ "$FAILED" = 0 ] || pa_gpu_finish
pa_probe ad64w8k,ad64wc8k,ad64w16k,ad256s8k,ad256c8k,ad256s16k,ad128s512,ad128s2k,ad128c4k,ad64s512,ad64s1k,ad64c2k 2 320
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda
step_bg sweep-default 240 test_forward --jobs 4
step_bg test-cuda 120 test_cuda --filter 'cuda/*'
pa_hopper_variant_sweep_bg p-pn pingpong-rel-p-q2-os-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg lag-pn pingpong-rel-p-q2-os-lag-km1-pn POLYATTN_CUDA_HOPPER_BLOCKS=3
pa_hopper_variant_sweep_bg d256-km1 pingpong-rel-os-km1
# adopted kernels: s8400_d64 (192-key, peeled), s1500_d64 / s1500_causal_d64 (hd64
# persistent), s1000_causal_d128 / d128_s128_b2 (hd128 persistent), d256_s255 /
# s2048_causal_d256 (hd256); their fallbacks: softcap, ALiBi, a block list
HCASES=s8400_d64,s1500_d64,s1500_causal_d64,s1000_causal_d128,d128_s128_b2,d256_s255,s2048_causal_d256,s2500_causal_softcap_d64,d256_alibi_softcap_window,block128_hopper_list_empty_rows,causal_sq113_sk64_emptyrows
pa_hopper_sanitizers_bg def 240 "$HCASES"
pa_hopper_sanitizers_bg d256-km1 240 d256_s255,d256_varlen_causal_gqa,s2048_causal_d256 \
  $V=pingpong-rel-os-km1
step_wait
unset POLYATTN_TEST_BACKENDS
pa_check_summary
pa_gpu_pack_keep probe.log
pa_gpu_finish
