#!/bin/bash
# Ninth session, after final_s9b.sh: "-q2" dropped at hd256 in pa_hopper_effective (the
# forced "-p-q2-os" sweep had refused the hd256 cases) and the hd64 "-wg3-p" variant
# removed. The forced persistent sweep with 7 blocks and the whole forward suite again.
# Logs: bench/results/2026-12-01s9-tile/final2/.
gzip -d lib/*.gz 2>/dev/null
R=$OUT; S=$R/SUMMARY.txt; : > "$S"; T0=$SECONDS
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$R/$n.log" 2>&1; echo $? > "$R/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$R/$n.rc" 2>/dev/null) $(grep -hE "Synthesis" "$R/$n.log" | tr -s ' ' | cut -c1-200)" | tee -a "$S"; grep -h "\[FAIL\]" "$R/$n.log" | head -4 | cut -c1-200 | tee -a "$S"; done; echo "t=$((SECONDS-T0))" | tee -a "$S"; }
bg fwd-persist-7 60 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=7 POLYATTN_CUDA_HOPPER_VARIANT=pingpong-rel-p-q2-os test_forward --filter 'forward/sweep' --jobs 16
wait; sum fwd-persist-7
bg fwd-default 100 test_forward --jobs 16
wait; sum fwd-default
B="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2 --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2; do timeout 12 $B --density 0.25 > "$R/b25-$i.txt" 2>&1; echo "== b25-$i $(grep -E "^forward|^vs dense" "$R/b25-$i.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; done
echo "total $((SECONDS-T0))s" | tee -a "$S"
