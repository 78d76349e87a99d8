#!/usr/bin/env node
// A subscription-billing API idemproof was never written for: the second
// foreign service (docs/foreign-target.md), Node.js 20, built-in modules
// only. It is a service "as it is": no chaos endpoint, no ledger or intent
// API, no --port 0. Described by scenarios/targets/foreign-node.yaml alone.
//
//   POST   /v1/subscriptions            {"customer", "plan", "seats"}  201 {"subscription": {...}}
//   GET    /v1/subscriptions?customer=C {"subscriptions": [...], "count": N}
//   GET    /v1/subscriptions/ID         {"subscription": {...}}
//   PUT    /v1/subscriptions/ID/plan    {"plan"}                       200 {"subscription": {...}}
//   DELETE /v1/subscriptions/ID                                        200 {"subscription": {..., "status": "canceled"}}
//   POST   /v1/invoices                 {"customer", "lines": [{"sku", "cents"}]}  201 {"invoice": {...}}
//   GET    /v1/invoices?customer=C      {"invoices": [...], "count": N}
//   POST   /v1/payments                 {"customer", "cents"}  charges the card at the provider; 201 {"payment": {..., "charge_id"}}
//   GET    /v1/payments?customer=C      {"payments": [...], "count": N}
//   GET    /healthz                     200 when ready
//
// What its documentation promises:
//  - Every write takes an optional X-Idempotency-Key header. Without it the
//    request is simply processed (no deduplication).
//  - With it, the key is scoped to the route (method + path) and bound to a
//    fingerprint of method, path and body: the same key with another body is
//    422; a retry while the first is running is 409 with Retry-After; a retry
//    after it finished gets the stored answer, byte for byte, marked
//    "X-Idempotency-Replayed: true". A failure the client should retry
//    (503) is not stored: the retry executes.
//  - Keys are kept --ttl-ms after their answer. A claim whose owner died is
//    taken over after --lease-ms.
//  - A payment writes an intent (the reference it will send the provider)
//    before it calls the provider; a retry that finds an intent asks the
//    provider for that reference before charging, so a crash between the
//    charge and its record never charges twice.
//  - ?slow_ms=N on any write slows its business step by N ms (max 10000).
//  - A plan or an invoice line sku "flaky" is priced by a pricing backend
//    that fails the first time for each customer: 503 with Retry-After,
//    nothing stored; the retry succeeds.
//  - Answers are HTTP/1.0 with Connection: close.
//
// Usage: billing_service.js --port N --provider URL --db FILE
//                           [--lease-ms 2000] [--ttl-ms 86400000] [--bug NAME]
// --db is an append-only JSON-lines log, written before any answer (it
// survives SIGKILL; no fsync, so not a power cut). Several instances may
// share one --db: each write is a short transaction under a lock file.
//
// --bug NAME switches on one mistake real idempotency code makes (BUGS).
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');

const BUGS = {
  race: 'checks the key, awaits a fraud check, then inserts the claim: two concurrent requests both insert',
  'ignore-body': 'the fingerprint covers method and path only: a reused key with another body is replayed',
  'store-retryable': 'a 503 from the pricing backend or the provider is stored as the key\'s final answer',
  'claim-forever': 'an in-progress claim never expires by lease: a crashed owner blocks the key for the whole ttl',
  'no-intent': 'a payment charges the provider with no intent written first: a retry after a crash charges again',
  'no-retry-after': 'the 409 "in progress" answer carries no Retry-After',
  'replay-200': 'a replay answers 200 whatever the stored status was (the stored 201 is lost)',
  'completed-conflict': 'a retry of a completed key is refused 409 "key already used" instead of the stored answer',
};

// ---- options ---------------------------------------------------------------

function usage(message) {
  process.stderr.write(`billing_service: ${message}\n` +
    'usage: billing_service.js --port N --provider URL --db FILE [--lease-ms MS] [--ttl-ms MS] [--bug NAME]\n' +
    `bugs: ${Object.keys(BUGS).join(', ')}\n`);
  process.exit(2);
}

function parseOptions(argv) {
  const opts = { leaseMs: 2000, ttlMs: 86400000, bug: null };
  const names = { '--port': 'port', '--provider': 'provider', '--db': 'db', '--lease-ms': 'leaseMs',
    '--ttl-ms': 'ttlMs', '--bug': 'bug' };
  for (let i = 0; i < argv.length; i += 2) {
    const name = names[argv[i]];
    if (!name) usage(`unknown option ${argv[i]}`);
    if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
    opts[name] = argv[i + 1];
  }
  for (const need of ['port', 'provider', 'db']) if (opts[need] === undefined) usage(`--${need} is required`);
  opts.port = Number(opts.port);
  // No --port 0: the caller picks the port (start.free_port in the target file).
  if (!Number.isInteger(opts.port) || opts.port < 1 || opts.port > 65535) usage('--port must be 1-65535');
  opts.leaseMs = Number(opts.leaseMs);
  opts.ttlMs = Number(opts.ttlMs);
  if (!(opts.leaseMs > 0) || !(opts.ttlMs > 0)) usage('--lease-ms and --ttl-ms must be positive');
  if (opts.bug !== null && !(opts.bug in BUGS)) usage(`unknown bug ${opts.bug}`);
  try {
    opts.provider = new URL(opts.provider);
  } catch {
    usage(`--provider is not a URL: ${opts.provider}`);
  }
  return opts;
}

const opts = parseOptions(process.argv.slice(2));
const bug = opts.bug;

// ---- the store: an append-only log shared by every instance ------------------

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function emptyState() {
  // keys: scope -> {fp, state: running|done, owner, lease_until, expires_at, intent, status, headers, body}
  return { seq: 0, keys: new Map(), subscriptions: new Map(), invoices: new Map(), payments: [] };
}

function apply(s, rec) {
  if (rec.seq) s.seq = Math.max(s.seq, rec.seq);
  const k = rec.scope === undefined ? undefined : s.keys.get(rec.scope);
  switch (rec.t) {
    case 'claim':
      s.keys.set(rec.scope, { fp: rec.fp, state: 'running', owner: rec.owner, lease_until: rec.lease_until,
        expires_at: rec.expires_at, intent: null });
      break;
    case 'takeover':
      Object.assign(k, { owner: rec.owner, lease_until: rec.lease_until, expires_at: rec.expires_at });
      break;
    case 'intent':
      k.intent = rec.intent;
      break;
    case 'release':  // a retryable failure: the key is free again; an intent stays to be reconciled
      if (k && k.owner === rec.owner) {
        if (k.intent) k.lease_until = 0;
        else s.keys.delete(rec.scope);
      }
      break;
    case 'done':
      Object.assign(k, { state: 'done', status: rec.status, headers: rec.headers, body: rec.body,
        expires_at: rec.expires_at });
      break;
    case 'subscription':
      s.subscriptions.set(rec.subscription.id, rec.subscription);
      break;
    case 'invoice':
      s.invoices.set(rec.invoice.id, rec.invoice);
      break;
    case 'payment':
      s.payments.push(rec.payment);
      break;
    default:
      throw new Error(`unknown log record ${rec.t}`);
  }
}

class Store {
  constructor(path) {
    this.lockPath = `${path}.lock`;
    this.fd = fs.openSync(path, 'a+');
    this.offset = 0;
    this.state = emptyState();
    this.tx(() => {});  // read what earlier runs wrote
  }

  // Runs fn(state, append) under the lock, after reading what other instances
  // appended. Synchronous: nothing else of this process runs in between.
  tx(fn) {
    this.lock();
    try {
      this.catchUp();
      return fn(this.state, (rec) => {
        const line = Buffer.from(`${JSON.stringify(rec)}\n`);
        fs.writeSync(this.fd, line);
        this.offset += line.length;
        apply(this.state, rec);
      });
    } finally {
      fs.unlinkSync(this.lockPath);
    }
  }

  catchUp() {
    const size = fs.fstatSync(this.fd).size;
    if (size === this.offset) return;
    const buf = Buffer.alloc(size - this.offset);
    fs.readSync(this.fd, buf, 0, buf.length, this.offset);
    this.offset = size;
    const lines = buf.toString('utf8').split('\n');
    if (lines[lines.length - 1] !== '') {
      // A writer killed mid-line: end the torn line so the next record starts clean.
      fs.writeSync(this.fd, '\n');
      this.offset += 1;
    }
    for (const line of lines) {
      if (!line) continue;
      let rec;
      try {
        rec = JSON.parse(line);
      } catch {
        continue;  // the torn line: that write never happened
      }
      apply(this.state, rec);
    }
  }

  // The lock is a file created exclusively, holding its owner's pid; a lock
  // whose owner died (SIGKILL inside a transaction) is broken.
  lock() {
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        const fd = fs.openSync(this.lockPath, 'wx');
        fs.writeSync(fd, String(process.pid));
        fs.closeSync(fd);
        return;
      } catch (e) {
        if (e.code !== 'EEXIST') throw e;
      }
      if (this.holderDead()) {
        try { fs.unlinkSync(this.lockPath); } catch { /* another instance broke it first */ }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`store lock ${this.lockPath} held for 5 s`);
      sleepSync(1);
    }
  }

  holderDead() {
    let pid;
    try {
      pid = Number(fs.readFileSync(this.lockPath, 'utf8'));
    } catch {
      return false;  // gone already
    }
    if (!pid) return false;  // created, pid not written yet
    try {
      process.kill(pid, 0);
      return false;
    } catch (e) {
      return e.code === 'ESRCH';
    }
  }
}

const store = new Store(opts.db);

// ---- answers -------------------------------------------------------------------

function answer(status, doc, extraHeaders = []) {
  return { status, headers: [['Content-Type', 'application/json'], ...extraHeaders], body: JSON.stringify(doc) };
}

function problem(status, code, message, extraHeaders = []) {
  return answer(status, { error: { code, message } }, extraHeaders);
}

function retryLater(code, message) {
  return problem(503, code, message, [['Retry-After', '1']]);
}

// Node's http module always writes "HTTP/1.1" status lines; this service
// answers HTTP/1.0, so the answer goes straight onto the socket.
function writeAnswer(req, a) {
  const body = Buffer.from(a.body);
  const lines = [`HTTP/1.0 ${a.status} ${http.STATUS_CODES[a.status] || 'Status'}`, `Date: ${new Date().toUTCString()}`];
  for (const [name, value] of a.headers) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${body.length}`, 'Connection: close', '', '');
  req.socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), body]));
}

// ---- idempotency -----------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

function fingerprint(method, path, doc) {
  const parts = bug === 'ignore-body' ? [method, path] : [method, path, canonical(doc)];
  return crypto.createHash('sha256').update(parts.join('\n')).digest('hex');
}

function inProgress() {
  const headers = bug === 'no-retry-after' ? [] : [['Retry-After', '1']];
  return problem(409, 'request_in_progress', 'a request with this idempotency key is still running', headers);
}

function replay(k) {
  if (bug === 'completed-conflict') return problem(409, 'key_already_used', 'this idempotency key was already used');
  return { status: bug === 'replay-200' ? 200 : k.status, headers: [...k.headers, ['X-Idempotency-Replayed', 'true']],
    body: k.body };
}

// The answer for a key someone else holds (or null: this request may run).
function existing(k, fp, now) {
  if (k.fp !== fp) return problem(422, 'key_reused', 'this idempotency key was used with another request');
  if (k.state === 'done') return replay(k);
  if (bug === 'claim-forever' || k.lease_until > now) return inProgress();
  return null;
}

function live(s, scope, now) {
  const k = s.keys.get(scope);
  return k && k.expires_at > now ? k : undefined;
}

// Claims the key for owner: null when this request runs, else the answer.
async function claim(scope, fp, owner) {
  const lease = () => ({ owner, lease_until: Date.now() + opts.leaseMs, expires_at: Date.now() + opts.ttlMs });
  if (bug === 'race') {
    const seen = store.tx((s) => { const k = live(s, scope, Date.now()); return k ? existing(k, fp, Date.now()) : 'free'; });
    if (seen !== 'free') return seen;
    await sleep(25);  // "fraud check" between the lookup and the insert
    store.tx((s, append) => append({ t: 'claim', scope, fp, ...lease() }));
    return null;
  }
  return store.tx((s, append) => {
    const now = Date.now();
    const k = live(s, scope, now);
    if (!k) {
      append({ t: 'claim', scope, fp, ...lease() });
      return null;
    }
    const a = existing(k, fp, now);
    if (a === null) append({ t: 'takeover', scope, ...lease() });  // the owner's lease ran out: it died or froze
    return a;
  });
}

class Fenced extends Error {}

// The key's record if owner still holds it; a takeover fences the old owner out.
// (race: check-then-insert code has no owner token either: nothing is fenced.)
function held(s, scope, owner) {
  const k = s.keys.get(scope);
  if (bug === 'race' && k) return k;
  if (!k || k.owner !== owner || k.state !== 'running') throw new Fenced();
  return k;
}

// Runs one write. work(ctx) does the slow part (pricing, the provider) and
// returns either an answer to give without storing anything (a retryable
// failure) or commit(state, append) -> answer, the business write, run in
// one transaction with the key's completion. ctx: {key, scope, owner}.
async function idempotent(req, path, doc, work) {
  const key = req.headers['x-idempotency-key'];
  if (!key) {  // documented: processed, not deduplicated
    const outcome = await work({});
    return typeof outcome === 'function' ? store.tx(outcome) : outcome;
  }
  const ctx = { key, scope: `${req.method} ${path} ${key}`, owner: crypto.randomBytes(8).toString('hex') };
  const taken = await claim(ctx.scope, fingerprint(req.method, path, doc), ctx.owner);
  if (taken) return taken;
  try {
    const outcome = await work(ctx);
    return store.tx((s, append) => {
      held(s, ctx.scope, ctx.owner);
      const a = typeof outcome === 'function' ? outcome(s, append) : outcome;
      if (typeof outcome === 'function' || bug === 'store-retryable')
        append({ t: 'done', scope: ctx.scope, status: a.status, headers: a.headers, body: a.body,
          expires_at: Date.now() + opts.ttlMs });
      else append({ t: 'release', scope: ctx.scope, owner: ctx.owner });
      return a;
    });
  } catch (e) {
    if (!(e instanceof Fenced)) {
      store.tx((s, append) => append({ t: 'release', scope: ctx.scope, owner: ctx.owner }));
      throw e;
    }
    // Someone took the key over while this request was slow: theirs is the answer.
    return store.tx((s) => {
      const k = s.keys.get(ctx.scope);
      return k && k.state === 'done' ? replay(k) : inProgress();
    });
  }
}

// ---- the business -------------------------------------------------------------

const pricingFailedOnce = new Set();  // customers the pricing backend already failed for (per process)

function pricingFails(customer, codes) {
  if (!codes.includes('flaky') || pricingFailedOnce.has(customer)) return false;
  pricingFailedOnce.add(customer);
  return true;
}

async function slowStep(query) {
  const ms = Number(query.get('slow_ms') || 0);
  if (ms > 0) await sleep(Math.min(ms, 10000));
}

function created(prefix, s, fields) {
  const seq = s.seq + 1;
  return { seq, value: { id: `${prefix}_${seq}`, ...fields, created_at: new Date().toISOString() } };
}

function need(cond, message) {
  if (!cond) throw Object.assign(new Error(message), { status: 400 });
}

function createSubscription(req, query, doc) {
  need(doc && typeof doc.customer === 'string' && doc.customer && typeof doc.plan === 'string' && doc.plan,
    'expected {"customer": "...", "plan": "...", "seats": N}');
  const seats = doc.seats === undefined ? 1 : doc.seats;
  need(Number.isInteger(seats) && seats > 0, 'seats must be a positive integer');
  return idempotent(req, '/v1/subscriptions', doc, async () => {
    await slowStep(query);
    if (pricingFails(doc.customer, [doc.plan])) return retryLater('pricing_unavailable', 'the pricing backend failed; retry');
    return (s, append) => {
      const { seq, value } = created('sub', s, { customer: doc.customer, plan: doc.plan, seats, status: 'active' });
      append({ t: 'subscription', seq, subscription: value });
      return answer(201, { subscription: value }, [['Location', `/v1/subscriptions/${value.id}`]]);
    };
  });
}

function changeSubscription(req, query, id, doc, change) {
  return idempotent(req, `/v1/subscriptions/${id}${change.suffix}`, doc, async () => {
    await slowStep(query);
    return (s, append) => {
      const sub = s.subscriptions.get(id);
      if (!sub) return problem(404, 'not_found', `no subscription ${id}`);
      const next = { ...sub, ...change.fields };
      append({ t: 'subscription', subscription: next });
      return answer(200, { subscription: next });
    };
  });
}

function createInvoice(req, query, doc) {
  need(doc && typeof doc.customer === 'string' && doc.customer && Array.isArray(doc.lines) && doc.lines.length > 0 &&
    doc.lines.every((l) => l && typeof l.sku === 'string' && Number.isInteger(l.cents) && l.cents > 0),
  'expected {"customer": "...", "lines": [{"sku": "...", "cents": N}]}');
  return idempotent(req, '/v1/invoices', doc, async () => {
    await slowStep(query);
    if (pricingFails(doc.customer, doc.lines.map((l) => l.sku)))
      return retryLater('pricing_unavailable', 'the pricing backend failed; retry');
    return (s, append) => {
      const total = doc.lines.reduce((sum, l) => sum + l.cents, 0);
      const { seq, value } = created('inv', s, { customer: doc.customer, lines: doc.lines, total_cents: total,
        status: 'open' });
      append({ t: 'invoice', seq, invoice: value });
      return answer(201, { invoice: value }, [['Location', `/v1/invoices/${value.id}`]]);
    };
  });
}

// One call to the provider, with a deadline: {status, doc} or null when it
// did not answer.
function callProvider(method, path, doc) {
  return new Promise((resolve) => {
    const body = doc === undefined ? null : Buffer.from(JSON.stringify(doc));
    const req = http.request(new URL(path, opts.provider), {
      method, timeout: 5000, agent: false,
      headers: body ? { 'Content-Type': 'application/json', 'Content-Length': body.length } : {},
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode, doc: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch {
          resolve({ status: res.statusCode, doc: null });
        }
      });
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy(new Error('provider timeout')));
    req.on('error', () => resolve(null));
    req.end(body);
  });
}

function createPayment(req, query, doc) {
  need(doc && typeof doc.customer === 'string' && doc.customer && Number.isInteger(doc.cents) && doc.cents > 0,
    'expected {"customer": "...", "cents": N}');
  return idempotent(req, '/v1/payments', doc, async (ctx) => {
    await slowStep(query);
    let reference = `pi_${crypto.randomBytes(8).toString('hex')}`;
    let chargeId = null;
    if (ctx.scope && bug !== 'no-intent') {
      // The intent first: a retry after a crash finds it and asks the provider.
      const intent = store.tx((s, append) => {
        const k = held(s, ctx.scope, ctx.owner);
        if (k.intent) return { ...k.intent, resumed: true };
        append({ t: 'intent', scope: ctx.scope, intent: { reference } });
        return { reference };
      });
      reference = intent.reference;
      if (intent.resumed) {
        const found = await callProvider('GET', `/charges?reference=${encodeURIComponent(reference)}`);
        if (!found || found.status !== 200 || !found.doc || !Array.isArray(found.doc.charges))
          return retryLater('provider_unavailable', 'could not reconcile with the payment provider; retry');
        if (found.doc.charges.length > 0) chargeId = found.doc.charges[0].id;
      }
    }
    if (chargeId === null) {
      const charge = await callProvider('POST', '/charges', { reference, amount_cents: doc.cents, customer: doc.customer });
      if (!charge || charge.status !== 201 || !charge.doc || typeof charge.doc.id !== 'string')
        return retryLater('provider_unavailable', 'the payment provider did not confirm the charge; retry');
      chargeId = charge.doc.id;
    }
    return (s, append) => {
      const { seq, value } = created('pay', s, { customer: doc.customer, cents: doc.cents, charge_id: chargeId,
        reference });
      append({ t: 'payment', seq, payment: value });
      return answer(201, { payment: value }, [['Location', `/v1/payments/${value.id}`]]);
    };
  });
}

function listing(name, items) {
  return answer(200, { [name]: items, count: items.length });
}

// ---- routing ---------------------------------------------------------------------

async function route(req, raw) {
  const url = new URL(req.url, 'http://billing');
  const path = url.pathname;
  const q = url.searchParams;
  let doc = null;
  if (raw.length > 0) {
    try {
      doc = JSON.parse(raw.toString('utf8'));
    } catch {
      return problem(400, 'bad_json', 'the body is not JSON');
    }
  }
  const sub = /^\/v1\/subscriptions\/([A-Za-z0-9_]+)(\/plan)?$/.exec(path);
  const m = req.method;
  const view = (fn) => store.tx(fn);
  if (m === 'GET' && path === '/healthz') return answer(200, { ok: true });
  if (m === 'POST' && path === '/v1/subscriptions') return createSubscription(req, q, doc);
  if (m === 'GET' && path === '/v1/subscriptions')
    return view((s) => listing('subscriptions', [...s.subscriptions.values()].filter((x) => x.customer === q.get('customer'))));
  if (sub && !sub[2] && m === 'GET')
    return view((s) => (s.subscriptions.has(sub[1]) ? answer(200, { subscription: s.subscriptions.get(sub[1]) })
      : problem(404, 'not_found', `no subscription ${sub[1]}`)));
  if (sub && sub[2] && m === 'PUT') {
    need(doc && typeof doc.plan === 'string' && doc.plan, 'expected {"plan": "..."}');
    return changeSubscription(req, q, sub[1], doc, { suffix: '/plan', fields: { plan: doc.plan } });
  }
  if (sub && !sub[2] && m === 'DELETE')
    return changeSubscription(req, q, sub[1], doc, { suffix: '', fields: { status: 'canceled' } });
  if (m === 'POST' && path === '/v1/invoices') return createInvoice(req, q, doc);
  if (m === 'GET' && path === '/v1/invoices')
    return view((s) => listing('invoices', [...s.invoices.values()].filter((x) => x.customer === q.get('customer'))));
  if (m === 'POST' && path === '/v1/payments') return createPayment(req, q, doc);
  if (m === 'GET' && path === '/v1/payments')
    return view((s) => listing('payments', s.payments.filter((x) => x.customer === q.get('customer'))));
  return problem(404, 'no_route', `${m} ${path}`);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    let a;
    try {
      a = await route(req, Buffer.concat(chunks));
    } catch (e) {
      a = e.status === 400 ? problem(400, 'bad_request', e.message) : problem(500, 'internal', String(e));
    }
    writeAnswer(req, a);
  });
});
server.listen(opts.port, '127.0.0.1', () => {
  console.log(`billing_service ${process.pid} listening on 127.0.0.1:${opts.port} (bug: ${bug || 'none'})`);
});
server.on('error', (e) => {
  process.stderr.write(`billing_service: ${e.message}\n`);
  process.exit(1);
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
