#!/usr/bin/env python3
"""A tiny HTTP server for the hardening tests, started through a shell
wrapper (`sh -c "python3 wrapped_server.py ..."`): it writes its own pid to
--pid-file, listens on 127.0.0.1 (--port, 0 = any) and prints the port.

  GET  /healthz          200
  GET  /orders?...       {"count": N}: N = POSTs answered 201 so far
  POST /orders           201 {"id": ...}, or --status S for every POST
  GET  /endless          200 with a body that never ends (chunks forever)
  GET  /big?mb=N         200 with an N MiB body (Content-Length)
"""
import argparse, http.server, json, os, socketserver, sys

p = argparse.ArgumentParser()
p.add_argument("--pid-file", required=True)
p.add_argument("--port", type=int, default=0)
p.add_argument("--status", type=int, default=201)
args = p.parse_args()
with open(args.pid_file, "w") as f:
    f.write(str(os.getpid()))
created = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/healthz":
            return self.answer(200, {"ok": True})
        if self.path.startswith("/orders"):
            return self.answer(200, {"count": created})
        if self.path == "/endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except (BrokenPipeError, ConnectionResetError):
                return
        if self.path.startswith("/big"):
            mb = int(self.path.split("mb=")[1])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(mb << 20))
            self.end_headers()
            chunk = b"y" * (1 << 20)
            try:
                for _ in range(mb):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                return
            return
        self.answer(404, {"error": "no such path"})

    def do_POST(self):
        global created
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        if self.path.startswith("/orders") and args.status == 201:
            created += 1
            return self.answer(201, {"id": "o-%d" % created})
        self.answer(args.status, {"error": "refused"})


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64  # a burst of 24 connects at once (the default backlog 5 reset some)


srv = Server(("127.0.0.1", args.port), Handler)
print("listening on 127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
