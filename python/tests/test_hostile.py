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
