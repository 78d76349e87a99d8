# box_office.rb: a ticket box office, the third service idemproof was never
# written for (docs/foreign-target.md). Ruby, WEBrick (a thread per
# connection) and Redis (the `redis` gem), all Debian packages. EVERY piece
# of state lives in the Redis server named by --redis: keys, leases, stored
# answers, bookings, the inbox, export rows and markers. So a restarted
# process, or a second one on the same Redis, sees what the first did, and
# a fault between the service and its store is a fault of the store.
#
# Usage: ruby box_office.rb --port N --redis HOST:PORT [--lease-ms 2000]
#          [--ttl-ms 4000] [--partition-rows 10] [--key-chars 64] [--bug NAME]
#
# API (JSON in, JSON out):
#   GET  /up                         200 once the store answers
#   POST /v3/bookings                hold seats for a show, under the header
#        Booking-Token (required: 400 without). Body {"show", "seats" 1-10,
#        "holder", "promo", "lines": [...]}; 201 {"booking": {...}} with
#        Location. The token is kept --ttl-ms after its answer (2xx and 4xx;
#        a 503 is released): a retry gets the stored answer byte for byte,
#        marked X-Booking-Replay: yes. While the first request runs: 423
#        with Retry-After (seconds, at least 1). The same token with another
#        body: 409. A claim is leased --lease-ms and renewed while its owner
#        runs; a dead owner's claim is taken over once the lease lapses.
#        seats > 10: 422 (stored). promo "flaky": the first attempt per
#        show fails 503 with Retry-After, nothing stored.
#   GET  /v3/bookings?show=S         {"bookings": [...]}
#   GET  /v3/bookings/ID             {"booking": {...}}
#   PUT  /v3/bookings/ID/seats       {"seats": N}: sets the seats (no token needed)
#   POST /v3/bookings/ID/cancel      cancels; a second cancel changes nothing
#   GET  /v3/shows/S                 {"capacity", "held", "available"}
#   POST /v3/inbox/payments          a payment provider's push: {"message_id",
#        "wallet", "cents"}; each message_id applied once; 200 is the ack
#   GET  /v3/wallets/W               {"applied": messages applied, "cents"}
#   POST /v3/exports/JOB/run         {"from", "to", "fail_after"?}: export rows
#        [from, to) in partitions of --partition-rows, each committed with its
#        range marker; a rerun resumes (skips committed partitions). One run
#        per job at a time (a lease: 423 while another runs). fail_after K:
#        the run fails (500) after K rows.
#   GET  /v3/exports/JOB             {"rows": [...], "markers": [...]}
#   Every route takes ?slow_ms=N: a pause inside its business step (the
#   export pauses once, halfway through its range).
#
# --bug NAME: one realistic mistake per failure class of issue #33; see BUGS.
require 'webrick'
require 'redis'
require 'json'
require 'digest'
require 'securerandom'
require 'optparse'
require 'set'

BUGS = {
  'seen-before-apply' => 'the inbox marks a message seen, then applies it (two writes)',
  'marker-before-rows' => "an export writes a partition's marker, then its rows one by one",
  'lease-no-renewal' => 'the claim is a lock with a TTL: no renewal, no owner token on completion',
  'replay-reads-current' => "a replay renders the booking's current state, not the stored answer",
  'body-hash-key' => 'requests are deduplicated by a hash of their body, not by the token',
  'key-truncate' => 'tokens are cut at --key-chars characters (a fixed-width column)',
  'answer-truncate' => 'stored answers are cut at 4096 bytes (a fixed-width column)',
  'failure-replay-differs' => 'a stored 4xx is replayed with a generic body (only its status was kept)',
  'retry-after-zero' => 'in progress is answered with Retry-After: 0',
  'fire-and-forget-store' => "the answer is stored in the background, a failed write ignored",
  'key-includes-query' => 'the key scope is the whole URL, query included, and a claim never expires'
}.freeze

OPTS = { port: 0, redis: '127.0.0.1:6379', lease_ms: 2000, ttl_ms: 4000, partition_rows: 10,
         key_chars: 64, bug: nil }
OptionParser.new do |o|
  o.on('--port N', Integer) { |v| OPTS[:port] = v }
  o.on('--redis HOSTPORT') { |v| OPTS[:redis] = v }
  o.on('--lease-ms N', Integer) { |v| OPTS[:lease_ms] = v }
  o.on('--ttl-ms N', Integer) { |v| OPTS[:ttl_ms] = v }
  o.on('--partition-rows N', Integer) { |v| OPTS[:partition_rows] = v }
  o.on('--key-chars N', Integer) { |v| OPTS[:key_chars] = v }
  o.on('--bug NAME') { |v| OPTS[:bug] = v }
end.parse!
if OPTS[:bug] && !BUGS.key?(OPTS[:bug])
  warn "box_office: unknown --bug #{OPTS[:bug]} (one of: #{BUGS.keys.join(', ')})"
  exit 2
end

def bug?(name) = OPTS[:bug] == name
def now_ms = (Time.now.to_f * 1000).to_i

CAPACITY = 100       # seats per show
MAX_SEATS = 10       # per booking
STORED_CUT = 4096    # answer-truncate's column width
host, port = OPTS[:redis].split(':')
# One client shared by the threads (the gem serialises commands on it);
# short timeouts, so a store that stops answering is an error, not a hang.
STORE = Redis.new(host: host, port: port.to_i, connect_timeout: 1, read_timeout: 2, write_timeout: 2,
                  reconnect_attempts: 1)

require_relative 'box_office_store'

# A failure of the service that becomes an HTTP answer.
class Answer < StandardError
  attr_reader :status, :headers, :body
  def initialize(status, body, headers = {})
    super("#{status}")
    @status, @body, @headers = status, body, headers
  end
end

def json_answer(status, doc, headers = {}) = Answer.new(status, JSON.generate(doc), headers)

# JSON with members sorted, for fingerprints.
def canonical(v)
  case v
  when Hash then '{' + v.keys.sort.map { |k| JSON.generate(k) + ':' + canonical(v[k]) }.join(',') + '}'
  when Array then '[' + v.map { |x| canonical(x) }.join(',') + ']'
  else JSON.generate(v)
  end
end

# The query string's parameters (WEBrick's req.query reads a POST's form body instead).
def params(req) = WEBrick::HTTPUtils.parse_query(req.query_string || '')

def slow(req)
  ms = params(req)['slow_ms'].to_i
  sleep(ms / 1000.0) if ms.positive?
end

def parse_body(req)
  doc = JSON.parse(req.body || '')
  raise json_answer(400, { error: { code: 'bad_json' } }) unless doc.is_a?(Hash)
  doc
rescue JSON::ParserError
  raise json_answer(400, { error: { code: 'bad_json' } })
end

# Renews a claim's lease every third of it while the block runs, so a
# request slower than its lease keeps its claim (only a dead owner loses it).
def with_renewal(renew)
  return yield if bug?('lease-no-renewal') || bug?('key-includes-query')
  lock, stop, done = Mutex.new, ConditionVariable.new, false
  renewer = Thread.new do
    lock.synchronize do
      until done
        stop.wait(lock, OPTS[:lease_ms] / 3000.0)
        next if done
        begin
          renew.call
        rescue Redis::BaseError
          nil # the next renewal tries again; a lapsed lease is taken over, fenced by the token
        end
      end
    end
  end
  yield
ensure
  # Wake the renewer now: the answer must not wait for its next tick.
  lock&.synchronize do
    done = true
    stop.signal
  end
  renewer&.join
end

# ---- the booking create, under its token ----------------------------------

def create_booking(req)
  token = req['Booking-Token']
  raise json_answer(400, { error: { code: 'token_required', header: 'Booking-Token' } }) if token.nil? || token.empty?
  doc = parse_body(req)
  fp = Digest::SHA256.hexdigest("POST /v3/bookings\n" + canonical(doc))
  token = token[0, OPTS[:key_chars]] if bug?('key-truncate')
  scope = if bug?('body-hash-key') then "POST /v3/bookings|body:#{fp}"
          elsif bug?('key-includes-query') then "POST #{req.request_uri.request_uri}|#{token}"
          else "POST /v3/bookings|#{token}"
          end
  owner = SecureRandom.hex(8)
  state, record = Store.claim(scope, fp, owner)
  case state
  when 'mismatch'
    raise json_answer(409, { error: { code: 'token_reused', detail: 'this Booking-Token was used for another request' } })
  when 'busy' then raise in_progress(record)
  when 'done' then raise replay(record)
  end
  answer = with_renewal(-> { Store.renew(scope, owner) }) { book(req, doc, scope, fp, owner) }
  raise answer
end

def in_progress(record)
  # What is left of the lease, at least 1 s, at most the lease (a claim that
  # never expires, key-includes-query, says the lease too).
  wait = ((record['lease_until'].to_i - now_ms) / 1000.0).ceil.clamp(1, [(OPTS[:lease_ms] / 1000.0).ceil, 1].max)
  wait = 0 if bug?('retry-after-zero')
  json_answer(423, { error: { code: 'in_progress' } }, 'Retry-After' => wait.to_s)
end

# The stored answer, byte for byte, marked as a replay.
def replay(record)
  a = record['answer']
  body = a['body']
  if bug?('replay-reads-current') && a['booking_id']
    body = JSON.generate({ booking: Store.booking(a['booking_id']) })
  elsif bug?('failure-replay-differs') && a['status'] >= 400
    return Answer.new(a['status'], JSON.generate({ error: { code: 'request_failed' } }), 'X-Booking-Replay' => 'yes')
  end
  Answer.new(a['status'], body, a['headers'].merge('X-Booking-Replay' => 'yes'))
end

# The business step, then the completion: the booking and the stored answer
# are written by one script, fenced by the owner's token.
def book(req, doc, scope, fp, owner)
  slow(req)
  show = doc['show'].to_s
  seats = doc['seats']
  if doc['promo'] == 'flaky' && Store.first_failure?(show)
    Store.release(scope, owner)
    return json_answer(503, { error: { code: 'pricing_unavailable' } }, 'Retry-After' => '1')
  end
  if !seats.is_a?(Integer) || seats < 1 || seats > MAX_SEATS
    stored = { 'status' => 422, 'headers' => { 'Content-Type' => 'application/json' },
               'body' => JSON.generate({ error: { code: 'seat_limit', max_seats: MAX_SEATS, asked: seats } }) }
    return complete(scope, fp, owner, stored, nil)
  end
  id = 'bk_' + SecureRandom.hex(6)
  lines = Array(doc['lines']).each_with_index.map do |l, i|
    { line: i + 1, ticket: "#{id}-#{i + 1}", item: l }
  end
  booking = { id: id, show: show, seats: seats, holder: doc['holder'], state: 'held', lines: lines,
              booked_at: Time.now.utc.strftime('%Y-%m-%dT%H:%M:%S.%3NZ') }
  stored = { 'status' => 201, 'booking_id' => id,
             'headers' => { 'Content-Type' => 'application/json', 'Location' => "/v3/bookings/#{id}" },
             'body' => JSON.generate({ booking: booking }) }
  complete(scope, fp, owner, stored, booking)
end

def complete(scope, fp, owner, stored, booking)
  kept = stored
  kept = stored.merge('body' => stored['body'][0, STORED_CUT]) if bug?('answer-truncate')
  fire_and_forget = bug?('fire-and-forget-store')
  if bug?('lease-no-renewal')
    Store.write_booking(booking) if booking
    Store.finish_unfenced(scope, fp, kept)
    return Answer.new(stored['status'], stored['body'], stored['headers'])
  end
  state, record = Store.complete(scope, fp, owner, fire_and_forget ? nil : kept, booking)
  # Our claim was taken over (we were frozen past the lease): nothing of ours
  # was written; answer what the key holds now.
  return(record && record['state'] == 'done' ? replay(record) : in_progress(record || {})) if state == 'lost'
  # (flaw) the answer stored in the background, a failed write ignored
  Thread.new { Store.finish_unfenced(scope, fp, kept) rescue nil } if fire_and_forget
  Answer.new(stored['status'], stored['body'], stored['headers'])
rescue Redis::BaseError
  # Nothing was committed: free the key for a retry (if the store lets us;
  # else the lease frees it) and say so.
  begin
    Store.release(scope, owner)
  rescue Redis::BaseError
    nil
  end
  json_answer(503, { error: { code: 'store_unavailable' } }, 'Retry-After' => '1')
end

# ---- the rest of the API ----------------------------------------------------

def booking_or_404(id)
  b = Store.booking(id)
  raise json_answer(404, { error: { code: 'no_such_booking' } }) unless b
  b
end

def change_seats(req, id)
  booking_or_404(id)
  seats = parse_body(req)['seats']
  raise json_answer(422, { error: { code: 'seat_limit', max_seats: MAX_SEATS } }) unless seats.is_a?(Integer) && seats.between?(1, MAX_SEATS)
  slow(req)
  json_answer(200, { booking: Store.set_seats(id, seats) })
end

def cancel(req, id)
  booking_or_404(id)
  slow(req)
  json_answer(200, { booking: Store.cancel(id) })
end

def payment_pushed(req)
  doc = parse_body(req)
  msg, wallet, cents = doc['message_id'].to_s, doc['wallet'].to_s, doc['cents'].to_i
  raise json_answer(400, { error: { code: 'message_id_required' } }) if msg.empty? || wallet.empty?
  if bug?('seen-before-apply')
    first = Store.mark_seen(msg)
    slow(req)
    Store.credit(wallet, cents) if first
    applied = first
  else
    slow(req)
    applied = Store.apply_once(msg, wallet, cents)
  end
  json_answer(200, { message_id: msg, applied: applied })
end

def run_export(req, job)
  doc = parse_body(req)
  from, to, fail_after = doc['from'], doc['to'], doc['fail_after']
  raise json_answer(400, { error: { code: 'bad_range' } }) unless from.is_a?(Integer) && to.is_a?(Integer) && to > from
  owner = SecureRandom.hex(8)
  unless Store.lock_job(job, owner)
    raise json_answer(423, { error: { code: 'export_running' } }, 'Retry-After' => [(OPTS[:lease_ms] / 1000.0).ceil, 1].max.to_s)
  end
  begin
    with_renewal(-> { Store.extend_job(job, owner) }) { export(req, job, from, to, fail_after) }
  ensure
    Store.unlock_job(job, owner) rescue nil
  end
end

def export(req, job, from, to, fail_after)
  p_rows = OPTS[:partition_rows]
  done = Store.marker_ranges(job)
  pause_at = from + (to - from) / 2
  written = skipped = 0
  (from / p_rows..(to - 1) / p_rows).each do |p|
    lo, hi = [from, p * p_rows].max, [to, (p + 1) * p_rows].min
    if done.include?([lo, hi])
      skipped += hi - lo
      next
    end
    rows = (lo...hi).map { |i| { 'id' => i, 'total' => (i * 37) % 1000, 'exported_at' => now_ms } }
    marker = { 'partition' => "#{lo}-#{hi}", 'from' => lo, 'to' => hi, 'rows_written' => rows.size,
               'checksum' => Digest::SHA256.hexdigest(rows.map { |r| JSON.generate(r.except('exported_at')) + "\n" }.join) }
    Store.write_marker(job, marker) if bug?('marker-before-rows')
    rows.each do |r|
      slow(req) if r['id'] == pause_at
      if fail_after && written >= fail_after
        raise json_answer(500, { error: { code: 'export_failed', rows_written: written } })
      end
      Store.write_row(job, r) if bug?('marker-before-rows')
      written += 1
    end
    Store.commit_partition(job, rows, marker) unless bug?('marker-before-rows')
  end
  json_answer(200, { job: job, from: from, to: to, rows_written: written, rows_skipped: skipped })
end

# ---- routing ----------------------------------------------------------------

def route(req)
  m, path = req.request_method, req.path
  if m == 'GET' && path == '/up'
    Store.ping
    json_answer(200, { ok: true })
  elsif m == 'POST' && path == '/v3/bookings' then create_booking(req)
  elsif m == 'GET' && path == '/v3/bookings'
    json_answer(200, { bookings: Store.bookings_of(params(req)['show'].to_s) })
  elsif m == 'GET' && (id = path[%r{\A/v3/bookings/([\w-]+)\z}, 1])
    json_answer(200, { booking: booking_or_404(id) })
  elsif m == 'PUT' && (id = path[%r{\A/v3/bookings/([\w-]+)/seats\z}, 1]) then change_seats(req, id)
  elsif m == 'POST' && (id = path[%r{\A/v3/bookings/([\w-]+)/cancel\z}, 1]) then cancel(req, id)
  elsif m == 'GET' && (show = path[%r{\A/v3/shows/([\w.-]+)\z}, 1])
    held = Store.held(show)
    json_answer(200, { show: show, capacity: CAPACITY, held: held, available: CAPACITY - held })
  elsif m == 'POST' && path == '/v3/inbox/payments' then payment_pushed(req)
  elsif m == 'GET' && (w = path[%r{\A/v3/wallets/([\w.-]+)\z}, 1]) then json_answer(200, Store.wallet(w))
  elsif m == 'POST' && (job = path[%r{\A/v3/exports/([\w.-]+)/run\z}, 1]) then run_export(req, job)
  elsif m == 'GET' && (job = path[%r{\A/v3/exports/([\w.-]+)\z}, 1]) then json_answer(200, Store.export_result(job))
  else json_answer(404, { error: { code: 'no_route' } })
  end
end

server = WEBrick::HTTPServer.new(BindAddress: '127.0.0.1', Port: OPTS[:port],
                                 Logger: WEBrick::Log.new($stderr, WEBrick::Log::WARN), AccessLog: [])
server.mount_proc('/') do |req, res|
  begin
    a = route(req)
  rescue Answer => e
    a = e
  rescue Redis::BaseError => e
    a = json_answer(503, { error: { code: 'store_unavailable', detail: e.class.name } }, 'Retry-After' => '1')
  end
  res.status = a.status
  res['Content-Type'] = 'application/json'
  a.headers.each { |k, v| res[k] = v }
  res.body = a.body
  # WEBrick would make Location absolute against THIS request's Host: a
  # stored answer replayed through another address (a restart on a new
  # port, a proxy) would differ from the one first sent. Send it as stored.
  res.request_uri = nil
end
%w[TERM INT].each { |s| trap(s) { server.shutdown } }
$stdout.puts "box_office #{Process.pid}: listening on 127.0.0.1:#{server.config[:Port]} (bug: #{OPTS[:bug] || 'none'})"
$stdout.flush
server.start
