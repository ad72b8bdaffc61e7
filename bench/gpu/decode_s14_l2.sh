#!/bin/bash
# Fourteenth session (issue 3, measurement only): where the decode kernel's 35% L2 hit
# rate comes from (R1 of profile_s14_r1.sh: cuDNN's kernel 1.1% on the same problem).
# L2 read sectors from the SMs (hits / misses), writes, DRAM read sectors, and the
# cp.async sectors requested, for our kernel and cuDNN's, one 4k call each.
# With PART=src: ncu's source page (SASS, per-instruction sectors) of both kernels instead.
# Run: source .devkit/env; OUT=dir [PART=src] bash bench/gpu/decode_s14_l2.sh
gzip -d .devkit/lib/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup decode_s14_l2 polyattn
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
M=dram__sectors_read.sum,dram__sectors_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
M2=l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed_op_ldgsts.sum
SRC="--section SourceCounters --page source --csv --print-source sass"
P="polyattn run --backend cuda --repeat 3 --no-check --dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 4096"
D="--b 8 --hq 32 --hkv 8 --sq 1 --sk 4096 --d 128"
if [ "${PART:-}" = src ]; then
  step ours-src 60 sh -c "\"$NCU\" --clock-control none -k regex:decode --launch-skip 2 --launch-count 1 $SRC $P > \"$LOG/ours-src.csv\""
  step cudnn-src 60 sh -c "\"$NCU\" --clock-control none --profile-from-start off --launch-count 1 $SRC python3 bench/gpu/torch_one.py --backend cudnn $D --calls 1 > \"$LOG/cudnn-src.csv\""
  gzip -f "$LOG"/*.csv
  pa_gpu_finish
fi
step ours 60 "$NCU" --clock-control none -k regex:decode --launch-skip 2 --launch-count 1 --metrics $M $P
step ours-ldgsts 60 "$NCU" --clock-control none -k regex:decode --launch-skip 2 --launch-count 1 --metrics $M2 $P
step cudnn 60 "$NCU" --clock-control none --profile-from-start off --launch-count 2 --metrics $M python3 bench/gpu/torch_one.py --backend cudnn $D --calls 1
step cudnn-ldgsts 60 "$NCU" --clock-control none --profile-from-start off --launch-count 1 --metrics $M2 python3 bench/gpu/torch_one.py --backend cudnn $D --calls 1
for f in ours ours-ldgsts cudnn cudnn-ldgsts; do echo "== $f"; grep -E "^  [a-zA-Z_<].*\(|__" "$LOG/$f.log" | cut -c1-140; done | tee -a "$SUMMARY"
pa_gpu_finish
