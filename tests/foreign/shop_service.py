#!/usr/bin/env python3
"""A small money-transfer service idemproof has never been written for.

Python 3 standard library only. Its API deliberately differs from the
reference service (docs/foreign-target.md): it exists to prove that the
harness verifies a service from its target file alone
(scenarios/targets/foreign-python.yaml).

  POST /api/v2/transfers                {"transfer": {"ref": R, "cents": N}}
       key header X-Request-Key (--key-in body: a top-level "request_key"
       member of the JSON body instead, as Square or AWS ClientToken do); 201 {"transfer": {...}}; replays carry
       "X-Cache: replayed" (none with --no-replay-marker; with
       --replay-marker-in-body a top-level "replayed": true member of the
       replayed JSON instead of the header); 425 while the key
       is in progress (--in-progress-status 409: the same as a mismatch); 409 for the key reused with another payload; 428
       without a key; 400 for a bad body (not stored); 503 when the ledger
       is down (fault), not stored: the key is released. --location-header:
       the 201 also says Location: /api/v2/transfers/ID.
  GET  /api/v2/transfers?ref=R          {"data": {"items": [...], "total": N}}
  GET  /api/v2/transfers/ID             {"transfer": {...}}
  POST /api/v2/transfers/ID/reversal    idempotent too (same key rules); 201
  PUT  /api/v2/transfers/ID/memo        {"memo": M}: sets the memo (no key needed)
  GET  /status                          204 when ready
  PUT  /ops/faults                      {"slow_ms": N, "ledger_down": K}
  DELETE /ops/faults                    clears them

Idempotency, done right: the key is claimed with an INSERT under a UNIQUE
(scope, key) constraint inside one write transaction; the claim records a
SHA-256 fingerprint of method, route and canonical body and a lease; the
business write and the completion of the claim (fenced by the owner token)
commit together; the stored response bytes are replayed as they were.
Records live --ttl-ms after their answer, leases --lease-ms.

--bug NAME switches on one mistake a real team might ship:
  race               look the key up, pause, insert: no unique constraint, no transaction
  ignore-body        no fingerprint: a reused key with another body is replayed
  replay-regenerates the replay is rendered again from the row (a fresh served_at)
  store-5xx          a ledger failure (503) is stored and replayed for the key
  global-key         keys are global, not per route: a reversal reusing the
                     transfer's key is refused as a mismatch
  key-only-cache     a middleware caches answers by the key alone (no route, no
                     fingerprint): a reversal reusing the key gets the transfer's answer
  no-lease           an in-progress claim never expires (a crashed owner blocks the key)
  memory-keys        idempotency records in process memory (lost on restart)
"""

import argparse
import hashlib
import json
import os
import re
import secrets
import signal
import sqlite3
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

BUGS = ("race", "ignore-body", "replay-regenerates", "store-5xx", "global-key", "key-only-cache", "no-lease",
        "memory-keys")

SCHEMA = """
CREATE TABLE IF NOT EXISTS transfers (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  ref TEXT NOT NULL,
  cents INTEGER NOT NULL,
  memo TEXT,
  reversed INTEGER NOT NULL DEFAULT 0,
  booked_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS transfers_ref ON transfers(ref);
CREATE TABLE IF NOT EXISTS request_keys (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,            -- 'running' | 'done'
  owner TEXT NOT NULL,
  lease_until REAL NOT NULL,
  expires_at REAL NOT NULL,
  status INTEGER,
  content_type TEXT,
  location TEXT,
  body BLOB,
  transfer_seq INTEGER,
  UNIQUE (scope, key)
);
"""
# The race bug's table: the same columns without the constraint.
SCHEMA_RACE = SCHEMA.replace("  transfer_seq INTEGER,\n  UNIQUE (scope, key)\n", "  transfer_seq INTEGER\n")


def now_iso():
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class Faults:
    """Chaos controls, per process (a restart clears them)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.slow_ms = 0
        self.ledger_down = 0

    def set(self, doc):
        with self.lock:
            self.slow_ms = int(doc.get("slow_ms", self.slow_ms))
            self.ledger_down = int(doc.get("ledger_down", self.ledger_down))

    def clear(self):
        with self.lock:
            self.slow_ms = 0
            self.ledger_down = 0

    def take_ledger_down(self):
        with self.lock:
            if self.ledger_down > 0:
                self.ledger_down -= 1
                return True
            return False


class Store:
    def __init__(self, path, bug, lease_s, ttl_s):
        self.path = path
        self.bug = bug
        self.lease_s = lease_s
        self.ttl_s = ttl_s
        self.memory = {}  # memory-keys: (scope, key) -> record dict
        self.memory_lock = threading.Lock()
        with self.connect() as db:
            db.executescript(SCHEMA_RACE if bug == "race" else SCHEMA)

    def connect(self):
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA busy_timeout=30000")
        db.row_factory = sqlite3.Row
        return db


def transfer_json(row):
    return {
        "id": "tr_%d" % row["seq"],
        "ref": row["ref"],
        "cents": row["cents"],
        "memo": row["memo"],
        "state": "reversed" if row["reversed"] else "booked",
        "booked_at": row["booked_at"],
    }


def render(doc):
    return json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()


class Service:
    def __init__(self, store, faults, replay_marker, key_in, location_header):
        self.key_in = key_in
        self.location_header = location_header
        self.store = store
        self.faults = faults
        self.replay_marker = replay_marker

    # ---- the idempotent write path -------------------------------------

    def claim(self, db, scope, key, fingerprint, owner):
        """Returns ("run", None) when this request owns the key, else
        ("answer", (status, headers, body))."""
        now = time.time()
        bug = self.store.bug
        if bug == "memory-keys":
            return self.claim_memory(scope, key, fingerprint, owner, now)
        if bug == "race":
            row = db.execute("SELECT * FROM request_keys WHERE scope=? AND key=?", (scope, key)).fetchone()
            if row is None:
                time.sleep(0.02)  # "validation" between the check and the insert
                db.execute(
                    "INSERT INTO request_keys (scope, key, fingerprint, state, owner, lease_until, expires_at)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (scope, key, fingerprint, "running", owner, now + self.store.lease_s, now + self.store.ttl_s))
                return "run", None
            return self.existing(db, row, fingerprint, owner, now, scope, key)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM request_keys WHERE scope=? AND key=? AND expires_at < ?", (scope, key, now))
            cur = db.execute(
                "INSERT INTO request_keys (scope, key, fingerprint, state, owner, lease_until, expires_at)"
                " VALUES (?,?,?,?,?,?,?) ON CONFLICT (scope, key) DO NOTHING",
                (scope, key, fingerprint, "running", owner, now + self.store.lease_s, now + self.store.ttl_s))
            if cur.rowcount == 1:
                db.execute("COMMIT")
                return "run", None
            row = db.execute("SELECT * FROM request_keys WHERE scope=? AND key=?", (scope, key)).fetchone()
            verdict = self.existing(db, row, fingerprint, owner, now, scope, key)
            db.execute("COMMIT")
            return verdict
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def existing(self, db, row, fingerprint, owner, now, scope, key):
        if self.store.bug not in ("ignore-body", "key-only-cache") and row["fingerprint"] != fingerprint:
            return "answer", error(409, "key_reused", "this request key was used with another request")
        if row["state"] == "running":
            if self.store.bug == "no-lease" or row["lease_until"] > now:
                return "answer", error(IN_PROGRESS[0], "in_flight", "a request with this key is still being processed")
            # The owner's lease ran out (it crashed or froze): take the key over.
            db.execute("UPDATE request_keys SET owner=?, lease_until=?, expires_at=? WHERE scope=? AND key=?",
                       (owner, now + self.store.lease_s, now + self.store.ttl_s, scope, key))
            return "run", None
        return "answer", self.replay(db, row)

    def claim_memory(self, scope, key, fingerprint, owner, now):
        with self.store.memory_lock:
            rec = self.store.memory.get((scope, key))
            if rec is not None and rec["expires_at"] < now:
                rec = None
            if rec is None:
                self.store.memory[(scope, key)] = {"fingerprint": fingerprint, "state": "running", "owner": owner,
                                                   "lease_until": now + self.store.lease_s,
                                                   "expires_at": now + self.store.ttl_s}
                return "run", None
            if rec["fingerprint"] != fingerprint:
                return "answer", error(409, "key_reused", "this request key was used with another request")
            if rec["state"] == "running":
                if rec["lease_until"] > now:
                    return "answer", error(IN_PROGRESS[0], "in_flight", "a request with this key is still being processed")
                rec["owner"], rec["lease_until"] = owner, now + self.store.lease_s
                rec["expires_at"] = now + self.store.ttl_s
                return "run", None
            return "answer", self.replay(None, rec)

    def replay(self, db, row):
        headers = [("Content-Type", row["content_type"])]
        if row["location"]:
            headers.append(("Location", row["location"]))
        if self.replay_marker == "header":
            headers.append(("X-Cache", "replayed"))
        body = row["body"]
        if self.store.bug == "replay-regenerates" and db is not None and row["transfer_seq"] is not None:
            t = db.execute("SELECT * FROM transfers WHERE seq=?", (row["transfer_seq"],)).fetchone()
            doc = {"transfer": transfer_json(t), "served_at": now_iso()}
            body = render(doc)
        if self.replay_marker == "body":
            try:
                doc = json.loads(bytes(body))
            except ValueError:
                doc = None  # not JSON: nothing to mark
            if isinstance(doc, dict):
                doc["replayed"] = True
                body = render(doc)
        return row["status"], headers, bytes(body)

    def release(self, db, scope, key, owner):
        if self.store.bug == "memory-keys":
            with self.store.memory_lock:
                rec = self.store.memory.get((scope, key))
                if rec is not None and rec["owner"] == owner:
                    del self.store.memory[(scope, key)]
            return
        db.execute("DELETE FROM request_keys WHERE scope=? AND key=? AND owner=?", (scope, key, owner))

    def complete(self, db, scope, key, owner, status, body, seq, location=None):
        """Stores the answer, kept --ttl-ms from now (the window a client
        retrying after this answer relies on); False when another owner took
        the key over (fenced)."""
        expires_at = time.time() + self.store.ttl_s
        if self.store.bug == "memory-keys":
            with self.store.memory_lock:
                rec = self.store.memory.get((scope, key))
                if rec is None or rec["owner"] != owner:
                    return False
                rec.update(state="done", status=status, content_type="application/json", body=body, transfer_seq=seq,
                           expires_at=expires_at, location=location)
                return True
        cur = db.execute(
            "UPDATE request_keys SET state='done', status=?, content_type=?, body=?, transfer_seq=?, expires_at=?,"
            " location=? WHERE scope=? AND key=? AND owner=? AND state='running'",
            (status, "application/json", body, seq, expires_at, location, scope, key, owner))
        return cur.rowcount == 1

    def request_key(self, handler, doc):
        if self.key_in == "body":
            key = doc.pop("request_key", None) if isinstance(doc, dict) else None
            return key if isinstance(key, str) else None
        return handler.headers.get("X-Request-Key")

    def idempotent(self, key, scope, fingerprint_input, execute, created=False):
        """Runs execute(db) -> (status, doc, seq) at most once per key;
        `created`: a 201 says where the new transfer is (--location-header)."""
        if not key:
            return error(428, "key_required", "send an X-Request-Key header" if self.key_in == "header"
                         else 'send a "request_key" in the body')
        if self.store.bug in ("global-key", "key-only-cache"):
            scope = "global"
        fingerprint = hashlib.sha256(fingerprint_input).hexdigest()
        owner = secrets.token_hex(8)
        db = self.store.connect()
        try:
            what, answer = self.claim(db, scope, key, fingerprint, owner)
            if what == "answer":
                return answer
            slow = self.faults.slow_ms
            if slow:
                time.sleep(slow / 1000.0)
            if self.faults.take_ledger_down():
                status, headers, body = error(503, "ledger_unavailable", "the ledger did not answer; retry")
                if self.store.bug == "store-5xx":
                    db.execute("BEGIN IMMEDIATE")
                    self.complete(db, scope, key, owner, status, body, None, None)
                    db.execute("COMMIT")
                else:
                    self.release(db, scope, key, owner)
                return status, headers, body
            db.execute("BEGIN IMMEDIATE")
            try:
                status, doc, seq = execute(db)
                body = render(doc)
                location = "/api/v2/transfers/tr_%d" % seq if created and self.location_header and status == 201 else None
                if not self.complete(db, scope, key, owner, status, body, seq, location):
                    # Fenced: another owner took the key over while we were slow.
                    db.execute("ROLLBACK")
                    return self.after_fence(db, scope, key)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            headers = [("Content-Type", "application/json")] + ([("Location", location)] if location else [])
            return status, headers, body
        finally:
            db.close()

    def after_fence(self, db, scope, key):
        if self.store.bug == "memory-keys":
            rec = self.store.memory.get((scope, key))
        else:
            rec = db.execute("SELECT * FROM request_keys WHERE scope=? AND key=?", (scope, key)).fetchone()
        if rec is not None and rec["state"] == "done":
            return self.replay(db, rec)
        return error(IN_PROGRESS[0], "in_flight", "a request with this key is still being processed")

    # ---- business --------------------------------------------------------

    def create_transfer(self, handler, raw):
        try:
            doc = json.loads(raw or b"null")
            key = self.request_key(handler, doc)  # (out of the body before the fingerprint)
            t = doc["transfer"]
            ref, cents = t["ref"], t["cents"]
            if not isinstance(ref, str) or not ref or not isinstance(cents, int) or cents <= 0:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return error(400, "bad_transfer", 'expected {"transfer": {"ref": "...", "cents": N}}')

        def execute(db):
            cur = db.execute("INSERT INTO transfers (ref, cents, booked_at) VALUES (?,?,?)", (ref, cents, now_iso()))
            row = db.execute("SELECT * FROM transfers WHERE seq=?", (cur.lastrowid,)).fetchone()
            return 201, {"transfer": transfer_json(row), "served_at": row["booked_at"]}, cur.lastrowid

        canonical = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
        return self.idempotent(key, "POST /api/v2/transfers", b"POST /api/v2/transfers\n" + canonical, execute,
                               created=True)

    def reverse_transfer(self, handler, seq, raw):
        route = "POST /api/v2/transfers/%d/reversal" % seq
        try:
            key = self.request_key(handler, json.loads(raw) if raw else {})
        except ValueError:
            return error(400, "bad_json", "the body is not JSON")

        def execute(db):
            row = db.execute("SELECT * FROM transfers WHERE seq=?", (seq,)).fetchone()
            if row is None:
                return 404, {"error": {"code": "not_found"}}, None
            db.execute("UPDATE transfers SET reversed=1 WHERE seq=?", (seq,))
            row = db.execute("SELECT * FROM transfers WHERE seq=?", (seq,)).fetchone()
            return 201, {"reversal": {"transfer": transfer_json(row)}}, seq

        return self.idempotent(key, route, route.encode(), execute)

    def list_transfers(self, query):
        ref = query.get("ref", [""])[0]
        with self.store.connect() as db:
            rows = db.execute("SELECT * FROM transfers WHERE ref=? ORDER BY seq", (ref,)).fetchall()
        items = [transfer_json(r) for r in rows]
        return 200, [("Content-Type", "application/json")], render({"data": {"items": items, "total": len(items)}})

    def get_transfer(self, seq):
        db = self.store.connect()
        try:
            row = db.execute("SELECT * FROM transfers WHERE seq=?", (seq,)).fetchone()
        finally:
            db.close()
        return transfer_answer(row)

    def set_memo(self, seq, raw):
        try:
            memo = json.loads(raw)["memo"]
        except (ValueError, KeyError, TypeError):
            return error(400, "bad_memo", 'expected {"memo": "..."}')
        db = self.store.connect()
        try:
            db.execute("UPDATE transfers SET memo=? WHERE seq=?", (memo, seq))
            row = db.execute("SELECT * FROM transfers WHERE seq=?", (seq,)).fetchone()
        finally:
            db.close()
        return transfer_answer(row)


def transfer_answer(row):
    if row is None:
        return error(404, "not_found", "no such transfer")
    return 200, [("Content-Type", "application/json")], render({"transfer": transfer_json(row)})


def error(status, code, message):
    return status, [("Content-Type", "application/problem+json")], render({"error": {"code": code, "message": message}})


IN_PROGRESS = [425]  # the status of "a request with this key is running" (--in-progress-status)

TRANSFER = re.compile(r"^/api/v2/transfers/tr_(\d+)(/reversal|/memo)?$")


def make_handler(service):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "shop/2"

        def log_message(self, fmt, *args):
            pass

        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def answer(self, status, headers, body):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def route(self):
            url = urlsplit(self.path)
            raw = self.body()
            m = TRANSFER.match(url.path)
            if url.path == "/status" and self.command == "GET":
                return 204, [], b""
            if url.path == "/api/v2/transfers" and self.command == "POST":
                return service.create_transfer(self, raw)
            if url.path == "/api/v2/transfers" and self.command == "GET":
                return service.list_transfers(parse_qs(url.query))
            if m and m.group(2) is None and self.command == "GET":
                return service.get_transfer(int(m.group(1)))
            if m and m.group(2) == "/reversal" and self.command == "POST":
                return service.reverse_transfer(self, int(m.group(1)), raw)
            if m and m.group(2) == "/memo" and self.command == "PUT":
                return service.set_memo(int(m.group(1)), raw)
            if url.path == "/ops/faults" and self.command == "PUT":
                service.faults.set(json.loads(raw or b"{}"))
                return 204, [], b""
            if url.path == "/ops/faults" and self.command == "DELETE":
                service.faults.clear()
                return 204, [], b""
            return error(404, "no_route", "%s %s" % (self.command, url.path))

        def handle_any(self):
            try:
                status, headers, body = self.route()
            except Exception as e:  # a bug of ours: answered, never a dropped connection
                status, headers, body = error(500, "internal", repr(e))
            self.answer(status, headers, body)

        do_GET = do_POST = do_PUT = do_DELETE = handle_any

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8088)
    p.add_argument("--db", required=True)
    p.add_argument("--lease-ms", type=int, default=2000)
    p.add_argument("--ttl-ms", type=int, default=86_400_000)
    p.add_argument("--no-replay-marker", action="store_true", help="replays carry no X-Cache header")
    p.add_argument("--replay-marker-in-body", action="store_true",
                   help='replays say "replayed": true in their JSON body instead of X-Cache')
    p.add_argument("--in-progress-status", type=int, default=425)
    p.add_argument("--key-in", choices=("header", "body"), default="header")
    p.add_argument("--location-header", action="store_true", help="a 201 carries Location: /api/v2/transfers/ID")
    p.add_argument("--bug", choices=BUGS)
    args = p.parse_args()

    IN_PROGRESS[0] = args.in_progress_status
    store = Store(args.db, args.bug, args.lease_ms / 1000.0, args.ttl_ms / 1000.0)
    marker = "none" if args.no_replay_marker else "body" if args.replay_marker_in_body else "header"
    service = Service(store, Faults(), marker, args.key_in, args.location_header)
    ThreadingHTTPServer.request_queue_size = 128  # bursts of 32 connections at once
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(service))
    server.daemon_threads = True

    def stop(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("shop_service %d: serving on port %d (bug: %s)" % (os.getpid(), server.server_address[1], args.bug or "none"),
          flush=True)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
