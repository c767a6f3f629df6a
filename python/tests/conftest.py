"""Shared helpers: the repository's fixtures and the CLI the results are compared with."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


def _cli():
    """The taskmap binary: $TASKMAP_CLI (which must exist when set), else a build of
    this checkout."""
    given = os.environ.get("TASKMAP_CLI")
    if given:
        if not pathlib.Path(given).is_file():
            raise RuntimeError(f"TASKMAP_CLI={given} does not exist")
        return given
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "taskmap"
        if p.is_file():
            return str(p)
    return None


@pytest.fixture(scope="session")
def cli():
    path = _cli()
    if path is None:
        pytest.skip("no taskmap binary (cargo build, or set TASKMAP_CLI)")

    def run(*args):
        out = subprocess.run([path, "-q", *map(str, args)], capture_output=True, text=True, check=False)
        if out.returncode not in (0, 1):
            raise AssertionError(f"taskmap {' '.join(map(str, args))}: {out.stderr}")
        return out.stdout

    def run_json(*args):
        return json.loads(run(*args, "--format", "json"))

    run.json = run_json
    return run
