#!/usr/bin/env node
// A card-payment provider for billing_service.js: the downstream the
// service calls, a separate process (Node.js 20, built-in http only).
// Like many real providers it does NOT deduplicate: every POST /charges is
// a new charge, so a service that charges twice charges the customer twice.
//
//   POST /charges            {"reference": R, "amount_cents": N, "customer": C} -> 201 {"id": "ch_...", ...those}
//   GET  /charges?reference=R {"charges": [...]}   the lookup a service reconciles an intent with
//   GET  /charges            {"charges": [...]}    every charge (the standalone test's assertions)
//   GET  /healthz            200
//
// Usage: provider.js --port N [--answer-delay-ms MS]
//   --port 0: any free port, the port line on stdout says which;
//   --answer-delay-ms: answer a charge that long after committing it (the
//   standalone test kills the service in that gap: after the charge, before
//   the service could record it).
// Charges live in memory: the provider is not the process under test.
'use strict';
const http = require('http');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const charges = [];
const answerDelayMs = Number(arg('--answer-delay-ms', '0'));

function send(res, status, doc) {
  const body = Buffer.from(JSON.stringify(doc));
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://provider');
    if (req.method === 'GET' && url.pathname === '/healthz') return send(res, 200, { ok: true });
    if (req.method === 'GET' && url.pathname === '/charges') {
      const ref = url.searchParams.get('reference');
      return send(res, 200, { charges: ref === null ? charges : charges.filter((c) => c.reference === ref) });
    }
    if (req.method === 'POST' && url.pathname === '/charges') {
      let doc;
      try {
        doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(res, 400, { error: 'bad_json' });
      }
      if (!doc || typeof doc.reference !== 'string' || !Number.isInteger(doc.amount_cents) || doc.amount_cents <= 0)
        return send(res, 400, { error: 'expected {"reference": "...", "amount_cents": N}' });
      const charge = { id: 'ch_' + (charges.length + 1), reference: doc.reference, amount_cents: doc.amount_cents,
        customer: typeof doc.customer === 'string' ? doc.customer : null };
      charges.push(charge);
      // --answer-delay-ms: a slow provider; the charge exists before the answer leaves.
      return setTimeout(() => send(res, 201, charge), answerDelayMs);
    }
    send(res, 404, { error: 'no_route' });
  });
});

server.listen(Number(arg('--port', '0')), '127.0.0.1', () => {
  console.log(`provider ${process.pid} listening on 127.0.0.1:${server.address().port}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
