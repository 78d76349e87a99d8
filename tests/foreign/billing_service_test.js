// The second foreign service on its own, before any harness sees it
// (billing_service.js + provider.js, real processes on free loopback ports):
// every documented behaviour in correct mode, that each --bug really changes
// behaviour, and SIGKILL + restart mid-request. Every child is reaped (after
// each test), every wait has a deadline.
// Run: node --test tests/foreign/billing_service_test.js
'use strict';
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { test, afterEach } = require('node:test');

const DIR = __dirname;
const LEASE_MS = 1000;
const children = new Set();
const dirs = [];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// One request on its own connection: {status, headers, body, json}; rejects after 10 s.
function call(port, method, urlPath, { key, json, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? null : Buffer.from(JSON.stringify(json));
    const h = { ...headers };
    if (key) h['X-Idempotency-Key'] = key;
    if (body) Object.assign(h, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers: h, agent: false, timeout: 10000 },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed = null;
          try { parsed = JSON.parse(text); } catch { /* not JSON */ }
          resolve({ status: res.statusCode, headers: res.headers, body: text, json: parsed });
        });
        res.on('error', reject);
      });
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no answer in 10 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function waitReady(port, child) {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${child.stderrText}`);
    try {
      if ((await call(port, 'GET', '/healthz')).status === 200) return;
    } catch { /* not listening yet */ }
    await sleep(50);
  }
  throw new Error(`port ${port} not ready in 15 s`);
}

function start(argv) {
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderrText = '';
  child.stderr.on('data', (d) => { child.stderrText += d; });
  child.exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  children.add(child);
  return child;
}

async function stop(child, signal = 'SIGTERM') {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  const how = await child.exited;
  clearTimeout(killer);
  children.delete(child);
  return how;
}

afterEach(async () => {
  await Promise.all([...children].map((c) => stop(c)));
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

// A provider and a service on one fresh log. opts: {bug, ttlMs, leaseMs, providerArgs}.
async function world(opts = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-'));
  dirs.push(dir);
  const providerPort = await freePort();
  const provider = start([path.join(DIR, 'provider.js'), '--port', String(providerPort), ...(opts.providerArgs || [])]);
  await waitReady(providerPort, provider);
  const w = {
    dir, providerPort, provider, db: path.join(dir, 'billing.log'), leaseMs: opts.leaseMs || LEASE_MS,
    async launch(name = 'main') {
      const port = await freePort();
      const argv = [path.join(DIR, 'billing_service.js'), '--port', String(port), '--provider',
        `http://127.0.0.1:${providerPort}`, '--db', this.db, '--lease-ms', String(this.leaseMs),
        '--ttl-ms', String(opts.ttlMs || 60000)];
      if (opts.bug) argv.push('--bug', opts.bug);
      const child = start(argv);
      await waitReady(port, child);
      this[name] = { port, child };
      return this[name];
    },
    async charges() { return (await call(providerPort, 'GET', '/charges')).json.charges; },
  };
  await w.launch();
  return w;
}

// Waits until n claims are in the service's log (a request holds its key).
async function claimed(w, n = 1) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const text = fs.existsSync(w.db) ? fs.readFileSync(w.db, 'utf8') : '';
    if ((text.match(/"t":"claim"/g) || []).length >= n) return;
    assert.ok(Date.now() < deadline, 'no claim in the log in 5 s');
    await sleep(10);
  }
}

const sub = (customer, plan = 'basic') => ({ customer, plan, seats: 2 });
const count = async (port, what, customer) => (await call(port, 'GET', `/v1/${what}?customer=${customer}`)).json.count;

test('answers HTTP/1.0 with Connection: close', async () => {
  const w = await world();
  const raw = await new Promise((resolve, reject) => {
    const c = net.connect(w.main.port, '127.0.0.1', () => c.end('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    let text = '';
    c.setTimeout(5000, () => c.destroy(new Error('no answer in 5 s')));
    c.on('data', (d) => { text += d; });
    c.on('end', () => resolve(text));
    c.on('error', reject);
  });
  assert.match(raw, /^HTTP\/1\.0 200 OK\r\n/);
  assert.match(raw, /\r\nConnection: close\r\n/);
});

test('create: stored answer replayed byte for byte and marked, another body 422, no key no dedup', async () => {
  const { main: { port } } = await world();
  const first = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(first.status, 201);
  assert.equal(first.headers['x-idempotency-replayed'], undefined);
  assert.equal(first.headers.location, `/v1/subscriptions/${first.json.subscription.id}`);
  const again = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(again.status, 201);
  assert.equal(again.body, first.body);
  assert.equal(again.headers['x-idempotency-replayed'], 'true');
  assert.equal(again.headers.location, first.headers.location);
  const other = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1', 'pro') });
  assert.equal(other.status, 422);
  assert.equal(await count(port, 'subscriptions', 'c1'), 1);
  // keyless: both execute, neither is a replay
  for (let i = 0; i < 2; i++) {
    const a = await call(port, 'POST', '/v1/subscriptions', { json: sub('c2') });
    assert.equal(a.status, 201);
    assert.equal(a.headers['x-idempotency-replayed'], undefined);
  }
  assert.equal(await count(port, 'subscriptions', 'c2'), 2);
  // the key is per route: the same key on another route is its own request
  const inv = await call(port, 'POST', '/v1/invoices', { key: 'k1', json: { customer: 'c1', lines: [{ sku: 'seat', cents: 900 }] } });
  assert.equal(inv.status, 201);
  assert.equal(await count(port, 'invoices', 'c1'), 1);
});

test('a duplicate while the first is slow gets 409 with Retry-After, later the stored answer', async () => {
  const w = await world();
  const { port } = w.main;
  const slow = call(port, 'POST', '/v1/subscriptions?slow_ms=1500', { key: 'k1', json: sub('c1') });
  await claimed(w);
  const dup = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(dup.status, 409);
  assert.equal(dup.headers['retry-after'], '1');
  const first = await slow;
  assert.equal(first.status, 201);
  const later = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(later.body, first.body);
});

test('a flaky plan fails once per customer with 503, nothing stored, the retry executes', async () => {
  const { main: { port } } = await world();
  const failed = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1', 'flaky') });
  assert.equal(failed.status, 503);
  assert.equal(failed.headers['retry-after'], '1');
  assert.equal(await count(port, 'subscriptions', 'c1'), 0);
  const retry = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1', 'flaky') });
  assert.equal(retry.status, 201);
  assert.equal(retry.headers['x-idempotency-replayed'], undefined);
  assert.equal(await count(port, 'subscriptions', 'c1'), 1);
  // an invoice line: the same backend, once per customer
  const inv = { customer: 'c3', lines: [{ sku: 'flaky', cents: 100 }] };
  assert.equal((await call(port, 'POST', '/v1/invoices', { key: 'i1', json: inv })).status, 503);
  assert.equal((await call(port, 'POST', '/v1/invoices', { key: 'i1', json: inv })).status, 201);
});

test('plan change and cancel: keyless PUT sets a state, DELETE is keyed per route', async () => {
  const { main: { port } } = await world();
  const created = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  const id = created.json.subscription.id;
  const put1 = await call(port, 'PUT', `/v1/subscriptions/${id}/plan`, { json: { plan: 'pro' } });
  const put2 = await call(port, 'PUT', `/v1/subscriptions/${id}/plan`, { json: { plan: 'pro' } });
  assert.equal(put1.status, 200);
  assert.equal(put2.body, put1.body);
  const cancel = await call(port, 'DELETE', `/v1/subscriptions/${id}`, { key: 'k1' });  // the create's key
  assert.equal(cancel.status, 200);
  assert.equal(cancel.headers['x-idempotency-replayed'], undefined);
  assert.equal(cancel.json.subscription.status, 'canceled');
  const res = await call(port, 'GET', `/v1/subscriptions/${id}`);
  assert.deepEqual(res.json.subscription, { ...created.json.subscription, plan: 'pro', status: 'canceled' });
  assert.equal((await call(port, 'GET', '/v1/subscriptions/sub_999')).status, 404);
});

test('a payment charges the provider once and records the charge id', async () => {
  const w = await world();
  const pay = { customer: 'c1', cents: 4200 };
  const first = await call(w.main.port, 'POST', '/v1/payments', { key: 'p1', json: pay });
  assert.equal(first.status, 201);
  const again = await call(w.main.port, 'POST', '/v1/payments', { key: 'p1', json: pay });
  assert.equal(again.body, first.body);
  const charges = await w.charges();
  assert.equal(charges.length, 1);
  assert.equal(first.json.payment.charge_id, charges[0].id);
  assert.equal(charges[0].amount_cents, 4200);
  assert.equal(charges[0].customer, 'c1');
});

test('records survive SIGKILL + restart; they expire after the ttl', async () => {
  const ttlMs = 5000;
  const w = await world({ ttlMs });
  const first = await call(w.main.port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  const answeredAt = Date.now();
  assert.equal((await stop(w.main.child, 'SIGKILL')).signal, 'SIGKILL');
  const { port } = await w.launch();
  assert.ok(Date.now() < answeredAt + ttlMs - 500, 'the restart took too long to see the record live');
  const again = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(again.body, first.body);
  assert.equal(again.headers['x-idempotency-replayed'], 'true');
  await sleep(answeredAt + ttlMs + 200 - Date.now());
  const expired = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(expired.status, 201);
  assert.equal(expired.headers['x-idempotency-replayed'], undefined);
  assert.equal(await count(port, 'subscriptions', 'c1'), 2);
});

// SIGKILL while a slow create holds its key; the restarted service answers
// 409 until the lease ran out, then executes once. Returns the answers.
async function crashMidRequest(w) {
  const cut = call(w.main.port, 'POST', '/v1/subscriptions?slow_ms=3000', { key: 'k1', json: sub('c1') }).catch((e) => e);
  await claimed(w);
  await stop(w.main.child, 'SIGKILL');
  const killedAt = Date.now();
  assert.ok((await cut) instanceof Error, 'the cut request got no answer');
  const { port } = await w.launch();
  // The claim was taken before the kill, so its lease surely holds until killedAt.
  assert.ok(Date.now() < killedAt + w.leaseMs - 500, 'the restart took too long to see the lease hold');
  const early = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  await sleep(killedAt + w.leaseMs + 200 - Date.now());
  const late = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  return { early, late, records: await count(port, 'subscriptions', 'c1') };
}

test('a crash mid-request: the key is in progress until the lease, then executes once', async () => {
  const { early, late, records } = await crashMidRequest(await world({ leaseMs: 4000 }));
  assert.equal(early.status, 409);
  assert.equal(late.status, 201);
  assert.equal(records, 1);
});

// SIGKILL after the provider committed the charge, before the service got
// the answer (the provider answers 1.5 s late); restart, retry after the lease.
async function killAfterCharge(w) {
  const pay = { customer: 'c1', cents: 4200 };
  const cut = call(w.main.port, 'POST', '/v1/payments', { key: 'p1', json: pay }).catch((e) => e);
  const deadline = Date.now() + 5000;
  while ((await w.charges()).length === 0) {
    assert.ok(Date.now() < deadline, 'no charge reached the provider in 5 s');
    await sleep(20);
  }
  await stop(w.main.child, 'SIGKILL');
  assert.ok((await cut) instanceof Error, 'the cut request got no answer');
  const { port } = await w.launch();
  await sleep(LEASE_MS + 200);
  const retry = await call(port, 'POST', '/v1/payments', { key: 'p1', json: pay });
  return { retry, charges: await w.charges() };
}

test('a kill after the charge: the retry reconciles the intent, no second charge', async () => {
  const { retry, charges } = await killAfterCharge(await world({ providerArgs: ['--answer-delay-ms', '1500'] }));
  assert.equal(retry.status, 201);
  assert.equal(charges.length, 1);
  assert.equal(retry.json.payment.charge_id, charges[0].id);
});

test('two instances on one log: a frozen owner resuming after a takeover is fenced', async () => {
  const w = await world();
  const second = await w.launch('second');
  const owner = call(w.main.port, 'POST', '/v1/subscriptions?slow_ms=3000', { key: 'k1', json: sub('c1') });
  await claimed(w);
  w.main.child.kill('SIGSTOP');  // frozen in its slow step, holding the key
  await sleep(LEASE_MS + 300);
  const takeover = await call(second.port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  w.main.child.kill('SIGCONT');
  const resumed = await owner;
  assert.equal(takeover.status, 201);
  assert.equal(resumed.body, takeover.body);
  assert.equal(resumed.headers['x-idempotency-replayed'], 'true');
  assert.equal(await count(second.port, 'subscriptions', 'c1'), 1);
});

// ---- each bug switch changes behaviour ---------------------------------------------

// n identical requests at once on n connections, `trials` times (new customer
// each); the largest record count seen.
async function burst(port, n, trials) {
  let worst = 0;
  for (let t = 0; t < trials && worst < 2; t++) {
    const customer = `burst${t}`;
    await Promise.all(Array.from({ length: n }, () =>
      call(port, 'POST', '/v1/subscriptions', { key: `b${t}`, json: sub(customer) })));
    worst = Math.max(worst, await count(port, 'subscriptions', customer));
  }
  return worst;
}

test('correct: a burst of 8 identical requests executes once', async () => {
  const { main: { port } } = await world();
  assert.equal(await burst(port, 8, 3), 1);
});

test('bug race: a burst of 8 identical requests executes more than once (5 tries at most)', async () => {
  const { main: { port } } = await world({ bug: 'race' });
  assert.ok(await burst(port, 8, 5) > 1);
});

test('bug ignore-body: a reused key with another body is replayed, not 422', async () => {
  const { main: { port } } = await world({ bug: 'ignore-body' });
  const first = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  const other = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1', 'pro') });
  assert.equal(other.status, 201);
  assert.equal(other.body, first.body);
});

test('bug store-retryable: the 503 is replayed to the retry', async () => {
  const { main: { port } } = await world({ bug: 'store-retryable' });
  assert.equal((await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1', 'flaky') })).status, 503);
  const retry = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1', 'flaky') });
  assert.equal(retry.status, 503);
  assert.equal(retry.headers['x-idempotency-replayed'], 'true');
  assert.equal(await count(port, 'subscriptions', 'c1'), 0);
});

test('bug claim-forever: after a crash the key stays in progress past the lease', async () => {
  const { early, late, records } = await crashMidRequest(await world({ bug: 'claim-forever', leaseMs: 4000 }));
  assert.equal(early.status, 409);
  assert.equal(late.status, 409);
  assert.equal(records, 0);
});

test('bug no-intent: a kill after the charge, then the retry charges a second time', async () => {
  const { retry, charges } = await killAfterCharge(await world({ bug: 'no-intent', providerArgs: ['--answer-delay-ms', '1500'] }));
  assert.equal(retry.status, 201);
  assert.equal(charges.length, 2);
});

test('bug no-retry-after: the in-progress 409 has no Retry-After', async () => {
  const w = await world({ bug: 'no-retry-after' });
  const { port } = w.main;
  const slow = call(port, 'POST', '/v1/subscriptions?slow_ms=1500', { key: 'k1', json: sub('c1') });
  await claimed(w);
  const dup = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(dup.status, 409);
  assert.equal(dup.headers['retry-after'], undefined);
  assert.equal((await slow).status, 201);
});

test('bug replay-200: the replay of a 201 answers 200', async () => {
  const { main: { port } } = await world({ bug: 'replay-200' });
  const first = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  const again = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(first.status, 201);
  assert.equal(again.status, 200);
  assert.equal(again.body, first.body);
});

test('bug completed-conflict: a retry of a completed key is refused 409', async () => {
  const { main: { port } } = await world({ bug: 'completed-conflict' });
  assert.equal((await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') })).status, 201);
  const again = await call(port, 'POST', '/v1/subscriptions', { key: 'k1', json: sub('c1') });
  assert.equal(again.status, 409);
  assert.equal(again.json.error.code, 'key_already_used');
});

test('bad usage exits 2: no --port 0, unknown bug', async () => {
  for (const extra of [['--port', '0'], ['--port', '1', '--bug', 'nope']]) {
    const child = start([path.join(DIR, 'billing_service.js'), '--provider', 'http://127.0.0.1:1', '--db',
      path.join(os.tmpdir(), 'unused.log'), ...extra]);
    assert.equal((await stop(child, 0)).code, 2);
  }
});
