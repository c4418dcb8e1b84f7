"""solve and solve_many on the embedded solver: every solution is checked by applying it."""

import itertools

import pytest

import cubeswarm
from cubeswarm import Solution


def check(position, s: Solution):
    assert isinstance(s, Solution)
    assert cubeswarm.is_solved_by(position, s.moves), (position, str(s))
    for sol in s.solutions:
        assert cubeswarm.is_solved_by(position, sol)
    assert s.length == len(s.moves)
    assert str(s) == " ".join(s.moves)


def test_optimal_solutions_are_optimal_and_solve(tables_dir):
    for scramble, length in [("R U R' U'", 4), ("R U", 2), ("F2 B' D", 3)]:
        s = cubeswarm.solve(scramble, tables_dir=tables_dir, threads=2)
        check(scramble, s)
        assert s.length == length and s.optimal and s.ok
        assert s.nodes >= 0 and s.seconds >= 0.0
        assert s.input == scramble and s.line == 1


def test_twophase_on_random_states(tables_dir):
    for seed in range(10):
        f = cubeswarm.random_state(seed)
        s = cubeswarm.solve(f, method="twophase", tables_dir=tables_dir)
        check(f, s)
        assert s.length <= 20


def test_a_solved_cube_has_an_empty_solution(tables_dir):
    for method in ("optimal", "twophase"):
        s = cubeswarm.solve(cubeswarm.facelets(""), method=method, tables_dir=tables_dir)
        assert s.moves == [] and str(s) == "" and s.length == 0


def test_several_solutions_and_min_length(tables_dir):
    s = cubeswarm.solve("U2 D2 F2 B2", solutions=None, tables_dir=tables_dir)
    assert len(s.solutions) == 2 and len(set(map(tuple, s.solutions))) == 2
    check("U2 D2 F2 B2", s)
    f = cubeswarm.random_state(1)
    s = cubeswarm.solve(f, method="twophase", solutions=3, tables_dir=tables_dir)
    assert len(s.solutions) == 3 and len(set(map(tuple, s.solutions))) == 3
    check(f, s)
    s = cubeswarm.solve("R", min_length=3, tables_dir=tables_dir)
    check("R", s)
    assert s.length >= 3


def test_errors_are_specific(tables_dir, tmp_path):
    with pytest.raises(cubeswarm.PositionError, match="R U Q"):
        cubeswarm.solve("R U Q", tables_dir=tables_dir)
    for kwargs, msg in [
        (dict(max_length=99), "max_length must be at most"),
        (dict(min_length=5, max_length=3), "min_length is larger than max_length"),
        (dict(solutions=0), "solutions must be at least 1"),
        (dict(method="fast"), "unknown method"),
        (dict(time_limit=-1.0), "time_limit"),
        (dict(table="h48h99k9"), "unknown H48 table"),
        (dict(method="twophase", solutions=None), "every optimal solution"),
    ]:
        with pytest.raises(cubeswarm.SettingsError, match=msg):
            cubeswarm.solve("R U", tables_dir=tables_dir, **kwargs)
    with pytest.raises(cubeswarm.NoSolutionError, match="no solution"):
        cubeswarm.solve("R U F", max_length=2, tables_dir=tables_dir)
    # Wrong types are settings errors naming the argument, not a TypeError from the
    # binding; a bool is not a number.
    for kwargs, msg in [
        (dict(max_length="20"), "max_length must be a whole number"),
        (dict(max_length=-1), "max_length must be a whole number"),
        (dict(solutions=True), "solutions must be a whole number"),
        (dict(anytime="yes"), "anytime must be True or False"),
    ]:
        with pytest.raises(cubeswarm.SettingsError, match=msg):
            cubeswarm.solve("R U", tables_dir=tables_dir, **kwargs)
    # A damaged table file: a TableError naming it, not a crash.
    (tmp_path / "cocsep.tbl").write_bytes((tables_dir / "cocsep.tbl").read_bytes())
    (tmp_path / "h48h0k4.tbl").write_bytes(b"not a table" * 100)
    with pytest.raises(cubeswarm.TableError, match="h48h0k4"):
        cubeswarm.solve("R U", table="h48h0k4", tables_dir=tmp_path)
    assert issubclass(cubeswarm.TableError, cubeswarm.CubeswarmError)


def test_solve_many_over_a_generator_with_bad_lines(tables_dir):
    good = [cubeswarm.random_state(s) for s in range(20)]
    items = []
    for i, g in enumerate(good):
        items.append(g)
        if i % 5 == 2:
            items.append("R U Q")
        if i % 7 == 3:
            items.append("UUUUUUUUU")
    results = list(cubeswarm.solve_many((x for x in items), method="twophase",
                                        tables_dir=tables_dir, threads=2))
    assert [r.input for r in results] == items
    assert [r.line for r in results] == list(range(1, len(items) + 1))
    for item, r in zip(items, results):
        if item in good:
            assert r.ok
            check(item, r)
        else:
            assert not r.ok and r.moves == []
            assert ("R U Q" in item and "Q" in r.error) or "facelet" in r.error


def test_solve_many_reads_a_file_object_and_optimal(tables_dir, tmp_path):
    p = tmp_path / "in.txt"
    lines = ["R U", "F2 D'", "L B2 R'"]
    p.write_text("\n".join(lines) + "\n")
    with open(p) as f:
        results = list(cubeswarm.solve_many(f, tables_dir=tables_dir, progress=True))
    assert [r.input for r in results] == lines
    assert [r.length for r in results] == [2, 2, 3]
    assert all(r.optimal for r in results)
    for line, r in zip(lines, results):
        check(line, r)


def test_solve_many_reads_lazily(tables_dir):
    pulled = itertools.count()

    def gen():
        for i in range(100_000):
            next(pulled)
            yield cubeswarm.random_state(i)

    it = cubeswarm.solve_many(gen(), method="twophase", tables_dir=tables_dir, threads=1)
    first = next(it)
    check(first.input, first)
    # Bounded memory: the run reads ahead within its window, not the whole input.
    assert next(pulled) < 5_000
    it.close()


def test_solve_many_raises_the_iterables_exception_after_its_records(tables_dir):
    def gen():
        yield "R U"
        yield "F"
        raise RuntimeError("input broke")

    got = []
    with pytest.raises(RuntimeError, match="input broke"):
        for r in cubeswarm.solve_many(gen(), method="twophase", tables_dir=tables_dir):
            got.append(r.input)
    assert got == ["R U", "F"]


def test_solve_many_refuses_one_string_and_bad_settings(tables_dir):
    with pytest.raises(cubeswarm.SettingsError, match="not one string"):
        cubeswarm.solve_many("R U", tables_dir=tables_dir)
    with pytest.raises(cubeswarm.SettingsError, match="max_length"):
        cubeswarm.solve_many(["R U"], max_length=99, tables_dir=tables_dir)


def test_scrambles_in_the_cubers_notation(tables_dir):
    # The H permutation written with slices is the same position as with face moves, and
    # a rotation alone is no position at all (the cube is read from its centres).
    h_slices = "M2 U M2 U2 M2 U M2"
    h_faces = "R2 U2 R U2 R2 U2 R2 U2 R U2 R2"
    assert cubeswarm.facelets(h_slices) == cubeswarm.facelets(h_faces)
    assert cubeswarm.facelets("x y2 z'") == cubeswarm.facelets("")
    s = cubeswarm.solve(h_slices, tables_dir=tables_dir, threads=2)
    check(h_slices, s)
    assert s.optimal and s.length == 10  # in face turns: each M2 is two of them
    commutator = "[R U R', U] // a comment"
    assert cubeswarm.facelets(commutator) == cubeswarm.facelets("R U R' U R U' R' U'")
    with pytest.raises(cubeswarm.PositionError, match="token"):
        cubeswarm.facelets("R [U, ")


def test_every_option_of_the_cli_reaches_python(tables_dir):
    # --anytime: two-phase keeps shortening until the time limit; what it returns is at
    # least as short as the first solution it would have returned.
    f = cubeswarm.random_state(7)
    first = cubeswarm.solve(f, method="twophase", tables_dir=tables_dir)
    best = cubeswarm.solve(f, method="twophase", anytime=True, time_limit=0.3,
                           tables_dir=tables_dir)
    check(f, best)
    assert best.length <= first.length
    with pytest.raises(cubeswarm.SettingsError, match="anytime=True needs time_limit"):
        cubeswarm.solve(f, method="twophase", anytime=True, tables_dir=tables_dir)
    with pytest.raises(cubeswarm.SettingsError, match="anytime=True is for"):
        cubeswarm.solve(f, anytime=True, time_limit=1.0, tables_dir=tables_dir)
    # --no-symmetry: every prefix of a symmetric position searched; the same solutions.
    sym = "U2 D2 F2 B2"
    kept = cubeswarm.solve(sym, solutions=None, tables_dir=tables_dir)
    every = cubeswarm.solve(sym, solutions=None, symmetry=False, tables_dir=tables_dir)
    assert sorted(map(tuple, kept.solutions)) == sorted(map(tuple, every.solutions))
    many = list(cubeswarm.solve_many([sym], solutions=None, symmetry=False,
                                     tables_dir=tables_dir))
    assert sorted(map(tuple, many[0].solutions)) == sorted(map(tuple, kept.solutions))


def test_solving_to_a_pattern_as_the_cli_s_to(tables_dir):
    target = cubeswarm.facelets("R")
    s = cubeswarm.solve("R U", to=target, tables_dir=tables_dir)
    assert cubeswarm.apply("R U", " ".join(s.moves)) == target
    assert s.length == 1 and s.optimal


def test_the_native_layer_refuses_an_unknown_option(tables_dir):
    from cubeswarm import _native

    with pytest.raises(cubeswarm.SettingsError, match='unknown option "max_lenght"'):
        _native.solve("R U", None, dict(max_lenght=3), str(tables_dir))
