#!/usr/bin/env python3
"""Soak: the reference service under a bounded concurrent load, SIGKILLed at
random moments and restarted on the same SQLite store (issue 16).

Each worker creates orders one business id at a time (POST /orders with an
Idempotency-Key), retrying the same key with the same payload through every
kill until it gets a 2xx (bounded). At the end, with the service up again:
  acknowledged  business ids that got a 2xx answer
  lost          acknowledged ids with no order record
  duplicated    ids with more than one order record
  replay diffs  a later answer for a key that is not its first 2xx
  stock drift   per sku, units taken that no order accounts for (or missing)
and the restart times (SIGKILL to healthz 200). After the load every
acknowledged key is sent once more (across all the restarts). Exit 0 when nothing is lost,
duplicated or different, 1 otherwise, 2 on a setup error.
Standard library only; every wait has a deadline; the service is killed at exit.
"""
import argparse
import http.client
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

STOCK_PER_SKU = 1000  # the reference's initial stock of an unseen sku
IDS_PER_SKU = 500     # well under the stock: no order is refused for stock


class Service:
    """The reference process: started on `db`, killed with SIGKILL, restarted."""

    def __init__(self, exe, db, log, flaw=""):
        self.exe, self.db, self.log = exe, db, log
        self.flaw_args = ["--flaw", flaw] if flaw else []
        self.proc = None
        self.port = None
        self.lock = threading.Lock()

    def start(self, deadline_s=15.0):
        out = open(self.log, "ab")
        self.proc = subprocess.Popen([self.exe, "--port", "0", "--db", self.db, "--lease", "2s"] + self.flaw_args,
                                     stdout=subprocess.PIPE, stderr=out, start_new_session=True)
        end = time.monotonic() + deadline_s
        line = b""
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            m = re.search(rb"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
            if not line and self.proc.poll() is not None:
                raise RuntimeError("the reference exited at start: see " + self.log)
        else:
            raise RuntimeError("no 'listening on' line within %.0f s" % deadline_s)
        # Drain stdout so the service never blocks on a full pipe.
        threading.Thread(target=lambda p=self.proc: [None for _ in p.stdout], daemon=True).start()
        while time.monotonic() < end:
            try:
                if request(self.port, "GET", "/healthz", timeout=1.0)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError("healthz not 200 within %.0f s" % deadline_s)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def current_port(self):
        with self.lock:
            return self.port


def request(port, method, path, body=None, headers=None, timeout=5.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        h = {"Content-Type": "application/json"} if data else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", "replace"), dict(r.getheaders())
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", required=True, help="the idemproof-ref executable")
    ap.add_argument("--dir", required=True, help="a scratch folder for the store and the log")
    ap.add_argument("--kills", type=int, default=40)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--min-gap", type=float, default=0.15, help="seconds between kills, at least")
    ap.add_argument("--max-gap", type=float, default=0.6, help="seconds between kills, at most")
    ap.add_argument("--retries", type=int, default=200, help="tries per business id before giving up")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--flaw", default="", help="start the reference with --flaw NAME (shows the soak can fail)")
    ap.add_argument("--revisit", type=int, default=100000,
                    help="after the load, retry up to this many acknowledged keys once more")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    os.makedirs(a.dir, exist_ok=True)
    db = os.path.join(a.dir, "soak.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    svc = Service(a.ref, db, os.path.join(a.dir, "ref.stderr"), a.flaw)
    try:
        svc.start()
    except (RuntimeError, OSError) as e:
        print("soak: " + str(e), file=sys.stderr)
        return 2

    run = "%08x" % rng.randrange(1 << 32)
    stop = threading.Event()
    results_lock = threading.Lock()
    first_body = {}      # biz -> body of its first 2xx
    replay_diffs = []    # (biz, first, later)
    abandoned = []       # biz ids that never got a 2xx within --retries
    skus = {}            # biz -> sku
    sent = [0]

    def worker(w):
        n = 0
        while not stop.is_set():
            biz = "soak-%s-w%d-%d" % (run, w, n)
            sku = "soak-%s-w%d-s%d" % (run, w, n // IDS_PER_SKU)
            key = "key-" + biz
            body = {"biz_no": biz, "sku": sku, "qty": 1, "amount": 100}
            with results_lock:
                skus[biz] = sku
            got = None
            for attempt in range(a.retries):
                try:
                    with results_lock:
                        sent[0] += 1
                    status, text, _ = request(svc.current_port(), "POST", "/orders", body,
                                              {"Idempotency-Key": key}, timeout=5.0)
                except OSError:
                    time.sleep(0.02)  # killed mid-request, or restarting: the same key again
                    continue
                if 200 <= status < 300:
                    got = text
                    break
                if status == 409:  # in progress (a claim left by a killed request): wait for its lease
                    time.sleep(0.1)
                    continue
                time.sleep(0.02)
            with results_lock:
                if got is None:
                    abandoned.append(biz)
                else:
                    first_body[biz] = json.loads(got)
            # A replay of the same key now must give the same answer.
            if got is not None:
                try:
                    status, text, headers = request(svc.current_port(), "POST", "/orders", body,
                                                    {"Idempotency-Key": key}, timeout=5.0)
                    if 200 <= status < 300 and json.loads(text) != json.loads(got):
                        with results_lock:
                            replay_diffs.append((biz, got, text))
                except (OSError, ValueError):
                    pass
            n += 1

    threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(a.workers)]
    for t in threads:
        t.start()
    restart_ms = []
    try:
        for _ in range(a.kills):
            time.sleep(rng.uniform(a.min_gap, a.max_gap))
            t0 = time.monotonic()
            with svc.lock:
                svc.kill()
                svc.start()
            restart_ms.append((time.monotonic() - t0) * 1000)
        time.sleep(0.5)
    except (RuntimeError, OSError) as e:
        print("soak: restart failed: " + str(e), file=sys.stderr)
        stop.set()
        svc.kill()
        return 2
    stop.set()
    for t in threads:
        t.join(timeout=30)

    # Every acknowledged key once more, across all the restarts since: the
    # same answer, and no second execution (counted with the records below).
    revisited = 0
    for biz in sorted(first_body)[: a.revisit]:
        body = {"biz_no": biz, "sku": skus[biz], "qty": 1, "amount": 100}
        try:
            status, text, _ = request(svc.current_port(), "POST", "/orders", body, {"Idempotency-Key": "key-" + biz})
            revisited += 1
            if not (200 <= status < 300) or json.loads(text) != first_body[biz]:
                replay_diffs.append((biz, json.dumps(first_body[biz]), "%d %s" % (status, text[:200])))
        except (OSError, ValueError):
            pass

    # The records, read once the load stopped, with the service up.
    lost, duplicated, unreadable = [], [], []
    orders_per_sku = {}
    for biz, sku in sorted(skus.items()):
        try:
            status, text, _ = request(svc.current_port(), "GET", "/orders?biz_no=" + biz, timeout=5.0)
            count = json.loads(text)["count"] if status == 200 else None
        except (OSError, ValueError, KeyError):
            count = None
        if count is None:
            unreadable.append(biz)
            continue
        orders_per_sku[sku] = orders_per_sku.get(sku, 0) + count
        if count > 1:
            duplicated.append((biz, count))
        if count == 0 and biz in first_body:
            lost.append(biz)
    drift = []
    for sku, orders in sorted(orders_per_sku.items()):
        try:
            status, text, _ = request(svc.current_port(), "GET", "/stock?sku=" + sku, timeout=5.0)
            available = json.loads(text)["available"]
        except (OSError, ValueError, KeyError):
            unreadable.append(sku)
            continue
        if STOCK_PER_SKU - available != orders:
            drift.append((sku, STOCK_PER_SKU - available, orders))
    svc.kill()

    rows = [
        ("seed", seed),
        ("kills (SIGKILL of the process group, restart on the same store)", len(restart_ms)),
        ("workers", a.workers),
        ("requests sent", sent[0]),
        ("business ids", len(skus)),
        ("acknowledged (a 2xx answer)", len(first_body)),
        ("abandoned after %d tries (no 2xx, not judged lost)" % a.retries, len(abandoned)),
        ("lost (acknowledged, no record)", len(lost)),
        ("duplicated (more than one record)", len(duplicated)),
        ("acknowledged keys retried again after the load", revisited),
        ("replay differences (a later answer unlike the first 2xx)", len(replay_diffs)),
        ("stock drift (units taken that orders do not account for)", len(drift)),
        ("unreadable at the end", len(unreadable)),
        ("restart ms: median", "%.0f" % statistics.median(restart_ms) if restart_ms else "-"),
        ("restart ms: max", "%.0f" % max(restart_ms) if restart_ms else "-"),
    ]
    print("| soak of the reference%s | |\n|---|---:|" % (" --flaw " + a.flaw if a.flaw else ""))
    for name, value in rows:
        print("| %s | %s |" % (name, value))
    for what, items in (("lost", lost), ("duplicated", duplicated), ("replay difference", replay_diffs),
                        ("stock drift", drift), ("unreadable", unreadable)):
        for item in items[:5]:
            print("%s: %s" % (what, item))
    bad = lost or duplicated or replay_diffs or drift or unreadable or len(first_body) == 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
