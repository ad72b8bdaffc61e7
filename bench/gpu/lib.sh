# lib.sh: what the GPU check scripts of bench/gpu share. Source it from a script run
# in the repository root:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   pa_gpu_setup NAME TOOL...   # .devkit/env if present, $LOG, $SUMMARY, the tools on PATH
#   step NAME TIMEOUT_S COMMAND...      # step_bg / step_wait: the same in parallel
#   timed NAME COMMAND...               # a polyattn run timing into $SUMMARY
#   pa_gpu_finish               # prints the summary, exits 0 only if every step passed
#
# step runs COMMAND with its output in $LOG/NAME.log and adds a line to $SUMMARY.
# Exit 77 (every test skipped) counts as a failure: these scripts run where a GPU is.
# STEP_WIDTH (34) and STEP_TAIL (4 log lines echoed) may be set before calling.

# pa_cuda_tool NAME: the path of CUDA's tool NAME (cuobjdump, nvdisasm, ncu,
# compute-sanitizer), from PATH or else the first /usr/local/cuda*/bin (in ls order) holding it.
pa_cuda_tool() {
  command -v "$1" || ls /usr/local/cuda*/bin/"$1" 2>/dev/null | head -n 1
}

pa_gpu_setup() {
  local name=$1 tool
  shift
  if [ -f .devkit/env ]; then
    # shellcheck disable=SC1091
    source .devkit/env
  fi
  LOG=${OUT:-$PWD/$name-logs}
  mkdir -p "$LOG"
  SUMMARY=$LOG/SUMMARY.txt
  : >"$SUMMARY"
  FAILED=0
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool not on PATH (source .devkit/env?)"; exit 2; }
  done
}

step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS rc
  echo "=== $name: $*" | tee -a "$LOG/$name.log"
  timeout "$limit" "$@" >>"$LOG/$name.log" 2>&1
  rc=$?
  local what=PASS
  case $rc in
    0) ;;
    77) what="FAIL (every test SKIPPED: is the GPU visible?)" ;;
    124) what="FAIL (timed out after ${limit}s)" ;;
    *) what="FAIL (exit $rc)" ;;
  esac
  [ "$what" = PASS ] || FAILED=1
  printf "%-${STEP_WIDTH:-34}s %-48s %4ds\n" "$name" "$what" $((SECONDS - t0)) | tee -a "$SUMMARY"
  tail -n "${STEP_TAIL:-4}" "$LOG/$name.log" | sed 's/^/    /'
}

pa_gpu_finish() {
  echo
  echo "---- summary (logs in $LOG)"
  cat "$SUMMARY"
  exit "$FAILED"
}

# step_bg runs a step in the background (its line reaches $SUMMARY when it ends);
# step_wait waits for them and counts a failed one.
step_bg() { (step "$@") & }
step_wait() {
  wait
  grep -q "FAIL" "$SUMMARY" && FAILED=1
  return 0
}

# timed NAME COMMAND...: a `polyattn run` timing; its "forward" / "vs dense" lines,
# without the run counts, go to $SUMMARY (a failed run counts as a failed step).
timed() {
  local name=$1 rc
  shift
  timeout "${TIMED_LIMIT:-30}" "$@" >"$LOG/$name.txt" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || FAILED=1
  echo "$name rc=$rc $(grep -E "^forward|^vs dense" "$LOG/$name.txt" |
    sed 's/(median of [0-9]*[^)]*)//' | tr -s ' ' | tr '\n' ' ')" | tee -a "$SUMMARY"
}

# pa_gpu_pack_logs: the step logs of $LOG into $LOG/logs.tgz, SUMMARY.txt left beside
# it (what the `run` tool brings back stays small).
pa_gpu_pack_logs() {
  (cd "$LOG" && tar czf /tmp/logs.tgz . && find . -mindepth 1 ! -name SUMMARY.txt -delete &&
    mv /tmp/logs.tgz .)
}

# pa_gpu_pack_keep FILE...: pa_gpu_pack_logs, the named files of $LOG left beside
# SUMMARY.txt as well (in the archive too).
pa_gpu_pack_keep() {
  local f keep=/tmp/pa_gpu_keep kept=()
  mkdir -p "$keep"
  for f in "$@"; do # a file of a step the script skipped is not there
    [ -f "$LOG/$f" ] && cp "$LOG/$f" "$keep/" && kept+=("$f")
  done
  pa_gpu_pack_logs
  for f in "${kept[@]}"; do cp "$keep/$f" "$LOG/"; done
}

# pa_ncu_summary REGEX: for each $LOG/ncu-*.log, its name and the lines matching REGEX
# (cut at 150 characters) to $SUMMARY (the ncu scripts of the twenty-first and
# twenty-fifth sessions).
pa_ncu_summary() {
  local f
  for f in "$LOG"/ncu-*.log; do
    echo "== $(basename "$f" .log)"
    grep -E "$1" "$f" | cut -c1-150
  done >>"$SUMMARY"
}

# pa_fp8_test VARIANT: test_fp8 (the FP8 oracle cases) with POLYATTN_CUDA_FP8_VARIANT=
# VARIANT ("" for the defaults) as step test-VARIANT; its synthesis line to $SUMMARY and
# each case's oracle line, shortened and prefixed by the variant, to
# $LOG/oracle-lines.txt (the FP8 rounds of the fifteenth session).
pa_fp8_test() {
  local v=$1 name=test-${1:-default}
  step "$name" 60 env POLYATTN_CUDA_FP8_VARIANT="$v" test_fp8 --verbose --jobs 8
  grep -hE "Synthesis" "$LOG/$name.log" | sed "s/^/${v:-default}: /" | tee -a "$SUMMARY"
  grep -hE "vs oracle" "$LOG/$name.log" |
    sed -E 's/^\[----\] //; s/ \(2x naive[^)]*\)//; s/; vs oracle on bf16.*; run-to-run/; /' |
    awk -v v="${v:-default}" '{print v": "$0}' >>"$LOG/oracle-lines.txt"
}

# pa_fp8_sanitizers CASES [VARIANT...]: compute-sanitizer memcheck, racecheck and
# synccheck on test_fp8's oracle cases CASES (POLYATTN_TEST_CASES), with each VARIANT
# (POLYATTN_CUDA_FP8_VARIANT; none given: the defaults) as steps TOOL[-VARIANT]; each
# one's summary line to $SUMMARY. (test_fp8 exits 1 on its LSE cases, decision 78, so
# these steps read FAIL: the summary lines are the result.)
pa_fp8_sanitizers() {
  local cases=$1 cs v tool name
  shift
  cs=$(pa_cuda_tool compute-sanitizer)
  [ $# -gt 0 ] || set -- ""
  for v in "$@"; do
    for tool in memcheck racecheck synccheck; do
      name=$tool${v:+-$v}
      step "$name" 120 env POLYATTN_CUDA_FP8_VARIANT="$v" POLYATTN_TEST_CASES="$cases" \
        "$cs" --tool "$tool" test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
      grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$name.log" | sed "s/^/$name: /" | tee -a "$SUMMARY"
    done
  done
}

# pa_fp8_checks LIMIT CASES: in parallel, compute-sanitizer memcheck, racecheck and
# synccheck by default on test_fp8's oracle cases CASES (steps TOOL-fp8, LIMIT seconds each;
# they read FAIL where test_fp8 fails its LSE cases, decision 78, so their summary lines
# are the result) and the forward suite by default on the CUDA backend (step
# sweep-default); then the suite's synthesis and the sanitizers' summaries to $SUMMARY.
# (The fortieth session's s40_fp8.sh and s40_fp8lse.sh ran these commands written out;
# gathered here after those runs, unchanged but for s40_fp8lse.sh's suite limit, 200 s there.)
pa_fp8_checks() {
  local limit=$1 cases=$2 cs tool
  cs=$(pa_cuda_tool compute-sanitizer)
  for tool in memcheck racecheck synccheck; do
    step_bg "$tool-fp8" "$limit" env POLYATTN_TEST_CASES="$cases" "$cs" --tool "$tool" \
      test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  done
  step_bg sweep-default 240 env POLYATTN_TEST_BACKENDS=cuda test_forward --jobs 4
  wait
  grep -hE "Synthesis" "$LOG/sweep-default.log" | tee -a "$SUMMARY"
  for tool in memcheck racecheck synccheck; do
    grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool-fp8.log" | sort | uniq -c |
      sed "s/^/$tool-fp8: /" | tee -a "$SUMMARY"
  done
}

# pa_fp8_ncu_source V [LINES]: ncu's source page (warp-state samples per SASS instruction,
# clocks left alone, one launch after three) of fp8_timeline0 128 V (bench/gpu/fp8_timeline.cu
# built without stamps, B2 H16 S8192) as step ncu-source-V; scripts/ncu_source_classes.py's
# classes to $LOG/classes-V.txt and its first LINES (default 40) to $SUMMARY; the CSV
# gzipped. (s47_ncu.sh and s48.sh ran these commands written out; gathered here after those
# runs.)
pa_fp8_ncu_source() {
  local v=$1 ncu k
  ncu=$(pa_cuda_tool ncu)
  k="--clock-control none -k regex:pa_hopper_fp8 --launch-skip 3 --launch-count 1"
  step "ncu-source-$v" 150 sh -c "\"$ncu\" $k --section WarpStateStats --section SourceCounters \
    --page source --csv --print-source sass fp8_timeline0 128 $v > \"$LOG/ncu-src-$v.csv\""
  python3 scripts/ncu_source_classes.py "$LOG/ncu-src-$v.csv" >"$LOG/classes-$v.txt" 2>&1
  head -"${2:-40}" "$LOG/classes-$v.txt" | sed "s/^/$v: /" | tee -a "$SUMMARY"
  gzip -f "$LOG/ncu-src-$v.csv"
}

# pa_fp8_sanitize NAME VARIANT CASES: in the background, compute-sanitizer memcheck,
# racecheck and synccheck on test_fp8's oracle cases CASES with the FP8 kernel forced onto
# VARIANT (POLYATTN_CUDA_FP8_VARIANT; steps TOOL-NAME, 200 s each). step_wait ends them and
# pa_check_summary reports them. (The forty-seventh session's s47.sh and s47_p2.sh ran
# these commands written out; gathered here after those runs.)
pa_fp8_sanitize() {
  local name=$1 variant=$2 cases=$3 cs tool
  cs=$(pa_cuda_tool compute-sanitizer)
  for tool in memcheck racecheck synccheck; do
    step_bg "$tool-$name" 200 env POLYATTN_CUDA_FP8_VARIANT="$variant" \
      POLYATTN_TEST_CASES="$cases" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 \
      test_fp8 --verbose --jobs 1 --filter 'fp8/oracle*'
  done
}

# pa_cuda_suites: the forward suite, test_cuda and the backward suite on the CUDA
# backend (steps sweep-default, test-cuda, backward), their synthesis lines to $SUMMARY.
pa_cuda_suites() {
  step sweep-default 200 env POLYATTN_TEST_BACKENDS=cuda test_forward --verbose --jobs 8
  step test-cuda 120 env POLYATTN_TEST_BACKENDS=cuda test_cuda --verbose
  step backward 120 env POLYATTN_TEST_BACKENDS=cuda test_backward --verbose --jobs 8
  grep -hE "Synthesis" "$LOG"/sweep-default.log "$LOG"/test-cuda.log "$LOG"/backward.log | tee -a "$SUMMARY"
}

# The decode checks of the eighteenth session's scripts (issue 3): the decode kernel
# forced (POLYATTN_CUDA_KERNEL=decode) on the forward sweep's decode-shaped cases.
PA_DECODE_CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse

# pa_gpu_state: the GPU's name, clocks, power and temperature as the script starts, into
# $LOG/gpu.txt.
pa_gpu_state() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv \
    >"$LOG/gpu.txt" 2>&1
}

# pa_decode_ab_4k TAG... / pa_decode_ab_long TAG...: decode_timeline0 builds (TAG "new":
# decode_timeline0, this tree's; any other: decode_timeline0_TAG) alternated in one
# process each, at Sk 4096 three rounds (steps ctl-TAG-4k-ROUND), at Sk 32768 and 131072
# once (steps ctl-TAG-SK).
pa_decode_ctl_bin() { [ "$1" = new ] && echo decode_timeline0 || echo "decode_timeline0_$1"; }
pa_decode_ab_4k() {
  local i tag
  for i in 1 2 3; do
    for tag in "$@"; do step "ctl-$tag-4k-$i" 60 "$(pa_decode_ctl_bin "$tag")" 4096; done
  done
}
pa_decode_ab_long() {
  local sk tag
  for sk in 32768 131072; do
    for tag in "$@"; do step "ctl-$tag-$sk" 60 "$(pa_decode_ctl_bin "$tag")" $sk; done
  done
}

# pa_decode_checks: the eighteenth session's decode checks on the CUDA backend: the decode
# sweep (default, 16-key tiles, one warp per block, the merge kernel), graph capture and the
# 20-run identity (pa_decode_sweeps), memcheck, racecheck and synccheck on the decode cases
# that cover varlen, windows, softcap, many splits and hd256.
pa_decode_checks() {
  export POLYATTN_TEST_BACKENDS=cuda
  pa_decode_sweeps k16:POLYATTN_CUDA_DECODE_VARIANT=k16 w1:POLYATTN_CUDA_DECODE_WARPS=1 \
    mergekernel:POLYATTN_CUDA_DECODE_MERGE=kernel
  pa_decode_sanitizer memcheck memcheck \
    decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits,d256_s3_256,decode_s1_sk16384
  pa_decode_sanitizer racecheck racecheck decode_varlen_seqused_gqa,decode_sq2_sk1500,d40_softcap,many_splits
  pa_decode_sanitizer synccheck synccheck decode_varlen_seqused_gqa,many_splits
  unset POLYATTN_TEST_BACKENDS
}

# pa_decode_timelines: the per-call lines of every ctl-* and tl-* step log
# (bench/gpu/decode_timeline.cu) to $SUMMARY.
pa_decode_timelines() {
  local f
  for f in "$LOG"/ctl-*.log "$LOG"/tl-*.log; do
    [ -e "$f" ] || continue
    echo "== $(basename "$f" .log)" >>"$SUMMARY"
    grep -E "^graph replay|^  |^streaming" "$f" >>"$SUMMARY"
  done
}

# pa_decode_sweeps [NAME:SETTING ...]: the decode sweep with the default settings (step
# sweep) and with each SETTING, an environment assignment (step sweep-NAME); then graph
# capture = eager (graph) and the 20-run identity (det); their synthesis lines to $SUMMARY.
pa_decode_sweeps() {
  local t="POLYATTN_CUDA_KERNEL=decode POLYATTN_TEST_CASES=$PA_DECODE_CASES" a
  # shellcheck disable=SC2086
  step sweep 120 env $t test_forward --verbose --filter 'forward/sweep' --jobs 8
  for a in "$@"; do
    # shellcheck disable=SC2086
    step "sweep-${a%%:*}" 120 env $t "${a#*:}" test_forward --verbose --filter 'forward/sweep' --jobs 8
  done
  step graph 60 test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
  step det 60 env POLYATTN_CUDA_KERNEL=decode POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
    test_forward --verbose --filter 'forward/deterministic'
  grep -hE "Synthesis" "$LOG"/sweep*.log "$LOG"/graph.log "$LOG"/det.log | sed 's/^/  /' >>"$SUMMARY"
}

# pa_decode_sanitizer TOOL NAME CASES [SETTING ...]: compute-sanitizer TOOL on the decode
# kernel with POLYATTN_TEST_CASES=CASES (and each SETTING) as step NAME; its summary line
# to $SUMMARY.
pa_decode_sanitizer() {
  local tool=$1 name=$2 cases=$3 cs
  shift 3
  cs=$(pa_cuda_tool compute-sanitizer)
  step "$name" 150 env POLYATTN_CUDA_KERNEL=decode "$@" POLYATTN_TEST_CASES="$cases" \
    "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 8
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG/$name.log" >>"$SUMMARY"
}

# pa_decode_perf TIMERS SKS VARIANTS: bench/gpu/decode_variants.py (beside PyTorch SDPA
# flash and cuDNN) as step perf; its rows to $SUMMARY.
pa_decode_perf() {
  step perf 150 python3 bench/gpu/decode_variants.py --timers "$1" --sk "$2" --variants "$3" --json "$LOG/decode.jsonl"
  grep -vh "^#" "$LOG/perf.log" | grep -E "^ +[0-9]" | cut -c1-110 >>"$SUMMARY"
}

# The twentieth session's Hopper forward checks (bench/gpu/k192_s20_*.sh, final_s20.sh).
# pa_hopper_resources REGEX: registers and local memory of the hd64 and hd128 Hopper forward
# kernels (cuobjdump on the devkit's module, with how many instantiations share each
# line) as step resources; the lines whose template values match REGEX to $SUMMARY.
pa_hopper_resources() {
  local cuobj
  cuobj=$(pa_cuda_tool cuobjdump)
  step resources 60 sh -c "'$cuobj' --dump-resource-usage .devkit/lib/libpolyattn-cuda.so | grep -A1 -E 'pa_hopper_fwd_kernel.*Li(64|128)ELi' | grep -oE 'Li(64|128)ELi[0-9]+|REG:[0-9]+|LOCAL:[0-9]+' | paste - - - | sort | uniq -c"
  grep -E "$1" "$LOG/resources.log" | tee -a "$SUMMARY"
}

# pa_hopper_round NAME REGEX LIMIT CASES: the start of a Hopper forward round (the
# twentieth and twenty-first sessions' scripts): pa_gpu_setup NAME with the tools they
# need, pa_hopper_resources REGEX, clock_probe.py's CASES in two rounds (step probe, LIMIT
# seconds), then the forward suite by default (step sweep-default), with
# POLYATTN_TEST_BACKENDS=cuda exported and V=POLYATTN_CUDA_HOPPER_VARIANT set for the
# script's own steps.
pa_hopper_round() {
  pa_gpu_setup "$1" python3 nvidia-smi test_forward test_cuda
  STEP_TAIL=0
  pa_hopper_resources "$2"
  step probe "$3" python3 bench/gpu/clock_probe.py --rounds 2 --cases "$4"
  export POLYATTN_TEST_BACKENDS=cuda
  V=POLYATTN_CUDA_HOPPER_VARIANT
  step sweep-default 200 test_forward --verbose --jobs 8
}

# pa_hopper_sanitizers CASES SETTING...: compute-sanitizer memcheck, racecheck and
# synccheck on test_forward's sweep cases CASES with the Hopper kernel forced and each
# SETTING (VAR=VALUE: the variant, a grid cap) as steps memcheck / racecheck / synccheck;
# each one's summary line to $SUMMARY.
pa_hopper_sanitizers() {
  local cases=$1 tool
  shift
  for tool in memcheck racecheck synccheck; do
    pa_hopper_sanitizer step $tool 200 4 $tool "$cases" "$@"
    grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$LOG/$tool.log" | sed "s/^/$tool: /" | tee -a "$SUMMARY"
  done
}

# pa_hopper_sanitizer RUNNER NAME LIMIT JOBS TOOL CASES SETTING...: one compute-sanitizer
# tool on test_forward's sweep cases CASES with the Hopper kernel forced, as RUNNER's (step
# or step_bg) step NAME, LIMIT seconds, JOBS test jobs.
pa_hopper_sanitizer() {
  local runner=$1 name=$2 limit=$3 jobs=$4 tool=$5 cases=$6 cs
  shift 6
  cs=$(pa_cuda_tool compute-sanitizer)
  "$runner" "$name" "$limit" env POLYATTN_CUDA_KERNEL=hopper "$@" POLYATTN_TEST_CASES="$cases" \
    "$cs" --tool "$tool" --error-exitcode 99 --print-limit 10 test_forward --filter 'forward/sweep' --jobs "$jobs"
}

# pa_hopper_sanitizers_bg TAG LIMIT CASES SETTING...: as pa_hopper_sanitizers, the three
# tools in the background (step_bg; steps memcheck-TAG, racecheck-TAG, synccheck-TAG, each
# LIMIT seconds, two test jobs); after step_wait, pa_check_summary reports them.
pa_hopper_sanitizers_bg() {
  local tag=$1 limit=$2 cases=$3 tool
  shift 3
  for tool in memcheck racecheck synccheck; do
    pa_hopper_sanitizer step_bg "$tool-$tag" "$limit" 2 $tool "$cases" "$@"
  done
}

# pa_hopper_final_bg CASES: in the background (step_bg; step_wait after), the final checks'
# Hopper suites: the forward suite by default (step sweep-default), the sweep forced onto
# the Hopper kernels with the persistent grid capped at 3 blocks (sweep-hopper-b3), and
# memcheck / racecheck / synccheck by default over the test cases CASES (*-default), each
# 300 s. (final_s33.sh, final_s36.sh and s39.sh ran these commands written out; gathered
# here after those runs, unchanged; final_s33.sh started its sanitizers after two more steps.)
pa_hopper_final_bg() {
  step_bg sweep-default 300 test_forward --jobs 4
  step_bg sweep-hopper-b3 300 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_BLOCKS=3 \
    test_forward --verbose --filter 'forward/sweep' --jobs 3
  pa_hopper_sanitizers_bg default 300 "$1"
}

# pa_check_summary: the synthesis lines of the sweep-* and test-* logs and each *check-*
# log's sanitizer summary (counted) to $SUMMARY.
pa_check_summary() {
  local f
  grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-*.log 2>/dev/null | tee -a "$SUMMARY"
  for f in "$LOG"/*check-*.log; do
    [ -f "$f" ] || continue
    echo "$(basename "$f" .log): $(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$f" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  done | tee -a "$SUMMARY"
}

# pa_hopper_sweep NAME SETTING...: the forward sweep with the Hopper kernel forced and
# each SETTING as step sweep-NAME.
pa_hopper_sweep() {
  local name=$1
  shift
  step "sweep-$name" 200 env POLYATTN_CUDA_KERNEL=hopper "$@" test_forward --verbose --filter 'forward/sweep' --jobs 8
}

# pa_hopper_variant_sweep_bg NAME VARIANT SETTING...: in the background (step_bg), the forward
# sweep with the Hopper kernel forced onto POLYATTN_CUDA_HOPPER_VARIANT=VARIANT and each
# SETTING, as step sweep-NAME (300 s, two test jobs; the thirty-first session's scripts).
pa_hopper_variant_sweep_bg() {
  local name=$1 v=$2
  shift 2
  step_bg "sweep-$name" 300 env POLYATTN_CUDA_KERNEL=hopper POLYATTN_CUDA_HOPPER_VARIANT="$v" "$@" \
    test_forward --verbose --filter 'forward/sweep' --jobs 2
}

# pa_fwd_checks_tail REGEX: step test-cuda, then the synthesis lines of the sweep-* and
# test-cuda logs and the default sweep's oracle lines of the cases matching REGEX (at
# most 12) to $SUMMARY.
pa_fwd_checks_tail() {
  step test-cuda 120 test_cuda --verbose
  grep -hE "Synthesis" "$LOG"/sweep-*.log "$LOG"/test-cuda.log | tee -a "$SUMMARY"
  grep -hE "$1" "$LOG"/sweep-default.log | head -12 | tee -a "$SUMMARY"
}

# pa_ampere_rows SAN_ROW SAN_TAG CASES ROW...: the forward suite forced onto the Ampere
# kernel with each POLYATTN_CUDA_AMPERE_VARIANT=ROW (steps sweep-ROW) and memcheck and
# racecheck on SAN_ROW over the test cases CASES (steps memcheck-SAN_TAG,
# racecheck-SAN_TAG), all in parallel; their synthesis and summary lines to $SUMMARY
# (the twenty-seventh session's rounds).
pa_ampere_rows() {
  local san_row=$1 tag=$2 cases=$3 v tool cs
  shift 3
  cs=$(pa_cuda_tool compute-sanitizer)
  for v in "$@"; do
    step_bg "sweep-$v" 240 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
      POLYATTN_CUDA_AMPERE_VARIANT="$v" test_forward --jobs 4 --filter 'forward/sweep'
  done
  for tool in memcheck racecheck; do
    step_bg "$tool-$tag" 240 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere \
      POLYATTN_CUDA_AMPERE_VARIANT="$san_row" POLYATTN_TEST_CASES="$cases" \
      "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
  done
  step_wait
  for v in "$@"; do grep -hE "Synthesis" "$LOG/sweep-$v.log"; done | tee -a "$SUMMARY"
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOG/memcheck-$tag.log" "$LOG/racecheck-$tag.log" |
    sort | uniq -c | tee -a "$SUMMARY"
}

# pa_ampere_suites NAME CASES [VAR=VALUE...]: the final checks' suites of the Ampere
# kernel (final_s34.sh, final_s35.sh): the forward suite by default, forced onto the
# Ampere kernel with LSE as the cases ask and with POLYATTN_TEST_NO_LSE=1, and memcheck /
# racecheck on it over CASES (steps memcheck-NAME, racecheck-NAME; the VAR=VALUE settings
# added), in parallel; then their summary.
pa_ampere_suites() {
  local name=$1 cases=$2 tool cs
  shift 2
  cs=$(pa_cuda_tool compute-sanitizer)
  export POLYATTN_TEST_BACKENDS=cuda
  step_bg sweep-default 240 test_forward --jobs 5
  step_bg sweep-ampere 240 env POLYATTN_CUDA_KERNEL=ampere test_forward --verbose --filter 'forward/sweep' --jobs 5
  step_bg sweep-ampere-nolse 240 env POLYATTN_CUDA_KERNEL=ampere POLYATTN_TEST_NO_LSE=1 \
    test_forward --verbose --filter 'forward/sweep' --jobs 5
  for tool in memcheck racecheck; do
    step_bg "$tool-$name" 240 env POLYATTN_CUDA_KERNEL=ampere "$@" POLYATTN_TEST_CASES="$cases" \
      "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 \
      test_forward --filter 'forward/sweep' --jobs 2
  done
  step_wait
  pa_check_summary
  unset POLYATTN_TEST_BACKENDS
}

# The Ampere kernel forced onto a row (s49.sh, s49_x.sh), each step in the background:
# pa_ampere_row_sweep NAME ENV...: step sweep-NAME, the forward sweep with ENV set;
# pa_ampere_row_sanitize TOOL NAME CASES ENV...: step TOOL-NAME, compute-sanitizer TOOL on the
# sweep's CASES with ENV set.
pa_ampere_row_sweep() {
  local name=$1
  shift
  step_bg "sweep-$name" 240 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere "$@" \
    test_forward --verbose --filter 'forward/sweep' --jobs 3
}
pa_ampere_row_sanitize() {
  local tool=$1 name=$2 cases=$3 cs
  shift 3
  cs=$(pa_cuda_tool compute-sanitizer)
  step_bg "$tool-$name" 240 env POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere "$@" \
    POLYATTN_TEST_CASES="$cases" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 \
    test_forward --filter 'forward/sweep' --jobs 2
}

# pa_require_kernels REGEX COUNT: step rows, passing only if the CUDA module in .devkit
# holds COUNT distinct kernels whose names match REGEX (cuobjdump's resource listing):
# a tuning script's check that the library it times is a tuning build (a variable naming
# a row the build lacks would run the default unnoticed).
pa_require_kernels() {
  local cuobj
  cuobj=$(pa_cuda_tool cuobjdump)
  step rows 60 sh -c "'$cuobj' --dump-resource-usage .devkit/lib/libpolyattn-cuda.so |
    grep -oE '$1' | sort -u | tee /dev/stderr | wc -l | grep -qx $2"
}

# pa_sass_loops REGEX: step sass, scripts/sass_loop_mix.py on each cubin of the CUDA module
# in .devkit (cuobjdump -xelf, then the machine's nvdisasm) for the kernels whose mangled
# names match REGEX: their loops that hold tensor-core products and the positions of their
# local loads and stores, so a log says whether a spill sits in a main loop (issue 9 asks
# for none there). This machine has no nvdisasm that reads sm_90a cubins; the device has.
# Passes when at least one kernel matched.
pa_sass_loops() {
  local cuobj dis
  cuobj=$(pa_cuda_tool cuobjdump)
  dis=$(pa_cuda_tool nvdisasm)
  step sass 120 bash -c 'd=$(mktemp -d) && (cd "$d" && "$1" -xelf all "$3" >/dev/null) &&
    for c in "$d"/*.cubin; do python3 scripts/sass_loop_mix.py "$c" "$4" --nvdisasm "$2" ||
      true; done | tee "$d/out" && grep -q "^== " "$d/out"' \
    sass "$cuobj" "$dis" "$PWD/.devkit/lib/libpolyattn-cuda.so" "$1"
  grep -E "^(== |loop |local )" "$LOG/sass.log" | cut -c1-160 >>"$SUMMARY"
}

# pa_devkit_unpack [DIR...]: the devkit's compressed files unpacked in place: *.gz in
# .devkit/lib and .devkit/bin, *.xz there and in each DIR (the fifty-first session's sm_90-only
# modules, xz-compressed to fit the carry; unpacked by Python's lzma, as xz may be missing).
pa_devkit_unpack() {
  local d f
  gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
  for d in .devkit/lib .devkit/bin "$@"; do
    for f in "$d"/*.xz; do
      [ -f "$f" ] || continue
      python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(
        lzma.open(sys.argv[1]).read())' "$f" && rm "$f"
    done
  done
}

# pa_gpu_start NAME REGEX COUNT TOOL...: the start the timing-and-check scripts share (the
# fortieth session's on): the devkit's compressed files unpacked (pa_devkit_unpack),
# pa_gpu_setup NAME with python3, nvidia-smi and each TOOL, pa_gpu_state, STEP_TAIL=0, then
# pa_require_kernels REGEX COUNT, the script ending there if the module lacks them.
pa_gpu_start() {
  local name=$1 regex=$2 count=$3
  shift 3
  pa_devkit_unpack
  pa_gpu_setup "$name" python3 nvidia-smi "$@"
  pa_gpu_state
  STEP_TAIL=0
  pa_require_kernels "$regex" "$count"
  [ "$FAILED" = 0 ] || pa_gpu_finish
}

# pa_cuda_checks FILTER: in parallel, test_cuda's whole suite (step test-cuda) and
# compute-sanitizer memcheck / racecheck / synccheck on its tests FILTER (steps TOOL-ks), then
# step_wait (the forty-third and forty-fourth sessions' "-ks" checks, s43_ks.sh and
# s44_ampere_ks.sh; gathered here after their runs, the commands unchanged).
pa_cuda_checks() {
  local tool cs
  step_bg test-cuda 300 test_cuda --verbose --filter 'cuda/*' --jobs 1
  cs=$(pa_cuda_tool compute-sanitizer)
  for tool in memcheck racecheck synccheck; do
    step_bg "$tool-ks" 300 "$cs" --tool $tool --error-exitcode 99 --print-limit 10 \
      test_cuda --filter "$1" --jobs 1
  done
  step_wait
}

# pa_probe CASES [ROUNDS] [LIMIT]: clock_probe.py over the comma-separated cases CASES
# (ROUNDS rounds, default two) as step probe (LIMIT seconds, default 300), then its result
# lines (each starts with its case's name) to $SUMMARY.
# (The thirty-sixth session's scripts ran these two helpers' commands written out in
# each script; they were gathered here after those runs, the commands unchanged.)
pa_probe() {
  step probe "${3:-300}" python3 -u bench/gpu/clock_probe.py --rounds "${2:-2}" --cases "$1"
  grep -hE "^(${1//,/|}) " "$LOG/probe.log" | tee -a "$SUMMARY" >/dev/null
}

# pa_ks_climb_tail: the end of the scripts that run test_cuda beside other checks in the
# background (s44_ampere_ks.sh, s45.sh, s52_qs.sh; gathered here in the fifty-second session,
# the commands unchanged): step_wait, POLYATTN_TEST_BACKENDS unset, pa_check_summary,
# test_cuda's ks_climb lines to $SUMMARY, the logs packed (probe.log kept), pa_gpu_finish.
pa_ks_climb_tail() {
  step_wait
  unset POLYATTN_TEST_BACKENDS
  pa_check_summary
  grep -hE "ks_climb" "$LOG/test-cuda.log" | cut -c1-220 | tee -a "$SUMMARY"
  pa_gpu_pack_keep probe.log
  pa_gpu_finish
}

# pa_default_tail DIMS CUDA_LIMIT TORCH_LIMIT TEST_CUDA_ARG...: the end the final checks of
# the fortieth and forty-first sessions share (s40.sh, s41_final.sh; gathered here after
# their runs, the commands unchanged): step test-cuda (test_cuda with the arguments, CUDA_LIMIT
# seconds), POLYATTN_TEST_BACKENDS unset, pa_check_summary, compare_torch on the default
# (bf16 and fp16, head dims DIMS, S 2048 / 4096) as step torch (TORCH_LIMIT seconds) with its
# geomean and correctness lines to $SUMMARY, the logs packed (torch.log and probe.log kept
# beside the summary), pa_gpu_finish.
pa_default_tail() {
  local dims=$1 cuda_limit=$2 torch_limit=$3
  shift 3
  step test-cuda "$cuda_limit" test_cuda "$@" --filter 'cuda/*'
  unset POLYATTN_TEST_BACKENDS
  pa_check_summary
  step torch "$torch_limit" python3 -u bench/compare_torch.py --no-efficient --dtypes bf16,fp16 \
    --dims "$dims" --seqlens 2048,4096 --json "$LOG/torch.jsonl"
  grep -E "geomean|correctness" "$LOG/torch.log" | tee -a "$SUMMARY"
  pa_gpu_pack_keep torch.log probe.log
  pa_gpu_finish
}
