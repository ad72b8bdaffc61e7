#!/bin/bash
# Fourteenth session, decode R1 (issue 3): the split kernel's K/V ring unpadded and
# XOR-swizzled (decode_mma.cuh mma_kv_pitch), so that a warp's copy of two rows asks L2
# for the 16 sectors it needs, not 24 (decode_s14_l2.sh: 6.34 M L2 read sectors for 4.20 M
# from DRAM; cuDNN's kernel 4.20 M). Decode sweep with each copy form, merge and tile
# variant; graph capture and 20-run identity; memcheck and racecheck; ncu's L2 counters
# of the new kernel; then decode_variants.py (graph replay / scrub / do_bench beside SDPA
# flash and cuDNN) with the new module and, in a second process, the old one
# (.devkit/oldmod: the committed code before this change).
# Run: source .devkit/env; OUT=dir bash bench/gpu/decode_s14_r1.sh
gzip -d .devkit/lib/*.gz .devkit/oldmod/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s14_r1 polyattn test_forward test_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOG/gpu.txt" 2>&1
export POLYATTN_TEST_BACKENDS=cuda
CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse
T="POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=$CASES"
step sweep-lean 120 env $T test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-async 120 env $T POLYATTN_CUDA_DECODE_COPY=async test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-k16 120 env $T POLYATTN_CUDA_DECODE_VARIANT=k16 test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-cluster 120 env $T POLYATTN_CUDA_DECODE_MERGE=cluster test_forward --verbose --filter 'forward/sweep' --jobs 8
step sweep-mergekernel 120 env $T POLYATTN_CUDA_DECODE_MERGE=kernel test_forward --verbose --filter 'forward/sweep' --jobs 8
step graph 60 test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
step det 60 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
  test_forward --verbose --filter 'forward/deterministic'
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
MC=decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256,decode_s1_sk16384
step memcheck 120 env POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=$MC \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step memcheck-async 120 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_COPY=async POLYATTN_TEST_CASES=$MC \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
step racecheck 120 env POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,decode_sq2_sk1500,d40_softcap \
  "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=dram__sectors_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
P="polyattn run --backend cuda --repeat 3 --no-check --dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 4096"
step ncu-new 60 "$NCU" --clock-control none -k regex:decode --launch-skip 2 --launch-count 1 --metrics $M $P
step ncu-old 60 env POLYATTN_BACKEND_PATH=$PWD/.devkit/oldmod "$NCU" --clock-control none -k regex:decode --launch-skip 2 --launch-count 1 --metrics $M $P
V="default:;async:POLYATTN_CUDA_DECODE_COPY=async;k16:POLYATTN_CUDA_DECODE_VARIANT=k16;default-again:"
step perf-new 120 python3 bench/gpu/decode_variants.py --variants "$V" --json "$LOG/decode-new.jsonl"
step perf-old 120 env POLYATTN_BACKEND_PATH=$PWD/.devkit/oldmod python3 bench/gpu/decode_variants.py \
  --variants "old:;old-again:" --json "$LOG/decode-old.jsonl"
grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/graph.log "$LOG"/det.log | sed 's/^/  /'
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG"/memcheck*.log "$LOG"/racecheck.log
for f in ncu-new ncu-old; do echo "== $f"; grep -E "__|decode_mma" "$LOG/$f.log" | cut -c1-120; done | tee -a "$SUMMARY"
grep -vh "^#" "$LOG/perf-new.log" "$LOG/perf-old.log" | grep -E "^ +[0-9]" | cut -c1-170 | tee -a "$SUMMARY"
mkdir -p /tmp/keep && cp "$LOG"/*.jsonl /tmp/keep/
pa_gpu_pack_logs
cp /tmp/keep/*.jsonl "$LOG/"
pa_gpu_finish
