"""The native module (Rust, PyO3). Use the typed API of the cubeswarm package instead."""

from typing import Any, Dict, Iterable, Iterator, List, Optional

def facelets(position: str) -> str: ...
def apply(position: str, moves_text: str) -> str: ...
def is_solved_by(position: str, moves_text: str) -> bool: ...
def random_state(seed: Optional[int] = None) -> str: ...
def relative(position: str, target: str) -> str: ...
def solve(
    position: str,
    method: str,
    max_length: int,
    min_length: int,
    solutions: Optional[int],
    time_limit: Optional[float],
    table: Optional[str],
    threads: Optional[int],
    tables_dir: Optional[str],
) -> Dict[str, Any]: ...

class SolveMany(Iterator[Dict[str, Any]]):
    def __init__(
        self,
        positions: Iterable[str],
        method: str,
        max_length: int,
        min_length: int,
        solutions: Optional[int],
        time_limit: Optional[float],
        table: Optional[str],
        threads: Optional[int],
        tables_dir: Optional[str],
    ) -> None: ...
    def __iter__(self) -> "SolveMany": ...
    def __next__(self) -> Dict[str, Any]: ...
    def close(self) -> None: ...

class ClusterRun:
    def __init__(
        self,
        url: str,
        token: Optional[str],
        tls_ca: Optional[str],
        method: str,
        max_length: int,
        min_length: int,
        solutions: Optional[int],
        time_limit: Optional[float],
        table: Optional[str],
        position: Optional[str],
        positions: Optional[Iterable[str]],
        input: Optional[str],
        output: Optional[str],
        resume: bool,
        connect_timeout: Optional[float],
    ) -> None: ...
    def __iter__(self) -> "ClusterRun": ...
    def __next__(self) -> Dict[str, Any]: ...
    @property
    def summary(self) -> Optional[Dict[str, Any]]: ...

def cluster_status(url: str, token: Optional[str], tls_ca: Optional[str]) -> Dict[str, Any]: ...
def tables_dir(tables_dir: Optional[str] = None) -> str: ...
def tables_list(tables_dir: Optional[str] = None) -> List[Dict[str, Any]]: ...
def tables_build(name: str, tables_dir: Optional[str] = None) -> str: ...
def tables_verify(name: str, tables_dir: Optional[str] = None) -> None: ...
def scramble(n: int, seed: Optional[int] = None, tables_dir: Optional[str] = None) -> List[str]: ...
