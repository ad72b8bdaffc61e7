#!/bin/bash
# Twenty-third session, R1b (issue 3): how much of the pingpong rows' loss is the
# turns. Two modules: .devkit/lib (ampere_s23_pingpong.patch applied on 3cea0b9) and
# .devkit/libB (the same with the turn barriers compiled out: in fwd_tile.cuh's
# pa_fwd_barriers, turn_begin and turn_end test G == 3 instead of G == 2, so the two
# groups of a block run freely, each on its own query block). One process per line.
# Run: source .devkit/env; OUT=dir bash bench/gpu/ampere_s23_nturns.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz .devkit/libB/*.gz 2>/dev/null
source .devkit/env
export POLYATTN_CUDA_KERNEL=ampere
A="polyattn run --backend cuda --dtype bf16 --no-check --repeat 30"
for L in lib libB; do
  for v in auto m2k64p; do
    echo "$L $v d128: $(POLYATTN_BACKEND_PATH=$PWD/.devkit/$L POLYATTN_CUDA_AMPERE_VARIANT=$v \
      $A --batch 2 --heads 16 --dim 128 --seq 8192 | grep ^forward)"
  done
  for v in auto m2k128p; do
    echo "$L $v d64: $(POLYATTN_BACKEND_PATH=$PWD/.devkit/$L POLYATTN_CUDA_AMPERE_VARIANT=$v \
      $A --batch 2 --heads 32 --dim 64 --seq 8192 | grep ^forward)"
  done
done 2>&1 | tee "${OUT:-.}/nturns.txt"
