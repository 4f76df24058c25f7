"""SPLASH-2 programs (the race-free Splash-3 edition) recorded as multi-process workloads.

Splash-3 (Sakalis, Leonardsson, Kaxiras & Ros, "Splash-3: a properly synchronized
benchmark suite for contemporary research", ISPASS 2016) keeps SPLASH-2's programs
written against the PARMACS macros (``CREATE``, ``G_MALLOC``, ``BARRIER``, ``LOCK``, ...),
which SPLASH-2 first implemented with processes sharing one arena.  :func:`build`
compiles a program with this package's own macro file (``parmacs/fork.m4`` and
``parmacs/parmacs_fork.h``: ``fork()`` for ``CREATE``, one ``MAP_SHARED`` arena for
``G_MALLOC``, the program's globals remapped shared before the first fork, process-shared
pthread objects), :func:`record` runs it under valgrind's lackey (one log per process)
and :func:`convert` turns the logs into a workload manifest:

* one ``.npz`` trace per process, from the region of interest (Splash-3's
  ``SPLASH3_ROI_BEGIN`` in the main process; a worker from its start) to its end; the
  macro file's marker loads become the trace markers the machines honour (``BARRIER``,
  ``LOCK`` acquire and ``UNLOCK`` release, whose address is the lock or barrier object),
  and the pthread library's own references inside a synchronisation are left out (the
  simulated machines model synchronisation);
* ``[[shared]]`` ranges: the arena's used part and the program's global data, shared by
  every process; everything else (stacks, heaps, libraries) is private to its process;
* ``[[structure]]`` tables: every ``G_MALLOC`` block named by the variable it is assigned
  to in the source (``q_multi``, ``f_array``, ``VAR``, ``PFORCES``, ...), so that basic
  proxies can be aimed as in Talbot & Kelly's Table 1.3.

``mva trace splash PROGRAM --source SPLASH3 -o DIR`` does the three steps;
``data/traces/record-splash.sh`` records the study's programs.  Needs gcc, make, m4 and
valgrind (``apt-get install gcc make m4 valgrind``).
"""
from __future__ import annotations

import functools
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mva.errors import ModelError
from mva.jit import jit

from .traces import ACQUIRE, BARRIER, IFETCH, LOAD, RELEASE, STORE, Chunk, follow_lackey, read_lackey, write_npz

__all__ = ["PROGRAMS", "Program", "Layout", "check_inputs", "build", "record", "convert", "read_layout", "structure_name",
           "data_holders", "MARKER_KINDS"]

RUNTIME = Path(__file__).parent / "parmacs"
CFLAGS = "-O2 -pthread -std=gnu11 -D_GNU_SOURCE -g -fno-strict-aliasing"
#: Keep every call the source makes.  Without these, gcc finds a function that only reads
#: memory (pure) and deletes a call whose value is unused: FFT's ``TouchArray`` and LU's
#: ``TouchA``, by which each process touches its own data first so that first-touch
#: placement puts it on its node, were gone from the traces, and the homes went to
#: whichever process reached a page first in the first communication phase, a race the
#: communication costs decide.  ``-fno-ipa-modref`` is gcc 11's (older gccs do not have
#: the analysis and reject the flag), so each flag is kept only if the gcc takes it.
KEEP_CALLS = ("-fno-ipa-pure-const", "-fno-ipa-modref")

#: Marker kinds of ``parmacs_fork.h``: byte offsets in the marker page.
MARKER_KINDS = {"end": 0, "barrier": 1, "acquire": 2, "release": 3, "sync": 4, "roi-begin": 5, "roi-end": 6}


@dataclass(frozen=True)
class Program:
    """A Splash-3 program: its directory under ``codes/``, binary, what its size counts,
    the size of Talbot & Kelly's Table 1.3 (or SPLASH-2's default), and how to run it."""

    name: str
    directory: str
    binary: str
    size_unit: str
    paper_size: int
    arguments: Callable          # (size, processes) -> (arguments, standard input)
    note: str = ""
    # input files the program reads, relative to its directory (copied to the same
    # relative path in the working directory); a tuple or (size) -> tuple
    files: tuple | Callable = ()
    # (file, pattern, replacement with {size}[, how many times]) applied to the build's
    # copy of the sources (once unless said)
    edits: tuple = ()
    # (name, variable, C type, header, member): a structure that is a member of another,
    # e.g. FMM's f_array inside G_Memory; its offset and size come from a probe compiled
    # against the program's own header
    members: tuple = ()
    # subdirectories built first by their own Makefile and flags (Volrend's libtiff,
    # whose machine defines our CFLAGS would override)
    prebuild: tuple = ()
    cflags: str = ""             # added to the project's CFLAGS (e.g. -I./libtiff)

    def command(self, size: int, processes: int) -> tuple[list, str]:
        """(arguments, standard input) for ``size`` and ``processes``."""
        return self.arguments(size, processes)

    def input_files(self, size: int) -> tuple:
        """The input files the run at ``size`` reads (paths relative to the program's directory)."""
        return self.files(size) if callable(self.files) else self.files


def _fft(size, P):
    m = int(round(math.log2(size)))
    if 1 << m != size or m % 2:
        raise ModelError("--size", f"fft needs an even power of two of points (e.g. 65536), got {size}")
    return [f"-m{m}", f"-p{P}", "-n65536", "-l6"], ""


def _ocean(size, P):
    if size < 10 or (size - 2) & (size - 3):
        raise ModelError("--size", f"ocean needs a grid side of 2^k + 2 points (e.g. 258, 130, 66), got {size}")
    return [f"-n{size}", f"-p{P}"], ""


def _barnes(size, P):
    # SPLASH-2's input: nbody, seed, then dtime eps tol fcells fleaves tstop dtout, nprocs
    return [], f"\n{size}\n123\n\n0.025\n0.05\n1.0\n2.0\n5.0\n0.075\n0.25\n{P}\n"


def _fmm(size, P):
    # two Plummer clusters, precision 1e-6, 5 steps of .025 (SPLASH-2's input files)
    return [], f"two cluster\nplummer\n{size}\n1e-6\n{P}\n5\n.025\n0.0\ncost zones\n"


def _water(size, P):
    if round(size ** (1 / 3)) ** 3 != size:
        raise ModelError("--size", f"water-nsq places its molecules on a cubic lattice: give a cube (64, 216, 512), "
                                   f"got {size}")
    # SPLASH-2's input: TSTEP NMOL NSTEP NORDER NSAVE NRST NPRINT NFMC NPROCS CUTOFF
    return [], f"  1.5e-16   {size}  3   6\n -1      3000     3  0\n{P} 6.212752\n"


def _lu(size, P):
    return [f"-n{size}", f"-p{P}", "-b16"], ""


def _raytrace(scene):
    # -m: megabytes of global memory for the program's own allocator (default 32)
    return lambda size, P: ([f"-p{P}", "-m64", f"inputs/{scene}.env"], "")


# Volrend's CT head by its width in voxels: SPLASH-2's 256 x 256 x 126 head and
# Splash-3's scaled-down copies (half and a quarter in each dimension)
VOLREND_HEADS = {256: "head", 128: "head-scaleddown2", 64: "head-scaleddown4"}


def _volrend_head(size):
    if size not in VOLREND_HEADS:
        raise ModelError("--size", f"volrend renders the CT head {sorted(VOLREND_HEADS)} voxels wide, got {size}")
    return VOLREND_HEADS[size]


def _volrend(size, P):
    # 4 frames (ROTATE_STEPS), SPLASH-2's default run
    return [str(P), f"inputs/{_volrend_head(size)}", "4"], ""


# Cholesky's sparse matrices shipped with Splash-3, by the number of their name (SPLASH-2's
# base problem, tk29, is not shipped)
CHOLESKY_INPUTS = (14, 15, 16, 17, 18)


def _cholesky(size, P):
    if size not in CHOLESKY_INPUTS:
        raise ModelError("--size", f"cholesky factors a shipped matrix tk{CHOLESKY_INPUTS[0]}-tk{CHOLESKY_INPUTS[-1]}: "
                                   f"give its number ({', '.join(map(str, CHOLESKY_INPUTS))}), got {size}")
    return [f"-p{P}", f"inputs/tk{size}.O"], ""


# Radiosity's scenes (its -room is SPLASH-2's base problem)
RADIOSITY_SCENES = {1: (), 2: ("-room",), 3: ("-largeroom",)}


def _radiosity(size, P):
    if size not in RADIOSITY_SCENES:
        raise ModelError("--size", f"radiosity renders scene 1 (the test scene), 2 (the room) or 3 (the large room), "
                                   f"got {size}")
    return ["-p", str(P), "-batch", *RADIOSITY_SCENES[size]], ""


# Restructured versions of our own, after the descriptions of Jiang, Shan & Singh
# ("Application restructuring and performance portability across shared virtual memory
# and hardware-coherent multiprocessors", PPoPP 1997), which Bilas, Jiang, Zhou & Singh
# (HPCA 1999, §4.2) run beside the originals.  Each is an edit of the build's copy.
#
# Radix-Local: each process permutes its keys by the digit into a private buffer, then
# copies each digit's run to its place in the shared destination in one contiguous
# write (the original writes every key to its remote slot one by one).  The buffer is
# the process's own heap: the fork runtime shares the program's static data.
RADIX_LOCAL_PERMUTATION = """/* Radix-Local: by digit into a private buffer, then one contiguous copy per digit */
     {{
       long *local_keys = (long *) malloc((key_stop - key_start + 1) * sizeof(long));
       long *local_fill = (long *) malloc(radix * sizeof(long));
       long d, run, k;
       for (d = 0; d < radix; d++) {{
         local_fill[d] = key_density[d] - rank_me_mynum[d];
       }}
       for (i = key_start; i < key_stop; i++) {{
         this_key = (key_from[i] & bb) >> shiftnum;
         local_keys[local_fill[this_key]++] = key_from[i];
       }}
       for (d = 0; d < radix; d++) {{
         run = rank_me_mynum[d];
         for (k = 0; k < run; k++) {{
           key_to[rank_ff_mynum[d] + k] = local_keys[key_density[d] - run + k];
         }}
         rank_ff_mynum[d] += run;
       }}
       free(local_fill);
       free(local_keys);
     }}"""
RADIX_LOCAL_EDITS = (
    ("radix.c.in", r"#include <stdio.h>", "#include <stdio.h>\n#include <stdlib.h>"),
    ("radix.c.in", r"(?s)/\* put it in order according to this digit \*/.*?\}\s*/\*  i \*/",
     RADIX_LOCAL_PERMUTATION),
)
# Ocean-rowwise: the grid cut into strips of whole rows, one per process, instead of
# square subgrids, so that a partition's boundaries with its neighbours are rows (whole
# pages) rather than columns (a word per row).  Splash-3's Ocean handles a partition's
# corner points in else-if chains that assume no partition touches both the left and
# the right edge; with one column of partitions the right corners of the middle strips
# were then never copied and the multigrid stalled (from 4 processes on), so the right
# edge's branch is made its own test, which changes nothing for square subgrids.  Fewer
# multigrid levels fit (each process keeps two rows of the coarsest grid).
OCEAN_RIGHT_EDGE = (r"\} else if \(gp\[pid\]\.neighbors\[RIGHT\] == -1\) \{",
                    "}}\n   if (gp[pid].neighbors[RIGHT] == -1 && gp[pid].neighbors[UP] != -1 "
                    "&& gp[pid].neighbors[DOWN] != -1) {{")
OCEAN_ROWWISE_EDITS = (
    ("main.c.in", r"(?s)(if \(xprocs == 0\) \{\s*printerr\(\"Could not find factors for subblocking.*?\}\n)",
     "\\1   xprocs = 1;   /* Ocean-rowwise: one strip of whole rows per process */\n   yprocs = nprocs;\n"),
    ("jacobcalc.c.in", *OCEAN_RIGHT_EDGE, 2),
    ("jacobcalc2.c.in", *OCEAN_RIGHT_EDGE, 2),
    ("multi.c.in", *OCEAN_RIGHT_EDGE),
)


PROGRAMS = {p.name: p for p in (
    Program("fft", "kernels/fft", "FFT", "points", 65536, _fft),
    Program("lu", "kernels/lu/contiguous_blocks", "LU", "matrix order", 512, _lu, "not in Talbot & Kelly"),
    Program("lu-noncontig", "kernels/lu/non_contiguous_blocks", "LU", "matrix order", 512, _lu,
            "not in Talbot & Kelly"),
    Program("radix", "kernels/radix", "RADIX", "keys", 262144,
            lambda size, P: ([f"-p{P}", f"-n{size}", "-r1024", "-m524288"], ""), "not in Talbot & Kelly"),
    Program("radix-local", "kernels/radix", "RADIX", "keys", 262144,
            lambda size, P: ([f"-p{P}", f"-n{size}", "-r1024", "-m524288"], ""),
            "Radix restructured for shared virtual memory (Radix-Local), not in Talbot & Kelly",
            edits=RADIX_LOCAL_EDITS),
    Program("ocean-contig", "apps/ocean/contiguous_partitions", "OCEAN", "grid side", 258, _ocean),
    Program("ocean-rowwise", "apps/ocean/contiguous_partitions", "OCEAN", "grid side", 258, _ocean,
            "Ocean-Contig restructured into strips of rows (Ocean-rowwise), not in Talbot & Kelly",
            edits=OCEAN_ROWWISE_EDITS),
    # its 2-D arrays are declared at a static maximum of 8194 x 8194 (29 GB at 64
    # processes); the build sizes them to the grid instead
    Program("ocean-noncontig", "apps/ocean/non_contiguous_partitions", "OCEAN", "grid side", 258, _ocean,
            edits=(("decs.h.in", r"#define IMAX\s+8194", "#define IMAX {size}"),
                   ("decs.h.in", r"#define JMAX\s+8194", "#define JMAX {size}"))),
    Program("barnes", "apps/barnes", "BARNES", "particles", 16384, _barnes),
    # FMM sizes each process's particle array for 4x the mean (PDF); with fewer than the
    # paper's particles per process the two clusters overflow it, so the build allows 16x
    # (room only: the algorithm is unchanged)
    Program("fmm", "apps/fmm", "FMM", "particles", 8192, _fmm,
            edits=(("fmm.c.in", r"#define PDF 4\.0", "#define PDF 16.0"),),
            members=(("f_array", "G_Memory", "g_mem", "memory.h", "f_array"),)),
    Program("water-nsq", "apps/water-nsquared", "WATER-NSQUARED", "molecules", 512, _water, files=("random.in",)),
    Program("water-spatial", "apps/water-spatial", "WATER-SPATIAL", "molecules", 512, _water, "not in Talbot & Kelly",
            files=("random.in",)),
    # the paper's scene; car.geo is a large file some copies of the tree lack
    Program("raytrace", "apps/raytrace", "RAYTRACE", "image side (pixels)", 128, _raytrace("car"),
            "not in Talbot & Kelly", files=("inputs/car.env", "inputs/car.geo"),
            edits=(("inputs/car.env", r"resolution\s+\d+\s+\d+", "resolution\t{size}\t{size}"),)),
    # SPLASH-2's small test scene, the stand-in where car.geo is missing
    Program("raytrace-teapot", "apps/raytrace", "RAYTRACE", "image side (pixels)", 128, _raytrace("teapot"),
            "not in Talbot & Kelly", files=("inputs/teapot.env", "inputs/teapot.geo"),
            edits=(("inputs/teapot.env", r"resolution\s+\d+\s+\d+", "resolution\t{size}\t{size}"),)),
    Program("volrend", "apps/volrend", "VOLREND", "head width (voxels)", 256, _volrend, "not in Talbot & Kelly",
            files=lambda size: (f"inputs/{_volrend_head(size)}.den",), prebuild=("libtiff",), cflags="-I./libtiff"),
    Program("cholesky", "kernels/cholesky", "CHOLESKY", "matrix (tk number)", 15, _cholesky, "not in Talbot & Kelly",
            files=lambda size: (f"inputs/tk{size}.O",)),
    # its Makefile adds the include paths to CFLAGS, which the build's CFLAGS replace
    Program("radiosity", "apps/radiosity", "RADIOSITY", "scene (1 test, 2 room, 3 large room)", 2, _radiosity,
            "not in Talbot & Kelly", cflags="-I./glibdumb -I./glibps"),
)}


def _program(name) -> Program:
    """A :class:`Program` given as one or by its name in :data:`PROGRAMS`."""
    if isinstance(name, Program):
        return name
    if name not in PROGRAMS:
        raise ModelError("program", f"unknown Splash-3 program {name!r}; choose {', '.join(PROGRAMS)}")
    return PROGRAMS[name]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ModelError("--source", f"{name} is needed to build and trace Splash-3 programs (apt-get install "
                                     "gcc make m4 valgrind)")
    return path


@functools.cache
def keep_calls_flags(compiler: str = "gcc") -> tuple:
    """The flags of :data:`KEEP_CALLS` that ``compiler`` accepts."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.c"
        probe.write_text("int main(void) { return 0; }\n")
        return tuple(flag for flag in KEEP_CALLS
                     if subprocess.run([compiler, "-Werror", flag, "-c", str(probe), "-o", str(Path(tmp) / "p.o")],
                                       capture_output=True).returncode == 0)


def _codes(source) -> Path:
    """The ``codes`` directory of a Splash-3 tree (``source`` may be the tree or ``codes``)."""
    source = Path(source)
    for codes in (source / "codes", source):
        if (codes / "Makefile.config").is_file():
            return codes
    raise ModelError("--source", f"{source} is not a Splash-3 tree (no codes/Makefile.config)")


def _built_files(program: Program):
    """A ``copytree`` filter leaving out what an earlier build left in the tree (objects,
    the binary, C files generated from ``.in`` files): the copy is built afresh."""
    def ignore(directory, names):
        present = set(names)
        return [n for n in names if n.endswith(".o") or n == program.binary or f"{n}.in" in present]
    return ignore


def check_inputs(name, source, size: int | None = None) -> None:
    """Raise :class:`ModelError` unless the Splash-3 tree ``source`` has program
    ``name``'s directory and the input files its run at ``size`` reads (before any build)."""
    program = _program(name)
    codes = _codes(source)
    where = codes / program.directory
    if not where.is_dir():
        raise ModelError("--source", f"{where} is missing from the Splash-3 tree")
    for extra in program.input_files(program.paper_size if size is None else size):
        if not (where / extra).is_file():
            raise ModelError("--source", f"the Splash-3 tree lacks {program.directory}/{extra}, {program.name}'s "
                                         "input (a large file some copies leave out)")


def build(name, source, workdir, size: int | None = None) -> Path:
    """Compile program ``name`` (a name of :data:`PROGRAMS` or a :class:`Program`) of the
    Splash-3 tree ``source`` with the fork-based macro file, in a copy under ``workdir``
    (the tree is not written to) with the program's ``edits`` for problem ``size``
    (default the paper's); returns the binary.  The generated C files stay beside it:
    :func:`convert` reads them to name structures."""
    program = _program(name)
    codes = _codes(source)
    for tool in ("gcc", "make", "m4"):
        _tool(tool)
    build_codes = Path(workdir) / "build" / program.name / "codes"
    if build_codes.exists():
        shutil.rmtree(build_codes)
    (build_codes / program.directory).parent.mkdir(parents=True, exist_ok=True)
    check_inputs(program, source, size)
    shutil.copy(codes / "Makefile.config", build_codes / "Makefile.config")
    shutil.copytree(codes / program.directory, build_codes / program.directory, ignore=_built_files(program))
    for file, pattern, replacement, *times in program.edits:
        path = build_codes / program.directory / file
        text, count = re.subn(pattern, replacement.format(size=size or program.paper_size), path.read_text())
        if count != (times[0] if times else 1):
            raise ModelError("--source", f"{path.name} of this Splash-3 tree lacks {pattern!r}: another version?")
        path.write_text(text)
    for directory in program.prebuild:
        done = subprocess.run(["make", "-C", str(build_codes / program.directory / directory)],
                              capture_output=True, text=True)
        if done.returncode:
            tail = "; ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise ModelError("program", f"building {program.name}'s {directory} failed: {tail}")
    cflags = f"{CFLAGS} {' '.join(keep_calls_flags())} -I{RUNTIME} {program.cflags}".strip()
    keep = build_codes / "keep-generated.mk"          # make would delete the generated C files
    keep.write_text(".SECONDARY:\n")
    done = subprocess.run(["make", "-C", str(build_codes / program.directory), "-f", "Makefile", "-f", str(keep),
                           f"MACROS={RUNTIME / 'fork.m4'}", f"CFLAGS={cflags}", "LDFLAGS=-lm"],
                          capture_output=True, text=True)
    binary = build_codes / program.directory / program.binary
    if done.returncode or not binary.is_file():
        tail = "; ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise ModelError("program", f"building {program.name} failed: {tail}")
    _probe_members(program, binary.parent, cflags)
    return binary


def _probe_members(program: Program, directory: Path, cflags: str) -> None:
    """Write ``members.txt`` beside the binary: ``name variable offset bytes`` of each of
    the program's member structures, from a probe compiled against its header."""
    rows = []
    for name, variable, ctype, header, member in program.members:
        probe = directory / f"probe-{name}.c"
        probe.write_text(f'#include <stddef.h>\n#include <stdio.h>\n#include "{header}"\n'
                         f'int main(void) {{ printf("%zu %zu\\n", offsetof({ctype}, {member}), '
                         f'sizeof((({ctype} *)0)->{member})); return 0; }}\n')
        done = subprocess.run(["gcc", *cflags.split(), "-o", str(probe.with_suffix("")), str(probe), "-lm"],
                              capture_output=True, text=True, cwd=directory)
        if done.returncode:
            raise ModelError("program", f"the probe of {program.name}'s {name} did not compile: "
                                        f"{done.stderr.strip().splitlines()[-1:]}")
        offset, size = subprocess.run([str(probe.with_suffix(""))], capture_output=True, text=True,
                                      check=True).stdout.split()
        rows.append(f"{name} {variable} {offset} {size}")
    (directory / "members.txt").write_text("".join(f"{r}\n" for r in rows))


@dataclass(frozen=True)
class Layout:
    """What the runtime wrote while the program ran: the arena, the globals and the
    marker page (byte ranges), each process's pid by process number, and each
    ``G_MALLOC`` block (start, bytes, source file, line)."""

    arena: tuple
    globals: tuple
    marker: tuple
    pids: dict
    allocations: tuple

    @property
    def arena_used(self) -> tuple:
        """The arena from its start to the end of the last block, rounded up to a page."""
        top = max((a + n for a, n, _, _ in self.allocations), default=self.arena[0])
        return self.arena[0], min(self.arena[1], (top + 4095) // 4096 * 4096)


def read_layout(path) -> Layout:
    """The runtime's layout file (``parmacs_fork.h``)."""
    ranges, pids, allocations = {}, {}, []
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if parts[0] in ("arena", "globals", "marker"):
            ranges[parts[0]] = (int(parts[1], 16), int(parts[2], 16))
        elif parts[0] == "process":
            pids[int(parts[1])] = int(parts[2])
        elif parts[0] == "alloc":
            allocations.append((int(parts[1], 16), int(parts[2]), parts[3], int(parts[4])))
    missing = {"arena", "globals", "marker"} - set(ranges)
    if missing or 0 not in pids:
        raise ModelError("layout", f"{path} lacks {', '.join(sorted(missing)) or 'process 0'}: did the program "
                                   "call MAIN_INITENV?")
    return Layout(ranges["arena"], ranges["globals"], ranges["marker"], dict(sorted(pids.items())),
                  tuple(allocations))


_ASSIGNED = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]=]*\]\s*)*=[^=]*$")


def structure_name(source_text: str, line: int) -> str:
    """The variable a ``G_MALLOC`` on ``line`` (1-based) of the generated C file is
    assigned to: ``q_multi[i] = (double **) pf_malloc(...)`` gives ``q_multi``,
    ``G_Memory->f_array = ...`` gives ``f_array``; ``"unnamed"`` if there is none."""
    lines = source_text.splitlines()
    if not 1 <= line <= len(lines):
        return "unnamed"
    text = lines[line - 1]
    head = text[: text.find("pf_malloc")] if "pf_malloc" in text else text
    for back in range(0, 3):     # an assignment split over lines: look up to two lines back
        match = _ASSIGNED.search(head)
        if match:
            return match.group(1)
        if line - 2 - back < 0 or lines[line - 2 - back].rstrip().endswith((";", "{", "}")):
            break                # the statement starts on this line
        head = lines[line - 2 - back] + " " + head
    return "unnamed"


_POINTER_TABLE = re.compile(r"sizeof\s*\(\s*[A-Za-z_][\w\s]*\*+\s*\)")
_POINTS_INTO = re.compile(r"\b([A-Za-z_]\w*)\s*\[[^\]=;]*\]\s*=\s*(?:\([^()]*\)\s*)?([A-Za-z_]\w*)\s*\[")


def data_holders(sources: str, names: set, tables: set) -> dict:
    """{helper: holder} for blocks reached through a pointer table: where ``sources``
    assigns an element of a helper block to an element of a pointer table
    (``a[i+j*nblocks] = last_malloc[proc_num]``, LU-contig: the matrix blocks are
    allocated as ``last_malloc`` and used as ``a``), the helper's blocks hold the
    table's data and take its name.  ``names``: the structures' names; ``tables``: the
    names whose allocation is of pointers (``sizeof(double *)``)."""
    holders = {}
    for table, helper in _POINTS_INTO.findall(sources):
        if table in tables and helper in names and helper != table:
            holders.setdefault(helper, table)
    return holders


def _structures(layout: Layout, build_dir: Path) -> list:
    """[(name, start, end)] of every block, adjacent blocks of one name merged.  A block
    is named by the variable its ``G_MALLOC`` is assigned to, or, where that is a helper
    whose blocks a pointer table points into (:func:`data_holders`), by the table, whose
    own block is then ``TABLE-pointers``."""
    texts, lines_of = {}, {}
    blocks = []
    tables = set()
    for start, size, file, line in layout.allocations:
        if file not in texts:
            found = list(build_dir.rglob(file))
            texts[file] = found[0].read_text(errors="replace") if found else ""
            lines_of[file] = texts[file].splitlines()
        name = structure_name(texts[file], line)
        lines = lines_of[file]
        if 1 <= line <= len(lines) and _POINTER_TABLE.search(lines[line - 1]):
            tables.add(name)
        blocks.append((name, start, start + max(size, 1)))
    names = {b[0] for b in blocks}
    holders = data_holders("\n".join(texts.values()), names, tables)
    renamed = {**{t: f"{t}-pointers" for t in holders.values()}, **holders}
    blocks = [(renamed.get(n, n), a, b) for n, a, b in blocks]
    merged = []
    for name, start, end in sorted(blocks, key=lambda b: (b[0], b[1])):
        if merged and merged[-1][0] == name and start <= (merged[-1][2] + 63) // 64 * 64:
            merged[-1][2] = max(merged[-1][2], end)
        else:
            merged.append([name, start, end])
    members = build_dir / "members.txt"
    for row in (members.read_text().splitlines() if members.is_file() else ()):
        name, variable, offset, size = row.split()
        owners = [m for m in merged if m[0] == variable]
        if owners:
            start = owners[0][1] + int(offset)
            merged.append([name, start, start + int(size)])
    return [tuple(m) for m in sorted(merged, key=lambda m: m[1])]


#: What :func:`convert_process` counts in a converted trace.
COUNTS = ("references", "instructions", "barriers", "acquires", "releases")

# conversion state (numba kernel)
_EMIT, _DROP, _AWAIT, _BEFORE_ROI, _FINISHED = range(5)


@jit
def _on_marker(kind, state):
    """The mode after a marker load of ``kind`` (``MARKER_KINDS``)."""
    mode = state[0]
    if mode == _FINISHED:
        return
    if kind == 5:                       # region of interest begins
        state[0] = _EMIT
        state[2] += 1
    elif kind == 6:                     # and ends
        state[0] = _FINISHED
        state[3] += 1
    elif mode == _BEFORE_ROI:
        return
    elif kind == 0:                     # a synchronisation is over
        state[0] = _EMIT
    elif kind <= 3:                     # barrier, acquire, release: the object comes next
        state[0] = _AWAIT
        state[1] = kind
    elif kind == 4:                     # library work without an event
        state[0] = _DROP


@jit
def _convert_chunk(op, addr, size, marker_lo, marker_hi, state, out_op, out_addr, out_size):
    """Turn one chunk of lackey references into trace references and markers; ``state``
    (mode, pending marker op, regions begun, regions ended, barriers, barrier limit or
    0) carries over between chunks.  Returns the references written."""
    n = 0
    for i in range(op.shape[0]):
        a = addr[i]
        if marker_lo <= a < marker_hi:
            if op[i] == LOAD:           # the increment's store and the identity's copy are not markers
                _on_marker(a - marker_lo, state)
            continue
        mode = state[0]
        if mode == _EMIT:
            out_op[n] = op[i]
            out_addr[n] = a
            out_size[n] = size[i]
            n += 1
        elif mode == _AWAIT and op[i] != IFETCH:
            # the object's identity: the first data reference after the marker
            out_op[n] = np.uint8(BARRIER if state[1] == 1 else ACQUIRE if state[1] == 2 else RELEASE)
            out_addr[n] = a
            out_size[n] = 1
            n += 1
            state[0] = _DROP
            if state[1] == 1:
                state[4] += 1
                if state[4] == state[5]:       # the excerpt's last barrier
                    state[0] = _FINISHED
    return n


def convert_process(lackey_path, npz_path, marker: tuple, main: bool, phases: int | None = None,
                    finished: Callable[[], bool] | None = None, release: bool = False) -> dict:
    """Convert one process's lackey log to an ``.npz`` trace (see the module docstring);
    ``main``: the process that ran ``main()``, whose trace starts at the region of
    interest; ``phases``: end the trace at its ``phases``-th barrier (an excerpt whose
    processes still meet at every barrier).  With ``finished`` the log is still being
    written: it is followed until ``finished()`` (and, with ``release``, freed from the
    disk as it is read; :func:`follow_lackey`).  Returns counts of references and markers."""
    state = np.array([_BEFORE_ROI if main else _DROP, 0, 0, 0, 0, phases or 0], np.int64)
    lo, hi = np.uint64(marker[0]), np.uint64(marker[1])
    counts = dict.fromkeys(COUNTS, 0)
    source = read_lackey(lackey_path) if finished is None else follow_lackey(lackey_path, finished, release)

    def chunks():
        for c in source:
            out_op = np.empty(len(c), np.uint8)
            out_addr = np.empty(len(c), np.uint64)
            out_size = np.empty(len(c), np.uint16)
            n = _convert_chunk(c.op, c.addr, c.size, lo, hi, state, out_op, out_addr, out_size)
            if n:
                o = out_op[:n]
                counts["instructions"] += int(np.count_nonzero(o == IFETCH))
                counts["references"] += int(np.count_nonzero((o == LOAD) | (o == STORE)))
                counts["barriers"] += int(np.count_nonzero(o == BARRIER))
                counts["acquires"] += int(np.count_nonzero(o == ACQUIRE))
                counts["releases"] += int(np.count_nonzero(o == RELEASE))
                yield Chunk(o, out_addr[:n], out_size[:n], np.zeros(n, np.bool_))
    write_npz(npz_path, chunks())
    if main and state[2] == 0:
        raise ModelError("program", f"{lackey_path}: the main process never reached SPLASH3_ROI_BEGIN")
    return counts


class _Followers:
    """One thread per process log of a running recording, each converting its log to
    ``NAME-pid-PID.npz`` as it grows (:func:`convert_process` with ``finished``), so that
    the lackey text never has to be on the disk whole."""

    def __init__(self, raw: Path, out: Path, name: str, phases, finished, release: bool):
        self.raw, self.out, self.name, self.phases = raw, out, name, phases
        self.finished, self.release = finished, release
        self.threads, self.counts, self.errors = {}, {}, []
        self.peak_disk = 0

    def poll(self) -> None:
        """Start a follower for every new log once the layout names the marker page and
        the main process; note the logs' disk use."""
        try:
            layout = read_layout(self.raw / "layout")
        except (ModelError, OSError):
            return                   # MAIN_INITENV has not written the marker page and process 0 yet
        for log in self.raw.glob("lackey.*"):
            pid = int(log.suffix[1:])
            if pid not in self.threads:
                thread = threading.Thread(target=self._convert, args=(log, pid, layout.marker, pid == layout.pids[0]),
                                          daemon=True)
                self.threads[pid] = thread
                thread.start()
        self.peak_disk = max(self.peak_disk, sum(f.stat().st_blocks * 512 for f in self.raw.glob("lackey.*")))

    def _convert(self, log, pid, marker, main) -> None:
        try:
            self.counts[pid] = convert_process(log, self.out / f"{self.name}-pid-{pid}.npz", marker, main,
                                               self.phases, self.finished, self.release)
        except Exception as exc:       # noqa: BLE001  re-raised by join() in the recording's thread
            self.errors.append(exc)

    def join(self) -> dict:
        """Wait for every follower; {pid: counts}, or the first follower's error."""
        self.poll()
        for thread in self.threads.values():
            thread.join()
        if self.errors:
            raise self.errors[0]
        return self.counts


def record(name, binary, out, processes: int, size: int | None = None, keep_logs: bool = False,
           arena_mb: int = 4096, phases: int | None = None) -> dict:
    """Run ``binary`` (from :func:`build`) as ``processes`` processes under lackey in
    ``out``, converting each process's log while the program runs (the first ``phases``
    barrier phases if given; the text is freed as it is read unless ``keep_logs``), and
    write the manifest; returns the recording's facts (seconds of tracing and of the
    conversion left after it, bytes of lackey text, the most of it on the disk at once,
    references)."""
    program = _program(name)
    name = program.name
    valgrind = _tool("valgrind")
    size = program.paper_size if size is None else size
    args, stdin = program.command(size, processes)
    out = Path(out)
    raw = out / "lackey"
    if raw.exists():
        shutil.rmtree(raw)
    raw.mkdir(parents=True)
    source_dir = Path(binary).parent
    for extra in program.input_files(size):
        (raw / extra).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source_dir / extra, raw / extra)
    layout_path = raw / "layout"
    env = dict(os.environ, PARMACS_LAYOUT=str(layout_path), PARMACS_ARENA_MB=str(arena_mb))
    said_path = out / f"{name}.out"
    t0 = time.perf_counter()
    with open(said_path, "w") as said, tempfile.TemporaryFile("w+") as given:
        given.write(stdin)
        given.seek(0)
        run = subprocess.Popen([valgrind, "--tool=lackey", "--trace-mem=yes", f"--log-file={raw}/lackey.%p",
                                str(binary), *args], stdin=given, stdout=said, stderr=subprocess.STDOUT, cwd=raw,
                               env=env, start_new_session=True)    # a failing worker kills its group, not us
        followers = _Followers(raw, out, name, phases, lambda: run.poll() is not None, not keep_logs)
        while run.poll() is None:
            followers.poll()
            time.sleep(0.5)
    traced = time.perf_counter() - t0
    if run.returncode:
        for thread in followers.threads.values():
            thread.join()
        for part in out.glob(f"{name}-pid-*.npz"):
            part.unlink()
        text = said_path.read_text(errors="replace")
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith("==")]
        raise ModelError("program", f"{name} failed under valgrind (exit {run.returncode}): "
                                    f"{'; '.join(lines[-2:]) or 'no message'} (size {size}, {processes} processes)")
    counts = followers.join()
    layout = read_layout(layout_path)
    raw_bytes = sum(f.stat().st_size for f in raw.glob("lackey.*"))
    facts = {"program": name, "size": size, "size_unit": program.size_unit, "processes": processes,
             "trace_seconds": round(traced, 1), "lackey_bytes": raw_bytes, "lackey_disk_peak_bytes": followers.peak_disk}
    if phases:
        facts["phases"] = phases
    t1 = time.perf_counter()
    per_process = {}
    for number, pid in layout.pids.items():
        if pid not in counts:
            raise ModelError("program", f"no lackey log for process {number} (pid {pid})")
        (out / f"{name}-pid-{pid}.npz").replace(out / f"{name}-p{number}.npz")
        per_process[number] = counts[pid]
    facts.update(_finish(name, layout, out, source_dir, facts, per_process, time.perf_counter() - t1))
    if not keep_logs:
        shutil.rmtree(raw)
    return facts


def convert(name: str, layout: Layout, raw: Path, out: Path, build_dir: Path, facts: dict,
            phases: int | None = None) -> dict:
    """Write ``out/NAME.toml`` and one ``NAME-pK.npz`` per process from the lackey logs in
    ``raw`` (``lackey.PID``, kept by ``record(keep_logs=True)``); returns the conversion's facts."""
    t0 = time.perf_counter()
    per_process = {}
    for pid_number, pid in layout.pids.items():
        log = raw / f"lackey.{pid}"
        if not log.is_file():
            raise ModelError("program", f"no lackey log for process {pid_number} (pid {pid})")
        per_process[pid_number] = convert_process(log, out / f"{name}-p{pid_number}.npz", layout.marker,
                                                  pid_number == 0, phases)
    return _finish(name, layout, out, build_dir, facts, per_process, time.perf_counter() - t0)


def _finish(name: str, layout: Layout, out: Path, build_dir: Path, facts: dict, per_process: dict,
            seconds: float) -> dict:
    """Check the processes' barriers agree, name the structures and write the manifest;
    returns the counts and ``convert_seconds``."""
    totals = {k: sum(c[k] for c in per_process.values()) for k in COUNTS}
    barriers = {c["barriers"] for c in per_process.values()}
    if len(barriers) > 1:
        raise ModelError("program", f"processes reach different numbers of barriers: {sorted(barriers)}")
    structures = _structures(layout, build_dir)
    facts = {**facts, **totals, "convert_seconds": round(seconds, 1)}
    _write_manifest(out / f"{name}.toml", name, layout, structures, facts)
    return {k: facts[k] for k in (*totals, "convert_seconds")}


def _write_manifest(path: Path, name: str, layout: Layout, structures: list, facts: dict) -> None:
    import tomli_w

    arena = layout.arena_used
    doc = {"name": name,
           "description": f"Splash-3 {name}, {facts['size']:,} {facts['size_unit']}, {facts['processes']} processes "
                          "(fork-based PARMACS, valgrind lackey)",
           "recording": facts,
           "process": [{"name": f"p{k}", "trace": f"{name}-p{k}.npz", "format": "npz"} for k in layout.pids],
           "shared": [{"name": "arena", "start": arena[0], "end": arena[1], "processes": "all"},
                      {"name": "globals", "start": layout.globals[0], "end": layout.globals[1], "processes": "all"}],
           "structure": [{"name": n, "start": s, "end": e} for n, s, e in structures]}
    path.write_text(tomli_w.dumps(doc))
