#!/usr/bin/env python3
"""A small order service of its own repository: the sample user service of
tests/install/ci_recipes_test.py (the action and the GitLab template played
against a repository that holds nothing of idemproof's). Python standard
library only.

  POST /orders {"ref", "qty"}  needs an Idempotency-Key header (400 without);
      201 {"id", "ref", "qty"}; the same key again: the same answer, marked
      Idempotent-Replayed: true; the same key with another body: 422.
  GET /orders?ref=R  {"count": N}: the orders made for R (the side effect)
  GET /healthz       200

Orders and stored answers live in a SQLite file (--db): a restart, or a kill
right after an answer, loses neither (an answer is sent after its commit).

--bug double-execute: a retry creates another order (what the suite must catch).
"""
import argparse
import json
import sqlite3
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

lock = threading.Lock()
db = None  # sqlite3 connection, used under `lock`


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    bug = ""

    def log_message(self, *args):
        pass

    def send(self, status, doc, replayed=False):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if replayed:
            self.send_header("Idempotent-Replayed", "true")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/healthz":
            return self.send(200, {"ok": True})
        if url.path == "/orders":
            ref = parse_qs(url.query).get("ref", [""])[0]
            with lock:
                (count,) = db.execute("SELECT count(*) FROM orders WHERE ref = ?", (ref,)).fetchone()
            return self.send(200, {"count": count})
        self.send(404, {"error": "not found"})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if urlsplit(self.path).path != "/orders":
            return self.send(404, {"error": "not found"})
        key = self.headers.get("Idempotency-Key")
        if not key:
            return self.send(400, {"error": "Idempotency-Key required"})
        try:
            doc = json.loads(raw)
        except ValueError:
            return self.send(400, {"error": "bad JSON"})
        with lock:  # one request at a time: a duplicate waits and gets the replay
            row = db.execute("SELECT request, answer FROM answers WHERE key = ?", (key,)).fetchone()
            if row and self.bug != "double-execute":
                if json.loads(row[0]) != doc:
                    return self.send(422, {"error": "key reused with another body"})
                return self.send(201, json.loads(row[1]), replayed=True)
            order = {"id": str(uuid.uuid4()), "ref": doc.get("ref"), "qty": doc.get("qty")}
            with db:  # one transaction: the order and the answer stored for its key
                db.execute("INSERT INTO orders VALUES (?, ?, ?)", (order["id"], order["ref"], order["qty"]))
                db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)", (key, json.dumps(doc), json.dumps(order)))
        self.send(201, order)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--db", required=True)
    p.add_argument("--bug", default="")
    args = p.parse_args()
    Handler.bug = args.bug
    global db
    db = sqlite3.connect(args.db, check_same_thread=False)
    db.execute("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, ref TEXT, qty INTEGER)")
    db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, request TEXT, answer TEXT)")
    db.commit()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print("listening on 127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
