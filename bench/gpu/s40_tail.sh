#!/bin/bash
# Fortieth session (issue 9): does the persistent kernels' part-full last round cost what
# the count of tiles says? clock_probe's tq* cases (the default and cuDNN, bf16,
# non-causal, S512 and S1024 at hd64 and hd128) at 16384 tokens (the standard sweep: the
# slowest block does 3.1% more tiles than the mean) and at 33 batches (16896 tokens at
# S512, 33792 at S1024: whole rounds), two rounds each. If the last round costs that
# much, polyattn gains about 3% per TFLOP/s at 33 batches where cuDNN may not.
# Run: source .devkit/env; OUT=dir bash bench/gpu/s40_tail.sh   (~2 min)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# the persistent "-pn" kernels, hd128 (V 2650122) and hd64 (V 2846730), bf16
pa_gpu_start s40_tail 'pa_hopper_fwd_kernelI13__nv_bfloat16Li(128ELi2650122|64ELi2846730)E' 2
for t in 16384 16896 33792; do
  case $t in
    16384) c=tq128s512,tq64s512,tq128s1k,tq64s1k ;;
    16896) c=tq128s512,tq64s512 ;;
    33792) c=tq128s1k,tq64s1k ;;
  esac
  step "probe-$t" 150 python3 -u bench/gpu/clock_probe.py --rounds 2 --tokens $t --cases $c
  grep -hE "^tq" "$LOG/probe-$t.log" | sed "s/^/$t /" | tee -a "$SUMMARY" >/dev/null
done
pa_gpu_pack_keep probe-16384.log probe-16896.log probe-33792.log
pa_gpu_finish
