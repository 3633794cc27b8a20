# SPDX-License-Identifier: Apache-2.0
# Run by run_gdb_check.sh as `gdb -batch -x gdb_check.py`: loads the weft extension, runs
# gdb_target until it stops itself, and checks what the weft commands print; then writes a core
# file of the stopped process to $WEFT_GDB_CORE (gcore) for gdb_core_check.py. Ends with the
# line "WEFT-GDB-CHECK: OK" or "WEFT-GDB-CHECK: FAILED <what>".
import os
import re

import gdb

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


try:
    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("source " + os.environ["WEFT_GDB_EXTENSION"])
    gdb.execute("run")
    streams = gdb.execute("info weft-streams", to_string=True)
    units = gdb.execute("info weft-units", to_string=True)
    gdb.write(streams + units)
    check(re.search(r"^stream 0 \(primary\)", streams, re.M), "stream 0 in info weft-streams")
    check(re.search(r"^stream 1:", streams, re.M), "stream 1 in info weft-streams")
    blocked = re.search(r"^unit (\d+) ULT blocked: mutex$", units, re.M)
    check(blocked, "a ULT blocked on the mutex in info weft-units")
    if blocked:
        check(re.search(r"^unit \d+ ULT blocked: join of unit %s$" % blocked.group(1), units,
                        re.M), "its joiner in info weft-units")
        rip_before = int(gdb.parse_and_eval("(unsigned long) $rip"))
        bt = gdb.execute("weft-bt " + blocked.group(1), to_string=True)
        gdb.write(bt)
        check("gdb_blocked_worker" in bt, "gdb_blocked_worker in weft-bt's backtrace")
        check("lock_slow" in bt, "the mutex's slow path in weft-bt's backtrace")
        check(int(gdb.parse_and_eval("(unsigned long) $rip")) == rip_before,
              "registers restored after weft-bt")
    try:
        gdb.execute("weft-bt 999999999", to_string=True)
        check(False, "weft-bt of no such unit fails")
    except gdb.error as e:
        check("not a parked ULT" in str(e), "weft-bt's error for no such unit")
    gdb.execute("gcore " + os.environ["WEFT_GDB_CORE"])
    # The registers weft-bt borrowed are back: the program finishes normally.
    gdb.execute("continue")
    check(int(gdb.parse_and_eval("$_exitcode")) == 0, "the program exits with 0 after weft-bt")
except gdb.error as e:
    failures.append("gdb error: %s" % e)

gdb.write("WEFT-GDB-CHECK: %s\n" % ("OK" if not failures else "FAILED " + "; ".join(failures)))
