#!/usr/bin/env bash
# Round R1 (eighth session) of the helper `decode` on the H200, run from the devkit
# directory (../shared/tools/devkit, with decode_variants.py, compare_torch.py and the
# polyattn package copied beside this file). The tensor-core split kernel's variants
# (decode_mma.cuh, POLYATTN_CUDA_DECODE_VARIANT, tokens joined by '+'; named here
# with '-'):
#   k16   16-key tiles, 8 warps (splits) per block: two warps per SM sub-partition
#   skip  O's rescale skipped when no row's maximum moved (warp vote)
#   acc2  Q.K^T in two accumulator sets (even / odd k-steps)
# and k16 with POLYATTN_CUDA_DECODE_WARPS=4 (two 4-warp blocks per SM). Smoke tests,
# then timing in one process (decode_variants.py: graph replay, scrub, do_bench)
# against the default (lean, 32-key tiles, 4 warps) measured first and last, and SDPA
# flash/cuDNN; then the two fastest new variants at Sk 4k (graph) through the decode
# sweep, graph capture and 20-run determinism; memcheck and ncu of the fastest; ncu of
# the default; the default's sweep.
# As run in R1 (465d984): skip and acc2 were removed after it (docs/decisions.md 90),
# so against later code their tokens are ignored (k16-skip runs k16, skip the default).
# Budget 100 s; most important first. Logs under $OUT.
set -uo pipefail
gzip -d lib/*.gz bin/*.gz 2>/dev/null
chmod +x bin/*
export PATH=$PWD/bin:$PATH POLYATTN_LIB=$PWD/lib
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
step() { # step NAME TIMEOUT CMD...
  local n=$1 t=$2; shift 2
  local s=$(date +%s)
  timeout "$t" "$@" >"$OUT/$n.log" 2>&1; local rc=$?
  printf '%-22s rc=%-3d %3ds\n' "$n" "$rc" "$(( $(date +%s) - s ))" | tee -a "$OUT/SUMMARY.txt"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
CASES=decode,d32_s1,s1_sk1000,d256_s3_256,d40_sq3_sk256,seqlen_k_0_causal_nolse
T="POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=decode"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
SMOKE="--backend cuda --dtype bf16 --batch 2 --heads 8 --kv-heads 2 --dim 128 --seq-q 1 --seq-k 1000 --repeat 3"
# variant names: the tokens joined by '-' (file names), by '+' in the variable
VARS="k16 k16-skip k16-acc2 k16-skip-acc2 skip"
OK=""
for c in $VARS; do
  step smoke-$c 5 env POLYATTN_CUDA_DECODE_VARIANT=${c//-/+} polyattn run $SMOKE
  grep -q "^PASS" "$OUT/smoke-$c.log" && OK+=" $c"
done
echo "smoke passed:$OK" | tee -a "$OUT/SUMMARY.txt"
V="default:;"
for c in $OK; do V+="$c:POLYATTN_CUDA_DECODE_VARIANT=${c//-/+};"; done
for c in $OK; do case $c in k16|k16-skip) V+="$c-w4:POLYATTN_CUDA_DECODE_VARIANT=${c//-/+},POLYATTN_CUDA_DECODE_WARPS=4;";; esac; done
V+="default-again:"
step perf 30 python3 decode_variants.py --variants "$V" --json "$OUT/decode-variants.jsonl"
# the checks below run the two fastest new variants at Sk 4k (graph replay)
OK=$(python3 -c '
import json, sys
ok = sys.argv[2].split()
t = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("Sk") == 4096 and r.get("name") in ok and "graph_ms" in r:
        t[r["name"]] = r["graph_ms"]
print(" ".join(sorted(ok, key=lambda c: t.get(c, 1e9))[:2]))' "$OUT/decode-variants.jsonl" "$OK" 2>/dev/null || echo "$OK" | cut -d" " -f1-3)
echo "check order: $OK" | tee -a "$OUT/SUMMARY.txt"
for c in $OK; do
  C="POLYATTN_CUDA_DECODE_VARIANT=${c//-/+}"
  step sweep-$c 9 env $T $C POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
  step graph-$c 4 env $C test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
  step det-$c 4 env $T $C POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
    test_forward --verbose --filter 'forward/deterministic'
done
c=$(echo $OK | cut -d" " -f1)
[ -n "$SAN" ] && [ -n "$c" ] && step memcheck-$c 12 env $T POLYATTN_CUDA_DECODE_VARIANT=${c//-/+} \
  POLYATTN_TEST_CASES=decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
PROB="--backend cuda --repeat 3 --no-check --dtype bf16 --batch 8 --heads 32 --kv-heads 8 --dim 128 --seq-q 1 --seq-k 4096"
NS="--section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy"
[ -n "$NCU" ] && [ -n "$c" ] && step ncu-4k-$c 7 env POLYATTN_CUDA_DECODE_VARIANT=${c//-/+} "$NCU" -k regex:decode \
  --launch-skip 4 --launch-count 1 $NS polyattn run $PROB
[ -n "$NCU" ] && step ncu-4k-default 7 "$NCU" -k regex:decode --launch-skip 4 --launch-count 1 $NS polyattn run $PROB
step sweep-default 8 env $T POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
grep -h "PASS\|FAIL" "$OUT"/smoke-*.log
for f in "$OUT"/sweep-*.log "$OUT"/graph-*.log "$OUT"/det-*.log; do echo "$(basename $f): $(grep -h 'Synthesis' $f)"; done
for f in "$OUT"/memcheck-*.log; do echo "$(basename $f): $(grep -hE 'ERROR SUMMARY' $f)"; done
grep -v "^#" "$OUT/perf.log" | cut -c1-150
for f in "$OUT"/ncu-4k-*.log; do echo "$(basename $f)"; grep -hE "Duration|DRAM Throughput|Warp Cycles Per Issued|Executed Instructions  |Achieved Occupancy|Registers Per" $f; done
cat "$OUT/SUMMARY.txt"
