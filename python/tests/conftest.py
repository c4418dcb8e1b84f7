"""Shared fixtures: small test tables (h48h0k4 and the two-phase set, the ones the Rust
tests use, in target/test-tables) and the cubeswarm binary for cluster tests."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLES = pathlib.Path(os.environ.get("CUBESWARM_TEST_TABLES") or ROOT / "target" / "test-tables")
TABLES.mkdir(parents=True, exist_ok=True)
# Every call without tables_dir= (the kociemba drop-in among them) uses the CLI's rule.
os.environ["CUBESWARM_TABLES"] = str(TABLES)

import cubeswarm  # noqa: E402


@pytest.fixture(scope="session")
def tables_dir() -> pathlib.Path:
    for name in ("h48h0k4", "twophase"):
        rows = {r["name"]: r["status"] for r in cubeswarm.tables.list(TABLES)}
        files = ["h48h0k4", "cocsep"] if name == "h48h0k4" else [
            "twophase-fsym", "twophase-p1", "twophase-p2"]
        if any(rows.get(f) != "present" for f in files):
            cubeswarm.tables.build(name, TABLES)
    return TABLES


@pytest.fixture(scope="session")
def binary() -> str:
    """The cubeswarm CLI built by cargo (CI's cargo test built it; built here if not)."""
    path = os.environ.get("CUBESWARM_BIN") or str(ROOT / "target" / "debug" / "cubeswarm")
    if not os.path.exists(path):
        subprocess.run(["cargo", "build", "--bin", "cubeswarm"], cwd=ROOT, check=True)
    return path
