#!/bin/bash
# Final check of merged main on the H200 (eighth session): timings first, one at a
# time (the forward module of c16eb03 against this one, alternating processes; BLOCK
# on the persistent kernel; the standard sweeps against SDPA: forward, backward,
# decode), then the suites three at a time, then memcheck and racecheck. Run from a
# devkit with bench/compare_torch.py, bindings/python and old/ (c16eb03's module and
# libpolyattn) beside it:  cd KIT && source ./env && OUT=dir bash final_s8.sh
# Logs: bench/results/2026-12-01s8-h200-final/.
gzip -d lib/*.gz old/*.gz 2>/dev/null
R=$OUT; T0=$SECONDS
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
OLD="env LD_LIBRARY_PATH=$PWD/old:$LD_LIBRARY_PATH"
run1() { local n=$1; shift; timeout 12 "$@" > "$R/$n.log" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$R/$n.log" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')"; }
D="polyattn run --backend cuda --dtype bf16 --no-check --seq 8192 --batch 2 --repeat 200"
for i in 1 2; do
  run1 old-d128-$i $OLD $D --heads 16 --dim 128; run1 new-d128-$i $D --heads 16 --dim 128
  run1 old-d64-$i $OLD $D --heads 32 --dim 64; run1 new-d64-$i $D --heads 32 --dim 64
done
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3; do run1 block25-$i $B --density 0.25; done
run1 block100 $B --density 1.0
tab() { grep -E "^bf16|geomean|speed-up" "$R/$1.txt" | cut -c1-170; }
timeout 50 python3 bench/compare_torch.py --dtypes bf16 --dims 128,64 --seqlens 512,2048,8192,16384 --no-efficient --json "$R/torch-fwd.jsonl" > "$R/torch-fwd.txt" 2>&1; echo "== torch-fwd rc=$?"; tab torch-fwd
timeout 20 python3 bench/compare_torch.py --dtypes bf16 --dims 256 --seqlens 512,8192 --no-efficient --json "$R/torch-fwd256.jsonl" > "$R/torch-fwd256.txt" 2>&1; echo "== torch-fwd256 rc=$?"; tab torch-fwd256
timeout 30 python3 bench/compare_torch.py --backward --dtypes bf16 --dims 128,64 --seqlens 2048,8192 --json "$R/torch-bwd.jsonl" > "$R/torch-bwd.txt" 2>&1; echo "== torch-bwd rc=$?"; tab torch-bwd
timeout 25 python3 bench/compare_torch.py --decode --json "$R/torch-decode.jsonl" > "$R/torch-decode.txt" 2>&1; echo "== torch-decode rc=$?"; grep -vE "^\s*$" "$R/torch-decode.txt" | tail -8 | cut -c1-170
echo "timings $((SECONDS-T0))s"
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$R/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" "$R/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"; grep -h "\[FAIL\]" "$R/$n.log" | head -4 | cut -c1-200; done; }
bg fwd-default 70 test_forward --jobs 8
bg bwd-default 60 test_backward --jobs 6
bg test-cuda 40 test_cuda --jobs 4
wait; sum fwd-default bwd-default test-cuda
bg fwd-hopper 60 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 8
bg fwd-persist-7 70 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=7 test_forward --filter 'forward/sweep' --jobs 8
bg bwd-hopper 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper test_backward --filter 'backward/sweep' --jobs 6
wait; sum fwd-hopper fwd-persist-7 bwd-hopper
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
bg memcheck-fwd 60 env POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=d128_s128_b2,s1000,causal_sq17_sk256,decode_s1,d64_s64_h4,block128,block_dense1 $SAN --tool memcheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 4
bg racecheck-block 60 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=2 POLYATTN_TEST_CASES=block128_hopper_list_empty_rows $SAN --tool racecheck --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs 3
wait; sum memcheck-fwd racecheck-block
echo "total $((SECONDS-T0))s"
