#!/usr/bin/env bash
# (The script of a GPU round as it ran: `cd KIT && source ./env && OUT=dir timeout 200
# bash run.sh`; logs in bench/results/2026-12-01s8-sparse/r2.)
# eighth session, R2: the wgmma descriptors built once and advanced by an add
# (pa_wgmma_desc_at). ncu instruction counts of the dense default, the dense persistent
# and BLOCK 100% / 25% (persistent, grid); BLOCK timings against dense; the standard
# sweep against SDPA with the persistent variant beside the default; the forced sweeps.
set -u
gzip -d lib/*.gz 2>/dev/null
mkdir -p "$OUT"; S=$OUT/SUMMARY.txt; : > "$S"
V=POLYATTN_CUDA_HOPPER_VARIANT; G="env POLYATTN_CUDA_HOPPER_BLOCK_GRID=1"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=gpu__time_duration.sum,lts__t_bytes.sum,smsp__inst_executed.sum,dram__bytes_read.sum
P="polyattn run --backend cuda --dtype bf16 --no-check --heads 16 --dim 128 --seq 8192 --batch 2"
nc() { local n=$1; shift; timeout 30 "$@" > "$OUT/ncu-$n.txt" 2>&1; echo "== ncu $n rc=$? $(grep -E "gpu__|lts__|smsp__|dram__" "$OUT/ncu-$n.txt" | awk '{print $1, $(NF)}' | tr '\n' ' ')" | tee -a "$S"; }
K="--clock-control none --kernel-name regex:pa_hopper_fwd --launch-count 1 --metrics $M"
nc dense "$NCU" $K $P --repeat 1
nc dense-p env $V=pingpong-rel-p "$NCU" $K $P --repeat 1
nc block100-p "$NCU" $K $P --repeat 1 --sparsity block --block 128 --density 1.0
nc block100-g $G "$NCU" $K $P --repeat 1 --sparsity block --block 128 --density 1.0
nc block25-p "$NCU" $K $P --repeat 1 --sparsity block --block 128 --density 0.25
st() { local n=$1; shift; timeout 12 "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -E "^forward|^vs dense" "$OUT/$n.txt" | sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$S"; }
B="$P --repeat 40 --vs-dense --sparsity block --block 128"
st p25a polyattn run $B --density 0.25
st g25a $G polyattn run $B --density 0.25
st p25b polyattn run $B --density 0.25
st g25b $G polyattn run $B --density 0.25
st p100 polyattn run $B --density 1.0
st g100 $G polyattn run $B --density 1.0
st p25-d64 polyattn run --backend cuda --dtype bf16 --no-check --heads 32 --dim 64 --seq 8192 --batch 2 --repeat 40 --vs-dense --sparsity block --block 128 --density 0.25
export POLYATTN_LIB=$PWD/lib/libpolyattn.so
timeout 55 python3 bench/compare_torch.py --dims 128,64 --seqlens 512,8192,16384 --no-efficient \
  --variants "$V=default,pingpong-rel-p" --json "$OUT/torch.jsonl" > "$OUT/torch.txt" 2>&1
echo "== torch rc=$?" | tee -a "$S"; grep -E "^bf16|VARIANT=" "$OUT/torch.txt" | grep -v "first line" | cut -c1-140 | tee -a "$S"
export POLYATTN_TEST_BACKENDS=cuda
t() { local n=$1 l=$2; shift 2; timeout $l "$@" > "$OUT/$n.txt" 2>&1; echo "== $n rc=$? $(grep -h Synthesis "$OUT/$n.txt")" | tee -a "$S"; }
t sweep-hopper 40 env POLYATTN_CUDA_KERNEL=hopper test_forward --filter 'forward/sweep' --jobs 16
t sweep-block-auto 15 env POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
t sweep-p-block-3 15 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 POLYATTN_TEST_CASES=block,auto test_forward --filter 'forward/sweep' --jobs 16
