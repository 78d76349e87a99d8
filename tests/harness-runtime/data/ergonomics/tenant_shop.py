#!/usr/bin/env python3
# A small keyed charge service shipped beside its target file (target.yaml
# starts it through {{target_dir}}): POST /charges under Idempotency-Key,
# keys and listings per caller (Authorization); GET /charges?biz= lists the
# caller's own charges, GET /ledger?biz= every charge (the provider's view).
# A nightly settlement job answers totals, never rows: POST /jobs/J/run
# {"from", "to", "fail_after"?} settles rows [from, to) in partitions of 10,
# skipping a partition already marked; GET /jobs/J/result gives the row
# count, the amount settled and one marker per partition with the service's
# own digest (SHA-1 of "id:amount" lines).
# Prints "listening on 127.0.0.1:PORT" once ready; stops on SIGTERM.
import hashlib
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

lock = threading.Lock()
keys = {}      # (tenant, key) -> (body, status, answer)
charges = []   # {"tenant", "biz", "amount", "txn_id"}
jobs = {}      # job -> {"rows": {id: amount}, "parts": {p: marker}}
PARTITION = 10


def run_job(job, start, end, fail_after):
    """Settles [start, end); False when made to fail after fail_after rows."""
    state = jobs.setdefault(job, {"rows": {}, "parts": {}})
    written = 0
    for p in range(start // PARTITION, (end + PARTITION - 1) // PARTITION):
        if p in state["parts"]:
            continue
        ids = range(max(start, p * PARTITION), min(end, (p + 1) * PARTITION))
        for i in ids:
            if fail_after is not None and written == fail_after:
                return False  # the partition in progress stays unmarked
            state["rows"][i] = (i * 7919) % 10007 + 1
            written += 1
        digest = hashlib.sha1("".join("%d:%d\n" % (i, state["rows"][i]) for i in ids).encode()).hexdigest()
        state["parts"][p] = {"part": p, "first": ids[0], "end": ids[-1] + 1, "written": len(ids), "digest": digest}
    return True


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
            parts = url.path.split("/")
            if len(parts) == 4 and parts[1] == "jobs" and parts[3] == "result":
                state = jobs.get(parts[2])
                if state is None:
                    return self.answer(404, {"error": "job never ran"})
                return self.answer(200, {"total": {"rows": len(state["rows"]), "amount": sum(state["rows"].values())},
                                         "partitions": sorted(state["parts"].values(), key=lambda m: m["first"])})
            if url.path == "/ledger":
                every = [c["txn_id"] for c in charges if c["biz"] == biz]
                return self.answer(200, {"count": len(every), "txn_ids": every})
        self.answer(404, {"error": "no such route"})

    def do_POST(self):
        parts = urlparse(self.path).path.split("/")
        if len(parts) == 4 and parts[1] == "jobs" and parts[3] == "run":
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0") or 0)) or b"{}")
            with lock:
                done = run_job(parts[2], int(body["from"]), int(body["to"]), body.get("fail_after"))
            return self.answer(200 if done else 500, {"done": done})
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
