"""cubeswarm.tables: list, build, verify, in the CLI's directory rules."""

import os

import pytest

import cubeswarm


def test_directory_follows_the_cli(tables_dir, monkeypatch, tmp_path):
    assert cubeswarm.tables.directory() == str(tables_dir)  # $CUBESWARM_TABLES
    assert cubeswarm.tables.directory(tmp_path) == str(tmp_path)
    monkeypatch.delenv("CUBESWARM_TABLES")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert cubeswarm.tables.directory() == str(tmp_path / "cubeswarm" / "tables")


def test_list_shows_present_and_missing(tables_dir, tmp_path):
    rows = {r["name"]: r for r in cubeswarm.tables.list()}
    assert rows["h48h0k4"]["status"] == "present"
    assert rows["h48h0k4"]["bytes"] == os.path.getsize(rows["h48h0k4"]["path"])
    empty = {r["name"]: r for r in cubeswarm.tables.list(tmp_path)}
    assert all(r["status"] == "missing" for r in empty.values())
    assert empty["h48h0k4"]["bytes"] > 0 and empty["h48h0k4"]["path"].startswith(str(tmp_path))


def test_build_then_verify_and_a_damaged_file(tmp_path):
    path = cubeswarm.tables.build("cocsep", tmp_path)
    assert path == str(tmp_path / "cocsep.tbl") and os.path.exists(path)
    cubeswarm.tables.verify("cocsep", tmp_path)
    data = bytearray(open(path, "rb").read())
    data[-100] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(cubeswarm.TableError, match="cocsep"):
        cubeswarm.tables.verify("cocsep", tmp_path)
    rows = {r["name"]: r for r in cubeswarm.tables.list(tmp_path)}
    assert rows["cocsep"]["status"] in ("present", "bad")  # the header still reads


def test_verify_of_a_solver_table_and_unknown_names(tables_dir, tmp_path):
    cubeswarm.tables.verify("h48h0k4")
    with pytest.raises(cubeswarm.TableError):
        cubeswarm.tables.verify("h48h0k4", tmp_path)  # missing
    with pytest.raises(cubeswarm.SettingsError, match="unknown table"):
        cubeswarm.tables.build("nope")
    with pytest.raises(cubeswarm.SettingsError, match="unknown table"):
        cubeswarm.tables.verify("nope")
