"""cubeswarm: Rubik's Cube solving from Python.

- :func:`solve`: one position (a scramble or a 54-character facelet string), optimal
  (H48 tables + IDA*) or two-phase.
- :func:`solve_many`: any iterable of positions (a list, a file, a generator), results in
  input order as they come, a bad line giving an error result in its place.
- :class:`Cluster`: the same on a cubeswarm cluster (``cubeswarm coordinator``).
- :mod:`cubeswarm.kociemba`: a drop-in for the ``kociemba`` package's ``solve``.
- :func:`scramble`: random-state scrambles (the WCA's kind), reproducible by seed.
- :func:`facelets`, :func:`apply`, :func:`random_state`; :mod:`cubeswarm.tables`.

Solving releases the GIL; Ctrl-C (KeyboardInterrupt) stops a solve within a fraction of
a second. Tables live where the CLI keeps them (``$CUBESWARM_TABLES``, else
``~/.local/share/cubeswarm/tables``) and are built on first use, with a message.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Iterable, Iterator, List, Optional, Union

from . import _native
from ._options import SolveOptions, flag
from ._solution import Solution
from .errors import (
    ClusterError,
    CubeswarmError,
    NoSolutionError,
    PositionError,
    SettingsError,
    TableError,
)

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "Solution",
    "solve",
    "solve_many",
    "facelets",
    "apply",
    "random_state",
    "scramble",
    "is_solved_by",
    "Cluster",
    "kociemba",
    "tables",
    "CubeswarmError",
    "PositionError",
    "SettingsError",
    "TableError",
    "NoSolutionError",
    "ClusterError",
]


def _dir(tables_dir: Optional[PathLike]) -> Optional[str]:
    return None if tables_dir is None else os.fspath(tables_dir)


def solve(
    position: str,
    *,
    to: Optional[str] = None,
    tables_dir: Optional[PathLike] = None,
    **options: Unpack[SolveOptions],
) -> Solution:
    """Solves one position.

    Args:
        position: a scramble ("R U R' U'") or a 54-character facelet string (URFDLB).
        to: solve to this pattern (a facelet string or a scramble) instead of the solved
            cube: the solutions take ``position`` to it (the CLI's ``--to``).
        tables_dir: where the tables are (default: the CLI's directory).

    The options of the CLI's ``solve`` are keywords too, each with the CLI's default (their
    typed listing: ``cubeswarm._options.SolveOptions``); an unknown keyword is a
    SettingsError naming it.

    Keyword Args:
        method: "optimal" (the default: shortest solutions, proved) or "twophase" (fast,
            at most ``max_length`` moves).
        max_length: the longest solution accepted (default 20).
        min_length: the shortest solution length to look for (optimal; default 0).
        solutions: how many solutions (default 1); None: every optimal solution
            (optimal only).
        time_limit: seconds (default: none); the best solution found so far is returned
            when it runs out.
        anytime: two-phase: keep shortening until ``time_limit`` runs out (or the
            shortest is proved) and return the shortest found (the CLI's ``--anytime``;
            default False).
        table: the H48 table (default: the largest present; h48h0k4 is built if none is).
        threads: solver threads (default: every core).
        symmetry: optimal: search one move prefix per symmetry class of a symmetric
            position (the default, True; False: every prefix, the CLI's
            ``--no-symmetry``; the same solutions).

    Returns:
        The :class:`Solution` (empty moves for a solved cube).

    Raises:
        PositionError: the text (``position`` or ``to``) is not a solvable position, or
            not a str.
        SettingsError: an argument is out of range, of the wrong type, or unknown.
        TableError: a table is missing or damaged and cannot be built.
        NoSolutionError: no solution within ``max_length`` / ``time_limit``.
        KeyboardInterrupt: interrupted; the search is stopped.
    """
    d = _native.solve(position, to, options, _dir(tables_dir))
    s = Solution._from_record(d)
    if s.error is not None:
        raise NoSolutionError(s.error)
    return s


def solve_many(
    positions: Iterable[str],
    *,
    tables_dir: Optional[PathLike] = None,
    progress: bool = False,
    **options: Unpack[SolveOptions],
) -> Iterator[Solution]:
    """Solves every position of an iterable, yielding one :class:`Solution` per item, in
    input order, as they are solved.

    ``positions`` may be a list, a file object (each line one position; trailing newlines
    are stripped) or a generator; it is read as the solver needs more work, so memory
    stays bounded however long it is. An item that is not a position yields a result
    with ``ok`` False and ``error`` set, in its place: the run goes on (so does an item
    that is no text: None, a number; bytes are read as a binary file's lines).
    ``progress`` (True or False) shows a progress bar on stderr (tqdm when installed,
    else a counter line). The other arguments are those of :func:`solve`. Settings and
    table errors are raised at once.
    """
    progress = flag("progress", progress)
    it = _native.SolveMany(positions, options, _dir(tables_dir))
    results = (Solution._from_record(d) for d in it)
    if progress:
        return _with_progress(results, positions)
    return results


def _with_progress(results: Iterator[Solution], positions: Iterable[str]) -> Iterator[Solution]:
    total = len(positions) if hasattr(positions, "__len__") else None  # type: ignore[arg-type]
    try:
        from tqdm import tqdm  # type: ignore[import-not-found]
    except ImportError:
        tqdm = None
    if tqdm is not None:
        yield from tqdm(results, total=total, unit="pos")
        return
    start = time.monotonic()
    last = 0.0
    n = 0
    for r in results:
        n += 1
        now = time.monotonic()
        if now - last >= 0.5:
            last = now
            of = f"/{total}" if total is not None else ""
            rate = n / max(now - start, 1e-9)
            sys.stderr.write(f"\r{n}{of} positions, {rate:.1f}/s")
            sys.stderr.flush()
        yield r
    rate = n / max(time.monotonic() - start, 1e-9)
    sys.stderr.write(f"\r{n} positions, {rate:.1f}/s\n")


def facelets(scramble: str) -> str:
    """The 54-character facelet string (URFDLB order) of a scramble (or facelet string)."""
    return _native.facelets(scramble)


def apply(position: str, moves: str) -> str:
    """The facelet string of ``position`` (scramble or facelets) after ``moves``."""
    return _native.apply(position, moves)


def is_solved_by(position: str, moves: Union[str, Iterable[str]]) -> bool:
    """Whether ``moves`` (a move string or a list of moves) solve ``position``."""
    text = moves if isinstance(moves, str) else " ".join(moves)
    return _native.is_solved_by(position, text)


def random_state(seed: Optional[int] = None) -> str:
    """A uniformly random position as a facelet string; a ``seed`` makes it repeatable."""
    return _native.random_state(seed)


def scramble(
    n: int,
    seed: Optional[int] = None,
    tables_dir: Optional[PathLike] = None,
) -> List[str]:
    """``n`` random-state scrambles, as the WCA makes them: each is a uniformly random state
    at least 2 moves from solved (WCA Regulation 4b3), written as a two-phase solution of
    its inverse (at most 20 moves), so that applying it to a solved cube gives the state.

    The same ``seed`` gives the same scrambles, here and in the CLI (``cubeswarm scramble
    --seed S``): scramble ``i`` of a seed is the same whatever ``n``. Without a seed they
    differ from call to call. Made on every core with the GIL released; the two-phase
    tables are built on first use, with a message.

    Raises:
        SettingsError: ``n`` or ``seed`` is not a whole number from 0 (``seed``: below 2**64).
        TableError: the two-phase tables are damaged and cannot be built.
        KeyboardInterrupt: interrupted; no scrambles are returned.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise SettingsError(f"n must be a whole number, 0 or more, not {n!r}")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64
    ):
        raise SettingsError(f"seed must be a whole number from 0 to 2**64 - 1, not {seed!r}")
    return _native.scramble(n, seed, _dir(tables_dir))


from . import kociemba, tables  # noqa: E402
from .cluster import Cluster  # noqa: E402
