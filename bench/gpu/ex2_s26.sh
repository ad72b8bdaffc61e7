#!/bin/bash
# Twenty-sixth session, R5 (issue 9; measurement only): the SFU's exponential rate and the
# packed forms' accuracy on the H200 (bench/gpu/ex2_peak.cu, built here into build/bin and
# carried with the devkit). Output in $OUT/ex2.txt. Not yet run (written after the
# twenty-sixth session's device time was spent).
# Run: source .devkit/env; OUT=dir bash bench/gpu/ex2_s26.sh
T=${OUT:-$PWD/ex2_s26-logs}/ex2.txt
mkdir -p "$(dirname "$T")"
ex2_peak >"$T" 2>&1
rc=$?
cat "$T"
exit $rc
