#!/usr/bin/env python3
"""The corpus test (issue 44): `idemproof init --openapi` on API descriptions
that real providers publish (tests/corpus/README.md, expected.tsv).

  corpus_test.py --idemproof BIN --corpus DIR --scenarios DIR --out DIR NAME...

For each named row of expected.tsv, its document DIR/NAME.EXT (placed there by
fetch_corpus.sh; a missing one fails, naming why) is checked:
  writes:  init exits 0 and writes the file; `lint SCENARIOS --target FILE`
           exits 0; the key the file uses is the table's; at least 80 % of
           the document's keyed write operations are actions; peak RSS at
           most 300 MB and CPU time at most 5 s (issue 44, item 2).
  refuses: init exits 2, writes nothing, and says the document is Swagger 2.0
           and how to convert it.
Prints, per document, init's exit code, wall and CPU seconds and peak RSS,
and a tab-separated CORPUS-ROW line for the README's table. Exit 0 when every
named document passes, 1 otherwise.
"""
import argparse
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import describe_document  # noqa: E402

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.tsv")
COLUMNS = ["name", "category", "source", "sha256", "bytes", "version", "paths", "writes", "keyed",
           "keyed_required", "key", "expect"]
MAX_RSS_MB = 300
GNU_TIME = "/usr/bin/time"
INIT_TIMEOUT_S = 120
MAX_CPU_S = 5.0
MIN_COVERAGE = 0.8


def read_table():
    rows = {}
    with open(TABLE, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.rstrip("\n").split("\t")
            if len(cells) != len(COLUMNS):
                raise SystemExit(f"{TABLE}: row {cells[0]!r} has {len(cells)} columns, not {len(COLUMNS)}")
            rows[cells[0]] = dict(zip(COLUMNS, cells))
    return rows


def run_measured(argv, stdout_path, stderr_path, timeout_s):
    """Runs argv under GNU time (Debian's `time`, scripts/setup.sh); returns
    (exit code, negative for a signal; wall s; CPU s; peak RSS MB; whether
    it was killed at the deadline). GNU time
    forks the child from its own small image: wait4 from this Python would
    count the forked interpreter's pages in the child's peak RSS. A child past
    timeout_s is killed (its whole process group) and reaped."""
    usage_path = stderr_path + ".time"
    start = time.monotonic()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen([GNU_TIME, "-f", "%e %U %S %M", "-o", usage_path, "--"] + argv,
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            # The measured child first, so time still reports its CPU and RSS;
            # then the whole group, should time not end by itself.
            try:
                with open(f"/proc/{proc.pid}/task/{proc.pid}/children", encoding="ascii") as f:
                    for child in f.read().split():
                        os.kill(int(child), signal.SIGKILL)
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    wall = time.monotonic() - start
    lines = open(usage_path, encoding="utf-8").read().splitlines() if os.path.exists(usage_path) else []
    code = proc.returncode
    signalled = [int(m.group(1)) for m in (re.match(r"Command terminated by signal (\d+)", l) for l in lines) if m]
    if signalled:
        code = -signalled[0]
    elif code < 0 or not lines:  # time itself was killed (the timeout): no figures from it
        return code, wall, float("nan"), float("nan"), timed_out
    _, user, system, max_kb = lines[-1].split()
    return code, wall, float(user) + float(system), int(max_kb) / 1024.0, timed_out

def segments(path):
    path = path.split("?", 1)[0]
    return [s for s in path.split("/") if s]


def action_matches(action_path, op_path):
    """The action's path is the operation's (a `{param}` segment matches any
    segment: a `{{variable}}` or a value), possibly under the server's base."""
    a, o = segments(action_path), segments(op_path)
    if len(a) < len(o):
        return False
    a = a[len(a) - len(o):]
    return all("{" in os_ or os_ == as_ for as_, os_ in zip(a, o))


def key_members(node, found):
    """Members whose whole value is {{key}}, anywhere in a JSON body."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str) and v.strip() == "{{key}}":
                found.append(str(k))
            else:
                key_members(v, found)
    elif isinstance(node, list):
        for v in node:
            key_members(v, found)


def key_found(target, text):
    """Where the written file puts the key: header:NAME, body:MEMBER (JSON),
    form:MEMBER (a raw form body), or none; and whether a header is a guess
    (a CONFIRM comment on its line or the line before)."""
    idem = target.get("idempotency") or {}
    header = idem.get("key_header", "Idempotency-Key")
    json_members, form_members = [], []
    for action in (target.get("actions") or {}).values():
        request = (action or {}).get("request") or {}
        key_members(request.get("json"), json_members)
        body = request.get("body")
        if isinstance(body, str):
            form_members += re.findall(r"([^&=?\s]+)=\{\{key\}\}", body)
    guessed = False
    if header is not None and str(header).lower() != "none":
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if re.match(r"\s*key_header\s*:", line):
                guessed = "CONFIRM" in line or (i > 0 and "CONFIRM" in lines[i - 1])
                break
        return f"header:{header}", guessed, json_members, form_members
    if json_members:
        return f"body:{max(set(json_members), key=json_members.count)}", False, json_members, form_members
    if form_members:
        return f"form:{max(set(form_members), key=form_members.count)}", False, json_members, form_members
    return "none", False, json_members, form_members


def key_agrees(expected, found, guessed, json_members, form_members):
    if expected == "none":
        # A document that declares no key: none, or a header guessed under a
        # CONFIRM comment, never a key the document does not name.
        return (found == "none" or (found.startswith("header:") and guessed)) and not json_members and not form_members
    kind, _, name = expected.partition(":")
    fkind, _, fname = found.partition(":")
    if kind != fkind:
        return False
    return fname.lower() == name.lower() if kind == "header" else fname == name


def check(row, args):
    name = row["name"]
    problems = []
    ext = row["source"].rsplit(".", 1)[-1]
    doc = os.path.join(args.corpus, f"{name}.{ext}")
    facts = {"name": name, "bytes": row["bytes"], "paths": row["paths"], "keyed": row["keyed"], "key_found": "-",
             "actions": "-", "seconds": "-", "cpu": "-", "mb": "-", "exit": "-", "error": ""}
    if not os.path.isfile(doc):
        why = ""
        failed = os.path.join(args.corpus, "FETCH_FAILED")
        if os.path.isfile(failed):
            why = " (" + open(failed, encoding="utf-8").read().strip() + ")"
        return [f"{doc} is missing{why}: run tests/corpus/fetch_corpus.sh {args.corpus}"], facts
    with open(doc, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != row["sha256"]:
        return [f"{doc} has sha256 {digest}, the table pins {row['sha256']}: run fetch_corpus.sh again"], facts

    out_dir = os.path.join(args.out, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    target_file = os.path.join(out_dir, "target.yaml")
    code, wall, cpu, mb, timed_out = run_measured([args.idemproof, "init", "--openapi", doc, "-o", target_file],
                                                  os.path.join(out_dir, "init.stdout"),
                                                  os.path.join(out_dir, "init.stderr"), INIT_TIMEOUT_S)
    stderr = open(os.path.join(out_dir, "init.stderr"), encoding="utf-8", errors="replace").read()
    facts.update(seconds=f"{wall:.2f}", cpu=f"{cpu:.2f}", mb=f"{mb:.0f}", exit=str(code))
    if timed_out:
        facts["error"] = f"killed: no end within {INIT_TIMEOUT_S} s"
        problems.append(f"init did not finish within {INIT_TIMEOUT_S} s (killed)")
    elif code != 0:
        facts["error"] = " ".join(stderr.split())[:300]
    print(f"{name}: init exit {code}, {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {mb:.1f} MB "
          f"({int(row['bytes']) / 1e6:.2f} MB document, {row['version']})")
    if stderr.strip():
        print("  init said: " + stderr.strip().replace("\n", "\n  ")[:2000])
    if mb > MAX_RSS_MB:
        problems.append(f"peak RSS {mb:.0f} MB is over {MAX_RSS_MB} MB")
    if cpu > MAX_CPU_S:
        problems.append(f"init took {cpu:.1f} s of CPU, over {MAX_CPU_S:.0f} s")

    if row["expect"] == "refuses":
        if code != 2:
            problems.append(f"init exited {code} on a {row['version']} document, not 2")
        if os.path.exists(target_file):
            problems.append("init wrote a file from a document it cannot read")
        if not (re.search(r"swagger", stderr, re.I) and "2.0" in stderr):
            problems.append("init's error does not name Swagger 2.0")
        if not re.search(r"convert", stderr, re.I):
            problems.append("init's error does not say how to convert the document to OpenAPI 3")
        return problems, facts

    if code != 0:
        if not timed_out:
            problems.append(f"init exited {code}")
        return problems, facts
    if not os.path.isfile(target_file):
        problems.append("init exited 0 but wrote no file")
        return problems, facts
    code, lwall, _, _, _ = run_measured([args.idemproof, "lint", args.scenarios, "--target", target_file],
                                     os.path.join(out_dir, "lint.stdout"), os.path.join(out_dir, "lint.stderr"), 300)
    lint_err = open(os.path.join(out_dir, "lint.stderr"), encoding="utf-8", errors="replace").read()
    print(f"  lint exit {code} ({lwall:.2f} s)")
    if code != 0:
        problems.append(f"lint --target exited {code}: " + " ".join(lint_err.split())[:600])

    text = open(target_file, encoding="utf-8").read()
    try:
        target = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        problems.append(f"the written file is not YAML: {e}")
        return problems, facts
    actions = target.get("actions") or {}
    found, guessed, json_members, form_members = key_found(target, text)
    facts.update(key_found=found + (" (guess)" if guessed else ""), actions=str(len(actions)))
    print(f"  key: {found}{' (a guess, to confirm)' if guessed else ''}, table: {row['key']}; "
          f"{len(actions)} action(s)")
    if not key_agrees(row["key"], found, guessed, json_members, form_members):
        problems.append(f"the file's key is {found}{' (guessed)' if guessed else ''}, the table's {row['key']}")

    described = describe_document.describe(doc)
    keyed_ops = described["keyed_ops"]
    for column in ("paths", "writes", "keyed", "keyed_required"):
        if str(described[column]) != row[column]:
            problems.append(f"the document has {described[column]} {column}, the table says {row[column]}")
    requests = []
    for action in actions.values():
        request = (action or {}).get("request") or {}
        requests.append((str(request.get("method", "GET")).upper(), str(request.get("path", ""))))
    covered = [op for op in keyed_ops if any(m == op[0] and action_matches(p, op[1]) for m, p in requests)]
    if keyed_ops:
        share = len(covered) / len(keyed_ops)
        facts["actions"] += f" ({len(covered)}/{len(keyed_ops)} keyed)"
        print(f"  keyed write operations that are actions: {len(covered)}/{len(keyed_ops)} ({share:.0%})")
        if share < MIN_COVERAGE:
            missing = [f"{m} {p}" for m, p in keyed_ops if (m, p) not in covered]
            problems.append(f"{len(covered)} of {len(keyed_ops)} keyed write operations are actions "
                            f"(under {MIN_COVERAGE:.0%}); not: {', '.join(missing[:8])}"
                            + (" …" if len(missing) > 8 else ""))
    return problems, facts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idemproof", required=True)
    parser.add_argument("--corpus", required=True, help="where fetch_corpus.sh put the documents")
    parser.add_argument("--scenarios", required=True, help="the suite's scenarios/ folder")
    parser.add_argument("--out", required=True, help="where the written files are kept")
    parser.add_argument("names", nargs="*", help="rows of expected.tsv (default: all)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each document's lines as it ends, not at exit
    rows = read_table()
    names = args.names or list(rows)
    unknown = [n for n in names if n not in rows]
    if unknown:
        print(f"no row {', '.join(unknown)} in {TABLE}")
        return 2
    if not os.access(GNU_TIME, os.X_OK):
        print(f"FAIL: {GNU_TIME} is missing (Debian's package time, installed by scripts/setup.sh): "
              "it measures init's peak RSS")
        return 1
    failed = 0
    for name in names:
        problems, facts = check(rows[name], args)
        print("CORPUS-ROW\t" + "\t".join(facts[k] for k in ("name", "bytes", "paths", "keyed", "key_found",
                                                             "actions", "seconds", "cpu", "mb", "exit", "error")))
        if problems:
            failed += 1
            print(f"FAIL {name}:\n  - " + "\n  - ".join(problems))
        else:
            print(f"ok {name}")
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
