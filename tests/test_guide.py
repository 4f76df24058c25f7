"""Every `mva ...` command and every Python block of docs/*.md runs, in order, from a
scratch folder in which data/ is the repository's (so files the examples write land
there and later commands of the same page can use them)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from mva.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md"))


def _steps(text):
    """("cmd", argv) and ("python", source) in page order, from bash and python blocks."""
    steps = []
    for lang, body in re.findall(r"```(bash|python)\n(.*?)```", text, flags=re.S):
        if lang == "python":
            steps.append(("python", body))
            continue
        for line in body.splitlines():
            line = line.split(" # ")[0].strip()
            if line.startswith("mva "):
                steps.append(("cmd", shlex.split(line)[1:]))
    return steps


def test_every_page_has_examples():
    assert {p.stem for p in PAGES} >= {"README", "files", "traces", "commands", "calibration"}
    assert sum(len(_steps(p.read_text())) for p in PAGES) >= 20


@pytest.mark.parametrize("page", [p for p in PAGES if p.stem not in ("README", "references")], ids=lambda p: p.stem)
def test_page_examples_run(page, tmp_path, monkeypatch, capsys):
    (tmp_path / "data").symlink_to(ROOT / "data")
    monkeypatch.chdir(tmp_path)
    steps = _steps(page.read_text())
    assert steps, f"{page.name} has no examples"
    for kind, step in steps:
        if kind == "cmd":
            assert main(step) == 0, " ".join(step)
        else:
            exec(compile(step, str(page), "exec"), {})
        capsys.readouterr()
