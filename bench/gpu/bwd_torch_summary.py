#!/usr/bin/env python3
"""One line per backward row of a `compare_torch.py --backward --json` file: dtype, head
dim, S, causal, polyattn's backward against flash (and cuDNN where timed), then each
--variants value against flash, with a CHECK mark where its gradients failed. The
bench/gpu/bwd_s12_*.sh and bwd_s13_*.sh scripts append it to their SUMMARY.txt."""
import json
import sys


def line(r):
    out = "%s D%s S%s c%d x flash: " % (r.get("dtype", ""), r["D"], r["S"], int(bool(r["causal"])))
    if "polyattn_bwd_ms" not in r:  # the first value failed (its error is in the log)
        out += "- (%s)" % r.get("polyattn_error", "no time")
    else:
        out += "%.3f (%.3f ms %.1f TF/s)" % (r["flash_bwd_ms"] / r["polyattn_bwd_ms"],
                                             r["polyattn_bwd_ms"], r["polyattn_bwd_tflops"])
    if "cudnn_bwd_ms" in r and "polyattn_bwd_ms" in r:
        out += " x cudnn %.3f" % (r["cudnn_bwd_ms"] / r["polyattn_bwd_ms"])
    if r.get("check") not in (None, "ok"):
        out += " CHECK %s" % r["check"]
    for name, v in r.get("variants", {}).items():
        out += "  %s %.3f" % (name, r["flash_bwd_ms"] / v["bwd_ms"])
        if v.get("check") not in (None, "ok"):
            out += " CHECK %s" % v["check"]
    return out


def main(paths):
    for path in paths:
        with open(path) as f:
            for text in f:
                r = json.loads(text)
                if "flash_bwd_ms" in r:
                    print(line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
