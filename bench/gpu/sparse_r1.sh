#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir bash run.sh`
# from a devkit whose large libraries were xz-compressed into KIT/libxz; logs in
# bench/results/2026-11-30s4-h200-sparse-*.)
# sparse R1: BLOCK sparsity on CUDA through the key-tile list (block_list.cuh).
# 1. forward sweep on CUDA, block cases + a few dense ones (oracle check)
# 2. time hd128 S8192 bf16 B2 H16: dense, block 128x128 at density 1/.5/.25/.1, block 64 at .25
# 3. mma.sp layout probe (for the 2:4 kernel of R2)
# 4. AUTO_BLOCK: sweep cases (mask must equal the CPU estimator's), S16384 timings
# 5. compute-sanitizer memcheck on block and auto cases
set -u
mkdir -p "$OUT"
# The kit keeps its large libraries xz-compressed (14 MiB limit): unpack them next
# to libpolyattn.so.0 (the registry loads libpolyattn-cuda.so from beside it).
L=$(mktemp -d)/lib; mkdir -p "$L"; cp lib/* "$L"/
for f in libxz/*.xz; do
  python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' "$f" "$L/$(basename "$f" .xz)" || xz -dc "$f" > "$L/$(basename "$f" .xz)"
done
chmod +x "$L"/*
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
ls "$L" > "$OUT/libs.txt"
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; tail -n 3 "$OUT/$name.log"; }
CASES=block,auto,d64_s64_h4,d128_s128_b2,s1000_causal_d128,s2048_d128,varlen_causal_gqa,window_32_16,alibi_softcap_window_gqa
step sweep 30 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=$CASES test_forward --filter forward/sweep --verbose
A="--backend cuda --dtype bf16 --batch 2 --heads 16 --dim 128 --seq 8192 --repeat 25"
step dense 12 polyattn run $A --no-check
step block100 8 polyattn run $A --sparsity block --block 128 --density 1.0 --no-check
step block50 8 polyattn run $A --sparsity block --block 128 --density 0.5 --no-check
step block25 14 polyattn run $A --sparsity block --block 128 --density 0.25
step block10 8 polyattn run $A --sparsity block --block 128 --density 0.1 --no-check
step block25_b64 8 polyattn run $A --sparsity block --block 64 --density 0.25 --no-check
step probe 6 mma_sp_probe
B="--backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 15"
step a16_auto_random 12 polyattn run $B --sparsity auto --vs-dense
step a16_auto_cl90 14 polyattn run $B --sparsity auto --clustered --threshold 0.9 --vs-dense
step a16_auto_cl95 12 polyattn run $B --sparsity auto --clustered --threshold 0.95 --no-check --vs-dense
step a16_auto_cl99 12 polyattn run $B --sparsity auto --clustered --threshold 0.99 --no-check --vs-dense
grep -H "forward\|keeps\|auto:\|vs dense\|approximation" "$OUT"/dense*.log "$OUT"/block*.log "$OUT"/a16*.log | tee -a "$S"
left=$((94 - SECONDS)); [ $left -gt 5 ] && step memcheck $left env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=block32x128_bh_emptyrows,block128x32_per_batch_causal,auto_clustered_varlen,auto_t0.9 compute-sanitizer --tool memcheck --error-exitcode 9 test_forward --filter forward/sweep
cat "$S"
