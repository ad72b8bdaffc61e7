#!/bin/bash
# Twenty-sixth session, R5 (issue 9; measurement only): the SFU's exponential rate and the
# packed forms' accuracy on the H200 (bench/gpu/ex2_peak.cu, built here into build/bin and
# carried with the devkit). Output in $OUT/ex2.txt. Written after the twenty-sixth
# session's device time was spent; run in the twenty-seventh from ampere_s27_r1.sh
# (bench/results/2026-12-04s27-ampere/r1/ex2.txt).
# Run: source .devkit/env; OUT=dir bash bench/gpu/ex2_s26.sh
T=${OUT:-$PWD/ex2_s26-logs}/ex2.txt
mkdir -p "$(dirname "$T")"
ex2_peak >"$T" 2>&1
rc=$?
# how many SFU instructions each packed PTX exponential became
cuobj=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
"$cuobj" -sass "$(command -v ex2_peak)" | awk '/Function : /{f = $3} /MUFU/{n[f " " $2]++}
  END {for (k in n) print "sass:", k, n[k]}' | sort >>"$T"
cat "$T"
exit $rc
