#!/bin/bash
# Ninth session, final check of the committed kernels (R4's minus the PDL switch and the
# hd64 "-os" variant, plus the review's barrier on the register-store path): suites
# with the new defaults, BLOCK timings, SDPA in the same process; then a persistent
# three-consumer hd64 kernel ("serial-s3-rel-wg3-p", bf16) against the hd64 defaults. cd KIT && source ./env && OUT=dir bash run.sh; logs in
# bench/results/2026-12-01s9-tile/final/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; S=$R/SUMMARY.txt; : > "$S"; T0=$SECONDS
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$R/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" "$R/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)" | tee -a "$S"; grep -h "\[FAIL\]\|Error: Race" "$R/$n.log" | head -4 | cut -c1-200 | tee -a "$S"; done; echo "t=$((SECONDS-T0))" | tee -a "$S"; }
bg fwd-default 100 test_forward --jobs 16
wait; sum fwd-default
bg fwd-hopper 60 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 16
wait; sum fwd-hopper
bg fwd-persist-7 60 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=7 $V=pingpong-rel-p-q2-os test_forward --filter 'forward/sweep' --jobs 16
wait; sum fwd-persist-7
bg test-cuda 40 test_cuda --jobs 4
bg block-auto 30 env POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 8
wait; sum test-cuda block-auto
st() { local n=$1; shift; timeout 12 "$@" > "$R/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$R/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2 3; do st b25-$i $B --density 0.25; done
st b100 $B --density 1.0
echo "t=$((SECONDS-T0))" | tee -a "$S"
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
tab() { grep -E "^bf16|VARIANT=|geomean" "$R/$1.txt" | grep -v "first line" | cut -c1-150 | tee -a "$S"; }
timeout 60 python3 bench/compare_torch.py --dtypes bf16 --dims 128,64 --seqlens 512,2048,8192,16384 --no-efficient --json "$R/torch-fwd.jsonl" > "$R/torch-fwd.txt" 2>&1; echo "== torch-fwd rc=$?" | tee -a "$S"; tab torch-fwd
timeout 30 python3 bench/compare_torch.py --dtypes bf16 --dims 256 --seqlens 512,8192 --no-efficient --json "$R/torch-fwd256.jsonl" > "$R/torch-fwd256.txt" 2>&1; echo "== torch-fwd256 rc=$?" | tee -a "$S"; tab torch-fwd256
bg wg3p-7 60 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=7 $V=serial-s3-rel-wg3-p test_forward --filter 'forward/sweep' --jobs 16
wait; sum wg3p-7
timeout 60 python3 bench/compare_torch.py --dtypes bf16 --dims 64 --seqlens 512,2048,8192 --no-efficient --variants "$V=default,serial-s3-rel-wg3-p" --json "$R/torch-wg3p.jsonl" > "$R/torch-wg3p.txt" 2>&1; echo "== torch-wg3p rc=$?" | tee -a "$S"; tab torch-wg3p
echo "total $((SECONDS-T0))s" | tee -a "$S"
