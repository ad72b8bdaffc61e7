#!/usr/bin/env python3
"""tail_model_s28.py -- the twenty-eighth session's list-scheduling model of a grid's last
round (issue 9, decision 119): blocks in launch order, each to the first free SM, one
block per SM at a time, a full query tile taking 1 and a partial one c. hd64's 192-row
tiles at S2048 (each head's last tile 128 rows) and S4096 (64 rows), 16k tokens, 32 heads.
Prints the makespan in tile times and the rows' share of it ("eff") for the grid's order
(each head's tiles last-first: the partial one first), the partial tiles of every head last
("last"), and of only the last K heads ("lagged").
  python3 bench/gpu/tail_model_s28.py"""
import heapq


def makespan(jobs, sms=132):
    free = [0.0] * sms
    for j in jobs:
        t = heapq.heappop(free)
        heapq.heappush(free, t + j)
    return max(free)


def main():
    for S, B, cs in ((2048, 8, (1.0, 0.9, 0.83, 0.75)), (4096, 4, (1.0, 0.8, 0.72, 0.6))):
        nq, HB = -(-S // 192), B * 32
        rows = HB * S / 192  # tiles' worth of rows
        for c in cs:
            grid = ([c] + [1.0] * (nq - 1)) * HB
            last = [1.0] * ((nq - 1) * HB) + [c] * HB
            g, l = makespan(grid), makespan(last)
            print("S%d c=%.2f grid %.2f eff %.3f | last %.2f eff %.3f" %
                  (S, c, g, rows / 132 / g, l, rows / 132 / l))
        c = cs[2]
        for K in (0, 24, 48, 96, HB):
            jobs = ([c] + [1.0] * (nq - 1)) * (HB - K) + [1.0] * ((nq - 1) * K) + [c] * K
            m = makespan(jobs)
            print("S%d c=%.2f lagged K=%d: %.2f eff %.3f" % (S, c, K, m, rows / 132 / m))


if __name__ == "__main__":
    main()
