#!/bin/bash
# Thirteenth session, the last device call (70 s of budget left): hd128 causal S16384,
# bf16, backward against flash, alone in each of three processes (the sweep runs it
# after the heaviest row). This is the command that ran, as a script.
# Run: source .devkit/env; OUT=dir bash bench/gpu/bwd_s13_row.sh
# Logs: bench/results/2026-12-01s13-bwd/row/.
gzip -d .devkit/lib/*.gz 2>/dev/null
export POLYATTN_LIB=$PWD/.devkit/lib/libpolyattn.so
for i in 1 2 3; do
  python3 bench/compare_torch.py --backward --no-cudnn --no-efficient --dtypes bf16 --dims 128 --causal 1 --seqlens 16384 --json "$OUT/row$i.jsonl" 2>&1 | grep -E "^bf16|speed-up"
done
