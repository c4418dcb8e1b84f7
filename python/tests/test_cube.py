"""facelets, apply, is_solved_by, random_state."""

import pytest

import cubeswarm

SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def test_facelets_of_scrambles_and_facelet_strings():
    assert cubeswarm.facelets("") == SOLVED
    f = cubeswarm.facelets("R U R' U'")
    assert len(f) == 54 and f != SOLVED
    assert cubeswarm.facelets(f) == f
    # R moves the F face's right column up: U's right column shows F's colour.
    assert cubeswarm.facelets("R")[2] == "F"


def test_apply_and_is_solved_by():
    assert cubeswarm.apply(SOLVED, "R U") == cubeswarm.facelets("R U")
    assert cubeswarm.apply("R U", "U' R'") == SOLVED
    assert cubeswarm.is_solved_by("R U", "U' R'")
    assert cubeswarm.is_solved_by("R U", ["U'", "R'"])
    assert not cubeswarm.is_solved_by("R U", "R' U'")


def test_random_state_is_seeded_and_legal():
    a = cubeswarm.random_state(7)
    assert a == cubeswarm.random_state(7)
    assert a != cubeswarm.random_state(8)
    assert cubeswarm.random_state() != cubeswarm.random_state()
    assert cubeswarm.facelets(a) == a  # parses: a legal, solvable cube
    assert sorted(a) == sorted(SOLVED)


@pytest.mark.parametrize("bad", ["R U Q", "UUUUUUUUURRR", SOLVED[:-2] + "UB", "R U X"])
def test_bad_positions_raise_position_error(bad):
    with pytest.raises(cubeswarm.PositionError) as e:
        cubeswarm.facelets(bad)
    assert isinstance(e.value, ValueError)
    assert bad in str(e.value)


def test_bad_moves_raise_position_error():
    with pytest.raises(cubeswarm.PositionError, match="moves"):
        cubeswarm.apply("R", "U X")
