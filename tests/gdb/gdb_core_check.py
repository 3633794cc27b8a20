# SPDX-License-Identifier: Apache-2.0
# Run by run_gdb_check.sh as `gdb -batch -x gdb_core_check.py TARGET CORE` on the core file
# gdb_check.py wrote of gdb_target stopped with two ULTs blocked: the weft commands must work
# without calling into a process, and list every parked ULT's backtrace. Ends with the line
# "WEFT-GDB-CORE-CHECK: OK" or "WEFT-GDB-CORE-CHECK: FAILED <what>".
import os
import re

import gdb

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


try:
    gdb.execute("set pagination off")
    gdb.execute("source " + os.environ["WEFT_GDB_EXTENSION"])
    units = gdb.execute("info weft-units bt", to_string=True)
    gdb.write(units)
    blocked = re.findall(r"^unit (\d+) ULT blocked: (.*)$", units, re.M)
    check(len(blocked) == 2, "two blocked ULTs in info weft-units")
    mutex = [uid for uid, what in blocked if what == "mutex"]
    check(len(mutex) == 1, "a ULT blocked on the mutex")
    if mutex:
        check("join of unit %s" % mutex[0] in [what for _, what in blocked], "its joiner")
    # Every parked ULT's backtrace, each unwound into the runtime's code that parked it.
    check(units.count("  backtrace:") == len(blocked), "a backtrace for every parked ULT")
    check("gdb_blocked_worker" in units and "lock_slow" in units,
          "the mutex waiter's frames in info weft-units bt")
    check("join_handle" in units, "the joiner's frames in info weft-units bt")
    for uid, _ in blocked:
        bt = gdb.execute("weft-bt " + uid, to_string=True)
        gdb.write(bt)
        check(re.search(r"^#0 ", bt, re.M) and "ult_entry" in bt,
              "weft-bt %s unwinds to the ULT's entry" % uid)
    try:
        gdb.execute("info weft-streams", to_string=True)
        check(False, "info weft-streams refuses a core file")
    except gdb.error as e:
        check("needs a live process" in str(e), "info weft-streams' error on a core file")
except gdb.error as e:
    failures.append("gdb error: %s" % e)

gdb.write("WEFT-GDB-CORE-CHECK: %s\n" % ("OK" if not failures else "FAILED " + "; ".join(failures)))
