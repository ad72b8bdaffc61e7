#!/bin/bash
# Twelfth session, round 2: the stream-K tail after the fix for dp = 0 in the two-grid
# forms (R1: force:5 two and force:7 pdl failed 7 sweep cases each: the whole-block grid
# ran every block when no whole wave was left), 32-bit part arithmetic; the 16-byte prep
# (POLYATTN_CUDA_BWD_PREP=v16|v16x8). Suites, memcheck, compare_torch --backward in one
# process (tail pdl / off / pdl + v16 / pdl + v16x8 / off / pdl), ncu durations of the
# prep forms and of the main grids (hd128, hd64 at S2048).
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_r2.sh
# Logs: bench/results/2026-12-01s12-bwd/r2/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_r2 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
S=POLYATTN_CUDA_HOPPER_BWD_SK L=POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH P=POLYATTN_CUDA_BWD_PREP
step_bg bwd-v16 120 env $P=v16 test_backward --jobs 4
step_bg bwd-sk3-one 120 $H $S=force:3 test_backward --jobs 4
step_bg bwd-sk5-two 120 $H $S=force:5 $L=two test_backward --jobs 4
step_bg bwd-sk7-pdl-v16x8 120 $H $S=force:7 $L=pdl $P=v16x8 test_backward --jobs 4
step_wait
step_bg bwd-sk2-pdl 120 $H $S=force:2 $L=pdl test_backward --jobs 4
step_bg bwd-ampere-v16 120 env POLYATTN_CUDA_BACKWARD_KERNEL=ampere $P=v16 test_backward --jobs 4
step_bg memcheck-v16-pdl 90 $H $S=force:2 $L=pdl $P=v16 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg memcheck-v16x8-two 90 $H $S=force:5 $L=two $P=v16x8 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
C="python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384"
step torch 150 $C --variants "$S=on&$L=pdl,0,on&$L=pdl&$P=v16,on&$L=pdl&$P=v16x8,0#off2,on&$L=pdl#pdl2" --json "$LOG/torch.jsonl"
python3 bench/gpu/torch_summary.py "$LOG/torch.jsonl" | tee -a "$SUMMARY"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
echo "nsys: $(command -v nsys)" | tee -a "$SUMMARY"
for d in 128 64; do
  for form in fast v16 v16x8; do
    step ncu-d$d-$form 20 env $P=$form $S=on $L=two "$NCU" --clock-control none --kernel-name regex:'pa_bwd_|pa_hopper_bwd' --launch-count 4 \
      --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 2048 --batch 8 \
      --heads $((2048/d)) --dim $d
    grep -E "pa_bwd_|pa_hopper|gpu__time_duration|dram__throughput" "$LOG/ncu-d$d-$form.log" | grep -v PROF | sed 's/(pa_problem.*//' | cut -c1-110 | tee -a "$SUMMARY"
  done
  step ncu-d$d-sk0 20 env $S=0 "$NCU" --clock-control none --kernel-name regex:'pa_hopper_bwd' --launch-count 1 \
      --metrics gpu__time_duration.sum polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 2048 --batch 8 --heads $((2048/d)) --dim $d
  grep -E "pa_hopper|gpu__time_duration" "$LOG/ncu-d$d-sk0.log" | grep -v PROF | sed 's/(pa_problem.*//' | cut -c1-110 | tee -a "$SUMMARY"
done
pa_gpu_pack_logs
pa_gpu_finish
