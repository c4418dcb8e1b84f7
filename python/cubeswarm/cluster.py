"""A cubeswarm cluster driven from Python: the client library of ``cubeswarm solve
--coordinator URL`` (reconnection, the output file as a journal, resume)."""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, Iterator, Optional, Union

from . import _native
from ._solution import Solution
from .errors import NoSolutionError

__all__ = ["Cluster"]

PathLike = Union[str, "os.PathLike[str]"]


class Cluster:
    """A cluster's coordinator at ``url`` (``http://host:port``, or ``https://`` with
    ``tls_ca``, the PEM file of the CA that signed its certificate), with its bearer
    ``token`` if it has one. ``connect_timeout``: seconds without a working connection
    before a run gives up (default 120; 0: never). ``wait_for_workers``: seconds the
    coordinator keeps a request whose table no connected worker holds before refusing it
    (default 0: refused at once); the CLI's ``--wait-for-workers``."""

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        tls_ca: Optional[PathLike] = None,
        connect_timeout: Optional[float] = None,
        wait_for_workers: Optional[float] = None,
    ) -> None:
        self.url = url
        self.token = token
        self.tls_ca = None if tls_ca is None else os.fspath(tls_ca)
        self.connect_timeout = connect_timeout
        self.wait_for_workers = wait_for_workers

    def __repr__(self) -> str:
        return f"Cluster({self.url!r})"

    def status(self) -> Dict[str, Any]:
        """The coordinator's status: ``version``, counters (``positions``, ``jobs_done``,
        ...) and ``workers`` (each with its ``tables``, ``threads``, ``running``)."""
        return _native.cluster_status(self.url, self.token, self.tls_ca)

    def _records(self, settings: Dict[str, Any], position: Optional[str] = None,
                 positions: Optional[Iterable[str]] = None, input: Optional[str] = None,
                 output: Optional[str] = None, resume: bool = False) -> Iterator[Dict[str, Any]]:
        return _native.ClusterRun(
            self.url, self.token, self.tls_ca, settings,
            position, positions, input, output, resume, self.connect_timeout,
            self.wait_for_workers,
        )

    def solve(
        self,
        position: str,
        *,
        method: str = "optimal",
        max_length: int = 20,
        min_length: int = 0,
        solutions: Optional[int] = 1,
        time_limit: Optional[float] = None,
        anytime: bool = False,
        table: Optional[str] = None,
    ) -> Solution:
        """Solves one position on the cluster; as :func:`cubeswarm.solve` (raises the
        same errors, and ClusterError when the cluster refuses or cannot be reached)."""
        settings = dict(method=method, max_length=max_length, min_length=min_length,
                        solutions=solutions, time_limit=time_limit, anytime=anytime,
                        table=table)
        recs = [Solution._from_record(d) for d in self._records(settings, position=position)]
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
        method: str = "optimal",
        max_length: int = 20,
        min_length: int = 0,
        solutions: Optional[int] = 1,
        time_limit: Optional[float] = None,
        anytime: bool = False,
        table: Optional[str] = None,
        output: Optional[PathLike] = None,
        resume: bool = False,
    ) -> Iterator[Solution]:
        """Solves positions on the cluster, yielding a :class:`Solution` per position in
        input order as the records arrive (a bad line: ``ok`` False, ``error`` set).

        ``positions``: an iterable of strings (streamed to the cluster as it is read), or
        the path of a file of positions (one per line; blanks and ``#`` comments
        skipped, as the CLI does). ``output``: the JSONL file the run journals to (kept);
        with ``resume=True`` a run cut short continues it, solving and yielding only the
        lines it does not hold yet (``positions`` must then be the same file).
        """
        settings = dict(method=method, max_length=max_length, min_length=min_length,
                        solutions=solutions, time_limit=time_limit, anytime=anytime,
                        table=table)
        if resume and output is None:
            raise ValueError("resume=True continues an output file: give output=")
        out = None if output is None else os.fspath(output)
        if isinstance(positions, (str, os.PathLike)):
            records = self._records(settings, input=os.fspath(positions), output=out,
                                    resume=resume)
        else:
            if resume:
                raise ValueError("resume=True checks the positions against the journal: "
                                 "give the path of the file of positions")
            records = self._records(settings, positions=positions, output=out)
        for d in records:
            yield Solution._from_record(d)
