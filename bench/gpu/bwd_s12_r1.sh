#!/bin/bash
# Twelfth session, round 1: the stream-K tail of the Hopper backward (decision 100).
# Suites with the tail forced on small problems (force:n workers) in each launch form,
# memcheck and racecheck with it forced, then compare_torch --backward with the tail
# off / one grid / two grids / dependent launch in one process; the SASS of the
# workers' kernel (where its spills sit).
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s12_r1.sh
# Logs: bench/results/2026-12-01s12-bwd/r1/.
gzip -d .devkit/lib/*.gz .devkit/old/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup bwd_s12_r1 test_backward polyattn
export POLYATTN_TEST_BACKENDS=cuda
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
H="env POLYATTN_CUDA_BACKWARD_KERNEL=hopper"
step_bg bwd-default 120 test_backward --jobs 4
step_bg bwd-sk3-one 120 $H POLYATTN_CUDA_HOPPER_BWD_SK=force:3 test_backward --jobs 4
step_bg bwd-sk5-two 120 $H POLYATTN_CUDA_HOPPER_BWD_SK=force:5 POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH=two test_backward --jobs 4
step_bg bwd-sk7-pdl 120 $H POLYATTN_CUDA_HOPPER_BWD_SK=force:7 POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH=pdl test_backward --jobs 4
step_wait
step_bg memcheck-sk 90 $H POLYATTN_CUDA_HOPPER_BWD_SK=force:3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d40_dv72,bw_mma_d128_varlen_seqused,bw_d96_sq113_sk3 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg memcheck-sk-pdl 90 $H POLYATTN_CUDA_HOPPER_BWD_SK=force:2 POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH=pdl POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_mma_d128_varlen_seqused "$SAN" --tool memcheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_bg racecheck-sk 90 $H POLYATTN_CUDA_HOPPER_BWD_SK=force:3 POLYATTN_TEST_CASES=bw_d64_s64_b2h2,bw_d96_sq113_sk3 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 10 test_backward --filter 'backward/sweep' --jobs 2
step_wait
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
S=POLYATTN_CUDA_HOPPER_BWD_SK L=POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH
C="python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128,64 --seqlens 2048,8192,16384"
step torch-sk 150 $C --variants "$S=on&$L=pdl,0,on&$L=one,on&$L=two,0#off2,on&$L=pdl#pdl2" --json "$LOG/torch-sk.jsonl"
python3 bench/gpu/torch_summary.py "$LOG/torch-sk.jsonl" | tee -a "$SUMMARY"
M=.devkit/lib/libpolyattn-cuda.so
step sass 60 bash -c "cuobjdump -sass $M > /tmp/all.sass && python3 - <<'PY'
import re
cur=None; out={}
for l in open('/tmp/all.sass'):
    m=re.search(r'Function : (\S+)', l)
    if m: cur=m.group(1); out.setdefault(cur, [0,0,0]); continue
    if cur and 'pa_hopper_bwd_kernel' in cur:
        if 'STL' in l: out[cur][0]+=1
        if 'LDL' in l: out[cur][1]+=1
        if 'HGMMA' in l: out[cur][2]+=1
for k,v in out.items():
    if 'pa_hopper_bwd_kernel' in k: print('STL %d LDL %d HGMMA %d %s' % (v[0],v[1],v[2],k))
PY
grep -n 'Function : .*pa_hopper_bwd_kernelI13__nv_bfloat16Li128ELi16E' /tmp/all.sass | head -2"
cp /tmp/all.sass "$LOG/all.sass" 2>/dev/null && gzip "$LOG/all.sass"
pa_gpu_pack_logs
pa_gpu_finish
