"""Operating-system references at the system calls of a user trace: a documented model of
the kernel structures Foglia, Giorgi & Prete (IEE Proc. Computers and Digital Techniques,
2004) name.

Their traces held a Linux kernel's own references at each system call (§4); valgrind
sees only user space.  This module puts a burst of kernel references at every system
call that :mod:`calibration.sim.syscall_trace` found, made from the structures the paper
and its reference [43] say matter (see ``docs/coherence.md``, "The kernel of the TPC-W
recordings"; every choice below is this project's reconstruction, [REC] there):

* **per process, private** (passive sharing when its owner migrates): the task structure
  with its kernel stack (one 8 KiB block, as in Linux 2.4), the file-descriptor table and
  the memory descriptor with its mappings and page tables, at an address made of the
  process id;
* **shared by every process**: the system-call table, the run queue, the file table,
  the inode and directory-entry caches, the page cache, the socket structures and their
  buffers, the futex hash table and the page allocator's free lists;
* every call enters and leaves through the same code and saves and restores its
  registers on the kernel stack; its handler's code and data follow the call's class
  (file I/O, socket I/O, path lookup, descriptor calls, blocking calls, futexes, memory
  calls, other); a read or write copies the bytes it moved (its result) between the user
  buffer it names and the page cache or a socket buffer; a call that can block runs the
  scheduler, which reads other processes' task structures and writes the run queue; a
  wake-up (a futex wake, a send on a socket) writes the woken process's task structure.

``scale`` multiplies the handlers' lengths (0 leaves only the entry and exit paths), so
that the kernel-dependent findings can be shown to move with the kernel's weight.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from mva.errors import ModelError

from .syscall_trace import SYSCALL_NAMES, Syscall
from .traces import IFETCH, LOAD, STORE, Chunk, _chunk

__all__ = ["KernelModel", "KERNEL_TEXT", "KERNEL_SHARED", "KERNEL_SHARED_END", "TASK_BASE", "CLASSES",
           "syscall_class", "with_kernel"]

KERNEL_TEXT = 0xFFFF_FFFF_8100_0000          # kernel code, 16 MiB, read only
KERNEL_SHARED = 0xFFFF_8880_0000_0000        # the shared kernel data below, 128 MiB
KERNEL_SHARED_END = KERNEL_SHARED + (128 << 20)
TASK_BASE = 0xFFFF_C900_0000_0000            # per process: 64 KiB at TASK_BASE + pid * 64 KiB
_TASK_BYTES = 64 << 10

# offsets of the shared structures inside KERNEL_SHARED: (offset, entry bytes, entries)
_SYSCALL_TABLE = (0x0000_0000, 8, 512)
_RUN_QUEUE = (0x0001_0000, 64, 64)
_FILE_TABLE = (0x0010_0000, 256, 4096)
_INODES = (0x0020_0000, 512, 4096)
_DENTRIES = (0x0040_0000, 128, 32768)
_PAGE_CACHE = (0x0100_0000, 4096, 16384)
_SOCKETS = (0x0500_0000, 1024, 1024)
_SOCKET_BUFFERS = (0x0510_0000, 2048, 8192)
_FUTEX_HASH = (0x0620_0000, 64, 1024)
_PAGE_ALLOCATOR = (0x0630_0000, 64, 64)
# per process, offsets inside its 64 KiB: task structure + kernel stack, descriptors, memory
_TASK, _STACK_TOP, _FD_TABLE, _MM, _PAGE_TABLES = 0x0000, 0x2000, 0x2000, 0x2800, 0x4000

#: The classes a call falls into, with the handler's instructions (before ``scale``): the
#: relative costs of lmbench's measurements of Linux (McVoy & Staelin, USENIX 1996: a null
#: call about 0.5 us, stat and open/close 2-5 us, a TCP round trip on one host 20-50 us,
#: select on a few descriptors and a context switch 2-10 us, mmap 10+ us) at about one
#: instruction a cycle of a 1-GHz processor, halved for the share that is data
#: references and copies (counted on their own) [REC].
CLASSES = {"file_io": 1500, "socket_io": 5000, "path": 2000, "descriptor": 400, "blocking": 3000, "futex": 800,
           "signal": 1200, "memory": 3000, "other": 300}
#: One data reference for every three instructions of a handler (the user code's share,
#: Foglia et al.'s Table 3: about 25% of references are data); those the handler's own
#: structures do not account for go to its kernel-stack frame and, one in three, to the
#: structures it touched [REC].
_DATA_PER_FETCH = 1 / 3
_ENTRY_FETCHES, _EXIT_FETCHES, _SAVED_REGISTERS = 40, 30, 16
_COPY_LIMIT = 16 << 10          # bytes a single call's copy is followed for
_BLOCKING = {"poll", "select", "pselect6", "ppoll", "epoll_wait", "epoll_pwait", "epoll_pwait2", "accept",
             "accept4", "nanosleep", "clock_nanosleep", "wait4"}
_PATH = {"open", "openat", "stat", "lstat", "newfstatat", "access", "unlink", "unlinkat", "statx", "execve",
         "rename"}
_IO = {"read", "write", "pread64", "pwrite64", "readv", "writev", "sendto", "recvfrom", "sendmsg", "recvmsg",
       "getdents", "getdents64"}
_WRITES = {"write", "pwrite64", "writev", "sendto", "sendmsg"}
_DESCRIPTOR = {"close", "dup", "dup2", "fcntl", "fstat", "lseek", "fsync", "fdatasync", "shutdown", "bind", "listen",
               "connect", "socket", "pipe2"}
_MEMORY = {"mmap", "munmap", "brk", "mprotect", "mremap"}
_SIGNAL = {"kill", "tgkill", "tkill"}
_SOCKET_MAKERS = {"socket", "accept", "accept4"}


def _hash(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def _entry(table, k: int) -> int:
    offset, size, count = table
    return KERNEL_SHARED + offset + (k % count) * size


def syscall_class(call: Syscall, sockets: set) -> str:
    """The class of ``call`` (a key of :data:`CLASSES`); ``sockets`` are the process's
    socket descriptors (a read on one is socket I/O)."""
    name = SYSCALL_NAMES.get(call.number, call.name)
    if name in _IO:
        return "socket_io" if (call.args[0] in sockets or name in ("sendto", "recvfrom", "sendmsg", "recvmsg")) \
            else "file_io"
    if name in _BLOCKING:
        return "blocking"
    if name == "futex":
        return "futex"
    if name in _PATH:
        return "path"
    if name in _DESCRIPTOR or name == "fadvise64":
        return "descriptor"
    if name in _SIGNAL:
        return "signal"
    if name in _MEMORY:
        return "memory"
    return "other"


@dataclass
class KernelModel:
    """The kernel of one process ``pid`` among ``peers`` (the ids of the recording's other
    processes, whose task structures its scheduler reads and its wake-ups write)."""

    pid: int
    peers: tuple = ()
    scale: float = 1.0
    sockets: set = field(default_factory=set)
    files: dict = field(default_factory=dict)     # descriptor -> (inode key, file position)
    counts: dict = field(default_factory=dict)    # calls by class
    _turn: int = 0

    def __post_init__(self):
        if not (isinstance(self.scale, (int, float)) and 0 <= self.scale <= 100):
            raise ModelError("kernel_scale", f"must be a number from 0 to 100, got {self.scale!r}")
        self.task = TASK_BASE + (self.pid % (1 << 22)) * _TASK_BYTES

    # --- the pieces of a burst ------------------------------------------------------------

    def _peer_task(self, k: int) -> int:
        others = [p for p in self.peers if p != self.pid]
        if not others:
            return self.task
        return TASK_BASE + (others[k % len(others)] % (1 << 22)) * _TASK_BYTES

    def _copy(self, refs: list, source: int, target: int, nbytes: int) -> None:
        """A copy loop: 8-byte loads of ``source`` and stores to ``target``."""
        words = min(max(nbytes, 0), _COPY_LIMIT) // 8
        for w in range(words):
            refs.append((LOAD, source + 8 * w))
            refs.append((STORE, target + 8 * w))

    def _handler(self, call: Syscall, kind: str) -> list:
        """The data references of the call's handler (class ``kind``)."""
        name = SYSCALL_NAMES.get(call.number, call.name)
        refs = [(LOAD, self.task + 0x10)]                                 # current->flags
        if kind in ("file_io", "socket_io", "descriptor"):
            self._descriptor_call(refs, call, kind, name)
        elif kind == "path":
            self._path_call(refs, call, name)
        elif kind == "blocking":
            if name in ("accept", "accept4") and call.result is not None:
                refs.append((STORE, self.task + _FD_TABLE + 8 * (call.result % 256)))
            self._schedule(refs)
        elif kind == "futex":
            bucket = _entry(_FUTEX_HASH, call.args[0] // 4)
            refs += [(LOAD, bucket), (STORE, bucket + 8)]
            if call.args[1] & 0x7F == 0:                                      # FUTEX_WAIT
                self._schedule(refs)
            else:                                                             # a wake writes the woken task
                refs.append((STORE, self._peer_task(call.args[0] // 4) + 0x20))
        elif kind == "signal":                                                # a wake-up (PostgreSQL's latches)
            target = TASK_BASE + (call.args[0] % (1 << 22)) * _TASK_BYTES    # args[0]: the signalled pid
            refs += [(LOAD, target), (STORE, target + 0x30), (STORE, target + 0x20)]
        elif kind == "memory":
            mm = self.task + _MM
            alloc = _entry(_PAGE_ALLOCATOR, 0)
            refs += [(LOAD, mm), (STORE, mm + 8), (LOAD, mm + 64), (STORE, mm + 128), (LOAD, alloc), (STORE, alloc),
                     (STORE, alloc + 8)]
            refs += [(STORE, self.task + _PAGE_TABLES + (_hash(call.result, k) % 0x3000) // 8 * 8)
                     for k in range(4)]                                       # page-table entries
        if name in _SOCKET_MAKERS and call.result is not None:
            self.sockets.add(call.result)
        return refs

    def _descriptor_call(self, refs: list, call: Syscall, kind: str, name: str) -> None:
        """A call on a descriptor: its file, and for I/O the copy through the page cache
        or a socket buffer."""
        fd = call.args[0]
        refs.append((LOAD, self.task + _FD_TABLE + 8 * (fd % 256)))        # fd -> struct file
        key = self.files.get(fd, (_hash(self.pid, fd), 0))[0]
        file = _entry(_FILE_TABLE, key)
        refs += [(LOAD, file), (LOAD, file + 8), (STORE, file + 16)]         # f_count, f_op, f_pos
        moved = call.result or 0
        if kind == "file_io":
            inode = _entry(_INODES, key)
            refs += [(LOAD, inode), (LOAD, inode + 64)]
            inode_key, position = self.files.get(fd, (key, 0))
            page = _entry(_PAGE_CACHE, _hash(inode_key, position // 4096))
            if name in _WRITES:
                self._copy(refs, call.args[1], page + position % 4096 // 8 * 8, moved)
                refs.append((STORE, inode + 128))                          # size and times
            else:
                self._copy(refs, page + position % 4096 // 8 * 8, call.args[1], moved)
            self.files[fd] = (inode_key, position + moved)
        elif kind == "socket_io":
            sock = _entry(_SOCKETS, _hash(self.pid, fd))
            refs += [(LOAD, sock), (STORE, sock + 64), (LOAD, sock + 128)]   # lock, queue
            self._turn += 1
            buffer = _entry(_SOCKET_BUFFERS, _hash(self.pid, fd, self._turn))
            if name in _WRITES:
                self._copy(refs, call.args[1], buffer, moved)
                refs.append((STORE, self._peer_task(_hash(self.pid, fd)) + 0x20))   # wake the reader
            else:
                self._copy(refs, buffer, call.args[1], moved)
        elif name == "close":
            refs.append((STORE, self.task + _FD_TABLE + 8 * (fd % 256)))
            self.files.pop(fd, None)
            self.sockets.discard(fd)

    def _path_call(self, refs: list, call: Syscall, name: str) -> None:
        """A call naming a path: the directory-entry walk, the inode, and for an open the
        new file and descriptor."""
        parts = [p for p in call.path.split("/") if p] or ["."]
        for depth in range(len(parts)):                                       # the dcache walk
            dentry = _entry(_DENTRIES, _hash("/".join(parts[:depth + 1])))
            refs += [(LOAD, dentry), (LOAD, dentry + 32), (LOAD, dentry + 64)]
        inode = _entry(_INODES, _hash(call.path))
        refs += [(LOAD, inode), (LOAD, inode + 64)]
        if name in ("open", "openat") and call.result is not None:
            file = _entry(_FILE_TABLE, _hash(call.path, self.pid, call.result))
            refs += [(STORE, file), (STORE, file + 8), (STORE, file + 16)]
            refs.append((STORE, self.task + _FD_TABLE + 8 * (call.result % 256)))
            self.files[call.result] = (_hash(call.path), 0)

    def _schedule(self, refs: list) -> None:
        """schedule(): the run queue's lock and count, a look at four other runnable tasks,
        then this task's state."""
        rq = _entry(_RUN_QUEUE, 0)
        refs += [(LOAD, rq), (STORE, rq), (STORE, rq + 8)]
        for k in range(4):
            refs.append((LOAD, self._peer_task(self._turn + k) + 0x20))
        self._turn += 4
        refs += [(STORE, self.task + 0x20), (STORE, self.task + 0x28)]

    # --- a burst --------------------------------------------------------------------------

    def burst(self, call: Syscall) -> Chunk:
        """The kernel's references for ``call``: entry, handler, exit (all ``kernel``)."""
        kind = syscall_class(call, self.sockets)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        stack = self.task + _STACK_TOP - 8 * _SAVED_REGISTERS
        data = [(STORE, stack + 8 * k) for k in range(_SAVED_REGISTERS)]
        data.append((LOAD, _entry(_SYSCALL_TABLE, call.number)))
        handler = self._handler(call, kind)
        fetches = int(round(CLASSES[kind] * self.scale))
        fill = int(fetches * _DATA_PER_FETCH) - len(handler)
        touched = [a for _, a in handler if a >= KERNEL_SHARED]
        frame = self.task + _STACK_TOP - 8 * _SAVED_REGISTERS - 1024
        for k in range(max(fill, 0)):
            if touched and k % 3 == 2:
                handler.append((LOAD if k % 6 != 5 else STORE, touched[(k // 3) % len(touched)]))
            else:
                handler.append((STORE if k % 3 == 1 else LOAD, frame + 8 * ((k * 7) % 128)))
        data += handler
        data += [(LOAD, stack + 8 * k) for k in range(_SAVED_REGISTERS)]
        copies = sum(1 for op, a in data if op == LOAD) // 16                  # a copy loop's own instructions
        handler_code = KERNEL_TEXT + 0x10_0000 + (call.number % 512) * 0x2000
        entry_code = KERNEL_TEXT + 0x1000
        code = ([entry_code + 4 * k for k in range(_ENTRY_FETCHES)]
                + [handler_code + 4 * (k % 2048) for k in range(fetches + copies)]
                + [entry_code + 0x400 + 4 * k for k in range(_EXIT_FETCHES)])
        if self.scale == 0:
            data = data[:_SAVED_REGISTERS + 1] + data[-_SAVED_REGISTERS:]
        # the data references spread evenly over the fetches (spacing >= 1: distinct slots)
        n = len(code) + len(data)
        op = np.full(n, IFETCH, dtype=np.uint8)
        addr = np.empty(n, dtype=np.uint64)
        mask = np.zeros(n, dtype=bool)
        mask[np.floor(np.linspace(0, n - 1, len(data))).astype(np.int64)] = True
        op[mask] = [o for o, _ in data]
        addr[mask] = np.array([a for _, a in data], dtype=np.uint64)
        addr[~mask] = np.array(code, dtype=np.uint64)
        return _chunk(op, addr, np.full(n, 8, dtype=np.uint16), np.ones(n, dtype=np.bool_))


def with_kernel(chunks, model: KernelModel):
    """The ``(chunk, syscalls)`` pairs of :func:`~calibration.sim.syscall_trace.read_lackey_syscalls`
    as chunks with ``model``'s burst inserted before the reference at each call's position."""
    for chunk, calls in chunks:
        if not calls:
            yield chunk
            continue
        pieces, start = [], 0
        for call in calls:
            if call.position > start:
                pieces.append(chunk.slice(start, call.position))
            start = max(start, call.position)
            pieces.append(model.burst(call))
        if start < len(chunk):
            pieces.append(chunk.slice(start))
        yield Chunk.concat(pieces)
