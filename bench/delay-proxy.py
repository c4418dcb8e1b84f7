#!/usr/bin/env python3
"""A TCP proxy that delays everything by a fixed time each way.

    bench/delay-proxy.py LISTEN_PORT TARGET_PORT DELAY_MS

Listens on 127.0.0.1:LISTEN_PORT; each connection is forwarded to 127.0.0.1:TARGET_PORT,
and every chunk read from either side is written to the other DELAY_MS after it was read
(in order). It stands in for `tc netem delay` where the kernel has no netem qdisc: the
one-way latency between a worker and its coordinator, as `bench split --latency` models
it. Threads, not asyncio: a thread's sleep keeps to tens of microseconds, an event loop's
timer to a millisecond.
"""
import queue
import socket
import sys
import threading
import time


def pump(src, dst, delay):
    q = queue.Queue()

    def send():
        while True:
            at, data = q.get()
            wait = at - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if not data:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            try:
                dst.sendall(data)
            except OSError:
                return

    t = threading.Thread(target=send, daemon=True)
    t.start()
    while True:
        try:
            data = src.recv(65536)
        except OSError:
            data = b""
        q.put((time.monotonic() + delay, data))
        if not data:
            return


def serve(conn, target, delay):
    try:
        up = socket.create_connection(("127.0.0.1", target))
    except OSError:
        conn.close()
        return
    for s in (conn, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=pump, args=(conn, up, delay), daemon=True).start()
    threading.Thread(target=pump, args=(up, conn, delay), daemon=True).start()


def main():
    listen, target, delay_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", listen))
    srv.listen(64)
    print(f"delay-proxy: 127.0.0.1:{listen} -> 127.0.0.1:{target}, {delay_ms} ms each way", flush=True)
    while True:
        conn, _ = srv.accept()
        serve(conn, target, delay_ms / 1000.0)


if __name__ == "__main__":
    main()
