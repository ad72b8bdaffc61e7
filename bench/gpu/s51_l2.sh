#!/bin/bash
# Fifty-first session (issue 3): s50.sh's checks of decision 144's rows, then the same probe
# cases on a second module whose cp.async copies carry the .L2::128B prefetch hint
# (PA_CUDA_CP_L2_128B=1), in .devkit/l2/ (libpolyattn.so and libpolyattn-cuda.so, loaded by
# POLYATTN_LIB). Both modules are sm_90-only builds and compile the "-sc" rows
# (PA_CUDA_AMPERE_SC=1).
# Run: source .devkit/env; OUT=dir bash bench/gpu/s51_l2.sh   (~5 min)
# L2_CASES=a,b,... sets the hinted probe's cases (default sc128s8k,sc128s2k,sc64s8k,sc64s2k).
# (The xz unpacking, written out here for the run, is lib.sh's pa_devkit_unpack since.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT0=${OUT:-$PWD/s51-logs}
pa_devkit_unpack .devkit/l2 # the modules come xz-compressed, to fit the carry
mkdir -p "$OUT0/s50" "$OUT0/l2"
OUT=$OUT0/s50 NO_MG=${NO_MG:-} PROBE_CASES=${PROBE_CASES:-sc128s8k,sc128s2k,sc64s8k,sc64s2k} \
  bash "$(dirname "${BASH_SOURCE[0]}")/s50.sh"
rc=$?
cases=${L2_CASES:-sc128s8k,sc128s2k,sc64s8k,sc64s2k}
POLYATTN_LIB=$PWD/.devkit/l2/libpolyattn.so timeout 300 python3 -u bench/gpu/clock_probe.py \
  --rounds 2 --cases "$cases" > "$OUT0/l2/probe.log" 2>&1
rc2=$?
echo "---- hinted module (.L2::128B), rc $rc2"
grep -hE "^(${cases//,/|}) " "$OUT0/l2/probe.log"
echo "---- unhinted module"
grep -hE "^(${cases//,/|}) " "$OUT0/s50/probe.log" 2>/dev/null
[ $rc = 0 ] && [ $rc2 = 0 ]
