"""A cubeswarm cluster driven from Python: the client library of ``cubeswarm solve
--coordinator URL`` (reconnection, the output file as a journal, resume)."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

from . import _native
from ._solution import Solution
from .errors import NoSolutionError

__all__ = ["Cluster"]

PathLike = Union[str, "os.PathLike[str]"]


def _solution(recs: List[Dict[str, Any]]) -> Solution:
    """One position's JSONL records (one per solution) as a Solution."""
    first = recs[0]
    if "error" in first:
        return Solution(moves=[], input=first["input"], line=int(first["id"]), error=first["error"])
    sols = [r["solution"].split() for r in recs]
    return Solution(
        moves=sols[0],
        optimal=bool(first["optimal"]),
        nodes=int(first["nodes"]),
        seconds=float(first["millis"]) / 1e3,
        solutions=sols,
        input=first["input"],
        line=int(first["id"]),
        note=first.get("note"),
    )


def _grouped(lines: Iterable[str]) -> Iterator[List[Dict[str, Any]]]:
    group: List[Dict[str, Any]] = []
    for line in lines:
        rec = json.loads(line)
        if group and group[0]["id"] != rec["id"]:
            yield group
            group = []
        group.append(rec)
    if group:
        yield group


class Cluster:
    """A cluster's coordinator at ``url`` (``http://host:port``, or ``https://`` with
    ``tls_ca``, the PEM file of the CA that signed its certificate), with its bearer
    ``token`` if it has one. ``connect_timeout``: seconds without a working connection
    before a run gives up (default 120; 0: never)."""

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        tls_ca: Optional[PathLike] = None,
        connect_timeout: Optional[float] = None,
    ) -> None:
        self.url = url
        self.token = token
        self.tls_ca = None if tls_ca is None else os.fspath(tls_ca)
        self.connect_timeout = connect_timeout

    def __repr__(self) -> str:
        return f"Cluster({self.url!r})"

    def status(self) -> Dict[str, Any]:
        """The coordinator's status: ``version``, counters (``positions``, ``jobs_done``,
        ...) and ``workers`` (each with its ``tables``, ``threads``, ``running``)."""
        return _native.cluster_status(self.url, self.token, self.tls_ca)

    def _run(self, settings: Dict[str, Any], position: Optional[str], input: Optional[str],
             output: str, resume: bool) -> Dict[str, Any]:
        return _native.cluster_run(
            self.url, self.token, self.tls_ca,
            settings["method"], settings["max_length"], settings["min_length"],
            settings["solutions"], settings["time_limit"], settings["table"],
            position, input, output, resume, self.connect_timeout,
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
        table: Optional[str] = None,
    ) -> Solution:
        """Solves one position on the cluster; as :func:`cubeswarm.solve` (raises the
        same errors, and ClusterError when the cluster refuses or cannot be reached)."""
        settings = dict(method=method, max_length=max_length, min_length=min_length,
                        solutions=solutions, time_limit=time_limit, table=table)
        with tempfile.TemporaryDirectory(prefix="cubeswarm-") as tmp:
            out = os.path.join(tmp, "out.jsonl")
            self._run(settings, position, None, out, False)
            with open(out, encoding="utf-8") as f:
                groups = list(_grouped(line for line in f if line.strip()))
        if not groups:
            raise NoSolutionError("no record for the position")
        s = _solution(groups[0])
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
        table: Optional[str] = None,
        output: Optional[PathLike] = None,
        resume: bool = False,
    ) -> Iterator[Solution]:
        """Solves positions on the cluster, yielding a :class:`Solution` per position in
        input order as the records arrive (a bad line: ``ok`` False, ``error`` set).

        ``positions``: an iterable of strings (written to a temporary file first), or
        the path of a file of positions (one per line; blanks and ``#`` comments
        skipped, as the CLI does). ``output``: the JSONL file the run journals to (kept);
        with ``resume=True`` a run cut short continues it, skipping the lines it already
        holds (``positions`` must then be the same file).
        """
        settings = dict(method=method, max_length=max_length, min_length=min_length,
                        solutions=solutions, time_limit=time_limit, table=table)
        if resume and output is None:
            raise ValueError("resume=True continues an output file: give output=")
        tmp = tempfile.TemporaryDirectory(prefix="cubeswarm-")
        try:
            if isinstance(positions, (str, os.PathLike)):
                input_path = os.fspath(positions)
            else:
                input_path = os.path.join(tmp.name, "input.txt")
                with open(input_path, "w", encoding="utf-8") as f:
                    for p in positions:
                        f.write(str(p).replace("\r", " ").replace("\n", " ") + "\n")
            out = os.fspath(output) if output is not None else os.path.join(tmp.name, "out.jsonl")
            yield from self._tail(settings, input_path, out, resume)
        finally:
            tmp.cleanup()

    def _tail(self, settings: Dict[str, Any], input_path: str, out: str,
              resume: bool) -> Iterator[Solution]:
        """Runs the request on a thread and yields the journal's records as they come."""
        box: Dict[str, BaseException] = {}

        def work() -> None:
            try:
                self._run(settings, None, input_path, out, resume)
            except BaseException as e:  # handed to the caller
                box["error"] = e

        t = threading.Thread(target=work, daemon=True)
        t.start()
        pos = 0
        buf = ""
        group: List[Dict[str, Any]] = []
        while True:
            running = t.is_alive()
            if os.path.exists(out):
                with open(out, encoding="utf-8") as f:
                    f.seek(pos)
                    chunk = f.read()
                    pos = f.tell()
                buf += chunk
                *lines, buf = buf.split("\n")
                for line in lines:
                    if not line.strip():
                        continue
                    rec = json.loads(line)
                    if group and group[0]["id"] != rec["id"]:
                        yield _solution(group)
                        group = []
                    group.append(rec)
            if not running:
                break
            time.sleep(0.02)
        t.join()
        if "error" in box:
            raise box["error"]
        if group:
            yield _solution(group)
