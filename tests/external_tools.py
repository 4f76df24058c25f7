"""The programs from outside Python that some tests run, found once (the tests' skip
markers and the run's first lines, :mod:`conftest`, share these)."""
from __future__ import annotations

import shutil

#: What needs which programs.
EXTERNAL_TOOLS = {
    "the parallel programs' recorder (tests/calibration/test_splash.py)": ("gcc", "make", "m4", "valgrind"),
    "the TPC-C recorder's trace of system calls (tests/calibration/test_tpcc_postgres.py)": ("strace",),
    "the TPC-W application (tests/calibration/test_tpcw_recorder.py)": ("apache2", "php"),
}


def missing(tools) -> list:
    """The ones of ``tools`` not on the PATH."""
    return [t for t in tools if shutil.which(t) is None]


def postgres_found() -> bool:
    """PostgreSQL's server binaries and psycopg, as the TPC-C recorder needs them."""
    from mva.errors import ModelError

    try:
        import psycopg  # noqa: F401

        from calibration.sim.pgserver import find_bindir
        find_bindir()
        return True
    except (ImportError, ModelError):
        return False


def apache_php_found() -> bool:
    """Apache with mod_php and PHP's PostgreSQL functions, as the TPC-W recorder needs them."""
    import subprocess
    from pathlib import Path

    if missing(("apache2", "php")) or not list(Path("/usr/lib/apache2/modules").glob("libphp*.so")):
        return False
    done = subprocess.run(["php", "-r", "echo function_exists('pg_pconnect') ? 1 : 0;"], capture_output=True,
                          text=True)
    return done.stdout.strip() == "1"
