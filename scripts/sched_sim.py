#!/usr/bin/env python3
"""sched_sim.py -- makespan of a persistent kernel's tile orders, as a multiple of the
ideal (total work / SMs): what the tenth session used to predict decision 98 and to
weigh the same tail order for dense causal problems (not built; bench/RESULTS.md,
the tenth session's BLOCK subsection).

A tile of a causal query block q (of n per head) costs q + 1 key tiles plus `fixed`
(its set-up, first S, last P.V and stores, in key-tile units). Orders compared:
  pairs    the fixed sequence of decision 89 (tile n-1-u with tile u, round robin);
  dynamic  tiles from a counter in the grid's order (heads one after the other, each
           head's tiles longest first), each to the first free SM;
  tail W   dynamic, with the last W tiles sorted longest first (decision 98's rule
           for block masks; W = min(2 SMs, 256, tiles - SMs) there);
  LPT      every tile sorted longest first (loses the heads' L2 locality).

  python3 scripts/sched_sim.py [--sms 132] [--fixed 1.0]
"""
import argparse
import heapq


def dynamic(costs, sms):
    free = [0.0] * sms
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return max(free)


def pairs(heads, n, fixed, sms):
    loads = [0.0] * sms
    k = 0
    for _ in range(heads):
        for u in range((n + 1) // 2):
            a, b = n - 1 - u, u
            loads[k % sms] += (a + 1 + fixed) + ((b + 1 + fixed) if b != a else 0.0)
            k += 1
    return max(loads)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--fixed", type=float, default=1.0)
    a = ap.parse_args()
    # (heads = batch x query heads, query tiles per head) of the standard sweep's
    # causal rows that run the persistent kernel, 128-row tiles
    rows = [("hd128 S512", 512, 4), ("hd128 S2048", 128, 16), ("hd128 S8192", 32, 64),
            ("hd64 S2048", 256, 16)]
    for name, heads, n in rows:
        costs = [q + 1 + a.fixed for _ in range(heads) for q in reversed(range(n))]
        ideal = sum(costs) / a.sms
        w = max(0, min(2 * a.sms, 256, len(costs) - a.sms))
        tail = costs[:len(costs) - w] + sorted(costs[len(costs) - w:], reverse=True)
        print(f"{name:12s} pairs {pairs(heads, n, a.fixed, a.sms) / ideal:.3f}  "
              f"dynamic {dynamic(costs, a.sms) / ideal:.3f}  "
              f"tail {w} {dynamic(tail, a.sms) / ideal:.3f}  "
              f"LPT {dynamic(sorted(costs, reverse=True), a.sms) / ideal:.3f}")


if __name__ == "__main__":
    main()
