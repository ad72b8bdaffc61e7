#!/bin/bash
# Final check of merged main on the H200 (seventh session): default kernel choice
# (the persistent Hopper forward for short key ranges, decision 89), forced Hopper
# sweep, test_cuda, backward suite, decode, a small memcheck, and same-process PyTorch
# figures for the standard forward sweep, decode and the hd128 backward. Run from a
# devkit with bench/compare_torch.py and bindings/python beside it:
#   cd KIT && source ./env && OUT=dir bash final_s7.sh
# Logs: bench/results/2026-12-01s7-h200-final/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
st() { local n=$1 t=$2; shift 2; local t1=$SECONDS; timeout "$t" "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $((SECONDS-t1))s"; grep -hE "Synthesis|\[FAIL\]|ERROR SUMMARY" "$R/$n.log" | head -6 | cut -c1-200; }
tab() { grep -E "^bf16|geomean|speed-up" "$R/$1.txt" | cut -c1-170; }
export POLYATTN_TEST_BACKENDS=cuda POLYATTN_LIB=$PWD/lib/libpolyattn.so
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
st fwd-default 60 test_forward --jobs 16
st fwd-hopper 45 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 16
st test-cuda 25 test_cuda --jobs 8
st bwd-default 40 test_backward --jobs 12
st bwd-hopper 40 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper test_backward --filter 'backward/sweep' --jobs 12
st memcheck-fwd 40 env POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=d128_s128_b2,s1000,causal_sq17_sk256,decode_s1,d64_s64_h4 $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
timeout 45 python3 bench/compare_torch.py --dtypes bf16 --dims 128,64 --seqlens 512,2048,8192,16384 --no-efficient --json "$R/torch-fwd.jsonl" > "$R/torch-fwd.txt" 2>&1; echo "== torch-fwd rc=$?"; tab torch-fwd
timeout 20 python3 bench/compare_torch.py --dtypes bf16 --dims 256 --seqlens 512,8192 --no-efficient --json "$R/torch-fwd256.jsonl" > "$R/torch-fwd256.txt" 2>&1; echo "== torch-fwd256 rc=$?"; tab torch-fwd256
timeout 25 python3 bench/compare_torch.py --decode --json "$R/torch-decode.jsonl" > "$R/torch-decode.txt" 2>&1; echo "== torch-decode rc=$?"; grep -vE "^\s*$" "$R/torch-decode.txt" | tail -8 | cut -c1-170
timeout 25 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128 --seqlens 2048,8192 --json "$R/torch-bwd.jsonl" > "$R/torch-bwd.txt" 2>&1; echo "== torch-bwd rc=$?"; tab torch-bwd
echo "total $((SECONDS-T0))s"
