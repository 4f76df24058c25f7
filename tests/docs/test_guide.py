"""Every `mva ...` command and every Python block of the README and docs/*.md runs, in
order, from a scratch folder in which data/ is the repository's (so files the examples
write land there and later commands of the same page can use them); and what the
commands of a bash block print is the ``text`` block that follows it, timings masked.

After a change meant to alter a documented output, ``python tests/docs/test_guide.py --write``
rewrites the text blocks (read the diff before committing it)."""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

import pytest

from mva.cli import main

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```(\w*)\n(.*?)```\n?", flags=re.S)
# the pages with examples (docs/references.md and docs/coherence.md have none)
PAGES = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
         if re.search(r"```(bash|python)\n", p.read_text())]
# what differs from run to run: solve and run times, rates
MASKS = [(re.compile(r"\d+(\.\d+)?(e[-+]?\d+)? ms\b"), "<t> ms"), (re.compile(r"\b\d+(\.\d+)? s\b"), "<t> s"),
         (re.compile(r"[\d.]+ M references/s"), "<r> M references/s"),
         (re.compile(r'"(solve_)?seconds": [\d.eE+-]+'), r'"\1seconds": <t>')]


# full-precision floats (JSON): their last digits move with the numpy build's rounding
# (2 units in the 17th digit on a fresh install with numpy 2.4), so they are compared to 12
LONG_FLOAT = re.compile(r"-?\d+\.\d{12,}(e[-+]?\d+)?")


def mask(text: str) -> str:
    """``text`` with its timings replaced by placeholders and long floats rounded to 12
    significant digits."""
    for pattern, placeholder in MASKS:
        text = pattern.sub(placeholder, text)
    text = LONG_FLOAT.sub(lambda m: f"{float(m.group()):.11e}", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _blocks(text):
    """(language, body, start, end) of every fenced block, in page order."""
    return [(m.group(1), m.group(2), m.start(), m.end()) for m in BLOCK.finditer(text)]


def _unindent(text: str, block) -> str:
    """A block's body without its fence's indentation (a list item's code block)."""
    start = block[2]
    indent = len(text[text.rfind("\n", 0, start) + 1:start])
    return "\n".join(line[indent:] if line[:indent].isspace() else line for line in block[1].splitlines())


def _commands(body: str) -> list:
    return [shlex.split(line.split(" # ")[0].strip())[1:] for line in body.splitlines()
            if line.split(" # ")[0].strip().startswith("mva ")]


def _steps(text):
    """("cmd", [argv, ...], expected text or None) and ("python", source, None), in page order."""
    steps, blocks = [], _blocks(text)
    for i, (lang, body, _, end) in enumerate(blocks):
        if lang == "python":
            steps.append(("python", body, None))
        elif lang == "bash" and _commands(body):
            following = blocks[i + 1] if i + 1 < len(blocks) else None
            shown = following is not None and following[0] == "text" and not text[end:following[2]].strip()
            steps.append(("cmd", _commands(body), _unindent(text, following) if shown else None))
    return steps


def _run_page(page: Path, scratch: Path):
    """Run every step of ``page`` in ``scratch``; yields (argvs, expected, printed) per bash block."""
    (scratch / "data").symlink_to(ROOT / "data")
    here = os.getcwd()
    os.chdir(scratch)
    try:
        for kind, step, expected in _steps(page.read_text()):
            if kind == "python":
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(step, str(page), "exec"), {})
                continue
            printed = io.StringIO()
            for argv in step:
                with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
                    code = main(argv)
                assert code == 0, f"{page.name}: mva {' '.join(argv)} exited {code}"
            yield step, expected, printed.getvalue()
    finally:
        os.chdir(here)


def test_every_page_has_examples():
    assert {p.stem for p in PAGES} >= {"README", "files", "traces", "commands", "calibration", "guide"}
    assert sum(len(_steps(p.read_text())) for p in PAGES) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_page_examples_run_and_print_what_the_page_shows(page, tmp_path):
    blocks = list(_run_page(page, tmp_path))
    assert blocks, f"{page.name} has no examples"
    for argvs, expected, printed in blocks:
        shown = " / ".join("mva " + " ".join(a) for a in argvs)
        if expected is None:
            assert not printed.strip(), f"{page.name}: {shown} prints output the page does not show"
        else:
            assert mask(printed) == mask(expected), f"{page.name}: {shown} prints other than the page shows"


def test_masking_keeps_what_is_not_a_timing():
    assert mask("C2  (model: tpcc_smp, solve time 314.064 ms)\n") == "C2  (model: tpcc_smp, solve time <t> ms)"
    assert mask('{"gsp": 1.5, "seconds": 0.25}') == '{"gsp": 1.5, "seconds": <t>}'
    assert mask("tpmC 50.6359") == "tpmC 50.6359" and mask("4.6 s") != mask("4.6 ms")


def write(page: Path) -> None:
    """Put each bash block's output in a text block right after it (none where it prints nothing)."""
    with tempfile.TemporaryDirectory() as scratch:
        outputs = [printed for _, _, printed in _run_page(page, Path(scratch))]
    text = page.read_text()
    out, last, k = [], 0, 0
    blocks = _blocks(text)
    skip = set()
    for i, (lang, body, start, end) in enumerate(blocks):
        if i in skip:
            continue
        if lang != "bash" or not _commands(body):
            continue
        printed = outputs[k]
        k += 1
        out.append(text[last:end])
        last = end
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        if following and following[0] == "text" and not text[end:following[2]].strip():
            last = following[3]
            skip.add(i + 1)
        if printed.strip():                 # indented as the bash block is (a list item's)
            indent = text[text.rfind("\n", 0, start) + 1:start]
            lines = ["```text", *printed.strip("\n").splitlines(), "```"]
            out.append("".join(f"{indent}{line}".rstrip() + "\n" for line in lines))
    out.append(text[last:])
    page.write_text("".join(out))


if __name__ == "__main__":
    if "--write" in sys.argv:
        for p in PAGES:
            write(p)
            print(f"wrote {p.relative_to(ROOT)}")


def test_the_worked_example_quotes_the_numbers_its_commands_print():
    """The guide's first section reads its prose numbers from the outputs beside them
    (issue #75: the sensitivity prose once quoted values the command no longer printed)."""
    import json

    text = (ROOT / "docs" / "guide.md").read_text()
    section = text[text.index("## A worked example"):text.index("## What the solver does")]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        assert main(["solve", str(ROOT / "data/tpcc/c2.toml"), "--sensitivity", "--format", "json"]) == 0
    elasticity = {row["parameter"]: row["elasticity"] for row in map(json.loads, printed.getvalue().splitlines())}
    quoted = {"cpu.clock": r"clock ranks first \(\+([\d.]+)\)", "disk.rotation_latency": r"rotation \(-([\d.]+)\)",
              "disk.seek_time": r"seek \(-([\d.]+)\)", "disk.transfer_time": r"transfer \(-([\d.]+)\)"}
    for name, pattern in quoted.items():
        value = float(re.search(pattern, section).group(1))
        assert abs(abs(elasticity[name]) - value) < 0.005 + 1e-9, (name, elasticity[name], value)
    top = max(elasticity, key=lambda k: abs(elasticity[k]))
    assert top == "cpu.clock"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        assert main(["solve", str(ROOT / "data/tpcc/c2.toml"), "--sweep", "cpus=2,4", "--sweep",
                     "disk.rotation_latency=1.5e6,0.75e6", "--format", "json"]) == 0
    rows = {(r["cpus"], r["disk.rotation_latency"]): r["tpmC"] for r in map(json.loads, printed.getvalue().splitlines())}
    base = rows[(2, 1.5e6)]
    cpus, disk = (float(x) for x in re.search(r"processors buy ([\d.]+)%, the faster disk ([\d.]+)%", section).groups())
    assert round(100 * (rows[(4, 1.5e6)] / base - 1), 1) == cpus
    assert round(100 * (rows[(2, 0.75e6)] / base - 1), 1) == disk
