#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/abt/compare.py: weft's abt.h layer against native Argobots on the same C source.

    python3 bench/abt/compare.py WEFT_BENCH ARGOBOTS_BENCH [ROUNDS [N [TRIALS]]]
    e.g. python3 bench/abt/compare.py build/bench/weft_abt_bench \\
             bench/abt/abt_bench_argobots 7 10000 21

Runs the two builds of bench/abt/abt_bench.c one after the other, ROUNDS times (default 7), each
process with N units per trial (default 10000) and TRIALS trials (default 21), and prints per row
the median over the rounds of each process's median ns per unit, and the ratio weft / Argobots
(below 1: weft is faster). Alternating the programs spreads a machine's drift over both. The
Argobots build finds libabt through LD_LIBRARY_PATH (set it to the installation's lib folder).
Exits non-zero when a program fails or the two print different rows.
"""
import statistics
import subprocess
import sys


def medians_of(program, n, trials):
    """{(kind, bench): median ns per unit} of one run of `program`."""
    out = subprocess.run([program, n, trials], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        fields = line.split("\t")
        if fields[0] != "raw":
            continue
        kind = fields[1].rsplit("-", 1)[1]  # ult, tasklet, mutex
        units = int(fields[5])
        rows[(kind, fields[2])] = statistics.median(float(ns) / units for ns in fields[6:])
    return rows


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    weft, argobots = argv[1], argv[2]
    rounds = int(argv[3]) if len(argv) > 3 else 7
    n = argv[4] if len(argv) > 4 else "10000"
    trials = argv[5] if len(argv) > 5 else "21"
    seen = {"weft": {}, "argobots": {}}
    for _ in range(rounds):
        for name, program in (("weft", weft), ("argobots", argobots)):
            for row, ns in medians_of(program, n, trials).items():
                seen[name].setdefault(row, []).append(ns)
    if seen["weft"].keys() != seen["argobots"].keys():
        print("compare.py: the two programs printed different rows", file=sys.stderr)
        return 1
    print(f"{'row':20} {'weft ns':>9} {'Argobots ns':>11} {'ratio':>6}  rounds (weft / Argobots)")
    for row, w in seen["weft"].items():
        a = seen["argobots"][row]
        wm, am = statistics.median(w), statistics.median(a)
        print(f"{row[0] + ' ' + row[1]:20} {wm:9.1f} {am:11.1f} {wm / am:6.2f}  "
              + " ".join(f"{x:.0f}" for x in w) + " / " + " ".join(f"{x:.0f}" for x in a))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
