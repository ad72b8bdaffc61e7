#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir
# bash run.sh` from a devkit whose CUDA modules were xz-compressed into KIT/libxz and
# KIT/modules.tar.xz; logs in bench/results/2026-11-30s5-h200-hip-*.)
# hip R2 (fifth session, issue 7): as R1, on the second version of the refactor
# (fragment maps indexed by element pair: no index arithmetic left in the score
# pass; same opcode counts as 18ed21d in every fwd_ampere kernel).
# 1. speed first (R1 saw hd128 0.4-1% slower): base / new alternately, hd128 S8192
#    (two pairs), hd128 causal, hd64 S4096 causal and not (one pair each); bf16,
#    forced Ampere, polyattn run --repeat 20 (CUDA events, median)
# 2. forward sweep forced to the Ampere kernel (oracle check), the new module
set -u
mkdir -p "$OUT"
# The kit: lib/ and libxz/ (xz-compressed libraries), base/lib/libpolyattn.so.0, and
# modules.tar.xz with new/ and base/libpolyattn-cuda.so (one xz stream: the second
# module compresses against the first, which keeps the kit under 14 MiB).
T=$(mktemp -d); mkdir -p "$T/common"
if command -v xz >/dev/null; then xz -dc modules.tar.xz | tar -x -C "$T"
else python3 -c 'import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' modules.tar.xz "$T"; fi
for f in libxz/*.xz; do
  python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' "$f" "$T/common/$(basename "$f" .xz)"
done
unpack() { # $1: new or base -> a lib dir with libpolyattn.so.0 and its module side by side
  local L=$T/$1-lib; mkdir -p "$L"; cp lib/* "$T"/common/* "$L"/
  [ "$1" = base ] && cp base/lib/* "$L"/
  cp "$T/$1/libpolyattn-cuda.so" "$L"/
  chmod +x "$L"/*; echo "$L"; }
NEW=$(unpack new); BASE=$(unpack base)
echo "unpacked at ${SECONDS}s"
ls -l "$NEW" "$BASE" > "$OUT/libs.txt"; md5sum "$NEW"/libpolyattn-cuda.so "$BASE"/libpolyattn-cuda.so >> "$OUT/libs.txt"
S=$OUT/SUMMARY.txt; : > "$S"
step() { local name=$1 lim=$2; shift 2; local t0=$SECONDS
  timeout "$lim" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-t0))s" | tee -a "$S"; tail -n 2 "$OUT/$name.log"; }
run() { # $1 tag, $2 base|new, $3.. polyattn run options
  local tag=$1 m=$2 L; shift 2; [ $m = base ] && L=$BASE || L=$NEW
  local n=1; while [ -f "$OUT/speed-$tag-$m-$n.log" ]; do n=$((n + 1)); done; tag=$tag-$m-$n
  step "speed-$tag" 8 env LD_LIBRARY_PATH=$L POLYATTN_CUDA_KERNEL=ampere \
    bin/polyattn run --backend cuda --dtype bf16 "$@" --repeat 20 --no-check
  grep -H "median" "$OUT/speed-$tag.log" | tail -n 1 | tee -a "$S"; }
H128="--batch 2 --heads 16 --dim 128 --seq 8192"; H64="--batch 4 --heads 32 --dim 64 --seq 4096"
for m in base new new base; do run hd128_s8192 $m $H128; done
for m in base new; do run hd128_s8192_causal $m $H128 --causal; done
for m in base new; do run hd64_s4096 $m $H64; done
for m in base new; do run hd64_s4096_causal $m $H64 --causal; done
left=$((78 - SECONDS))
step sweep-ampere $((left > 5 ? left : 5)) env LD_LIBRARY_PATH=$NEW POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere bin/test_forward --verbose --jobs 16
grep -c "out ok" "$OUT/sweep-ampere.log" | sed 's/^/sweep-ampere out-ok lines: /' | tee -a "$S"
grep -E "Synthesis|FAIL" "$OUT/sweep-ampere.log" | tail -n 5 | tee -a "$S"
cat "$S"
