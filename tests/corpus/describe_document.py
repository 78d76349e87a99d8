#!/usr/bin/env python3
"""What an OpenAPI document declares, counted independently of idemproof's
reader: its version, paths, write operations and where their idempotency key
sits (a header parameter or a request-body member, required or not).

  describe_document.py DOC [DOC ...]        one JSON object per document
  describe_document.py --tsv DOC [DOC ...]  the counting columns of expected.tsv

Used to fill and re-check tests/corpus/expected.tsv when a pinned version
changes; the corpus test itself compares init's output with that table.
"""
import json
import re
import sys

import yaml

WRITE_METHODS = ("post", "put", "patch", "delete")
# A key header: its name says idempotency, request id or deduplication, in
# any vendor spelling (Idempotency-Key, x-idempotency-key, X-Request-Id,
# Idempotency-Token, ...). Authorization-like headers are not keys.
KEY_HEADER = re.compile(r"idempot|dedup|request[-_]?id|client[-_]?token", re.I)
# A key body member, by name.
KEY_MEMBER = re.compile(r"^(idempotency[-_]?key|idempotency[-_]?token|client[-_]?token|request[-_]?id|dedup(lication)?[-_]?(id|key))$",
                        re.I)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".json"):
        return json.loads(data), len(data)
    return yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), len(data)


class Resolver:
    def __init__(self, root):
        self.root = root
        self.dangling = []

    def pointer(self, ref):
        if not ref.startswith("#"):
            self.dangling.append(ref)
            return None
        node = self.root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                self.dangling.append(ref)
                return None
        return node

    def deref(self, node, depth=0):
        while isinstance(node, dict) and "$ref" in node and depth < 32:
            node = self.pointer(node["$ref"])
            depth += 1
        return node

    def members(self, schema, seen=None):
        """The top-level properties of a body schema (allOf merged, every
        oneOf/anyOf alternative), name -> required."""
        seen = seen if seen is not None else set()
        schema = self.deref(schema)
        if not isinstance(schema, dict) or id(schema) in seen:
            return {}
        seen.add(id(schema))
        out = {}
        required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
        for name in (schema.get("properties") or {}):
            out[name] = out.get(name, False) or name in required
        for combo in ("allOf", "oneOf", "anyOf"):
            for part in schema.get(combo) or []:
                for name, req in self.members(part, seen).items():
                    out[name] = out.get(name, False) or req or name in required
        return out


def describe(path):
    doc, size = load(path)
    r = Resolver(doc)
    version = str(doc.get("openapi") or ("swagger " + str(doc.get("swagger"))) if doc.get("swagger") else doc.get("openapi"))
    paths = doc.get("paths") or {}
    writes = 0
    headers = {}  # name (as spelled) -> [ops, required ops]
    members = {}
    keyed_ops = []  # (METHOD, path) of the write operations that carry a key
    keyed_required = 0
    for p, item in paths.items():
        item = r.deref(item)
        if not isinstance(item, dict):
            continue
        path_params = [r.deref(x) for x in item.get("parameters") or []]
        for method in WRITE_METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            writes += 1
            op_keyed = False
            op_required = False
            params = path_params + [r.deref(x) for x in op.get("parameters") or []]
            for prm in params:
                if not isinstance(prm, dict) or prm.get("in") != "header":
                    continue
                name = str(prm.get("name", ""))
                if KEY_HEADER.search(name):
                    h = headers.setdefault(name, [0, 0])
                    h[0] += 1
                    op_keyed = True
                    if prm.get("required"):
                        h[1] += 1
                        op_required = True
            body = r.deref(op.get("requestBody"))
            if isinstance(body, dict):
                for mtype, media in (body.get("content") or {}).items():
                    media = r.deref(media)
                    if not isinstance(media, dict):
                        continue
                    for name, req in r.members(media.get("schema")).items():
                        if KEY_MEMBER.match(name):
                            m = members.setdefault(name, [0, 0])
                            m[0] += 1
                            op_keyed = True
                            if req:
                                m[1] += 1
                                op_required = True
                    break  # the first media type, as a client would send it
            if op_keyed:
                keyed_ops.append((method.upper(), p))
            keyed_required += op_required
    return {
        "document": path,
        "bytes": size,
        "version": version,
        "paths": len(paths),
        "writes": writes,
        "keyed": len(keyed_ops),
        "keyed_ops": keyed_ops,
        "keyed_required": keyed_required,
        "headers": {k: v for k, v in sorted(headers.items(), key=lambda kv: -kv[1][0])},
        "members": {k: v for k, v in sorted(members.items(), key=lambda kv: -kv[1][0])},
        "dangling_refs": sorted(set(r.dangling)),
    }


def main(argv):
    tsv = argv[:1] == ["--tsv"]
    for path in argv[1:] if tsv else argv:
        try:
            d = describe(path)
        except Exception as e:  # a document we cannot read is reported, not skipped
            print(json.dumps({"document": path, "error": str(e)}))
            continue
        if tsv:
            where = ",".join([f"header:{k}" for k in d["headers"]] + [f"body:{k}" for k in d["members"]]) or "none"
            print("\t".join(str(x) for x in (path, d["bytes"], d["version"], d["paths"], d["writes"], d["keyed"],
                                             d["keyed_required"], where)))
        else:
            print(json.dumps(d))


if __name__ == "__main__":
    main(sys.argv[1:])
