"""Hostile input from Python: the same answers and errors as the command line, from the
same rules in the Rust front-end library (amounts mod 4 past 2^64, rotations as the cube
is held at the end, bounded threads, solution counts and line lengths, single tokens)."""

import pytest

import cubeswarm


def twophase(position, tables_dir, **kwargs):
    return cubeswarm.solve(position, method="twophase", tables_dir=tables_dir, **kwargs)


def test_move_amounts_past_two_to_the_64_are_taken_mod_4(tables_dir):
    r_u = twophase("R U", tables_dir).moves
    assert twophase("R18446744073709551617 U", tables_dir).moves == r_u
    zeros = "1" + "0" * 40
    assert cubeswarm.facelets(f"x{zeros} U") == cubeswarm.facelets("U")
    assert cubeswarm.facelets(f"M{zeros} U") == cubeswarm.facelets("U")
    assert cubeswarm.facelets("R100000000000000000000 U") == cubeswarm.facelets("U")


def test_rotations_are_read_as_the_cube_is_held_at_the_end(tables_dir):
    assert twophase("x2 U", tables_dir).moves == ["U'"]
    assert cubeswarm.facelets("U x U") == cubeswarm.facelets("B U")
    assert cubeswarm.facelets("F x") == cubeswarm.facelets("U")
    assert cubeswarm.facelets("x U x'") == cubeswarm.facelets("F")


def test_threads_and_solution_counts_are_bounded(tables_dir):
    with pytest.raises(cubeswarm.SettingsError, match="threads 100000 is more than"):
        twophase("R U", tables_dir, threads=100000)
    with pytest.raises(cubeswarm.SettingsError, match="threads must be at least 1"):
        twophase("R U", tables_dir, threads=0)
    with pytest.raises(cubeswarm.SettingsError, match="solutions must be at most 10000"):
        twophase("R U", tables_dir, solutions=10001)
    with pytest.raises(cubeswarm.SettingsError, match="threads 100000"):
        list(cubeswarm.solve_many(["R U"], method="twophase", tables_dir=tables_dir,
                                  threads=100000))


def test_a_text_past_the_bound_is_refused_on_its_own(tables_dir):
    long = "R U " * 300_000
    with pytest.raises(cubeswarm.PositionError, match="at most 1048576"):
        twophase(long, tables_dir)
    results = list(cubeswarm.solve_many(["R U", long, "F2 D'"], method="twophase",
                                        tables_dir=tables_dir))
    assert [r.ok for r in results] == [True, False, True]
    assert "1048576" in results[1].error


def test_a_single_token_that_is_no_facelet_string_is_read_as_moves():
    assert cubeswarm.facelets("R1000") == cubeswarm.facelets("")
    assert cubeswarm.facelets("Rw13'") == cubeswarm.facelets("Rw'")
    assert cubeswarm.facelets("R//comment") == cubeswarm.facelets("R")
    for glued in ("R2U", "(R U)3x"):
        with pytest.raises(cubeswarm.PositionError, match="separated by spaces"):
            cubeswarm.facelets(glued)


# A hostile caller's types: each refused by the name the caller gave, before any table is
# opened or any connection made (tmp_path holds no table; port 1 has no coordinator).

NOWHERE = "http://127.0.0.1:1"


def test_bool_keywords_must_be_bools(tmp_path):
    for value in ("x", 1, None):
        with pytest.raises(cubeswarm.SettingsError, match="progress must be True or False"):
            cubeswarm.solve_many(["R U"], progress=value, tables_dir=tmp_path)
    (tmp_path / "in.txt").write_text("R U\n")
    c = cubeswarm.Cluster(NOWHERE, connect_timeout=0.5)
    for value in ("yes", 1):
        with pytest.raises(cubeswarm.SettingsError, match="resume must be True or False"):
            c.solve_many(tmp_path / "in.txt", output=tmp_path / "out.jsonl", resume=value)
    with pytest.raises(cubeswarm.SettingsError, match="symmetry must be True or False"):
        cubeswarm.solve("R U", symmetry="no", tables_dir=tmp_path)


def test_an_unknown_keyword_is_named_with_its_likely_meaning(tmp_path):
    with pytest.raises(cubeswarm.SettingsError, match='unknown option "to"') as e:
        cubeswarm.solve_many(["R U"], to="R", tables_dir=tmp_path)
    assert "did you mean" not in str(e.value)
    with pytest.raises(cubeswarm.SettingsError,
                       match='unknown option "max_lenght" \\(did you mean "max_length"\\?\\)'):
        cubeswarm.solve("R U", max_lenght=3, tables_dir=tmp_path)
    with pytest.raises(cubeswarm.SettingsError, match='"treads" \\(did you mean "threads"'):
        cubeswarm.solve_many(["R U"], treads=2, tables_dir=tmp_path)
    c = cubeswarm.Cluster(NOWHERE, connect_timeout=0.5)
    with pytest.raises(cubeswarm.SettingsError, match='unknown option "to"'):
        c.solve("R U", to="R")
    with pytest.raises(cubeswarm.SettingsError, match='unknown option "tables_dir"'):
        c.solve_many(["R U"], tables_dir=tmp_path)
    # A keyword of the local solver only is refused with the reason.
    with pytest.raises(cubeswarm.SettingsError, match="threads sets the local solver's"):
        c.solve("R U", threads=2)


def test_a_target_of_the_wrong_type_is_named_as_the_caller_named_it(tmp_path):
    for to in (5, b"R"):
        with pytest.raises(cubeswarm.PositionError, match="^to must be a str") as e:
            cubeswarm.solve("R U", to=to, tables_dir=tmp_path)
        assert "target" not in str(e.value)
    with pytest.raises(cubeswarm.PositionError, match='^to "R Q"'):
        cubeswarm.solve("R U", to="R Q", tables_dir=tmp_path)
    with pytest.raises(cubeswarm.PositionError, match="^position must be a str, not int"):
        cubeswarm.solve(5, tables_dir=tmp_path)


def test_text_that_is_no_unicode_is_a_position_error(tmp_path):
    bad = "R \udcff"  # what os.fsdecode makes of a byte that is not UTF-8
    with pytest.raises(cubeswarm.PositionError,
                       match="^position is not valid text: character 2 is a lone surrogate"):
        cubeswarm.solve(bad, tables_dir=tmp_path)
    with pytest.raises(cubeswarm.PositionError, match="^to is not valid text"):
        cubeswarm.solve("R U", to=bad, tables_dir=tmp_path)
    with pytest.raises(cubeswarm.PositionError, match="^position is not valid text"):
        cubeswarm.facelets(bad)
    with pytest.raises(cubeswarm.PositionError, match="^moves is not valid text"):
        cubeswarm.apply("R", bad)
    with pytest.raises(cubeswarm.PositionError, match="^position is not valid text"):
        cubeswarm.Cluster(NOWHERE, connect_timeout=0.5).solve(bad)


def test_a_cluster_s_durations_are_checked_when_it_is_made():
    with pytest.raises(cubeswarm.SettingsError, match="connect_timeout must be a number of"):
        cubeswarm.Cluster(NOWHERE, connect_timeout="5")
    with pytest.raises(cubeswarm.SettingsError, match="wait_for_workers must be a number of"):
        cubeswarm.Cluster(NOWHERE, wait_for_workers=-1.0)
    c = cubeswarm.Cluster(NOWHERE, token="t", tls_ca="ca.pem", connect_timeout=3)
    assert (c.url, c.token, c.tls_ca, c.connect_timeout, c.wait_for_workers) == (
        NOWHERE, "t", "ca.pem", 3.0, None)
    assert repr(c) == f"Cluster({NOWHERE!r})"


def test_an_item_that_is_no_text_is_an_error_of_its_own(tables_dir):
    items = ["R U", None, 3.5, "F \udcff", b"F2 D'", b"\xffR", "L"]
    results = list(cubeswarm.solve_many(items, method="twophase", tables_dir=tables_dir))
    assert [r.line for r in results] == list(range(1, len(items) + 1))
    assert [r.ok for r in results] == [True, False, False, False, True, False, True]
    assert results[1].error == "expected a str, not NoneType"
    assert results[2].error == "expected a str, not float"
    assert results[3].error == "not valid text: character 2 is a lone surrogate ('\\udcff')"
    assert results[5].error == "line is not valid UTF-8"
    assert results[1].input == "" and results[4].input == "F2 D'"
    assert cubeswarm.is_solved_by("F2 D'", results[4].moves)
    assert cubeswarm.is_solved_by("L", results[6].moves)
