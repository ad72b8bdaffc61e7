#!/bin/bash
# Eleventh session R5 (issue 4): R4's SASS showed that R1's "red" knock-out also lost
# dQ's 8 HGMMAs (ptxas drops a wgmma whose result is unused): the ~40% is the dQ phase,
# not the adds. Its products read dS^T MN-major (imm-trans-a = 1). dsk
# (POLYATTN_CUDA_HOPPER_BWD_KO=dsk, PA_HBWD_DSK): dS stored K-major by stmatrix .trans,
# dQ's A read K-major. Suites and memcheck with dsk; compare_torch --backward: none,
# dsk, none again, dsk again; then polyattn run --backward in separate processes for
# the ksplit variant (read once per process) with and without dsk.
# Needs the measurement patch: `git checkout eb1be17 && patch -p1 < bench/gpu/bwd_ko_s11.patch`
# (the knock-outs and variants; R1-R4 ran parts of it), a build and a devkit; then
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s11_r5.sh
# Logs: bench/results/2026-12-01s11-bwd/r5/.
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s11_r5 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
K=POLYATTN_CUDA_HOPPER_BWD_KO
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$LOG/gpu.txt" 2>&1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step_bg suite-dsk-hopper3 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=dsk POLYATTN_CUDA_HOPPER_BWD_GROUP=3 test_backward --jobs 5
step_bg suite-dsk-default 60 env $K=dsk test_backward --jobs 5
step_bg suite-dsk-ksplit 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=dsk POLYATTN_CUDA_HOPPER_BWD_VARIANT=ksplit test_backward --jobs 3
step_bg memcheck-dsk 60 env POLYATTN_CUDA_BACKWARD_KERNEL=hopper $K=dsk POLYATTN_TEST_CASES='bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3' "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step torch-bwd 240 python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 \
  --seqlens 2048,8192,16384 --variants "$K=none,dsk,none#2,dsk#2" --json "$LOG/torch-bwd.jsonl"
grep -E "^bf16|BWD_KO|geomean" "$LOG/torch-bwd.log" | cut -c1-150 | tee -a "$SUMMARY"
R="polyattn run --backend cuda --backward --dtype bf16 --no-check --seq 8192 --batch 2 --repeat 20"
for v in default ksplit; do
  for k in none dsk; do
    timed $v-$k-d128 env POLYATTN_CUDA_HOPPER_BWD_VARIANT=$v $K=$k $R --heads 16 --dim 128
  done
done
for v in default ksplit; do
  for k in none dsk; do
    timed $v-$k-d64 env POLYATTN_CUDA_HOPPER_BWD_VARIANT=$v $K=$k $R --heads 32 --dim 64
  done
done
grep -h '^backward' "$LOG"/*-d128.txt "$LOG"/*-d64.txt | head -0
for f in "$LOG"/*-d*.txt; do echo "$(basename $f .txt): $(grep -E '^backward' $f | tr -s ' ')"; done | tee -a "$SUMMARY"
echo "total t=$SECONDS" | tee -a "$SUMMARY"
(cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete && mv /tmp/logs.tgz .)
pa_gpu_finish
