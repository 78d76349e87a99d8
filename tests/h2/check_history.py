#!/usr/bin/env python3
"""Reads a run's history back (issue #35).
usage: check_history.py HISTORY.jsonl single-packet N [tls]   every request of the burst in
           segment 0 of one release write, N distinct odd stream ids, the note says so
           (tls: the final frames sealed in one TLS record)
       check_history.py HISTORY.jsonl traceparent        every request carries a well-formed
           W3C traceparent, one trace id for the whole history, a span id per request
       check_history.py HISTORY.jsonl no-traceparent     no request carries one"""
import json
import re
import sys

path, what = sys.argv[1], sys.argv[2]
events = [json.loads(line) for line in open(path) if line.strip()]
requests = [e for e in events if isinstance(e.get("value"), dict) and "request" in e["value"]]


def fail(msg):
    sys.exit(f"check_history.py {what}: {msg} ({path})")


if not requests:
    fail("no request in the history")

if what == "single-packet":
    n = int(sys.argv[3])
    done = [e for e in events if e.get("f") == "burst" and e.get("type") != "invoke"]
    if len(done) != n:
        fail(f"{len(done)} burst completions, expected {n}")
    ids = [e["value"].get("h2", {}).get("stream_id") for e in done]
    if any(e["value"].get("h2", {}).get("segment") != 0 for e in done):
        fail("a request's final frame was not in segment 0: " + str([e["value"].get("h2") for e in done]))
    if len(set(ids)) != n or any(not isinstance(i, int) or i % 2 != 1 for i in ids):
        fail(f"stream ids not {n} distinct odd client streams: {ids}")
    notes = [e["value"]["burst"] for e in events if e.get("value", {}).get("note") == "burst spread"]
    if len(notes) != 1:
        fail(f"{len(notes)} burst spread notes")
    b = notes[0]
    if b.get("mode") != "single_packet_h2" or b.get("segments") != 1 or b.get("release_writes") != 1:
        fail(f"the release was not one write in one segment: {b}")
    if not 0 < b.get("release_bytes", 0) <= b.get("mss", 0):
        fail(f"release bytes not within one MSS: {b}")
    over_tls = sys.argv[4:5] == ["tls"]
    if b.get("tls_records", 0) != (1 if over_tls else 0):
        fail(f"tls_records {b.get('tls_records', 0)}, expected {1 if over_tls else 0}: {b}")
    print(f"ok: {n} streams {sorted(ids)[0]}..{sorted(ids)[-1]}, final frames {b['release_bytes']} bytes "
          f"in 1 write{', 1 TLS record' if over_tls else ''}, 1 segment (mss {b['mss']}), harness {b['harness_spread_us']} us, "
          f"target {b['target_spread_us']} us")
elif what in ("traceparent", "no-traceparent"):
    form = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")
    traces, spans = set(), []
    for e in requests:
        values = [v for k, v in e["value"]["request"].get("headers", []) if k.lower() == "traceparent"]
        if what == "no-traceparent":
            if values:
                fail(f"event {e['index']} carries traceparent {values}")
            continue
        if len(values) != 1:
            fail(f"event {e['index']} ({e.get('f')}) carries {len(values)} traceparent headers")
        m = form.match(values[0])
        if not m or set(m.group(1)) == {"0"} or set(m.group(2)) == {"0"}:
            fail(f"event {e['index']}: malformed traceparent {values[0]!r}")
        traces.add(m.group(1))
        spans.append(m.group(2))
    if what == "traceparent":
        if len(traces) != 1:
            fail(f"{len(traces)} trace ids in one scenario run: {traces}")
        if len(set(spans)) != len(spans):
            fail("a span id is used by two requests")
    print(f"ok: {len(requests)} requests, {what}")
else:
    fail("unknown check")
