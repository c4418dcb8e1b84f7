"""The pruning tables, in the CLI's directory (``$CUBESWARM_TABLES``, else
``$XDG_DATA_HOME/cubeswarm/tables``, else ``~/.local/share/cubeswarm/tables``)."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Union

from . import _native

__all__ = ["directory", "list", "build", "verify"]

_list = list
PathLike = Union[str, "os.PathLike[str]"]


def _dir(tables_dir: Optional[PathLike]) -> Optional[str]:
    return None if tables_dir is None else os.fspath(tables_dir)


def directory(tables_dir: Optional[PathLike] = None) -> str:
    """The tables directory in use."""
    return os.fspath(_native.tables_dir(_dir(tables_dir)))


def list(tables_dir: Optional[PathLike] = None) -> List[Dict[str, object]]:  # noqa: A001
    """Every table file cubeswarm knows: ``name``, ``status`` ("present", "missing",
    "bad"), ``path``, ``bytes`` (the expected size when missing), ``problem``."""
    rows = _native.tables_list(_dir(tables_dir))
    for r in rows:
        r["path"] = os.fspath(r["path"])
    return _list(rows)


def build(name: str, tables_dir: Optional[PathLike] = None) -> str:
    """Builds a table (``"twophase"``, ``"h48h0k4"``, ... or one file such as
    ``"cocsep"``), printing progress lines on stderr; returns its path."""
    return os.fspath(_native.tables_build(name, _dir(tables_dir)))


def verify(name: str, tables_dir: Optional[PathLike] = None) -> None:
    """Checks a table's files (checksum and distribution); raises TableError naming the
    file that fails."""
    _native.tables_verify(name, _dir(tables_dir))
