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
