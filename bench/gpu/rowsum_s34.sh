#!/bin/bash
# Thirty-fourth session (issue 3; written without a device, decision 125): the Ampere rows
# with the row sums l by the tensor cores ("-rs": m2k128tj-rs at hd64, m2k64-km-rs at
# hd128; tuning rows, run only without LSE) in one call:
#   1. sustained timings (clock_probe, two rounds, the GPU to itself): rs* cases, each the
#      default row, its "-rs" form and SDPA flash in one process (bf16 S2048 / S8192 /
#      S16384 / causal S8192 and fp16 S8192 per head dim);
#   2. correctness, in parallel: the forward suite forced onto each "-rs" row with
#      POLYATTN_TEST_NO_LSE=1 (every case of the row's head dim then runs the "-rs" row,
#      both dtypes, but 2:4 cases) and, for the errors beside them, onto each default row
#      the same way (--verbose: the oracle lines); the suite forced onto each "-rs" row
#      with the LSE asked for as the cases ask (those cases run the base row:
#      pa_variant_for); memcheck and racecheck on each "-rs" row without LSE over five
#      cases per head dim (block masks with empty rows among them).
# Needs a tuning build (-DPOLYATTN_CUDA_TUNING_VARIANTS=ON): step "rows" fails without the
# "-rs" kernels in the library (the variable would run the default row unnoticed). ~460 s.
# Run in the thirty-fourth session on an H100: the probe and the sanitizers passed, the
# six sweeps timed out at 240 s beside each other and the sanitizers (the oracle's CPU
# time), and were rerun two at a time in later calls (bench/RESULTS.md).
# Run: source .devkit/env; OUT=dir bash bench/gpu/rowsum_s34.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup rowsum_s34 python3 nvidia-smi test_forward
pa_gpu_state
STEP_TAIL=0
# the "-rs" kernels (V 10: m2k128tj-rs at hd64, V 11: m2k64-km-rs at hd128), both dtypes
pa_require_kernels 'pa_ampere_fwd_kernelI[0-9_a-z]+(Li64ELi10|Li128ELi11)ELb0' 4
step probe 240 python3 -u bench/gpu/clock_probe.py --rounds 2 \
  --cases rs64s8k,rs128s8k,rs64c8k,rs128c8k,rs64s2k,rs128s2k,rs64s16k,rs128s16k,rs64h8k,rs128h8k

cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
amp() { # amp STEP LIMIT ROW SETTING... -- the suite forced onto the Ampere row ROW
  local name=$1 limit=$2 row=$3
  shift 3
  step_bg "$name" "$limit" env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
    POLYATTN_CUDA_AMPERE_VARIANT="$row" "$@"
}
for row in m2k128tj-rs m2k64-km-rs m2k128tj m2k64-km; do
  amp "sweep-nolse-$row" 240 "$row" POLYATTN_TEST_NO_LSE=1 \
    test_forward --verbose --jobs 3 --filter 'forward/sweep'
done
for row in m2k128tj-rs m2k64-km-rs; do
  amp "sweep-lse-$row" 240 "$row" test_forward --jobs 3 --filter 'forward/sweep'
done
A64=s1500_d64,s1500_causal_d64,s8400_alibi_d64,alibi_softcap_window_gqa,block32x128_bh_emptyrows
A128=s1000_causal_d128,s4352_d128,auto_clustered_causal_gqa,block_dense1_sparse,d128_s128_b2
for tool in memcheck racecheck; do
  amp "$tool-rs64" 240 m2k128tj-rs POLYATTN_TEST_NO_LSE=1 POLYATTN_TEST_CASES="$A64" \
    "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 2
  amp "$tool-rs128" 240 m2k64-km-rs POLYATTN_TEST_NO_LSE=1 POLYATTN_TEST_CASES="$A128" \
    "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 2
done
step_wait
pa_check_summary
pa_gpu_pack_keep probe.log
pa_gpu_finish
