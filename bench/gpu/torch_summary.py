#!/usr/bin/env python3
"""One line per row of a `compare_torch.py --json` file, forward or backward (--backward):
dtype, head dim, S, causal, polyattn's time against flash (and cuDNN where timed), then
each --variants value against flash, with a CHECK mark where its output (or, backward,
its gradients) failed. The bench/gpu/bwd_s12_*.sh, bwd_s13_*.sh and *_s14_*.sh scripts
append it to their SUMMARY.txt."""
import json
import sys


def line(r, t):
    """t: the time key's suffix, "bwd_ms" for backward rows, "ms" for forward ones."""
    tf = t.replace("ms", "tflops")
    out = "%s D%s S%s c%d x flash: " % (r.get("dtype", ""), r["D"], r["S"], int(bool(r["causal"])))
    if "polyattn_" + t not in r:  # the first value failed (its error is in the log)
        out += "- (%s)" % r.get("polyattn_error", "no time")
    else:
        out += "%.3f (%.3f ms %.1f TF/s)" % (r["flash_" + t] / r["polyattn_" + t],
                                             r["polyattn_" + t], r["polyattn_" + tf])
        if "cudnn_" + t in r:
            out += " x cudnn %.3f" % (r["cudnn_" + t] / r["polyattn_" + t])
    if r.get("check") not in (None, "ok"):
        out += " CHECK %s" % r["check"]
    for name, v in r.get("variants", {}).items():
        if t not in v:
            out += "  %s -" % name
            continue
        out += "  %s %.3f" % (name, r["flash_" + t] / v[t])
        if v.get("check") not in (None, "ok"):
            out += " CHECK %s" % v["check"]
    return out


def main(paths):
    for path in paths:
        with open(path) as f:
            for text in f:
                r = json.loads(text)
                if "flash_bwd_ms" in r:
                    print(line(r, "bwd_ms"))
                elif r.get("kind") == "fwd" and "flash_ms" in r:
                    print(line(r, "ms"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
