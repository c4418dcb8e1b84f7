"""The result of solving one position."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

__all__ = ["Solution"]


@dataclass(frozen=True)
class Solution:
    """The solution of one position.

    ``str(solution)`` is the move string (empty for a solved cube). In results of
    :func:`cubeswarm.solve_many`, a line that could not be solved has ``ok`` False and
    ``error`` set (the CLI's message); its ``moves`` are empty.
    """

    moves: List[str]
    """The first (shortest) solution, one move per item ("R", "U2", "F'")."""
    optimal: bool = False
    """``moves`` is proved optimal: no shorter solution exists (a solution of
    ``solutions`` is optimal when it is as short)."""
    nodes: int = 0
    """Search nodes visited."""
    seconds: float = 0.0
    """Time spent on this position."""
    solutions: List[List[str]] = field(default_factory=list)
    """Every solution found (more than one when ``solutions=`` asked for more)."""
    input: str = ""
    """The position as given."""
    line: int = 0
    """Its 1-based place in the input (solve_many), 1 for solve."""
    note: Optional[str] = None
    """A remark of the solver (time limit reached, ...)."""
    error: Optional[str] = None
    """Why there is no solution (solve_many), else None."""

    @property
    def length(self) -> int:
        """Number of moves of the first solution."""
        return len(self.moves)

    @property
    def ok(self) -> bool:
        """Whether the position was solved."""
        return self.error is None

    def __str__(self) -> str:
        return " ".join(self.moves)

    @classmethod
    def _from_record(cls, d: Dict[str, Any]) -> "Solution":
        sols = [s.split() for s in d["solutions"]]
        return cls(
            moves=sols[0] if sols else [],
            optimal=bool(d["optimal"]),
            nodes=int(d["nodes"]),
            seconds=float(d["millis"]) / 1000.0,
            solutions=sols,
            input=d["input"],
            line=int(d["id"]),
            note=d.get("note"),
            error=d.get("error"),
        )
