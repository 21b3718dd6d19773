#!/usr/bin/env python3
"""A loopback HTTP proxy that logs every request the cluster view makes.

proxy.py --upstream http://127.0.0.1:9090 --log FILE [--port-file FILE]

Listens on 127.0.0.1 (a free port, written to --port-file), forwards each GET
to the upstream unchanged (headers included, so compression is what the
client asked for) and streams the answer back. One JSON line per request goes
to --log: path, PromQL, the answer's bytes on the wire, its encoding, HTTP
status and seconds to the last byte. Benchmark tooling only.
"""

import argparse
import http.client
import http.server
import json
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te",
              "trailer", "transfer-encoding", "upgrade"}


def make_handler(upstream, log, lock):
    up = urllib.parse.urlsplit(upstream)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # the JSON log is the log
            pass

        def do_GET(self):
            started = time.monotonic()
            conn = http.client.HTTPConnection(up.hostname, up.port,
                                              timeout=600)
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in HOP_BY_HOP and k.lower() != "host"}
            conn.request("GET", self.path, headers=headers)
            resp = conn.getresponse()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            size = 0
            while True:
                chunk = resp.read(1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            conn.close()
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            entry = {"path": urllib.parse.urlsplit(self.path).path,
                     "query": query.get("query", [""])[0],
                     "bytes": size,
                     "encoding": resp.getheader("Content-Encoding", ""),
                     "status": resp.status,
                     "seconds": round(time.monotonic() - started, 3)}
            with lock:
                log.write(json.dumps(entry) + "\n")
                log.flush()

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    log = open(args.log, "a")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), make_handler(args.upstream, log, threading.Lock()))
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
