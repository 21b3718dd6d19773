#!/usr/bin/env python3
"""Scrape latency of an agent while hostile clients hold idle connections.

Holds N idle TCP connections to the agent (reconnecting any the server
drops, so N stay held, as in issue 15), then times GET /metrics and
GET /healthz on fresh connections, like a scraper. Idle connections come
from 127.0.0.2, 127.0.0.3, ... (--per-source each), the scrapes from
127.0.0.1: on Linux all of 127.0.0.0/8 is loopback, so the per-address
connection cap sees many hostile clients and one scraper.

Prints one JSON object: {"idle": N, "held": n, "metrics": {...},
"healthz": {...}} with p50/p99/max in milliseconds and an error count.
"""
import argparse
import json
import resource
import selectors
import socket
import statistics
import threading
import time


def connect(port, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    return s


class IdleHolder(threading.Thread):
    """Keeps `count` connections open; replaces those the server closes."""

    def __init__(self, port, count, per_source):
        super().__init__(daemon=True)
        self.port, self.count, self.per_source = port, count, per_source
        self.sel = selectors.DefaultSelector()
        self.stop = threading.Event()
        self.reconnects = 0
        self.failures = 0
        self.held = 0

    def source(self, i):
        n = 2 + i // self.per_source
        return "127.0.%d.%d" % (n // 250, 2 + n % 250)

    def open_one(self, i):
        try:
            s = connect(self.port, self.source(i))
        except OSError:
            self.failures += 1
            return False
        self.sel.register(s, selectors.EVENT_READ, i)
        self.held += 1
        return True

    def fill(self):
        for i in range(self.count):
            self.open_one(i)

    def run(self):
        while not self.stop.is_set():
            for key, _ in self.sel.select(timeout=0.05):
                s, i = key.fileobj, key.data
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if data:
                    continue
                self.sel.unregister(s)
                s.close()
                self.held -= 1
                self.reconnects += 1
                self.open_one(i)

    def close(self):
        self.stop.set()
        self.join()
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()


def scrape(port, path, timeout):
    start = time.perf_counter()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(("GET %s HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n\r\n"
                   % path).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    finally:
        s.close()
    if not data.startswith(b"HTTP/1.1 200"):
        return None
    return (time.perf_counter() - start) * 1000


def summarize(samples, errors):
    if not samples:
        return {"n": 0, "errors": errors}
    ordered = sorted(samples)

    def pct(p):
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {"n": len(samples), "errors": errors,
            "p50_ms": round(statistics.median(ordered), 2),
            "p99_ms": round(pct(0.99), 2), "max_ms": round(ordered[-1], 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--per-source", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--settle", type=float, default=1.0)
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, args.idle + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    holder = IdleHolder(args.port, args.idle, args.per_source)
    holder.fill()
    holder.start()
    time.sleep(args.settle)
    result = {"idle": args.idle}
    for path in ("/metrics", "/healthz"):
        samples, errors = [], 0
        for _ in range(args.requests):
            ms = scrape(args.port, path, args.timeout)
            if ms is None:
                errors += 1
            else:
                samples.append(ms)
        result[path.strip("/")] = summarize(samples, errors)
    result["held"] = holder.held
    result["reconnects"] = holder.reconnects
    result["connect_failures"] = holder.failures
    holder.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
