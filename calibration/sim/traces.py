"""Memory-reference traces: valgrind lackey text, Dinero ``din`` text and compact ``.npz``.

Every reader is a generator of :class:`Chunk` objects (arrays of a bounded length), so a
trace of any size is read with bounded memory; the text parsers are compiled (numba)
and work on raw bytes.

Formats
-------
lackey
    ``valgrind --tool=lackey --trace-mem=yes --log-file=FILE prog``: lines
    ``I  addr,size`` (instruction fetch), `` L addr,size`` (load), `` S addr,size``
    (store), `` M addr,size`` (modify = a load then a store); addresses in hex; other
    lines (valgrind's own ``==pid==`` messages) are skipped.
din
    Dinero's traditional format: ``label address`` per line, label 0 read, 1 write,
    2 instruction fetch (3 unknown and 4 flush records are skipped); address in hex
    without ``0x``; the rest of the line is ignored.  Every access is ``din_size`` bytes
    (default 4).
npz
    arrays ``op`` (uint8: 0 instruction fetch, 1 load, 2 store; synchronisation markers
    3 lock acquire, 4 lock release, 5 barrier, whose ``addr`` is the lock or barrier id),
    ``addr`` (uint64 byte address), optional ``size`` (bytes, default 4) and optional
    ``kernel`` (bool).  Machines without synchronisation (the bus, the CMT chip, reuse
    distances) skip the markers; the SVM cluster honours them.
    Members are read in chunks straight from the zip file (stored or deflated).
"""
from __future__ import annotations

import functools
import os
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator

import numpy as np
from mva.jit import jit

from mva.errors import ModelError

__all__ = ["Chunk", "TraceError", "read_trace", "limited", "skipped", "read_lackey", "follow_lackey", "read_din", "read_npz", "npz_length", "write_npz",
           "detect_format", "FORMATS", "IFETCH", "LOAD", "STORE", "ACQUIRE", "RELEASE", "BARRIER"]

IFETCH, LOAD, STORE = 0, 1, 2
ACQUIRE, RELEASE, BARRIER = 3, 4, 5     # synchronisation markers: addr = lock / barrier id
FORMATS = ("lackey", "din", "npz")
CHUNK_REFERENCES = 1 << 16
_READ_BYTES = 8 << 20


class TraceError(ModelError):
    """A trace file that cannot be read (names the file and the problem)."""


@dataclass(frozen=True)
class Chunk:
    """A run of references: ``op`` (uint8), ``addr`` (uint64 bytes), ``size`` (uint16 bytes),
    ``kernel`` (bool, True for operating-system references)."""

    op: np.ndarray
    addr: np.ndarray
    size: np.ndarray
    kernel: np.ndarray

    def __len__(self) -> int:
        return int(self.op.shape[0])

    def slice(self, start: int, stop: int | None = None) -> Chunk:
        return Chunk(self.op[start:stop], self.addr[start:stop], self.size[start:stop], self.kernel[start:stop])

    @staticmethod
    def concat(chunks) -> Chunk:
        chunks = list(chunks)
        return Chunk(*(np.concatenate([getattr(c, f) for c in chunks]) for f in ("op", "addr", "size", "kernel")))


def _checked(path, chunk: Chunk, first: int) -> Chunk:
    """``chunk``, or TraceError if an access runs past the top of the 64-bit address
    space (``addr + size > 2^64``): it would wrap to address 0, which no hardware does
    silently, so the trace is refused rather than simulated wrong."""
    top = np.uint64(0xFFFFFFFFFFFFFFFF) - np.maximum(chunk.size.astype(np.uint64), np.uint64(1)) + np.uint64(1)
    over = np.flatnonzero(chunk.addr > top)
    if over.size:
        k = int(over[0])
        raise TraceError(str(path), f"reference {first + k}: address {int(chunk.addr[k]):#x} + size "
                                    f"{int(chunk.size[k])} runs past 2^64")
    return chunk


def _chunk(op, addr, size, kernel=None) -> Chunk:
    n = op.shape[0]
    return Chunk(np.ascontiguousarray(op, dtype=np.uint8), np.ascontiguousarray(addr, dtype=np.uint64),
                 np.ascontiguousarray(size, dtype=np.uint16),
                 np.zeros(n, dtype=np.bool_) if kernel is None else np.ascontiguousarray(kernel, dtype=np.bool_))


@jit
def _hex_digit(c):
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


@jit
def _parse_hex(buf, j, eol):
    """Hex number at ``buf[j:eol]``: (value, digits read, position after it)."""
    a = np.uint64(0)
    digits = 0
    while j < eol:
        d = _hex_digit(buf[j])
        if d < 0:
            break
        a = a * np.uint64(16) + np.uint64(d)
        digits += 1
        j += 1
    return a, digits, j


@jit
def _lackey_line(buf, pos, eol, op, addr, size, n):
    """One lackey line at ``buf[pos:eol]``: records written (0 for a line that is not a
    reference, 2 for M = load + store), or -1 if malformed."""
    kind = -1
    j = pos
    if eol - pos >= 3 and buf[pos] == 73 and buf[pos + 1] == 32:           # 'I '
        kind = 0
        j = pos + 1
    elif eol - pos >= 3 and buf[pos] == 32:
        ch = buf[pos + 1]
        kind = 1 if ch == 76 else (2 if ch == 83 else (3 if ch == 77 else -1))   # L, S, M
        j = pos + 2
    if kind < 0:
        return 0
    while j < eol and buf[j] == 32:
        j += 1
    a, digits, j = _parse_hex(buf, j, eol)
    if not (j < eol and buf[j] == 44 and digits > 0):
        return -1
    j += 1
    s = 0
    while j < eol and 48 <= buf[j] <= 57:
        s = s * 10 + (buf[j] - 48)
        j += 1
    if kind == 3:
        op[n], addr[n], size[n] = 1, a, s
        op[n + 1], addr[n + 1], size[n + 1] = 2, a, s
        return 2
    op[n], addr[n], size[n] = kind, a, s
    return 1


@jit
def _din_line(buf, pos, eol, op, addr, size, n):
    """One ``label address`` line: 1 record, 0 for blank/unknown/flush records, -1 malformed."""
    j = pos
    while j < eol and (buf[j] == 32 or buf[j] == 9):
        j += 1
    if j == eol:
        return 0
    label = -1
    if 48 <= buf[j] <= 57:
        label = buf[j] - 48
        j += 1
    ok = label >= 0 and j < eol and (buf[j] == 32 or buf[j] == 9)
    while j < eol and (buf[j] == 32 or buf[j] == 9):
        j += 1
    a, digits, j = _parse_hex(buf, j, eol)
    if not (ok and digits > 0 and label <= 4):
        return -1
    if label > 2:
        return 0
    op[n] = 1 if label == 0 else (2 if label == 1 else 0)
    addr[n] = a
    size[n] = 0
    return 1


@jit
def _parse(buf, lackey, op, addr, size):
    """Parse the complete lines of ``buf``; returns (records, bytes consumed, malformed
    lines).  An incomplete last line is left for the next read."""
    n = 0
    pos = 0
    bad = 0
    end = buf.shape[0]
    while pos < end:
        eol = pos
        while eol < end and buf[eol] != 10:
            eol += 1
        if eol == end or n + 2 > op.shape[0]:
            break
        got = _lackey_line(buf, pos, eol, op, addr, size, n) if lackey else _din_line(buf, pos, eol, op, addr,
                                                                                      size, n)
        if got < 0:
            bad += 1
        else:
            n += got
        pos = eol + 1
    return n, pos, bad


def _read_text(path: Path, fmt: str, chunk_references: int, din_size: int,
               finished=None, release: bool = False) -> Iterator[Chunk]:
    op = np.empty(chunk_references + 2, dtype=np.uint8)
    addr = np.empty(chunk_references + 2, dtype=np.uint64)
    size = np.empty(chunk_references + 2, dtype=np.uint16)
    carry = b""
    line_errors = 0
    done = 0
    offset = 0                   # file bytes read
    freed = 0                    # file bytes given back to the file system
    with open(path, "rb") as fh:
        while True:
            data = fh.read(_READ_BYTES)
            if not data and finished is not None and not finished():
                time.sleep(_FOLLOW_SECONDS)          # the writer is still running: wait for more
                continue
            offset += len(data)
            eof = not data
            text = carry + data
            if eof and text and not text.endswith(b"\n"):
                text += b"\n"
            buf = np.frombuffer(text, dtype=np.uint8)
            pos = 0
            while pos < buf.size:
                n, used, bad = _parse(buf[pos:], fmt == "lackey", op, addr, size)
                if fmt == "din":
                    size[:n] = din_size
                line_errors += bad
                if n:
                    yield _checked(path, _chunk(op[:n].copy(), addr[:n].copy(), size[:n].copy()), done)
                    done += n
                if used == 0:
                    break
                pos += used
            carry = text[pos:]
            if release:
                parsed = (offset - len(carry)) // _HOLE_ALIGN * _HOLE_ALIGN
                if parsed > freed and _punch_hole(path, freed, parsed - freed):
                    freed = parsed
                elif parsed > freed:
                    release = False          # the file system cannot punch holes: keep the text
            if eof:
                break
    if line_errors:
        import warnings

        warnings.warn(f"{path}: skipped {line_errors} malformed {fmt} line(s)", stacklevel=2)


_FOLLOW_SECONDS = 0.2
_HOLE_ALIGN = 1 << 20


@functools.cache
def _fallocate():
    """libc's ``fallocate``, or None where the system has none."""
    import ctypes

    try:
        fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return None
    fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    return fallocate


def _punch_hole(path: Path, offset: int, length: int) -> bool:
    """Free ``length`` bytes of the file ``path`` from ``offset`` (Linux
    ``fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)``: the file keeps its size and
    reads zeros there); False where the system or file system cannot."""
    fallocate = _fallocate()
    if fallocate is None:
        return False
    try:
        fd = os.open(path, os.O_WRONLY)        # punching needs a descriptor open for writing
    except OSError:
        return False
    try:
        return fallocate(fd, 3, offset, length) == 0
    finally:
        os.close(fd)


def read_lackey(path, chunk_references: int = CHUNK_REFERENCES) -> Iterator[Chunk]:
    """Stream a valgrind lackey ``--trace-mem=yes`` log as chunks (M = load + store)."""
    return _read_text(Path(path), "lackey", chunk_references, 0)


def follow_lackey(path, finished, release: bool = True,
                  chunk_references: int = CHUNK_REFERENCES) -> Iterator[Chunk]:
    """Stream a lackey log that another process is still writing: at the end of the text
    wait until ``finished()`` is true, then read what is left.  With ``release`` the text
    already parsed is freed from the disk as the reading goes (a hole punched in the
    file), so a recording needs the disk of the lag, not of the whole log."""
    return _read_text(Path(path), "lackey", chunk_references, 0, finished, release)


def read_din(path, chunk_references: int = CHUNK_REFERENCES, din_size: int = 4) -> Iterator[Chunk]:
    """Stream a Dinero ``din`` trace as chunks; every access is ``din_size`` bytes."""
    return _read_text(Path(path), "din", chunk_references, din_size)


def _read_header(fh, version):
    """(shape, fortran_order, dtype) of an ``.npy`` stream positioned after its magic."""
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    return np.lib.format.read_array_header_2_0(fh)


def _open_member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo):
    """A file object positioned at the start of a member's data.  A stored (uncompressed)
    member is read straight from the file, skipping zipfile's per-read CRC; a deflated one
    through zipfile."""
    if info.compress_type != zipfile.ZIP_STORED:
        return zf.open(info)
    import struct

    raw = open(path, "rb")
    raw.seek(info.header_offset)
    local = raw.read(30)
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    raw.seek(info.header_offset + 30 + name_length + extra_length)
    return raw


def _npz_member(zf: zipfile.ZipFile, name: str):
    info = next((i for i in zf.infolist() if i.filename in (name, name + ".npy")), None)
    return info


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise TraceError(str(path), f"not a readable .npz trace ({exc})") from None


def _open_array(path: Path, zf: zipfile.ZipFile, name: str):
    """(file object at the data, dtype, length) of array ``name``, or None if absent;
    TraceError for a corrupt member, a shape other than 1-D or a non-integer dtype."""
    info = _npz_member(zf, name)
    if info is None:
        if name in ("op", "addr"):
            raise TraceError(str(path), f"missing array {name!r} (an npz trace needs 'op' and 'addr')")
        return None
    try:
        fh = _open_member(path, zf, info)
        version = np.lib.format.read_magic(fh)
        shape, fortran, dtype = _read_header(fh, version)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as exc:
        raise TraceError(str(path), f"array {name!r} is unreadable (truncated or corrupt file: {exc})") from None
    if len(shape) != 1:
        fh.close()
        raise TraceError(str(path), f"array {name!r} must be one-dimensional, has shape {shape}")
    allowed = "biu" if name == "kernel" else "iu"
    if dtype.kind not in allowed or dtype.hasobject:
        fh.close()
        raise TraceError(str(path), f"array {name!r} must hold integers{' or booleans' if name == 'kernel' else ''}, "
                                    f"not {dtype}")
    return fh, dtype, shape[0]


def npz_length(path) -> int:
    """References in an ``.npz`` trace (the length of its ``op`` array), from the header."""
    path = Path(path)
    with _open_zip(path) as zf:
        fh, _, length = _open_array(path, zf, "op")
        fh.close()
    return int(length)


def read_npz(path, chunk_references: int = CHUNK_REFERENCES) -> Iterator[Chunk]:
    """Stream an ``.npz`` trace (arrays ``op``, ``addr``, optional ``size``, ``kernel``)."""
    path = Path(path)
    zf = _open_zip(path)
    with zf:
        members = {}
        for name in ("op", "addr", "size", "kernel"):
            opened = _open_array(path, zf, name)
            if opened is not None:
                members[name] = opened
        n = members["op"][2]
        for name, (_, _, length) in members.items():
            if length != n:
                raise TraceError(str(path), f"array {name!r} has {length} entries, 'op' has {n}")
        try:
            yield from _npz_chunks(path, members, n, chunk_references)
        finally:
            for fh, _, _ in members.values():
                fh.close()


def _npz_chunks(path, members, n, chunk_references):
    """Chunks of the opened members (file objects at their data, dtype, length)."""
    done = 0
    while done < n:
        take = min(chunk_references, n - done)
        cols = {}
        for name, (fh, dtype, _) in members.items():
            try:
                raw = fh.read(take * dtype.itemsize)
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                raise TraceError(str(path), f"array {name!r} is unreadable (truncated or corrupt file: {exc})") \
                    from None
            if len(raw) != take * dtype.itemsize:
                raise TraceError(str(path), f"array {name!r} ends after {done + len(raw) // dtype.itemsize} of "
                                            f"{n} entries (truncated file)")
            cols[name] = np.frombuffer(raw, dtype=dtype)
        op = cols["op"]
        if op.size and op.max() > BARRIER:
            raise TraceError(str(path), "array 'op' must hold 0 (fetch), 1 (load), 2 (store), 3 (acquire), "
                                        "4 (release) or 5 (barrier)")
        if "size" in cols and cols["size"].size and (cols["size"].min() < 0 or cols["size"].max() > 0xFFFF):
            raise TraceError(str(path), "array 'size' must hold access sizes from 0 to 65535 bytes")
        if cols["addr"].dtype.kind == "i" and cols["addr"].size and cols["addr"].min() < 0:
            raise TraceError(str(path), "array 'addr' must hold non-negative addresses")
        yield _checked(path, _chunk(op, cols["addr"], cols.get("size", np.full(take, 4, dtype=np.uint16)),
                                    cols.get("kernel")), done)
        done += take


def write_npz(path, chunks, compress: bool = True) -> int:
    """Write chunks (an iterable of :class:`Chunk`) as an ``.npz`` trace; returns the
    number of references.  Written in one pass: each array is spooled to a temporary
    file, deflated at level 1 when ``compress`` (so the spool takes about the disk of the
    result, not 12 bytes a reference), then copied into the zip; memory stays bounded."""
    import tempfile

    path = Path(path)
    names = ("op", "addr", "size", "kernel")
    dtypes = (np.uint8, np.uint64, np.uint16, np.bool_)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        raw = {n: open(Path(tmp) / f"{n}.bin", "wb") for n in names}
        packers = {n: zlib.compressobj(1) if compress else None for n in names}
        total = 0
        try:
            for c in chunks:
                for n, dt in zip(names, dtypes, strict=False):
                    data = np.ascontiguousarray(getattr(c, n), dtype=dt).tobytes()
                    raw[n].write(packers[n].compress(data) if compress else data)
                total += len(c)
            for n in names:
                if compress:
                    raw[n].write(packers[n].flush())
        finally:
            for fh in raw.values():
                fh.close()
        mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
        with zipfile.ZipFile(path, "w", mode) as zf:
            for n, dt in zip(names, dtypes, strict=False):
                with zf.open(f"{n}.npy", "w", force_zip64=True) as out:
                    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dt)), "fortran_order": False,
                              "shape": (total,)}
                    np.lib.format.write_array_header_1_0(out, header)
                    with open(Path(tmp) / f"{n}.bin", "rb") as fh:
                        _copy_spool(fh, out, compress)
    return total


def _copy_spool(fh, out, deflated: bool) -> None:
    """Copy a spool file to ``out``, inflating it if ``deflated``, in blocks of bounded
    size (a run of zeros deflates a thousandfold)."""
    unpack = zlib.decompressobj() if deflated else None
    pending = b""
    while True:
        if not pending:
            pending = fh.read(_READ_BYTES)
            if not pending:
                break
        if not deflated:
            out.write(pending)
            pending = b""
            continue
        out.write(unpack.decompress(pending, _READ_BYTES))
        pending = unpack.unconsumed_tail
    if deflated:
        out.write(unpack.flush())


def detect_format(path) -> str:
    """``npz``, ``lackey`` or ``din`` from the file's content (not its name)."""
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith(b"PK"):
        return "npz"
    for line in head.splitlines():
        if not line.strip() or line.startswith(b"=="):
            continue
        if line[:2] == b"I " or line[:2] in (b" L", b" S", b" M"):
            return "lackey"
        first = line.split()
        if len(first) >= 2 and first[0].isdigit():
            return "din"
        break
    raise TraceError(str(path), "unrecognised trace format (expected lackey, din or npz)")


def read_trace(path, fmt: str | None = None, chunk_references: int = CHUNK_REFERENCES,
               din_size: int = 4) -> Iterator[Chunk]:
    """Stream any supported trace; ``fmt`` defaults to :func:`detect_format`."""
    path = Path(path)
    if not path.is_file():
        raise TraceError(str(path), "no such trace file")
    if fmt is None:
        fmt = detect_format(path)
    else:
        try:
            detected = detect_format(path)
        except TraceError:          # an odd file: the format given decides
            detected = fmt
        if detected != fmt:
            raise TraceError(str(path), f"is a{'n' if detected == 'npz' else ''} {detected} trace, not {fmt} (leave "
                                        "the format out to detect it)")
    if fmt == "lackey":
        return read_lackey(path, chunk_references)
    if fmt == "din":
        return read_din(path, chunk_references, din_size)
    if fmt == "npz":
        return read_npz(path, chunk_references)
    raise TraceError("format", f"unknown trace format {fmt!r}; choose one of {', '.join(FORMATS)}")


def limited(chunks: Iterator[Chunk], limit: int | None) -> Iterator[Chunk]:
    """The first ``limit`` references of a chunk stream (all of them if None)."""
    left = limit
    for c in chunks:
        if left is not None:
            if left <= 0:
                return
            if len(c) > left:
                c = c.slice(0, left)
            left -= len(c)
        yield c


def skipped(chunks: Iterator[Chunk], skip: int) -> Iterator[Chunk]:
    """A chunk stream without its first ``skip`` references."""
    left = skip
    for c in chunks:
        if left >= len(c):
            left -= len(c)
            continue
        yield c.slice(left) if left else c
        left = 0
