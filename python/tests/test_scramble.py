"""scramble: random-state scrambles, reproducible by seed, the same as the CLI's."""

import subprocess

import pytest

import cubeswarm

SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def test_scrambles_are_seeded_and_make_scrambled_states(tables_dir):
    a = cubeswarm.scramble(8, seed=11, tables_dir=tables_dir)
    assert len(a) == 8 and all(isinstance(s, str) for s in a)
    assert a == cubeswarm.scramble(8, seed=11, tables_dir=tables_dir)
    assert cubeswarm.scramble(3, seed=11, tables_dir=tables_dir) == a[:3]
    assert cubeswarm.scramble(8, seed=12, tables_dir=tables_dir) != a
    for s in a:
        assert 2 <= len(s.split()) <= 20, s
        state = cubeswarm.facelets(s)
        assert state != SOLVED
        # The scramble's inverse solves the state it makes.
        inverse = [m[0] + {"": "'", "'": "", "2": "2"}[m[1:]] for m in reversed(s.split())]
        assert cubeswarm.is_solved_by(state, inverse)


def test_without_a_seed_scrambles_differ(tables_dir):
    assert cubeswarm.scramble(2, tables_dir=tables_dir) != cubeswarm.scramble(2, tables_dir=tables_dir)
    assert cubeswarm.scramble(0, tables_dir=tables_dir) == []


def test_the_same_seed_gives_the_cli_scrambles(tables_dir, binary):
    out = subprocess.run(
        [binary, "scramble", "-n", "4", "--seed", "5", "--quiet", "--tables-dir", str(tables_dir)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert out.splitlines() == cubeswarm.scramble(4, seed=5, tables_dir=tables_dir)


@pytest.mark.parametrize(
    "n, seed", [(-1, None), (1.5, None), ("3", None), (True, None), (1, -1), (1, 2**64), (1, "7")]
)
def test_bad_arguments_raise_settings_error(n, seed):
    with pytest.raises(cubeswarm.SettingsError) as e:
        cubeswarm.scramble(n, seed=seed)
    assert isinstance(e.value, ValueError)
