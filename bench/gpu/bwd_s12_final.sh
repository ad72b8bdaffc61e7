#!/bin/bash
# Twelfth session, the committed code: the stream-K tail (decision 100; workers' pass
# counter in a register, R3 had it in shared memory) and the 16-byte prep (decision
# 101) as defaults. Suites (default choice, Hopper with the tail forced in its three
# launch forms, Ampere, Volta), the prep forms bit for bit, memcheck, racecheck,
# synccheck; compare_torch --backward in two processes: (1) bf16 with the previous
# defaults and the causal order's L2 budget at 32 and 256 MiB as variants, (2) bf16 and
# fp16 with cuDNN.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_final.sh
# Logs: bench/results/2026-12-01s12-bwd/final/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_final test_backward test_cuda polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
S=POLYATTN_CUDA_HOPPER_BWD_SK L=POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH P=POLYATTN_CUDA_BWD_PREP
step_bg bwd-default 120 test_backward --jobs 3
step_bg bwd-hopper-sk3-pdl 120 $H $S=force:3 test_backward --jobs 3
step_bg bwd-hopper-sk5-two 120 $H $S=force:5 $L=two test_backward --jobs 3
step_bg bwd-hopper-sk7-one 120 $H $S=force:7 $L=one test_backward --jobs 3
step_bg test-cuda 120 test_cuda --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
step_bg bwd-ampere 120 env POLYATTN_CUDA_BACKWARD_KERNEL=ampere test_backward --jobs 3
step_bg bwd-volta 120 env POLYATTN_CUDA_BACKWARD_KERNEL=volta test_backward --jobs 3
step_bg prep-bitwise 120 python3 bench/gpu/prep_bitwise.py
step_bg memcheck 90 $H $S=force:2 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg racecheck 90 $H $S=force:3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d96_sq113_sk3 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg synccheck 90 $H $S=force:3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d96_sq113_sk3 "$SAN" --tool synccheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
tail -1 "$LOG/prep-bitwise.log" | tee -a "$SUMMARY"
C="python3 bench/compare_torch.py --backward --no-efficient --seqlens 2048,8192,16384 --dims 128,64"
B=POLYATTN_CUDA_HOPPER_BWD_LPT_MB
step torch-1 150 $C --no-cudnn --dtypes bf16 --variants "$S=on,0&$P=fast,on&$B=32,on&$B=256,on#2" --json "$LOG/torch-1.jsonl"
step torch-2 150 $C --dtypes bf16,fp16 --json "$LOG/torch-2.jsonl"
for n in torch-1 torch-2; do
python3 bench/gpu/torch_summary.py "$LOG/$n.jsonl" | sed "s/^/$n /" | tee -a "$SUMMARY"
done
pa_gpu_pack_logs
pa_gpu_finish
