#!/bin/bash
# Twelfth session, round 3: the candidate defaults — the 16-byte prep that keeps prep16's
# order of summation (decision 101; R2's first form summed in another order and failed
# bw_d32_s1's exact bound) and the stream-K tail by dependent launch (decision 100).
# Suites (default choice, Hopper with the tail forced, Ampere, Volta), the bitwise
# check of the prep forms, memcheck/racecheck, compare_torch --backward with the
# previous defaults and each change alone in one process, ncu of the tail's grids.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_r3.sh
# Logs: bench/results/2026-12-01s12-bwd/r3/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_r3 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
S=POLYATTN_CUDA_HOPPER_BWD_SK L=POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH P=POLYATTN_CUDA_BWD_PREP
step_bg bwd-default 120 test_backward --jobs 4
step_bg bwd-hopper-sk3 120 $H $S=force:3 test_backward --jobs 4
step_bg bwd-ampere 120 env POLYATTN_CUDA_BACKWARD_KERNEL=ampere test_backward --jobs 4
step_bg bwd-volta 120 env POLYATTN_CUDA_BACKWARD_KERNEL=volta test_backward --jobs 4
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step_bg prep-bitwise 120 python3 bench/gpu/prep_bitwise.py
step_bg bwd-hopper-sk7-one-fast 120 $H $S=force:7 $L=one $P=fast test_backward --jobs 4
step_bg memcheck 90 $H $S=force:2 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg racecheck 90 $H $S=force:3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d96_sq113_sk3 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
grep -E "differ|DIFFER" "$LOG/prep-bitwise.log" | tail -3 | tee -a "$SUMMARY"
C="python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384"
step torch 150 $C --variants "$S=on,0&$P=fast,on&$P=fast,0,on#2" --json "$LOG/torch.jsonl"
python3 bench/gpu/torch_summary.py "$LOG/torch.jsonl" | tee -a "$SUMMARY"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
for d in 128 64; do
  step ncu-d$d 30 env $L=two "$NCU" --clock-control none --kernel-name regex:'pa_bwd_|pa_hopper_bwd' --launch-count 4 \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active \
    polyattn run --backend cuda --backward --dtype bf16 --repeat 1 --no-check --seq 2048 --batch 8 \
    --heads $((2048/d)) --dim $d
  grep -E "pa_bwd_|pa_hopper|gpu__time|dram__|lts__|warps_active" "$LOG/ncu-d$d.log" | grep -v PROF | sed 's/(pa_problem.*//' | cut -c1-110 | tee -a "$SUMMARY"
done
pa_gpu_pack_logs
pa_gpu_finish
