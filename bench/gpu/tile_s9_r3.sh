#!/usr/bin/env bash
# (The script of a GPU round as it ran: `cd KIT && source ./env && OUT=dir timeout 420
# bash run.sh`; logs in bench/results/2026-12-01s9-tile/r3.)
# ninth session, R3: O through shared memory at hd64's three consumers
# ("serial-s3-rel-wg3-os") and hd256 ("pingpong-rel-os" there); a three-stage ring on
# the persistent kernel ("pingpong-s3-rel-p") for BLOCK; ncu of BLOCK 25% against dense
# (the SMs' active cycles: how much of the call is the tail, L2 hit rate, instructions).
set -u
gzip -d lib/*.gz 2>/dev/null
mkdir -p "$OUT"; S=$OUT/SUMMARY.txt; : > "$S"; T0=$SECONDS
V=POLYATTN_CUDA_HOPPER_VARIANT
export POLYATTN_TEST_BACKENDS=cuda
bg() { local n=$1 t=$2; shift 2; ( timeout "$t" "$@" > "$OUT/$n.log" 2>&1; echo $? > "$OUT/$n.rc" ) & }
sum() { for n in "$@"; do echo "== $n rc=$(cat "$OUT/$n.rc" 2>/dev/null) $(grep -hE "Synthesis|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$n.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)" | tee -a "$S"; grep -h "\[FAIL\]\|Error: Race\|Assertion" "$OUT/$n.log" | head -6 | cut -c1-220 | tee -a "$S"; done; }
# bf16 hd64 cases run wg3-os; hd128 bf16 ones its fallback; hd256 bf16 ones run rel-os in the second
bg wg3-os 60 env POLYATTN_CUDA_KERNEL=hopper $V=serial-s3-rel-wg3-os test_forward --filter 'forward/sweep' --jobs 16
wait; sum wg3-os; echo "t=$((SECONDS-T0))" | tee -a "$S"
bg os-d256 40 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-rel-os POLYATTN_TEST_CASES=d256,256 test_forward --filter 'forward/sweep' --jobs 16
bg s3p-block 40 env POLYATTN_CUDA_KERNEL=hopper $V=pingpong-s3-rel-p POLYATTN_CUDA_HOPPER_BLOCKS=5 POLYATTN_TEST_CASES=block,auto,d128 test_forward --filter 'forward/sweep' --jobs 8
wait; sum os-d256 s3p-block; echo "t=$((SECONDS-T0))" | tee -a "$S"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,smsp__inst_executed.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2"
nc() { local n=$1; shift; timeout 40 "$@" > "$OUT/ncu-$n.txt" 2>&1; echo "== ncu $n rc=$? $(grep -E "gpu__|sm__|lts__|smsp__|dram__" "$OUT/ncu-$n.txt" | awk '{print $1, $(NF)}' | tr '\n' ' ')" | tee -a "$S"; }
K="--clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M"
nc b25-os env $V=pingpong-rel-p-q2-os "$NCU" $K $P --repeat 1 --sparsity block --block 128 --density 0.25
nc b100-os env $V=pingpong-rel-p-q2-os "$NCU" $K $P --repeat 1 --sparsity block --block 128 --density 1.0
nc dense-os env $V=pingpong-rel-os "$NCU" $K $P --repeat 1
# where the warps wait in BLOCK 25%: per-SASS-instruction stall samples (source page, CSV)
timeout 90 env $V=pingpong-rel-p-q2-os "$NCU" --clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --section WarpStateStats --section SourceCounters --page source --csv --print-source sass $P --repeat 1 --sparsity block --block 128 --density 0.25 > "$OUT/ncu-src-b25.csv" 2> "$OUT/ncu-src-b25.err"
echo "== ncu-src rc=$? $(wc -l < "$OUT/ncu-src-b25.csv") lines" | tee -a "$S"
echo "t=$((SECONDS-T0))" | tee -a "$S"
st() { local n=$1; shift; timeout 12 "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$OUT/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="$P --repeat 60 --vs-dense --sparsity block --block 128"
for i in 1 2; do
  st os-25-$i env $V=pingpong-rel-p-q2-os $B --density 0.25
  st s3p-25-$i env $V=pingpong-s3-rel-p $B --density 0.25
done
echo "t=$((SECONDS-T0))" | tee -a "$S"
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
timeout 70 python3 bench/compare_torch.py --dims 64 --seqlens 2048,8192,16384 --no-efficient \
  --variants "$V=default,serial-s3-rel-wg3-os" --json "$OUT/torch64.jsonl" > "$OUT/torch64.txt" 2>&1
echo "== torch64 rc=$?" | tee -a "$S"; grep -E "^bf16|VARIANT=" "$OUT/torch64.txt" | grep -v "first line" | cut -c1-140 | tee -a "$S"
timeout 60 python3 bench/compare_torch.py --dims 256 --seqlens 512,8192 --hidden 2048 --no-efficient \
  --variants "$V=default,pingpong-rel-os" --json "$OUT/torch256.jsonl" > "$OUT/torch256.txt" 2>&1
echo "== torch256 rc=$?" | tee -a "$S"; grep -E "^bf16|VARIANT=" "$OUT/torch256.txt" | grep -v "first line" | cut -c1-140 | tee -a "$S"
echo "total $((SECONDS-T0))s" | tee -a "$S"
