# The box office's store (box_office.rb): every read and write of Redis.
# What must be atomic is one Lua script (the claim, the completion with its
# booking, the inbox's apply) or one MULTI (an export partition with its
# marker), so WEBrick's threads and several processes never interleave
# inside it. Keys, all under bo:
#   bo:idem:<sha256 of scope>   a token's record, JSON: {state: pending, fp, owner,
#                               lease_until} or {state: done, fp, answer}
#   bo:booking:<id>             a booking, a hash (lines as JSON text)
#   bo:show:<show>:bookings     the show's booking ids; :held its held seats
#   bo:flaky:<show>             the show's retryable failure happened
#   bo:inbox:seen               message ids applied; bo:wallet:<w> {applied, cents}
#   bo:export:<job>:rows|markers|lock   an export's rows and markers (hashes), its lease
module Store
  CLAIM = <<~LUA
    -- KEYS[1] record; ARGV fp, owner, now_ms, lease_ms, ttl_ms, forever
    local v = redis.call('GET', KEYS[1])
    if v then
      local r = cjson.decode(v)
      if r.fp ~= ARGV[1] then return {'mismatch', v} end
      if r.state == 'done' then return {'done', v} end
      if tonumber(r.lease_until) > tonumber(ARGV[3]) then return {'busy', v} end
      -- a dead (or frozen) owner's lease lapsed: take the key over
    end
    local lease_until = tonumber(ARGV[3]) + tonumber(ARGV[4])
    if ARGV[6] == '1' then lease_until = 1e15 end
    local r = cjson.encode({state = 'pending', fp = ARGV[1], owner = ARGV[2], lease_until = lease_until})
    if ARGV[6] == '1' then
      redis.call('SET', KEYS[1], r)
    else
      redis.call('SET', KEYS[1], r, 'PX', math.max(tonumber(ARGV[5]), 2 * tonumber(ARGV[4])))
    end
    return {'claimed', r}
  LUA

  RENEW = <<~LUA
    -- KEYS[1] record; ARGV owner, now_ms, lease_ms, ttl_ms
    local v = redis.call('GET', KEYS[1])
    if not v then return 0 end
    local r = cjson.decode(v)
    if r.state ~= 'pending' or r.owner ~= ARGV[1] then return 0 end
    r.lease_until = tonumber(ARGV[2]) + tonumber(ARGV[3])
    redis.call('SET', KEYS[1], cjson.encode(r), 'PX', math.max(tonumber(ARGV[4]), 2 * tonumber(ARGV[3])))
    return 1
  LUA

  RELEASE = <<~LUA
    local v = redis.call('GET', KEYS[1])
    if not v then return 0 end
    local r = cjson.decode(v)
    if r.state == 'pending' and r.owner == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
    return 0
  LUA

  # The booking (when there is one) and the stored answer in one step, only
  # while the caller still owns the claim (its token fences a takeover).
  COMPLETE = <<~LUA
    -- KEYS[1] record; ARGV owner, fp, ttl_ms, answer JSON, then the booking:
    -- id, show, seats, holder JSON, lines JSON, booked_at (absent: no booking)
    local v = redis.call('GET', KEYS[1])
    if not v then return {'lost', ''} end
    local r = cjson.decode(v)
    if r.state ~= 'pending' or r.owner ~= ARGV[1] then return {'lost', v} end
    -- The answer first: a store refusing this write (a script is not rolled
    -- back on error) then leaves nothing half-written.
    -- (An empty answer: the caller stores it itself, fire-and-forget-store.)
    local done = '{"state":"done","fp":' .. cjson.encode(ARGV[2]) .. ',"answer":' .. ARGV[4] .. '}'
    if ARGV[4] ~= '' then redis.call('SET', KEYS[1], done, 'PX', ARGV[3]) else done = '' end
    if ARGV[5] then
      redis.call('HSET', 'bo:booking:' .. ARGV[5], 'id', ARGV[5], 'show', ARGV[6], 'seats', ARGV[7],
                 'holder', ARGV[8], 'state', 'held', 'lines', ARGV[9], 'booked_at', ARGV[10])
      redis.call('RPUSH', 'bo:show:' .. ARGV[6] .. ':bookings', ARGV[5])
      redis.call('INCRBY', 'bo:show:' .. ARGV[6] .. ':held', ARGV[7])
    end
    return {'ok', done}
  LUA

  SET_SEATS = <<~LUA
    local k = 'bo:booking:' .. ARGV[1]
    if redis.call('HGET', k, 'state') == 'held' then
      local show, old = redis.call('HGET', k, 'show'), tonumber(redis.call('HGET', k, 'seats'))
      redis.call('INCRBY', 'bo:show:' .. show .. ':held', tonumber(ARGV[2]) - old)
      redis.call('HSET', k, 'seats', ARGV[2])
    end
    return 1
  LUA

  CANCEL = <<~LUA
    local k = 'bo:booking:' .. ARGV[1]
    if redis.call('HGET', k, 'state') == 'held' then
      redis.call('HSET', k, 'state', 'cancelled')
      redis.call('DECRBY', 'bo:show:' .. redis.call('HGET', k, 'show') .. ':held', redis.call('HGET', k, 'seats'))
    end
    return 1
  LUA

  APPLY_ONCE = <<~LUA
    -- ARGV message id, wallet, cents: seen and applied together, or neither
    if redis.call('SADD', 'bo:inbox:seen', ARGV[1]) == 0 then return 0 end
    redis.call('HINCRBY', 'bo:wallet:' .. ARGV[2], 'applied', 1)
    redis.call('HINCRBY', 'bo:wallet:' .. ARGV[2], 'cents', ARGV[3])
    return 1
  LUA

  UNLOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
  EXTEND = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"

  module_function

  def key_of(scope) = 'bo:idem:' + Digest::SHA256.hexdigest(scope)
  def ping = STORE.ping

  # -> [state, record]: 'claimed', 'busy', 'done' or 'mismatch'.
  def claim(scope, fp, owner)
    forever = bug?('key-includes-query') ? '1' : '0'
    state, v = STORE.eval(CLAIM, keys: [key_of(scope)],
                                 argv: [fp, owner, now_ms, OPTS[:lease_ms], OPTS[:ttl_ms], forever])
    [state, JSON.parse(v)]
  end

  def renew(scope, owner)
    STORE.eval(RENEW, keys: [key_of(scope)], argv: [owner, now_ms, OPTS[:lease_ms], OPTS[:ttl_ms]])
  end

  def release(scope, owner) = STORE.eval(RELEASE, keys: [key_of(scope)], argv: [owner])

  # -> ['ok', record] or ['lost', record or nil]
  # stored nil: the booking alone (fenced), the answer left to the caller.
  def complete(scope, fp, owner, stored, booking)
    argv = [owner, fp, OPTS[:ttl_ms], stored ? JSON.generate(stored) : '']
    argv += booking_fields(booking) if booking
    state, v = STORE.eval(COMPLETE, keys: [key_of(scope)], argv: argv)
    [state, v.empty? ? nil : JSON.parse(v)]
  end

  # (flawed modes) the stored answer with no owner check
  def finish_unfenced(scope, fp, stored)
    STORE.set(key_of(scope), JSON.generate({ state: 'done', fp: fp, answer: stored }), px: OPTS[:ttl_ms])
  end

  def booking_fields(b)
    [b[:id], b[:show], b[:seats].to_s, JSON.generate(b[:holder]), JSON.generate(b[:lines]), b[:booked_at]]
  end

  # (flawed modes) the booking on its own
  def write_booking(b)
    id, show, seats, holder, lines, at = booking_fields(b)
    STORE.multi do |t|
      t.hset("bo:booking:#{id}", 'id', id, 'show', show, 'seats', seats, 'holder', holder, 'state', 'held',
             'lines', lines, 'booked_at', at)
      t.rpush("bo:show:#{show}:bookings", id)
      t.incrby("bo:show:#{show}:held", seats.to_i)
    end
  end

  # The booking as its create answered it (members in the same order).
  def booking(id)
    h = STORE.hgetall("bo:booking:#{id}")
    return nil if h.empty?
    { id: h['id'], show: h['show'], seats: h['seats'].to_i, holder: JSON.parse(h['holder']), state: h['state'],
      lines: JSON.parse(h['lines']), booked_at: h['booked_at'] }
  end

  def bookings_of(show) = STORE.lrange("bo:show:#{show}:bookings", 0, -1).map { |id| booking(id) }.compact
  def held(show) = STORE.get("bo:show:#{show}:held").to_i

  def set_seats(id, seats)
    STORE.eval(SET_SEATS, keys: [], argv: [id, seats])
    booking(id)
  end

  def cancel(id)
    STORE.eval(CANCEL, keys: [], argv: [id])
    booking(id)
  end

  def first_failure?(show) = STORE.set("bo:flaky:#{show}", '1', nx: true)

  def apply_once(msg, wallet, cents) = STORE.eval(APPLY_ONCE, keys: [], argv: [msg, wallet, cents]) == 1
  def mark_seen(msg) = STORE.sadd?('bo:inbox:seen', msg)

  def credit(wallet, cents)
    STORE.multi do |t|
      t.hincrby("bo:wallet:#{wallet}", 'applied', 1)
      t.hincrby("bo:wallet:#{wallet}", 'cents', cents)
    end
  end

  def wallet(w)
    h = STORE.hgetall("bo:wallet:#{w}")
    { wallet: w, applied: h['applied'].to_i, cents: h['cents'].to_i }
  end

  def lock_job(job, owner) = STORE.set("bo:export:#{job}:lock", owner, nx: true, px: OPTS[:lease_ms])
  def extend_job(job, owner) = STORE.eval(EXTEND, keys: ["bo:export:#{job}:lock"], argv: [owner, OPTS[:lease_ms]])
  def unlock_job(job, owner) = STORE.eval(UNLOCK, keys: ["bo:export:#{job}:lock"], argv: [owner])

  def marker_ranges(job)
    STORE.hvals("bo:export:#{job}:markers").map { |m| JSON.parse(m).values_at('from', 'to') }.to_set
  end

  def write_marker(job, m) = STORE.hset("bo:export:#{job}:markers", m['partition'], JSON.generate(m))
  def write_row(job, r) = STORE.hset("bo:export:#{job}:rows", r['id'].to_s, JSON.generate(r))

  def commit_partition(job, rows, marker)
    STORE.multi do |t|
      t.hset("bo:export:#{job}:rows", rows.flat_map { |r| [r['id'].to_s, JSON.generate(r)] })
      t.hset("bo:export:#{job}:markers", marker['partition'], JSON.generate(marker))
    end
  end

  def export_result(job)
    rows = STORE.hvals("bo:export:#{job}:rows").map { |r| JSON.parse(r) }.sort_by { |r| r['id'] }
    markers = STORE.hvals("bo:export:#{job}:markers").map { |m| JSON.parse(m) }.sort_by { |m| m['from'] }
    { job: job, rows: rows, markers: markers }
  end
end
