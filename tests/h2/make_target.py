#!/usr/bin/env python3
"""Writes an HTTP/2 variant of scenarios/targets/reference.yaml: the reference
behind haproxy's h2c front (tests/transport/tls_front.sh), with `http: 2`;
`direct`: the reference itself, spoken to in h2c on its own port.
usage: make_target.py SOURCE_DIR OUT_FILE CERTS_DIR [trace:false] [direct]"""
import sys

src, out, certs = sys.argv[1], sys.argv[2], sys.argv[3]
direct = "direct" in sys.argv[4:]
extra = [a for a in sys.argv[4:] if a != "direct"]
text = open(f"{src}/scenarios/targets/reference.yaml").read()


def swap(old, new):
    global text
    if old not in text:
        sys.exit(f"make_target.py: reference.yaml no longer has {old!r}")
    text = text.replace(old, new, 1)


swap('name: reference\n', 'name: reference-h2c\n')
if not direct:
    swap('  argv: ["{{build_dir}}/reference-impl/idemproof-ref",',
         f'  argv: ["bash", "{src}/tests/transport/tls_front.sh", "front", "--certs", "{certs}", "--",\n'
         '         "{{build_dir}}/reference-impl/idemproof-ref",')
    swap("  port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'",
         "  port_from_stdout: 'h2c front on 127\\.0\\.0\\.1:(\\d+)'")
swap('base_url: "http://127.0.0.1:{{port}}"\n', 'base_url: "http://127.0.0.1:{{port}}"\nhttp: 2\n')
for e in extra:
    key, value = e.split(":", 1)
    text = text.replace("http: 2\n", f"http: 2\n{key}: {value}\n", 1)
open(out, "w").write(text)
