#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir
# timeout 100 bash run.sh` from a devkit whose large libraries are gzip-compressed;
# logs in bench/results/2026-11-30s6-sparse-*.)
# sparse, sixth session, R1 (the re-designed estimator: fp32 in autoblock.h's orders,
# pooling at full width, scores as a shared-memory product, the kept set by a
# bitwise search of lane sums; never run before):
# 1. forward sweep on CUDA, default kernel choice: the block and auto cases (every
#    AUTO mask returned must equal the CPU estimator's, byte for byte)
# 2. AUTO on random inputs at S16384 (falls back to dense) against dense, by events
# 3. ncu: each kernel of one such AUTO call
# 4. compute-sanitizer memcheck on small AUTO cases (varlen, 32-blocks, GQA causal)
# 5. AUTO on structured inputs at S16384, thresholds 0.9 / 0.95 / 0.99 (cut-off 1)
set -u
mkdir -p "$OUT"
gzip -d lib/*.gz 2>/dev/null
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS left=$((96 - SECONDS))
  [ "$left" -lt 4 ] && { echo "$name SKIPPED (budget)" | tee -a "$S"; return; }
  [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; grep -E "^forward|^vs dense|keeps|auto:|Synthesis|ERROR SUMMARY|FAIL|differ from" "$OUT/$name.log" | grep -v " 0/[0-9]* differ" | tail -n 8 | tee -a "$S"; }
step sweep 16 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
grep -c "block_mask_out ok: 0/" "$OUT/sweep.log" | sed 's/^/AUTO masks equal to the CPU estimator: /' | tee -a "$S"
R="--backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384"
step auto-random-s16384 12 polyattn run $R --repeat 20 --no-check --vs-dense --sparsity auto
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
step ncu-auto-random 12 "$NCU" --kernel-name regex:"pool_kernel|choose|settle|block_list|fwd_kernel" --launch-count 7 --metrics gpu__time_duration.sum polyattn run $R --repeat 1 --no-check --sparsity auto
grep -E "pool_kernel|choose|settle|block_list|fwd_kernel|gpu__time_duration" "$OUT/ncu-auto-random.log" | sed -E 's/\(pa_problem.*//' | tee -a "$S"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step memcheck-auto 16 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=auto_clustered_varlen,auto_block32_t0.9,auto_clustered_causal_gqa "$CS" --tool memcheck --error-exitcode 9 test_forward --filter 'forward/sweep' --jobs 1
for t in 0.9 0.95 0.99; do
  step auto-structured-$t 10 polyattn run $R --repeat 5 --no-check --vs-dense --sparsity auto --structured --threshold $t --cutoff 1
done
cat "$S"
