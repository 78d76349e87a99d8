#!/usr/bin/env python3
# A small keyed charge service shipped beside its target file (target.yaml
# starts it through {{target_dir}}): POST /charges under Idempotency-Key,
# keys and listings per caller (Authorization); GET /charges?biz= lists the
# caller's own charges, GET /ledger?biz= every charge (the provider's view).
# Prints "listening on 127.0.0.1:PORT" once ready; stops on SIGTERM.
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

lock = threading.Lock()
keys = {}      # (tenant, key) -> (body, status, answer)
charges = []   # {"tenant", "biz", "amount", "txn_id"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, doc, headers=()):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlparse(self.path)
        biz = parse_qs(url.query).get("biz", [""])[0]
        tenant = self.headers.get("Authorization", "")
        with lock:
            if url.path == "/healthz":
                return self.answer(200, {"ok": True})
            if url.path == "/charges":
                mine = [c["txn_id"] for c in charges if c["biz"] == biz and c["tenant"] == tenant]
                return self.answer(200, {"count": len(mine), "txn_ids": mine})
            if url.path == "/ledger":
                every = [c["txn_id"] for c in charges if c["biz"] == biz]
                return self.answer(200, {"count": len(every), "txn_ids": every})
        self.answer(404, {"error": "no such route"})

    def do_POST(self):
        if urlparse(self.path).path != "/charges":
            return self.answer(404, {"error": "no such route"})
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        key = self.headers.get("Idempotency-Key")
        if not key:
            return self.answer(400, {"error": "Idempotency-Key required"})
        try:
            body = json.loads(raw)
        except ValueError:
            return self.answer(400, {"error": "not JSON"})
        tenant = self.headers.get("Authorization", "")
        with lock:
            stored = keys.get((tenant, key))
            if stored is not None:
                if stored[0] != body:
                    return self.answer(422, {"error": "key reused with another body"})
                return self.answer(stored[1], stored[2], [("Idempotent-Replayed", "true")])
            txn = "txn-%d" % (len(charges) + 1)
            charges.append({"tenant": tenant, "biz": body.get("biz"), "amount": body.get("amount"), "txn_id": txn})
            doc = {"txn_id": txn, "biz": body.get("biz"), "amount": body.get("amount")}
            keys[(tenant, key)] = (body, 201, doc)
        self.answer(201, doc)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("listening on 127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
