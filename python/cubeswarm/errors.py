"""The exceptions of cubeswarm. Every one derives from :class:`CubeswarmError`; the
errors of bad input also derive from :class:`ValueError`."""

__all__ = [
    "CubeswarmError",
    "PositionError",
    "SettingsError",
    "TableError",
    "NoSolutionError",
    "ClusterError",
]


class CubeswarmError(Exception):
    """Base class of every cubeswarm error."""


class PositionError(CubeswarmError, ValueError):
    """The text is not a position (bad move, bad facelet string, unsolvable cube)."""


class SettingsError(CubeswarmError, ValueError):
    """An argument is not acceptable (method, lengths, solutions, time limit, table)."""


class TableError(CubeswarmError):
    """A table is missing, damaged, or could not be built or opened."""


class NoSolutionError(CubeswarmError):
    """The position has no solution within the limits asked (max_length, time_limit)."""


class ClusterError(CubeswarmError):
    """The cluster refused the request or could not be reached."""
