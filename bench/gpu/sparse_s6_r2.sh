#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir
# timeout 100 bash run.sh` from a devkit whose large libraries are gzip-compressed;
# logs in bench/results/2026-11-30s6-sparse-*.)
# sparse, sixth session, R2 (after R1: the choose kernel's staging loads all in
# flight before the shared-memory stores, the pool reads 16 rows a step with heads
# fastest across warps, the settle kernel stores 16 bytes at once):
# 1. forward sweep on CUDA, block and auto cases, verbose (each AUTO mask vs the CPU's)
# 2. ncu: each kernel of one AUTO call on random inputs at S16384
# 3. AUTO on random inputs at S16384 (falls back to dense) against dense, by events
# 4. compute-sanitizer memcheck on small AUTO cases
# 5. AUTO on structured inputs at S16384, thresholds 0.9 / 0.95 / 0.99 (cut-off 1)
# 6. a mask the sweep does not reach: 512 key blocks (the choose kernel's chunk of
#    256 key blocks twice), compared with the CPU estimator by the CLI; hd72
set -u
mkdir -p "$OUT"
gzip -d lib/*.gz bin/*.gz 2>/dev/null; chmod +x bin/*
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS left=$((96 - SECONDS))
  [ "$left" -lt 4 ] && { echo "$name SKIPPED (budget)" | tee -a "$S"; return; }
  [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; grep -E "^forward|^vs dense|keeps|auto:|Synthesis|ERROR SUMMARY|FAIL" "$OUT/$name.log" | tail -n 8 | tee -a "$S"; }
step sweep 12 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16 --verbose
grep -o "block_mask_out [a-zA-Z]*: [0-9]*/[0-9]* differ" "$OUT/sweep.log" | sed -E 's#: [0-9]*/[0-9]*#: D/N#' | sort | uniq -c | tee -a "$S"
grep -o "block_mask_out [a-zA-Z]*: [1-9][0-9]*/[0-9]* differ" "$OUT/sweep.log" | tee -a "$S"
R="--backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
step ncu-auto-random 12 "$NCU" --kernel-name regex:"pool_kernel|choose|settle|block_list|fwd_kernel" --launch-count 6 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active polyattn run $R --repeat 1 --no-check --sparsity auto
grep -E "pool_kernel|choose|settle|block_list|fwd_kernel|gpu__time_duration|dram__|warps_active" "$OUT/ncu-auto-random.log" | sed -E 's/\(pa_problem.*//;s/\(<unnamed>::pa_hopper_args.*//' | tee -a "$S"
step auto-random-s16384 12 polyattn run $R --repeat 20 --no-check --vs-dense --sparsity auto
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step memcheck-auto 12 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=auto_clustered_varlen,auto_block32_t0.9,auto_t0.9 "$CS" --tool memcheck --error-exitcode 9 test_forward --filter 'forward/sweep' --jobs 1
for t in 0.9 0.95 0.99; do
  step auto-structured-$t 8 polyattn run $R --repeat 5 --no-check --vs-dense --sparsity auto --structured --threshold $t --cutoff 1
done
C="--backend cuda --dtype bf16 --batch 1 --no-check --sparsity auto --structured --cutoff 1 --repeat 3"
step mask-s32768 10 polyattn run $C --heads 2 --dim 128 --seq 32768 --threshold 0.9
step mask-d72 6 polyattn run $C --heads 4 --dim 72 --seq 4096 --threshold 0.9
cat "$S"
