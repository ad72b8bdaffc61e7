#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir bash run.sh`
# from a devkit whose large libraries were xz-compressed into KIT/libxz; logs in
# bench/results/2026-11-30s4-h200-sparse-*.)
# sparse R2a: 2:4 on CUDA (Ampere SP24 variant, mma.sp) and the backward of 2:4 / AUTO_BLOCK.
# 1. forward sweep on CUDA: nm24, auto, block cases; 2. backward sweep: nm24, auto, block
# 3. 2:4 vs dense, standard sweep (B*S = 16384, H = 2048/D), hd 64/128, S 4096/8192/16384
# 4. 2:4 without the selection step (timing variant); 5. 2:4 on structured inputs
# 6. SASS: HMMA.SP in the 2:4 kernel (if cuobjdump exists there)
# 7. AUTO_BLOCK on structured inputs, S16384 hd128, thresholds .9/.95/.99 (cutoff 1, and default)
# 8. ncu: the estimator kernels' durations at S16384
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
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; tail -n 2 "$OUT/$name.log"; }
step sweep 25 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=nm24,auto,block test_forward --filter forward/sweep --verbose
step bwd 15 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_TEST_CASES=nm24,auto,block test_backward --verbose
R="--backend cuda --dtype bf16 --sparsity 2:4 --vs-dense --repeat 10"
step sp_d128_s4096 8 polyattn run $R --batch 4 --heads 16 --dim 128 --seq 4096
step sp_d128_s8192 6 polyattn run $R --batch 2 --heads 16 --dim 128 --seq 8192 --no-check
step sp_d128_s16384 7 polyattn run $R --batch 1 --heads 16 --dim 128 --seq 16384 --no-check
step sp_d64_s4096 6 polyattn run $R --batch 4 --heads 32 --dim 64 --seq 4096 --no-check
step sp_d64_s8192 8 polyattn run $R --batch 2 --heads 32 --dim 64 --seq 8192
step sp_d64_s16384 7 polyattn run $R --batch 1 --heads 32 --dim 64 --seq 16384 --no-check
step nosel_d128_s8192 6 env POLYATTN_CUDA_SP24_SELECT=0 polyattn run $R --batch 2 --heads 16 --dim 128 --seq 8192 --no-check
step nosel_d64_s8192 6 env POLYATTN_CUDA_SP24_SELECT=0 polyattn run $R --batch 2 --heads 32 --dim 64 --seq 8192 --no-check
step sp_d128_s4096_struct 6 polyattn run $R --batch 4 --heads 16 --dim 128 --seq 4096 --structured --no-check
grep -H "forward \|vs dense" "$OUT"/sp_*.log "$OUT"/nosel_*.log | tee -a "$S"
CUO=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "$CUO" ]; then
  timeout 10 "$CUO" -sass "$L/libpolyattn-cuda.so" > "$OUT/sass-full.txt" 2>&1
  awk '/Function :/{f=$3} /HMMA/{split($0,a,"HMMA"); split(a[2],b," "); c[f" HMMA"b[1]]++} END{for(k in c) print c[k], k}' "$OUT/sass-full.txt" | grep -i "Lb1E\|Lb0E" | sort -k2 > "$OUT/sass-hmma.txt"
  rm -f "$OUT/sass-full.txt"; echo "sass: $(wc -l < "$OUT/sass-hmma.txt") lines" | tee -a "$S"
else echo "sass: no cuobjdump on this machine" | tee -a "$S"; fi
B="--backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 10 --structured --sparsity auto --vs-dense --no-check"
step au_s90 10 polyattn run $B --threshold 0.9 --cutoff 1
step au_s95 10 polyattn run $B --threshold 0.95 --cutoff 1
step au_s99 10 polyattn run $B --threshold 0.99 --cutoff 1
step au_s95_default 10 polyattn run $B --threshold 0.95
grep -H "forward \|vs dense\|auto:\|keeps" "$OUT"/au_*.log | tee -a "$S"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
left=$((95 - SECONDS))
if [ -n "$NCU" ] && [ $left -gt 8 ]; then
  step ncu_est $left "$NCU" --kernel-name regex:"pool_k|choose|settle|block_list|fwd_kernel" --launch-count 6 --metrics gpu__time_duration.sum polyattn run --backend cuda --dtype bf16 --batch 1 --heads 16 --dim 128 --seq 16384 --repeat 1 --sparsity auto --no-check
  grep -E "pool_k|choose|settle|block_list|fwd_kernel|gpu__time_duration" "$OUT/ncu_est.log" | tee -a "$S"
fi
cat "$S"
