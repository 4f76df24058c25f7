"""Lackey logs with their system calls: where in a user trace each system call happened.

``valgrind --tool=lackey --trace-mem=yes --trace-syscalls=yes`` writes, among the
reference lines, one line per system call when the process enters it::

    SYSCALL[28171,1](1) sys_write ( 1, 0x403e270, 4096 ) --> [async] ...
    SYSCALL[28171,1](1) ... [async] --> Success(0x1000)

(a call that blocks gets its result on a second line; one that does not has it on the
first, after ``[sync]`` or ``[pre-success]``).  :func:`read_lackey_syscalls` streams such a
log as chunks of references, each with the system calls that fall inside it: the call's
position (the number of references of the chunk before it), its number, its first three
arguments, its result and the path it names, if any.  The reference lines are parsed by the
compiled parser of :mod:`calibration.sim.traces`; system-call lines are rare (one per
thousands of references) and parsed here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator

import numpy as np

from .traces import Chunk, TraceError, _chunk, _parse

__all__ = ["Syscall", "read_lackey_syscalls", "SYSCALL_NAMES"]

_READ_BYTES = 8 << 20
_CALL = re.compile(rb"SYSCALL\[(\d+),(\d+)\]\((\d+)\) (?:sys_)?(\w+)(?:\[[^\]]*\])? ?\( ?(.*?) ?\)(?:\[sync\])?(?: --> (.*?))? *$")
_UNKNOWN = re.compile(rb"SYSCALL\[(\d+),(\d+)\]\((\d+)\) unimplemented")
_DONE = re.compile(rb"SYSCALL\[(\d+),(\d+)\]\((\d+)\) \.\.\. \[async\] --> (.*)")
_RESULT = re.compile(rb"(Success|Failure)\(0x([0-9a-fA-F]+)\)")
_PATH = re.compile(rb"0x[0-9a-fA-F]+\(([^)]*)\)")

#: x86-64 system-call numbers the kernel model tells apart (the rest are 'other').
SYSCALL_NAMES = {0: "read", 1: "write", 2: "open", 3: "close", 4: "stat", 5: "fstat", 6: "lstat", 7: "poll",
                 8: "lseek", 9: "mmap", 10: "mprotect", 11: "munmap", 12: "brk", 17: "pread64", 18: "pwrite64",
                 19: "readv", 20: "writev", 21: "access", 23: "select", 32: "dup", 33: "dup2", 35: "nanosleep",
                 41: "socket", 42: "connect", 43: "accept", 44: "sendto", 45: "recvfrom", 46: "sendmsg",
                 47: "recvmsg", 48: "shutdown", 49: "bind", 50: "listen", 56: "clone", 57: "fork", 59: "execve",
                 60: "exit", 61: "wait4", 62: "kill", 72: "fcntl", 74: "fsync", 75: "fdatasync", 78: "getdents",
                 82: "rename", 87: "unlink", 200: "tkill", 202: "futex", 221: "fadvise64", 234: "tgkill", 217: "getdents64", 230: "clock_nanosleep",
                 231: "exit_group", 232: "epoll_wait", 257: "openat", 262: "newfstatat", 263: "unlinkat",
                 270: "pselect6", 271: "ppoll", 281: "epoll_pwait", 288: "accept4", 293: "pipe2",
                 332: "statx", 435: "clone3", 441: "epoll_pwait2"}


@dataclass
class Syscall:
    """One system call: ``position`` (references of its chunk before it), ``number``
    (x86-64), ``name`` (valgrind's, without ``sys_``), ``args`` (the first three, as
    integers; 0 where not a number), ``result`` (the returned value, None if failed or
    not known), ``path`` (the file name it passes, or '')."""

    position: int
    number: int
    name: str
    args: tuple
    result: int | None
    path: str = ""


def _integer(text: bytes) -> int:
    text = text.strip().split(b"(", 1)[0]
    try:
        return int(text, 16) if text.startswith(b"0x") else int(text)
    except ValueError:
        return 0


def _result(text: bytes):
    """(known, value): the value of ``Success(0x..)``; (True, None) for a failure;
    (False, None) while the call is still running (``[async] ...``)."""
    m = _RESULT.search(text)
    if m is None:
        return False, None
    return True, (int(m.group(2), 16) if m.group(1) == b"Success" else None)


def _syscall(line: bytes, position: int) -> Syscall | None:
    m = _CALL.match(line)
    if m is None:
        u = _UNKNOWN.match(line)     # a call the kernel lacks: it still entered the kernel
        return None if u is None else Syscall(position, int(u.group(3)), "unimplemented", (0, 0, 0), None)
    raw_args = m.group(5)
    args = tuple(_integer(a) for a in raw_args.split(b",")[:3]) if raw_args else ()
    path = _PATH.search(raw_args)
    _, value = _result(m.group(6) or b"")
    return Syscall(position, int(m.group(3)), m.group(4).decode(), args + (0,) * (3 - len(args)), value,
                   path.group(1).decode(errors="replace") if path else "")


def read_lackey_syscalls(path) -> Iterator[tuple[Chunk, list]]:
    """Stream a lackey log written with ``--trace-syscalls=yes`` as ``(chunk, syscalls)``
    pairs (see the module); a log without system-call lines gives empty lists."""
    path = Path(path)
    if not path.is_file():
        raise TraceError(str(path), "no such file")
    pending: Syscall | None = None
    bad = 0
    with open(path, "rb") as fh:
        carry = b""
        while True:
            data = fh.read(_READ_BYTES)
            text = carry + data
            if not data:
                if text and not text.endswith(b"\n"):
                    text += b"\n"
                end = len(text)
            else:
                end = text.rfind(b"\n") + 1
            carry = text[end:]
            pieces_op, pieces_addr, pieces_size, calls = [], [], [], []
            n = 0
            pos = 0
            while pos < end:
                k = text.find(b"SYSCALL[", pos, end)
                stop = end if k < 0 else k
                if stop > pos:
                    seg = np.frombuffer(text, dtype=np.uint8, count=stop - pos, offset=pos)
                    cap = seg.size // 3 + 4
                    op, addr, size = (np.empty(cap, np.uint8), np.empty(cap, np.uint64), np.empty(cap, np.uint16))
                    got, _, b = _parse(seg if seg[-1] == 10 else np.append(seg, np.uint8(10)), True, op, addr, size)
                    bad += b
                    pieces_op.append(op[:got])
                    pieces_addr.append(addr[:got])
                    pieces_size.append(size[:got])
                    n += got
                if k < 0:
                    break
                eol = text.find(b"\n", k, end)
                line = text[k:eol if eol >= 0 else end]
                pos = (eol + 1) if eol >= 0 else end
                done = _DONE.match(line)
                if done is not None:
                    if pending is not None:
                        pending.result = _result(done.group(4))[1]
                        pending = None
                    continue
                call = _syscall(line, n)
                if call is None:
                    bad += 1
                    continue
                calls.append(call)
                known, _ = _result(line.split(b"-->", 1)[-1])
                pending = None if known else call
            if n or calls:
                op = np.concatenate(pieces_op) if pieces_op else np.empty(0, np.uint8)
                yield (_chunk(op, np.concatenate(pieces_addr) if pieces_addr else np.empty(0, np.uint64),
                              np.concatenate(pieces_size) if pieces_size else np.empty(0, np.uint16)), calls)
            if not data:
                break
    if bad:
        import warnings

        warnings.warn(f"{path}: skipped {bad} malformed lackey line(s)", stacklevel=2)
