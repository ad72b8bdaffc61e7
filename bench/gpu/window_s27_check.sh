#!/bin/bash
# Twenty-seventh session: the Ampere kernel's hd64 default m2k128tj now also under
# sliding windows (decision 118; window_s27.sh timed it against m2j): the forward suite
# forced onto the Ampere kernel with the default variant (its hd64 window cases included),
# and memcheck and racecheck on the hd64 window cases (R3 sanitized the row on unwindowed
# cases). Not yet run (written after the session's device time was spent).
# Run: source .devkit/env; OUT=dir bash bench/gpu/window_s27_check.sh
gzip -d .devkit/lib/*.gz .devkit/bin/*.gz 2>/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pa_gpu_setup window_s27_check test_forward
STEP_TAIL=0
pa_ampere_rows auto windows \
  'window_left16,window_right8,window_32_16_sq<sk,window_causal_left20,alibi_softcap_window_gqa,nm24_sk113_window' auto
pa_gpu_pack_keep sweep-auto.log
pa_gpu_finish
