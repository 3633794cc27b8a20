# SPDX-License-Identifier: Apache-2.0
"""gdb commands for programs on weft: `info weft-streams`, `info weft-units` and `weft-bt ID`.

Installed next to libweft.so's gdb auto-load path, so gdb loads it with the library; or load it
by hand: `source <prefix>/share/weft/gdb/weft_gdb.py`. No debug information is needed.

In a live, stopped process `info weft-streams` and `info weft-units` call weft_debug_dump, a C
function libweft exports for this. In a core file nothing can be called: `info weft-units` then
reads the unit descriptors from memory, guided by weft_debug_info (an exported table of their
layout), and lists each unit's id, kind, state, what a blocked one waits for and its pool;
`info weft-streams` needs a live process. `weft-bt` reads the saved context from memory in both
cases and, for x86-64, unwinds from it through a gdb frame unwinder, without touching the
thread's registers.
"""

import re
import struct

import gdb
from gdb.unwinder import Unwinder, register_unwinder

# The frame Boost.Context's jump_fcontext and weft's own switch save on a parked ULT's stack
# (runtime/src/jump_x86_64_sysv.S): r12 r13 r14 r15 rbx rbp from 0x08, the resume address at
# 0x38; the stack pointer after the resume is just above it.
_SAVED = (("r12", 0x08), ("r13", 0x10), ("r14", 0x18), ("r15", 0x20), ("rbx", 0x28),
          ("rbp", 0x30), ("rip", 0x38))
_SAVED_SP = 0x40

# weft_debug_info (runtime/src/observe/dump.cpp): uint32 fields, then pointers from the next
# multiple of 8.
_INFO_VERSION = 1
_INFO_FIELDS = ("version", "unit_size", "unit_align", "unit_id", "unit_kind", "unit_state", "unit_flags",
                "unit_context", "unit_join_word", "unit_home", "unit_user_suspended",
                "wait_shift", "slab_size", "slab_memory", "slab_count", "wait_names_count",
                "client_kinds")
_INFO_POINTERS = ("wait_names", "client_labels", "slabs")
_STATES = ("ready", "running", "blocked", "terminated")
_JOIN_SENTINELS = (0, 1, 2)  # join_none, join_done, join_detached


def _is_core():
    """Whether the selected inferior is a core file, where no function can be called."""
    conn = getattr(gdb.selected_inferior(), "connection", None)
    return conn is not None and conn.type == "core"


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


class _Memory:
    """The process's memory (live or core) as weft's descriptors lay it out."""

    def __init__(self):
        self.inferior = gdb.selected_inferior()
        try:
            addr = int(gdb.parse_and_eval("(unsigned long) &weft_debug_info"))
        except gdb.error:
            raise gdb.GdbError("weft: no weft_debug_info in this program (not linked with "
                               "libweft, or a libweft older than this extension)")
        words = struct.unpack("<%dI" % len(_INFO_FIELDS), self.read(addr, 4 * len(_INFO_FIELDS)))
        self.info = dict(zip(_INFO_FIELDS, words))
        if self.info["version"] != _INFO_VERSION:
            raise gdb.GdbError("weft: weft_debug_info has layout %d, this extension reads %d"
                               % (self.info["version"], _INFO_VERSION))
        base = addr + (4 * len(_INFO_FIELDS) + 7) // 8 * 8
        for i, name in enumerate(_INFO_POINTERS):
            self.info[name] = self.word(base + 8 * i)
        if not self.info["slabs"]:
            raise gdb.GdbError("weft: the runtime is not initialised")

    def read(self, addr, size):
        try:
            return bytes(self.inferior.read_memory(addr, size))
        except gdb.MemoryError as e:
            raise gdb.GdbError("weft: cannot read the process's memory at 0x%x (%s)" % (addr, e))

    def word(self, addr):
        return struct.unpack("<Q", self.read(addr, 8))[0]

    def byte(self, addr):
        return self.read(addr, 1)[0]

    def string(self, addr):
        out = b""
        while len(out) < 256:
            chunk = self.read(addr + len(out), 16)
            if b"\0" in chunk:
                return (out + chunk[:chunk.index(b"\0")]).decode("utf-8", "replace")
            out += chunk
        return out.decode("utf-8", "replace")

    def units(self):
        """Every live descriptor (handed out and not terminated) as a dict of its fields."""
        i = self.info
        # libstdc++'s std::vector<slab>: begin and end pointers first.
        first, last = self.word(i["slabs"]), self.word(i["slabs"] + 8)
        for rec in range(first, last, i["slab_size"]):
            memory, count = self.word(rec + i["slab_memory"]), self.word(rec + i["slab_count"])
            for n in range(count):
                u = memory + n * i["unit_size"]
                uid = self.word(u + i["unit_id"])
                state = self.byte(u + i["unit_state"])
                if uid == 0 or state >= 3:  # never handed out, or terminated
                    continue
                yield {"addr": u, "id": uid, "state": state,
                       "ult": self.byte(u + i["unit_kind"]) == 0,
                       "wait": self.byte(u + i["unit_flags"]) >> i["wait_shift"],
                       "context": self.word(u + i["unit_context"]),
                       "join_word": self.word(u + i["unit_join_word"]),
                       "home": self.word(u + i["unit_home"]),
                       "suspended": self.byte(u + i["unit_user_suspended"]) != 0}

    def wait_name(self, kind):
        i = self.info
        if 0 < kind < i["wait_names_count"]:
            return self.string(self.word(i["wait_names"] + 8 * kind))
        client = kind - i["wait_names_count"]
        if 0 <= client < i["client_kinds"]:
            label = self.word(i["client_labels"] + 8 * client)
            return self.string(label) if label else "a client layer's wait"
        return None


def _units_from_memory(backtraces):
    """`info weft-units` without calling into the process: what the descriptors say."""
    mem = _Memory()
    units = list(mem.units())
    joined_by = {}  # joiner's address -> the unit it joins
    for u in units:
        w = u["join_word"]
        if w not in _JOIN_SENTINELS and w % mem.info["unit_align"] == 0:
            joined_by[w] = u
    out = ["%d live unit%s\n" % (len(units), "" if len(units) == 1 else "s")]
    for u in units:
        line = "unit %d %s %s" % (u["id"], "ULT" if u["ult"] else "tasklet", _STATES[u["state"]])
        if _STATES[u["state"]] == "blocked":
            if u["addr"] in joined_by:
                what = "join of unit %d" % joined_by[u["addr"]]["id"]
            elif u["suspended"]:
                what = "suspended (this_unit::suspend)"
            elif u["ult"] and not u["context"]:
                what = "join of a unit running on its stack"
            else:
                what = mem.wait_name(u["wait"]) or "switched out"
            line += ": " + what
        out.append(line + "\n")
        if u["home"]:
            out.append("  pool 0x%x\n" % u["home"])
        if backtraces and u["ult"] and _STATES[u["state"]] != "running" and u["context"]:
            out.append("  backtrace:\n")
            for frame in _backtrace(u["context"], []).splitlines():
                out.append("    " + frame + "\n")
    return "".join(out)


class InfoWeftStreams(gdb.Command):
    """Lists weft's execution streams: state, running unit, scheduler and pools."""

    def __init__(self):
        super().__init__("info weft-streams", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        if _is_core():
            raise gdb.GdbError("info weft-streams: needs a live process (this is a core file; "
                               "`info weft-units` and `weft-bt` work here)")
        gdb.write(_dump(1))


class InfoWeftUnits(gdb.Command):
    """Lists weft's live units: id, kind, state, what a blocked one waits for, pool, stream.
With "bt" as argument, adds each parked ULT's backtrace (unwound by libweft in a live process,
by gdb in a core file, where the list leaves out names and streams)."""

    def __init__(self):
        super().__init__("info weft-units", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        backtraces = arg.strip() == "bt"
        if _is_core():
            gdb.write(_units_from_memory(backtraces))
        else:
            gdb.write(_dump(2 | (4 if backtraces else 0)))


class _FrameId:
    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


class _ContextUnwinder(Unwinder):
    """While `context` is set, makes the selected thread's innermost frame return into the
    parked ULT saved there: frame 1 onwards is then the ULT's stack, unwound by gdb as usual."""

    def __init__(self):
        super().__init__("weft-ult-context")
        self.context = None

    def __call__(self, pending_frame):
        if self.context is None or pending_frame.level() != 0:
            return None
        ulong = gdb.lookup_type("unsigned long")
        mem = gdb.selected_inferior()

        def word(offset):
            return int.from_bytes(bytes(mem.read_memory(self.context + offset, 8)), "little")

        # The innermost frame is given an id below the ULT's stack pointer: gdb stops a
        # backtrace whose caller looks inner to its callee, as the ULT's stack may (it is
        # mapped anywhere relative to the thread's).
        info = pending_frame.create_unwind_info(
            _FrameId(gdb.Value(self.context).cast(ulong), pending_frame.read_register("rip")))
        for reg, offset in _SAVED:
            info.add_saved_register(reg, gdb.Value(word(offset)).cast(ulong))
        info.add_saved_register("rsp", gdb.Value(self.context + _SAVED_SP).cast(ulong))
        return info


_unwinder = _ContextUnwinder()
register_unwinder(None, _unwinder, replace=True)


def _backtrace(context, args):
    """gdb's backtrace of the ULT whose context is saved at `context`, numbered from #0."""
    arch = gdb.selected_frame().architecture().name()
    if "x86-64" not in arch:
        raise gdb.GdbError("weft-bt: only x86-64 is supported (this is %s)" % arch)
    _unwinder.context = context
    gdb.invalidate_cached_frames()
    try:
        text = gdb.execute("backtrace " + " ".join(args), to_string=True)
    finally:
        _unwinder.context = None
        gdb.invalidate_cached_frames()
    # Frame #0 is the thread's own innermost frame, the one the unwinder borrowed.
    lines = text.splitlines(True)
    start = next((n for n, line in enumerate(lines) if line.startswith("#1 ")), len(lines))
    return "".join(re.sub(r"^#(\d+)(\s)", lambda m: "#%d%s" % (int(m.group(1)) - 1, m.group(2)),
                          line) for line in lines[start:])


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
        unit = next((u for u in _Memory().units() if u["id"] == uid), None)
        if unit is None or not unit["ult"] or _STATES[unit["state"]] == "running" \
                or not unit["context"]:
            raise gdb.GdbError("weft-bt: unit %d is not a parked ULT (running, finished, "
                               "never started, a tasklet, or no such unit)" % uid)
        text = _backtrace(unit["context"], args[1:])
        gdb.write("weft unit %d:\n" % uid)
        gdb.write(text)


InfoWeftStreams()
InfoWeftUnits()
WeftBt()
