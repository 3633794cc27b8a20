# SPDX-License-Identifier: Apache-2.0
"""gdb commands for programs on weft: `info weft-streams`, `info weft-units` and `weft-bt ID`.

Installed next to libweft.so's gdb auto-load path, so gdb loads it with the library; or load it
by hand: `source <prefix>/share/weft/gdb/weft_gdb.py`. The commands work on a live, stopped
process (not a core file): they call weft_debug_dump and weft_debug_context, two C functions
libweft exports for this, so no debug information is needed. `weft-bt` is for x86-64: it points
the selected thread's registers at the ULT's saved context, prints gdb's backtrace there, and
restores them.
"""

import gdb

# The frame Boost.Context's jump_fcontext and weft's own switch save on a parked ULT's stack
# (runtime/src/jump_x86_64_sysv.S): r12 r13 r14 r15 rbx rbp from 0x08, the resume address at
# 0x38; the stack pointer after the resume is just above it.
_SAVED = (("r12", 0x08), ("r13", 0x10), ("r14", 0x18), ("r15", 0x20), ("rbx", 0x28),
          ("rbp", 0x30), ("rip", 0x38))
_RESTORED = ("rsp", "rip", "rbp", "rbx", "r12", "r13", "r14", "r15")


def _dump(what):
    try:
        text = gdb.parse_and_eval(
            "((const char *(*)(int)) weft_debug_dump)(%d)" % what).string()
    except gdb.error as e:
        raise gdb.GdbError(
            "weft: cannot call into the process (%s); the commands need a live process "
            "linked with libweft" % e)
    if not text:
        raise gdb.GdbError("weft: the runtime is not initialised")
    return text


class InfoWeftStreams(gdb.Command):
    """Lists weft's execution streams: state, running unit, scheduler and pools."""

    def __init__(self):
        super().__init__("info weft-streams", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        gdb.write(_dump(1))


class InfoWeftUnits(gdb.Command):
    """Lists weft's live units: id, kind, state, what a blocked one waits for, pool, stream.
With "bt" as argument, adds each parked ULT's backtrace (unwound by libweft)."""

    def __init__(self):
        super().__init__("info weft-units", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        gdb.write(_dump(2 | (4 if arg.strip() == "bt" else 0)))


class WeftBt(gdb.Command):
    """weft-bt ID: the backtrace of the parked (ready or blocked) ULT with unit id ID.
Further arguments go to gdb's backtrace command (e.g. `weft-bt 7 full`)."""

    def __init__(self):
        super().__init__("weft-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        args = gdb.string_to_argv(arg)
        if not args:
            raise gdb.GdbError("usage: weft-bt ID [backtrace options]")
        try:
            uid = int(args[0], 0)
        except ValueError:
            raise gdb.GdbError("weft-bt: %r is not a unit id" % args[0])
        arch = gdb.selected_frame().architecture().name()
        if "x86-64" not in arch:
            raise gdb.GdbError("weft-bt: only x86-64 is supported (this is %s)" % arch)
        ctx = int(gdb.parse_and_eval(
            "((void *(*)(unsigned long long)) weft_debug_context)(%d)" % uid))
        if ctx == 0:
            raise gdb.GdbError("weft-bt: unit %d is not a parked ULT (running, finished, "
                               "never started, a tasklet, or no such unit)" % uid)
        inferior = gdb.selected_inferior()

        def word(offset):
            return int.from_bytes(bytes(inferior.read_memory(ctx + offset, 8)), "little")

        saved = {r: int(gdb.parse_and_eval("(unsigned long) $%s" % r)) for r in _RESTORED}
        gdb.execute("select-frame 0", to_string=True)
        try:
            for reg, offset in _SAVED:
                gdb.execute("set $%s = %d" % (reg, word(offset)), to_string=True)
            gdb.execute("set $rsp = %d" % (ctx + 0x40), to_string=True)
            gdb.write("weft unit %d:\n" % uid)
            gdb.execute("backtrace " + " ".join(args[1:]), from_tty)
        finally:
            gdb.execute("select-frame 0", to_string=True)
            for reg in _RESTORED:
                gdb.execute("set $%s = %d" % (reg, saved[reg]), to_string=True)


InfoWeftStreams()
InfoWeftUnits()
WeftBt()
