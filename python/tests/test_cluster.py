"""Cluster: a real `cubeswarm coordinator` and `cubeswarm worker` (processes built by
cargo) on loopback, driven from Python."""

import os
import subprocess
import threading
import time

import pytest

import cubeswarm


def _wait_for(log_path, what, proc, limit=120.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        text = open(log_path, errors="replace").read()
        for line in text.splitlines():
            if what in line:
                return line.split(what, 1)[1]
        if proc.poll() is not None:
            raise AssertionError(f"process ended: {text}")
        time.sleep(0.05)
    raise AssertionError(f"no {what!r} in {open(log_path).read()}")


def _env(tables_dir):
    env = dict(os.environ, CUBESWARM_TABLES=str(tables_dir), RUST_LOG="info")
    env.pop("CUBESWARM_TOKEN", None)
    return env


def _start(binary, args, log, env, procs, wait_for):
    """Starts `binary args` logging to `log`, into `procs`; the text after `wait_for`."""
    p = subprocess.Popen([binary, *args], stderr=open(log, "w"),
                         stdout=subprocess.DEVNULL, env=env)
    procs.append(p)
    return _wait_for(log, wait_for, p)


@pytest.fixture(scope="module")
def cluster(binary, tables_dir, tmp_path_factory):
    d = tmp_path_factory.mktemp("cluster")
    env = _env(tables_dir)
    procs = []
    try:
        addr = _start(binary, ["coordinator", "--listen", "127.0.0.1:0"], d / "coordinator.log",
                      env, procs, "grpc listening on ").split()[0]
        url = f"http://{addr}"
        _start(binary, ["worker", "--coordinator", url, "--threads", "2"], d / "worker.log",
               env, procs, "connected to coordinator")
        yield cubeswarm.Cluster(url, connect_timeout=30)
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(30)


def test_status_shows_the_worker(cluster):
    st = cluster.status()
    assert len(st["workers"]) == 1
    assert "twophase" in st["workers"][0]["tables"]
    assert "h48h0k4" in st["workers"][0]["tables"]


def test_solve_both_methods(cluster):
    s = cluster.solve("R U R' U'")
    assert s.length == 4 and s.optimal
    assert cubeswarm.is_solved_by("R U R' U'", s.moves)
    f = cubeswarm.random_state(3)
    s = cluster.solve(f, method="twophase")
    assert cubeswarm.is_solved_by(f, s.moves) and s.length <= 20
    # --anytime reaches the cluster: at least as short as the first solution.
    best = cluster.solve(f, method="twophase", anytime=True, time_limit=0.3)
    assert cubeswarm.is_solved_by(f, best.moves) and best.length <= s.length
    with pytest.raises(cubeswarm.PositionError):
        cluster.solve("R U Q")
    with pytest.raises(cubeswarm.NoSolutionError):
        cluster.solve("R U F", max_length=2)


def test_solve_many_with_bad_lines_then_resume(cluster, tmp_path):
    items = [cubeswarm.random_state(i) for i in range(30)]
    items[4] = "R U Q"
    items[17] = "not a cube"
    out = tmp_path / "out.jsonl"
    got = list(cluster.solve_many(iter(items), method="twophase", output=out))
    assert [r.input for r in got] == items
    for item, r in zip(items, got):
        if r.ok:
            assert cubeswarm.is_solved_by(item, r.moves)
        else:
            assert item in ("R U Q", "not a cube") and r.error
    assert sum(not r.ok for r in got) == 2
    # Resume over the same input and a journal cut after 20 records: only the lines
    # missing from it (and the last kept one, which a crash may have torn) are solved
    # and yielded, and the journal ends up whole.
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(items) + "\n")
    lines = out.read_text().splitlines(keepends=True)
    assert len(lines) == len(items)
    out.write_text("".join(lines[:20]))
    again = list(cluster.solve_many(inp, method="twophase", output=out, resume=True))
    assert len(again) in (10, 11), [r.input for r in again]
    assert [r.input for r in again] == items[len(items) - len(again):]
    assert len(out.read_text().splitlines()) == len(items)
    # A journal that holds every line: only its last record (which a crash may have
    # torn) is solved again and yielded.
    last = list(cluster.solve_many(inp, method="twophase", output=out, resume=True))
    assert [r.input for r in last] == items[-1:]
    assert len(out.read_text().splitlines()) == len(items)


def test_an_item_that_is_no_text_is_the_error_a_local_run_gives(cluster, tables_dir, tmp_path):
    items = ["R U", None, "F \udcff", b"F2 D'", 7, "L"]
    out = tmp_path / "out.jsonl"
    got = list(cluster.solve_many(items, method="twophase", output=out))
    local = list(cubeswarm.solve_many(items, method="twophase", tables_dir=tables_dir))

    def seen(rs):
        return [(r.line, r.input, r.ok, r.error) for r in rs]

    assert seen(got) == seen(local)
    assert [r.ok for r in got] == [True, False, False, True, False, True]
    assert got[1].error == "expected a str, not NoneType"
    assert len(out.read_text().splitlines()) == len(items)


def test_wait_for_workers_keeps_a_request_until_a_worker_joins(binary, tables_dir, tmp_path):
    # A coordinator with no worker: without wait_for_workers the request is refused at
    # once; with it, it waits, and a worker joining later solves it.
    env = _env(tables_dir)
    procs = []
    try:
        url = "http://" + _start(binary, ["coordinator", "--listen", "127.0.0.1:0"],
                                 tmp_path / "coordinator.log", env, procs,
                                 "grpc listening on ").split()[0]
        with pytest.raises(cubeswarm.ClusterError, match="twophase"):
            cubeswarm.Cluster(url, connect_timeout=30).solve("R U", method="twophase")
        patient = cubeswarm.Cluster(url, connect_timeout=30, wait_for_workers=600)
        runs = patient.solve_many(["R U", "F2"], method="twophase")
        first = []
        t = threading.Thread(target=lambda: first.extend(runs))
        t.start()
        # The request is open at the coordinator (its status lists it) before any worker
        # exists.
        end = time.monotonic() + 120
        while not patient.status()["requests"]:
            assert time.monotonic() < end and t.is_alive(), "the request was not kept"
            time.sleep(0.05)
        # Not waited for: the request is what waits for it.
        procs.append(subprocess.Popen([binary, "worker", "--coordinator", url, "--threads", "1"],
                                      stderr=open(tmp_path / "worker.log", "w"),
                                      stdout=subprocess.DEVNULL, env=env))
        t.join(120)
        assert [r.input for r in first] == ["R U", "F2"]
        assert all(cubeswarm.is_solved_by(r.input, r.moves) for r in first)
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(30)


def test_an_unreachable_cluster_is_a_cluster_error():
    c = cubeswarm.Cluster("http://127.0.0.1:1", connect_timeout=0.5)
    with pytest.raises(cubeswarm.ClusterError):
        c.solve("R U", method="twophase")
    with pytest.raises(cubeswarm.ClusterError):
        c.status()
