"""cubeswarm.kociemba.solve on the kociemba package's own README examples, and its
errors (ValueError, as the kociemba package raises)."""

import pytest

import cubeswarm
from cubeswarm import kociemba

SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
# The kociemba package's README: a cube, and a cube with a target pattern.
CUBE = "DRLUUBFBRBLURRLRUBLRDDFDLFUFUFFDBRDUBRUFLLFDDBFLUBLRBD"
PATTERN_CUBE = "FLBUULFFLFDURRDBUBUUDDFFBRDDBLRDRFLLRLRULFUDRRBDBBBUFL"
PATTERN = "BBURUDBFUFFFRRFUUFLULUFUDLRRDBBDBDBLUDDFLLRRBRLLLBRDDF"


def test_readme_example_is_solved(tables_dir):
    s = kociemba.solve(CUBE)
    assert isinstance(s, str)
    assert len(s.split()) <= 20
    assert cubeswarm.apply(CUBE, s) == SOLVED
    # The kociemba package's answer (19 moves) solves it too: same notation.
    theirs = "D2 R' D' F2 B D R2 D2 R' F2 D' F2 U' B2 L2 U2 D R2 U"
    assert cubeswarm.apply(CUBE, theirs) == SOLVED


def test_readme_pattern_example_reaches_the_pattern(tables_dir):
    s = kociemba.solve(PATTERN_CUBE, PATTERN)
    assert cubeswarm.apply(PATTERN_CUBE, s) == PATTERN
    assert len(s.split()) <= 20
    assert kociemba.solve(PATTERN, PATTERN) == ""


def test_max_depth_is_kept_and_random_states(tables_dir):
    for seed in range(20):
        f = cubeswarm.random_state(100 + seed)
        s = kociemba.solve(f, max_depth=21)
        assert cubeswarm.apply(f, s) == SOLVED and len(s.split()) <= 21
    s = kociemba.solve(cubeswarm.facelets("R U F"), max_depth=3)
    assert len(s.split()) <= 3
    assert cubeswarm.apply(cubeswarm.facelets("R U F"), s) == SOLVED


@pytest.mark.parametrize(
    "cube",
    [
        CUBE[:-1],  # 53 facelets
        CUBE[:-1] + "X",  # not a colour
        "U" * 54,  # wrong colour counts
        SOLVED[:1] + SOLVED[2] + SOLVED[1] + SOLVED[3:],  # fine counts, same face: ok?
        "R U R' U'",  # a scramble is not a cube string
        12,
    ],
)
def test_invalid_input_raises_value_error(tables_dir, cube):
    if cube == SOLVED[:1] + SOLVED[2] + SOLVED[1] + SOLVED[3:]:
        assert kociemba.solve(cube) == ""  # swapping two U stickers: still solved
        return
    with pytest.raises(ValueError):
        kociemba.solve(cube)


def test_unsolvable_and_bad_pattern_and_depth(tables_dir):
    f = list(cubeswarm.facelets(""))
    # Twist one corner: the U sticker of UFR into R's place and so on.
    f[8], f[9], f[20] = f[9], f[20], f[8]
    with pytest.raises(ValueError, match="unsolvable|twist|orientation|facelet"):
        kociemba.solve("".join(f))
    with pytest.raises(ValueError):
        kociemba.solve(CUBE, "U" * 54)
    with pytest.raises(ValueError):
        kociemba.solve(CUBE, max_depth=2)
    with pytest.raises(ValueError):
        kociemba.solve(CUBE, max_depth=-1)
