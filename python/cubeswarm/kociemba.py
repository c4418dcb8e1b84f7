"""A drop-in for the ``kociemba`` package: ``solve(cubestring, patternstring=None,
max_depth=20) -> str``, with cubeswarm's two-phase solver.

As the ``kociemba`` package: the cube is a 54-character facelet string (URFDLB order),
the answer a move string of at most ``max_depth`` moves that takes the cube to the solved
cube, or to ``patternstring`` when given; invalid input raises ``ValueError``. (Unlike
it, a solved cube gets an empty string.)
"""

from __future__ import annotations

from typing import Optional

from . import _native
from .errors import CubeswarmError

__all__ = ["solve"]


def _check(name: str, s: object) -> str:
    if not isinstance(s, str):
        raise ValueError(f"{name} must be a str, not {type(s).__name__}")
    if len(s) != 54:
        raise ValueError(f"{name} must be 54 facelets (URFDLB order), not {len(s)} characters")
    return s


def solve(cubestring: str, patternstring: Optional[str] = None, max_depth: int = 20) -> str:
    """A solution of ``cubestring`` of at most ``max_depth`` moves (to ``patternstring``
    when given), as a move string. Raises ValueError for an invalid cube or pattern, or
    when no solution of at most ``max_depth`` moves is found."""
    cube = _check("cubestring", cubestring)
    pattern = None if patternstring is None else _check("patternstring", patternstring)
    try:
        if not isinstance(max_depth, int) or max_depth < 0:
            raise ValueError("max_depth must be a non-negative int")
        d = _native.solve(cube, pattern, dict(method="twophase", max_length=max_depth,
                                               threads=1), None)
    except CubeswarmError as e:
        raise ValueError(str(e)) from None
    if d["error"] is not None:
        raise ValueError(d["error"])
    return d["solutions"][0]
