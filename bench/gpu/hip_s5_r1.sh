#!/usr/bin/env bash
# (The script of a GPU round as it ran: started as `cd KIT && source ./env && OUT=dir
# bash run.sh` from a devkit whose CUDA modules were xz-compressed into KIT/libxz and
# KIT/modules.tar.xz; logs in bench/results/2026-11-30s5-h200-hip-*.)
# hip R1 (fifth session, issue 7): the Ampere kernel as an instance of the shared
# forward tile loop (backends/cuda/fwd_tile.cuh) against the committed kernel (18ed21d).
# 1. forward sweep forced to the Ampere kernel (oracle check), the refactored module
# 2. speed, base and new module alternately: hd128 S8192 and hd64 S4096, bf16,
#    causal and not, forced Ampere, polyattn run --repeat 20 (CUDA events, median)
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
step sweep-ampere 48 env LD_LIBRARY_PATH=$NEW POLYATTN_TEST_BACKENDS=cuda POLYATTN_CUDA_KERNEL=ampere bin/test_forward --verbose --jobs 16
grep -c "out ok" "$OUT/sweep-ampere.log" | sed 's/^/sweep-ampere out-ok lines: /' | tee -a "$S"
grep -E "Synthesis|FAIL|fail" "$OUT/sweep-ampere.log" | tail -n 5 | tee -a "$S"
# pass 1: base then new per setting; pass 2 (while time is left): new then base
CFGS=("--batch 2 --heads 16 --dim 128 --seq 8192" "--batch 2 --heads 16 --dim 128 --seq 8192 --causal"
      "--batch 4 --heads 32 --dim 64 --seq 4096" "--batch 4 --heads 32 --dim 64 --seq 4096 --causal")
TAGS=(hd128_s8192 hd128_s8192_causal hd64_s4096 hd64_s4096_causal)
for pass in 1 2; do
  for i in 0 1 2 3; do
    order="base new"; [ $pass = 2 ] && order="new base"
    for m in $order; do
      [ $m = base ] && L=$BASE || L=$NEW
      left=$((78 - SECONDS)); [ $left -lt 4 ] && break 3
      step "speed$pass-${TAGS[$i]}-$m" $((left < 8 ? left : 8)) env LD_LIBRARY_PATH=$L POLYATTN_CUDA_KERNEL=ampere \
        bin/polyattn run --backend cuda --dtype bf16 ${CFGS[$i]} --repeat 20 --no-check
      grep -H "median" "$OUT/speed$pass-${TAGS[$i]}-$m.log" | tail -n 1 | tee -a "$S"
    done
  done
done
cat "$S"
