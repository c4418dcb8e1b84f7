"""The keywords of a solve, listed once.

:class:`ClusterOptions` (what a cluster's runs take) and :class:`SolveOptions` (those and
the local solver's own) are the typed listing the functions' ``**options`` use: a type
checker knows each keyword and its type from them, and the native module, which holds the
defaults and checks every value (``python/src/request.rs``), refuses a key it does not
know by its name. What each keyword means is said in :func:`cubeswarm.solve`.
"""

from __future__ import annotations

from typing import Optional, TypedDict

from .errors import SettingsError

__all__ = ["ClusterOptions", "SolveOptions", "flag"]


class ClusterOptions(TypedDict, total=False):
    """The keywords of a solve on a cluster, and locally (see :func:`cubeswarm.solve`)."""

    method: str
    max_length: int
    min_length: int
    solutions: Optional[int]
    time_limit: Optional[float]
    anytime: bool
    table: Optional[str]


class SolveOptions(ClusterOptions, total=False):
    """The keywords of a local solve: those of :class:`ClusterOptions` and the local
    solver's own (a cluster's workers and coordinator have theirs)."""

    threads: Optional[int]
    symmetry: bool


def flag(name: str, value: object) -> bool:
    """The value of the Python-side bool keyword ``name`` (``progress``, ``resume``): True
    or False, as the native module takes the flags of a solve, else a SettingsError."""
    if not isinstance(value, bool):
        raise SettingsError(f"{name} must be True or False, not {value!r}")
    return value
