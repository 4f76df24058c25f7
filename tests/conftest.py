import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # the test helpers: references/ (independent references)

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def run_cli():
    """``run_cli("simulate", ...)``: ``mva`` in a subprocess -> (exit code, stdout, stderr)."""
    import subprocess
    import sys
    from pathlib import Path

    def run(*args):
        r = subprocess.run([sys.executable, "-m", "mva", *args], capture_output=True, text=True,
                           cwd=Path(__file__).resolve().parents[1])
        return r.returncode, r.stdout, r.stderr
    return run


def _tool_lines() -> list:
    """One line per group of tests that needs programs from outside Python, saying which
    are missing (those tests skip, each with this reason) and how to install them;
    checked once, before the first test (a tool installed while the run goes would skip
    some tests and not others)."""
    from external_tools import EXTERNAL_TOOLS, missing, postgres_found

    lines = []
    for what, tools in EXTERNAL_TOOLS.items():
        lacking = missing(tools)
        lines.append(f"external tools for {what}: " + ("all found" if not lacking else
                     f"missing {', '.join(lacking)}; those tests skip (apt-get install {' '.join(lacking)})"))
    lines.append("PostgreSQL server and psycopg for the TPC-C recorder's tiny database: "
                 + ("found" if postgres_found() else "missing; those tests skip (apt-get install postgresql; "
                                                     "psycopg comes with the test extra)"))
    return lines


def pytest_sessionstart(session):
    """The external tools' lines before the first test (printed under -q too)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        for line in _tool_lines():
            reporter.write_line(line)


def _untracked() -> set:
    """Files of the checkout git neither tracks nor ignores (empty outside a git checkout)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    try:
        listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=root,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    return set(filter(None, listed.split("\0")))


_BEFORE: set = set()


def pytest_configure(config):
    _BEFORE.update(_untracked())


def pytest_sessionfinish(session, exitstatus):
    """A test that writes into the checkout (a fuzzed ``-o 1``) fails the run, naming the files."""
    left = sorted(_untracked() - _BEFORE)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"tests left {len(left)} file(s) in the checkout: {', '.join(left[:5])}")
        session.exitstatus = 1
