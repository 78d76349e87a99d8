#!/usr/bin/env python3
"""The JSON Schemas in schemas/ against the files they describe (issue #34 item 3).

1. Every shipped YAML file (scenarios/**, tests/schema/*.yaml) validates
   against its schema (targets/ -> target, explore/ -> explore, the rest ->
   scenario) and names it on its first line (# yaml-language-server: $schema=).
2. The hostile files of tests/harness-model/hostile_files_test.cpp, and a few
   unknown keys: the loader (idemproof lint) and the schema give the same
   verdict, except the cases EXCLUDED names, where the loader rejects for a
   reason a JSON Schema cannot express (the test checks that they still differ,
   so an exclusion that no longer holds is noticed).

"The schema rejects" means what an editor does: a YAML parse that refuses a
second document, a duplicate key and bytes that are not UTF-8 text, then the
schema. Usage: validate_schemas.py SOURCE_DIR IDEMPROOF_BINARY
Debian packages: python3-jsonschema, python3-yaml.
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
import yaml

try:  # jsonschema >= 4.18; Debian bookworm's python3-jsonschema is 4.10 (RefResolver)
    import referencing
except ImportError:
    referencing = None

SOURCE, BINARY = sys.argv[1], sys.argv[2]
SCHEMAS = os.path.join(SOURCE, "schemas")


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML requires unique keys in a map; PyYAML keeps the last silently."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, "duplicate key %r" % (key,), key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_schema(name):
    with open(os.path.join(SCHEMAS, name + ".schema.json")) as f:
        return json.load(f)


NAMES = ("target", "scenario", "explore")
if referencing is not None:
    REGISTRY = referencing.Registry().with_resources(
        (name + ".schema.json", referencing.Resource.from_contents(load_schema(name))) for name in NAMES)
    VALIDATORS = {name: jsonschema.Draft202012Validator(load_schema(name), registry=REGISTRY) for name in NAMES}
else:
    STORE = {name + ".schema.json": load_schema(name) for name in NAMES}
    VALIDATORS = {name: jsonschema.Draft202012Validator(
        STORE[name + ".schema.json"],
        resolver=jsonschema.RefResolver(name + ".schema.json", STORE[name + ".schema.json"], store=STORE))
        for name in NAMES}
for v in VALIDATORS.values():
    jsonschema.Draft202012Validator.check_schema(v.schema)


def schema_errors(kind, data):
    """The schema route's errors for the file's bytes: [] when it accepts."""
    try:
        doc = yaml.load(data.decode("utf-8"), Loader=UniqueKeyLoader)
    except (UnicodeDecodeError, yaml.YAMLError) as e:
        return ["YAML: " + str(e).splitlines()[0]]
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(root)", e.message[:200])
            for e in VALIDATORS[kind].iter_errors(doc)]


def loader_rejects(kind, data):
    """True when idemproof's loader rejects the file (lint exits 2)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "case.yaml")
        with open(path, "wb") as f:
            f.write(data)
        if kind == "target":
            args = [BINARY, "lint", os.path.join(SOURCE, "scenarios/client/double-submit.yaml"), "--target", path]
        else:
            args = [BINARY, "lint", path]
        r = subprocess.run(args, capture_output=True, timeout=60)
        if r.returncode not in (0, 2):
            raise SystemExit("lint exited %d on %s case: %s" % (r.returncode, kind, r.stderr.decode()[:400]))
        return r.returncode == 2


def kind_of(path):
    folder = os.path.basename(os.path.dirname(path))
    if folder == "targets" or path.endswith(".target.yaml"):
        return "target"
    return "explore" if folder == "explore" or path.endswith(".explore.yaml") else "scenario"


failures = []

# 1. Every shipped file.
shipped = []
for root in ("scenarios", "tests/schema"):
    for dirpath, _, names in os.walk(os.path.join(SOURCE, root)):
        shipped += [os.path.join(dirpath, n) for n in names if n.endswith(".yaml")]
shipped.sort()
for path in shipped:
    kind = kind_of(path)
    with open(path, "rb") as f:
        data = f.read()
    for e in schema_errors(kind, data):
        failures.append("%s (%s schema): %s" % (os.path.relpath(path, SOURCE), kind, e))
    first = data.split(b"\n", 1)[0].decode()
    want = "# yaml-language-server: $schema=" + os.path.relpath(os.path.join(SCHEMAS, kind + ".schema.json"),
                                                              os.path.dirname(path))
    if first != want:
        failures.append("%s: line 1 is %r, expected %r" % (os.path.relpath(path, SOURCE), first, want))
print("%d shipped files checked against their schema" % len(shipped))

# 2. Hostile and malformed files: the same verdict from the loader and the schema.
TARGET = b"name: t\nbase_url: http://127.0.0.1:1\nactions:\n  create_order: {role: create, request: {method: POST, path: /orders}}\n"
HEAD = b"layer: client\nhunts: x\n"
LONG = b"a" * 200000
CASES = [
    # (name, kind, bytes) -- from hostile_files_test.cpp unless noted
    ("NUL byte", "target", b"\0name: t\n"),
    ("NUL byte in a header value", "target", TARGET + b"headers: {X-A: \"b\0\"}\n"),
    ("empty scenario", "scenario", b""),
    ("invalid UTF-8 in a value", "target", TARGET + b"headers: {X-A: \"caf\xc3\"}\n"),
    ("invalid UTF-8 byte", "target", b"name: \xff\n"),
    ("valid multi-byte text", "target", TARGET + "headers: {X-A: \"caf\u00e9\"}\n".encode()),
    ("duplicate top-level key", "target", b"name: t\nname: u\nbase_url: http://127.0.0.1:1\n"),
    ("duplicate header", "target", TARGET + b"headers:\n  X-A: b\n  X-A: c\n"),
    ("duplicate step kind", "scenario", HEAD + b"steps:\n  - {send: a, send: b}\nexpect: [one_record]\n"),
    ("a second document", "target", TARGET + b"---\nname: other\n"),
    ("one document opened explicitly", "target", b"---\n" + TARGET),
    ("CR LF in a header value", "target", TARGET + b"headers: {X-A: \"b\\r\\nX-Injected: 1\"}\n"),
    ("NUL escape in a header value", "target", TARGET + b"headers: {X-A: \"b\\0c\"}\n"),
    ("LF in a request header", "target", b"name: t\nbase_url: http://127.0.0.1:1\nactions:\n  create_order:\n"
     b"    role: create\n    request: {method: POST, path: /orders, headers: {X-A: \"b\\nc\"}}\n"),
    ("a space in a header name", "target", TARGET + b"headers: {\"X A\": b}\n"),
    ("a tab in a header value", "target", TARGET + b"headers: {X-A: \"b\\tc\"}\n"),
    ("request_timeout 0s", "target", TARGET + b"request_timeout: 0s\n"),
    ("request_timeout 0", "target", TARGET + b"request_timeout: 0\n"),
    ("a wait past 24h", "scenario", HEAD + b"steps:\n  - wait: 2562047h\nexpect: [one_record]\n"),
    ("a send timeout of 0ms", "scenario", HEAD + b"steps:\n  - send: a\n    timeout: 0ms\nexpect: [one_record]\n"),
    ("a wait of 24h", "scenario", HEAD + b"steps:\n  - wait: 24h\nexpect: [one_record]\n"),
    ("an unbalanced regex", "target", b"name: t\nbase_url: http://127.0.0.1:1\nstart:\n  argv: [x]\n"
     b"  port_from_stdout: '(\\d+'\nactions:\n  create_order: {role: create, request: {method: POST, path: /orders}}\n"),
    ("a lookahead regex", "target", b"name: t\nbase_url: http://127.0.0.1:1\nstart:\n  argv: [x]\n"
     b"  port_from_stdout: '(?=a)(\\d)'\nactions:\n  create_order: {role: create, request: {method: POST, path: /orders}}\n"),
    ("a 200,000-character bad action name", "target", b"name: t\nbase_url: http://127.0.0.1:1\nactions:\n  ? " + LONG +
     b"!\n  : {role: create, request: {method: POST, path: /orders}}\n"),
    ("a 200,000-character action name", "target", b"name: t\nbase_url: http://127.0.0.1:1\nactions:\n  ? " + LONG +
     b"\n  : {role: create, request: {method: POST, path: /orders}}\n"),
    ("a 200,000-character bad header name", "target", TARGET + b"headers:\n  ? " + LONG + b"@\n  : b\n"),
    ("a 200,000-character bad parameter name", "scenario", HEAD + b"for_each:\n  ? " + LONG +
     b"!\n  : {role: create}\nsteps:\n  - wait: 1s\nexpect: [one_record]\n"),
    ("a 200,000-character bad action reference", "scenario", HEAD + b"steps:\n  - send: " + LONG + b"!\nexpect: [one_record]\n"),
    # Not in hostile_files_test.cpp: the loaders' unknown keys and names, the schema's additionalProperties.
    ("an unknown top-level key", "target", TARGET + b"bogus: 1\n"),
    ("an unknown key in an action", "target", b"name: t\nbase_url: http://127.0.0.1:1\nactions:\n"
     b"  create_order: {role: create, request: {method: POST, path: /orders}, retries: 2}\n"),
    ("an unknown key in a request", "target", b"name: t\nbase_url: http://127.0.0.1:1\nactions:\n"
     b"  create_order: {role: create, request: {method: POST, path: /orders, qurey: {a: b}}}\n"),
    ("an unknown idempotency key", "target", TARGET + b"idempotency: {key_hedaer: X-Key}\n"),
    ("an unknown scenario key", "scenario", HEAD + b"steps: [{wait: 1s}]\nexpect: [one_record]\nretries: 1\n"),
    ("an unknown step kind", "scenario", HEAD + b"steps: [{sned: a}]\nexpect: [one_record]\n"),
    ("an unknown step option", "scenario", HEAD + b"steps: [{send: a, kye: k1}]\nexpect: [one_record]\n"),
    ("an unknown oracle", "scenario", HEAD + b"steps: [{wait: 1s}]\nexpect: [one_recrod]\n"),
    ("an unknown oracle parameter", "scenario", HEAD + b"steps: [{wait: 1s}]\nexpect: [{one_record: {actoins: [a]}}]\n"),
    ("a step option of another kind", "scenario", HEAD + b"steps: [{wait: 1s, key: k1}]\nexpect: [one_record]\n"),
    ("a minimal scenario", "scenario", HEAD + b"steps: [{send: a, key: k1}]\nexpect: [one_record]\n"),
]
# Rejected by the loader for a reason a JSON Schema cannot say.
EXCLUDED = {
    "a wait past 24h": "a duration's bound (at most 24h) is arithmetic over its number and unit, not its shape",
    "an unbalanced regex": "whether a string compiles as an RE2 regex (format: regex is an annotation, "
                           "and ECMA-262 regexes are not RE2's)",
    "a lookahead regex": "the same: lookahead is valid ECMA-262, not RE2",
}
agree = 0
for name, kind, data in CASES:
    loader = loader_rejects(kind, data)
    errors = schema_errors(kind, data)
    schema = bool(errors)
    if name in EXCLUDED:
        if not loader or schema:
            failures.append("excluded case %r: loader rejects=%s, schema rejects=%s; the exclusion (%s) no longer "
                            "holds: remove it" % (name, loader, schema, EXCLUDED[name]))
        continue
    if loader != schema:
        failures.append("case %r (%s): the loader %s, the schema %s%s" % (
            name, kind, "rejects" if loader else "accepts", "rejects" if schema else "accepts",
            (": " + errors[0]) if errors else ""))
    else:
        agree += 1
print("%d of %d hostile and malformed cases: the same verdict from loader and schema; %d excluded" %
      (agree, len(CASES), len(EXCLUDED)))

for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures else 0)
