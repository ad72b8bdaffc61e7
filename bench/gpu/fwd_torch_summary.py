#!/usr/bin/env python3
"""One line per forward row of a `compare_torch.py --json` file: dtype, head dim, S,
causal, polyattn's time and TFLOP/s, its speed against flash and cuDNN, then each
--variants value against flash (with a CHECK mark where its output failed). The
forward counterpart of bwd_torch_summary.py, for the bench/gpu/*_s14_*.sh scripts."""
import json
import sys


def line(r):
    out = "%s D%s S%s c%d x flash: " % (r.get("dtype", ""), r["D"], r["S"], int(bool(r["causal"])))
    if "polyattn_ms" not in r:
        out += "- (%s)" % r.get("polyattn_error", "no time")
    else:
        out += "%.3f (%.3f ms %.1f TF/s)" % (r["flash_ms"] / r["polyattn_ms"], r["polyattn_ms"],
                                             r["polyattn_tflops"])
        if "cudnn_ms" in r:
            out += " x cudnn %.3f" % (r["cudnn_ms"] / r["polyattn_ms"])
    if r.get("check") not in (None, "ok"):
        out += " CHECK %s" % r["check"]
    for name, v in r.get("variants", {}).items():
        if "ms" not in v:
            out += "  %s -" % name
            continue
        out += "  %s %.3f" % (name, r["flash_ms"] / v["ms"])
        if v.get("check") not in (None, "ok"):
            out += " CHECK %s" % v["check"]
    return out


def main(paths):
    for path in paths:
        with open(path) as f:
            for text in f:
                r = json.loads(text)
                if r.get("kind") == "fwd" and "flash_ms" in r:
                    print(line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
