#!/bin/bash
# Thirty-fifth session, final check of the build CI ships (no tuning variants) with the
# hd64 Ampere kernels' ldmatrix offsets as one register per lane (decision 126; dense
# hd64 only, every other kernel's PTX identical to 60e190c's, which final_s34.sh checked):
# the forward suite by default, forced onto the Ampere kernel with LSE as the cases ask and
# with POLYATTN_TEST_NO_LSE=1, memcheck / racecheck on the Ampere kernel over hd64 cases;
# then alone: clock_probe's xa64 / xa128 cases (the Ampere default rows beside SDPA flash,
# sustained) and compare_torch on the Ampere kernel (bf16 and fp16, hd 64 and 128).
# ~250 s. SHORT=1: the suites and sanitizers only (~130 s). TIMINGS=1: the timings only
# (~80 s; the kernels' PTX is identical to what ldsm_s35.sh and final_s34.sh checked).
# Not run in the thirty-fifth session: after ldsm_s35.sh eight calls got no machine (four
# start attempts); the kernels it would check are PTX-identical to those checked (decision 126).
# Run: source .devkit/env; OUT=dir [SHORT=1] bash bench/gpu/final_s35.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup final_s35 python3 nvidia-smi test_forward polyattn
pa_gpu_state
STEP_TAIL=0
md5sum .devkit/lib/libpolyattn-cuda.so | tee -a "$SUMMARY"
HCASES=d64_b2_gqa_s300_block,d64_causal_s1000_nolse,s1500_causal_d64,s2500_causal_softcap_d64,d64_varlen_seqused
[ -n "$TIMINGS" ] || pa_ampere_suites ampere64 "$HCASES"
if [ -n "$SHORT" ]; then
  pa_gpu_pack_logs
  pa_gpu_finish
fi
step probe 150 python3 -u bench/gpu/clock_probe.py --rounds 2 --cases xa64s2k,xa64s8k,xa64s16k,xa64c8k
step torch-ampere 120 python3 -u bench/compare_torch.py --env-kernel ampere --no-efficient --no-cudnn \
  --dtypes bf16,fp16 --dims 64,128 --seqlens 2048,4096,8192,16384 --json "$LOG/torch-ampere.jsonl"
grep -E "speed-up|correctness" "$LOG/torch-ampere.log" | tee -a "$SUMMARY"
pa_gpu_pack_keep probe.log torch-ampere.log
pa_gpu_finish
