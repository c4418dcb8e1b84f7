"""KeyboardInterrupt stops a solve (and a solve_many) within a fraction of a second:
a SIGINT is sent to this process while a long search runs."""

import os
import signal
import threading
import time

import pytest

import cubeswarm

# A 20-move position: an optimal solve with the small test table runs far longer than
# this test waits.
HARD = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"


@pytest.fixture(autouse=True)
def _ctrl_c_raises():
    # Python turns SIGINT into KeyboardInterrupt only if SIGINT was not ignored when it
    # started, and a test run started in the background by a non-interactive shell
    # inherits it ignored: put the handler a user's terminal session would have.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _interrupt_after(seconds):
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_keyboard_interrupt_stops_solve(tables_dir):
    _interrupt_after(0.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        cubeswarm.solve(HARD, table="h48h0k4", threads=1, tables_dir=tables_dir)
    stopped = time.monotonic() - start
    # Loose bound: the search would run minutes; stopping took well under a second here.
    assert stopped < 10, stopped
    # The solver is usable again at once.
    s = cubeswarm.solve("R U", tables_dir=tables_dir)
    assert cubeswarm.is_solved_by("R U", s.moves)


def test_keyboard_interrupt_stops_solve_many(tables_dir):
    _interrupt_after(0.5)
    got = []
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        for r in cubeswarm.solve_many(["R U", HARD, "F"], table="h48h0k4", threads=1,
                                      tables_dir=tables_dir):
            got.append(r.input)
    assert time.monotonic() - start < 10
    assert got == ["R U"]
