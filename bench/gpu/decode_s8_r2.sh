#!/usr/bin/env bash
# Round R2 (eighth session) of the helper `decode` on the H200, run from the devkit
# directory (as decode_s8_r1.sh). R1: 16-key tiles with 8 warps per block (k16), the
# rescale skip and two Q.K^T accumulator sets gave nothing at Sk 4k (skip and acc2
# removed since). This round, as POLYATTN_CUDA_DECODE_VARIANT tokens (named here with
# '-') and settings:
#   inter  the block's warps take the tiles of the block's key range in turn
#   l2     lean copies with the .L2::256B prefetch hint
#   chain  POLYATTN_CUDA_DECODE_CHAIN=1: the split kernel as a programmatic dependent
#          launch (griddepcontrol.wait before any global access)
#   bhsd   the default on K/V whose memory is [B, Hkv, Sk, D] (a diagnostic of the
#          access pattern; decode_variants.py's LAYOUT=bhsd)
# Smoke tests, then timing in one process (graph replay, scrub, do_bench) against the
# default measured first and last and SDPA flash/cuDNN; then the two fastest new
# settings at Sk 4k (graph) through the decode sweep, graph capture, 20-run determinism
# (and memcheck for the fastest); then the default's sweep, graph capture and memcheck.
# As run in R2 (95486e6): inter, l2 and chain were removed after it (docs/decisions.md
# 91), so against later code those tokens and POLYATTN_CUDA_DECODE_CHAIN are ignored.
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
# name -> environment (comma-separated K=V)
envof() {
  case $1 in
    chain) echo "POLYATTN_CUDA_DECODE_CHAIN=1" ;;
    inter-chain) echo "POLYATTN_CUDA_DECODE_VARIANT=inter,POLYATTN_CUDA_DECODE_CHAIN=1" ;;
    *) echo "POLYATTN_CUDA_DECODE_VARIANT=${1//-/+}" ;;
  esac
}
NEW="chain inter inter-chain k16-inter l2"
OK=""
for c in $NEW; do
  step smoke-$c 5 env $(envof $c | tr , ' ') polyattn run $SMOKE
  grep -q "^PASS" "$OUT/smoke-$c.log" && OK+=" $c"
done
echo "smoke passed:$OK" | tee -a "$OUT/SUMMARY.txt"
V="default:;"
for c in $OK; do V+="$c:$(envof $c);"; done
V+="k16:POLYATTN_CUDA_DECODE_VARIANT=k16;default-bhsd:LAYOUT=bhsd;default-again:"
step perf 35 python3 decode_variants.py --variants "$V" --json "$OUT/decode-variants.jsonl"
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
  C=$(envof $c | tr , ' ')
  step sweep-$c 9 env $T $C POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
  step graph-$c 4 env $C test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
  step det-$c 4 env $T $C POLYATTN_CUDA_DECODE_PATH=mma POLYATTN_TEST_CASES=det_decode_split \
    test_forward --verbose --filter 'forward/deterministic'
done
c=$(echo $OK | cut -d" " -f1)
MC=decode_varlen_seqused_gqa,g16_block_window_d96,d40_softcap,many_splits
[ -n "$SAN" ] && [ -n "$c" ] && step memcheck-$c 12 env $T $(envof $c | tr , ' ') POLYATTN_TEST_CASES=$MC \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
step sweep-default 8 env $T POLYATTN_TEST_CASES=$CASES test_forward --verbose --filter 'forward/sweep' --jobs 8
step graph-default 4 test_cuda --verbose --filter 'cuda/graph_capture_decode_bf16'
[ -n "$SAN" ] && step memcheck-default 12 env $T POLYATTN_TEST_CASES=$MC \
  "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 test_forward --filter 'forward/sweep' --jobs 4
grep -h "PASS\|FAIL" "$OUT"/smoke-*.log
for f in "$OUT"/sweep-*.log "$OUT"/graph-*.log "$OUT"/det-*.log; do echo "$(basename $f): $(grep -h 'Synthesis' $f)"; done
for f in "$OUT"/memcheck-*.log; do echo "$(basename $f): $(grep -hE 'ERROR SUMMARY' $f)"; done
grep -v "^#" "$OUT/perf.log" | cut -c1-150
cat "$OUT/SUMMARY.txt"
