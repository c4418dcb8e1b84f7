"""A cubeswarm cluster driven from Python: the client library of ``cubeswarm solve
--coordinator URL`` (reconnection, the output file as a journal, resume)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, Optional, Union

from . import _native
from ._options import ClusterOptions, flag
from ._solution import Solution
from .errors import NoSolutionError

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Cluster"]

PathLike = Union[str, "os.PathLike[str]"]


class Cluster:
    """A cluster's coordinator at ``url`` (``http://host:port``, or ``https://`` with
    ``tls_ca``, the PEM file of the CA that signed its certificate), with its bearer
    ``token`` if it has one. ``connect_timeout``: seconds without a working connection
    before a run gives up (default 120; 0: never). ``wait_for_workers``: seconds the
    coordinator keeps a request whose table no connected worker holds before refusing it
    (default 0: refused at once); the CLI's ``--wait-for-workers``. The two are checked
    here (SettingsError); the attributes of the same names are read-only."""

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        tls_ca: Optional[PathLike] = None,
        connect_timeout: Optional[float] = None,
        wait_for_workers: Optional[float] = None,
    ) -> None:
        self._connection = _native.Connection(url, token, tls_ca, connect_timeout,
                                              wait_for_workers)

    @property
    def url(self) -> str:
        return self._connection.url

    @property
    def token(self) -> Optional[str]:
        return self._connection.token

    @property
    def tls_ca(self) -> Optional[str]:
        return self._connection.tls_ca

    @property
    def connect_timeout(self) -> Optional[float]:
        return self._connection.connect_timeout

    @property
    def wait_for_workers(self) -> Optional[float]:
        return self._connection.wait_for_workers

    def __repr__(self) -> str:
        return f"Cluster({self.url!r})"

    def status(self) -> Dict[str, Any]:
        """The coordinator's status: ``version``, counters (``positions``, ``jobs_done``,
        ...) and ``workers`` (each with its ``tables``, ``threads``, ``running``)."""
        return _native.cluster_status(self._connection)

    def solve(self, position: str, **options: Unpack[ClusterOptions]) -> Solution:
        """Solves one position on the cluster; as :func:`cubeswarm.solve` (its keywords
        but ``to``, ``tables_dir``, ``threads`` and ``symmetry``, which are a worker's and
        the coordinator's own; the same errors, and ClusterError when the cluster refuses
        or cannot be reached)."""
        run = _native.ClusterRun.one(self._connection, options, position)
        recs = [Solution._from_record(d) for d in run]
        if not recs:
            raise NoSolutionError("no record for the position")
        s = recs[0]
        if s.error is not None:
            raise NoSolutionError(s.error)
        return s

    def solve_many(
        self,
        positions: Union[Iterable[str], PathLike],
        *,
        output: Optional[PathLike] = None,
        resume: bool = False,
        **options: Unpack[ClusterOptions],
    ) -> Iterator[Solution]:
        """Solves positions on the cluster, yielding a :class:`Solution` per position in
        input order as the records arrive (a bad line: ``ok`` False, ``error`` set). The
        keywords are those of :meth:`solve`; settings errors are raised at once.

        ``positions``: an iterable of strings (streamed to the cluster as it is read), or
        the path of a file of positions (one per line; blanks and ``#`` comments
        skipped, as the CLI does). ``output``: the JSONL file the run journals to (kept);
        with ``resume=True`` a run cut short continues it, solving and yielding only the
        lines it does not hold yet (``positions`` must then be the same file).
        """
        resume = flag("resume", resume)
        if resume and output is None:
            raise ValueError("resume=True continues an output file: give output=")
        out = None if output is None else os.fspath(output)
        if isinstance(positions, (str, os.PathLike)):
            run = _native.ClusterRun.file(self._connection, options, os.fspath(positions),
                                          out, resume)
        elif resume:
            raise ValueError("resume=True checks the positions against the journal: "
                             "give the path of the file of positions")
        else:
            run = _native.ClusterRun.stream(self._connection, options, positions, out)
        return (Solution._from_record(d) for d in run)
