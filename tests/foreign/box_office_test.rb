# The box office (box_office.rb) on its own, from outside: for each --bug,
# a short story over HTTP (and SIGKILL + restart, and a store that refuses
# one write) whose outcome the correct service gets right and the bug gets
# wrong. So each bug is a defect a client can see, not a switch that does
# nothing. Real processes: a redis-server and the service per case, on free
# loopback ports. Usage: ruby box_office_test.rb  (exit 0 = every case held)
require 'net/http'
require 'json'
require 'socket'
require 'timeout'

HERE = __dir__
$failures = 0

# A free loopback port, never one handed out before: the stories run at once,
# and a port closed here could otherwise be picked again by the next one.
$ports, $ports_lock = {}, Mutex.new
def free_port
  $ports_lock.synchronize do
    loop do
      port = TCPServer.open('127.0.0.1', 0) { |s| s.addr[1] }
      next if $ports.key?(port)
      $ports[port] = true
      return port
    end
  end
end

# A redis-server and a box office on it, torn down by #close.
class Rig
  attr_reader :port, :redis_port

  def initialize(bug)
    @bug = bug
    @redis_port = free_port
    @redis = Process.spawn('redis-server', '--port', @redis_port.to_s, '--bind', '127.0.0.1', '--save', '',
                           '--appendonly', 'no', out: File::NULL, err: File::NULL, pgroup: true)
    wait_until('redis up', 40) { TCPSocket.new('127.0.0.1', @redis_port).close || true rescue false }
    start
  rescue StandardError
    close # what was started, stopped
    raise
  end

  def start
    @port = free_port
    argv = ['ruby', File.join(HERE, 'box_office.rb'), '--port', @port.to_s, '--redis', "127.0.0.1:#{@redis_port}",
            '--lease-ms', '1500', '--ttl-ms', '3000', '--partition-rows', '10']
    argv += ['--bug', @bug] if @bug
    @pid = Process.spawn(*argv, out: File::NULL, err: $stderr, pgroup: true)
    # 24 services start at once (the stories run side by side): on a loaded
    # 2-core machine one took longer than 10 s to answer its first request.
    wait_until('service up', 40) { (get('/up')[0] == 200) rescue false }
  end

  def kill
    Process.kill('KILL', @pid)
    Process.wait(@pid)
  end

  def restart
    kill
    start
  end

  def close
    [@pid, @redis].compact.each do |pid|
      Process.kill('KILL', pid)
      Process.wait(pid)
    rescue StandardError
      nil
    end
  end

  def redis_cli(*args) = system('redis-cli', '-p', @redis_port.to_s, *args, out: File::NULL)

  # Waits until a request has claimed a token (a record is in the store).
  def wait_claimed
    wait_until('a claim') do
      !IO.popen(['redis-cli', '-p', @redis_port.to_s, '--scan', '--pattern', 'bo:idem:*'], &:read).strip.empty?
    end
  end

  def wait_until(what, seconds = 10)
    deadline = Time.now + seconds
    until yield
      raise "#{what}: not within #{seconds} s" if Time.now > deadline
      sleep 0.05
    end
  end

  # -> [status, headers, body]
  def call(method, path, body = nil, headers = {})
    Net::HTTP.start('127.0.0.1', @port, read_timeout: 10, open_timeout: 2) do |h|
      req = Net::HTTP.const_get(method.capitalize).new(path, headers)
      if body
        req.body = JSON.generate(body)
        req['Content-Type'] = 'application/json'
      end
      res = h.request(req)
      [res.code.to_i, res.each_header.to_h, res.body]
    end
  end

  def get(path) = call('Get', path)
  def book(token, body, query = '') = call('Post', "/v3/bookings#{query}", body, 'Booking-Token' => token)
  def count(show) = JSON.parse(get("/v3/bookings?show=#{show}")[2])['bookings'].size
  def later(&blk) = Thread.new { blk.call rescue $! }
end

# story NAME, BUG: the block, against the correct service and against the
# bug, returns true when the service behaved correctly. Every story runs in
# its own thread on its own processes (they take seconds of sleeping each).
STORIES = []
def story(name, bug, &blk) = STORIES << [name, bug, blk]

def tell(name, mode, blk)
  t0 = Time.now
  rig = nil
  got = begin
    rig = Rig.new(mode)
    blk.call(rig)
  rescue StandardError => e
    warn "  #{name} (#{mode || 'correct'}): #{e.class}: #{e.message}"
    nil
  ensure
    rig&.close
  end
  [got, Time.now - t0]
end

SHOW = { 'show' => 's1', 'seats' => 2, 'lines' => [{ 'row' => 'F' }] }.freeze

# 1. A consumer killed between "seen" and "applied": the redelivery must apply.
story('kill mid-message', 'seen-before-apply') do |r|
  msg = { 'message_id' => 'm1', 'wallet' => 'w1', 'cents' => 5 }
  r.later { r.call('Post', '/v3/inbox/payments?slow_ms=1500', msg) }
  sleep 0.7
  r.restart
  r.call('Post', '/v3/inbox/payments', msg)[0] == 200 && JSON.parse(r.get('/v3/wallets/w1')[2])['applied'] == 1
end

# 1. An export killed mid-partition: the rerun must complete every row.
story('kill mid-export', 'marker-before-rows') do |r|
  r.later { r.call('Post', '/v3/exports/j1/run?slow_ms=1500', { 'from' => 0, 'to' => 100 }) }
  r.wait_until('export half done') { JSON.parse(r.get('/v3/exports/j1')[2])['markers'].size >= 5 }
  sleep 0.3 # inside the pause, halfway through partition 50
  r.restart
  # the dead run's job lease answers 423 until it lapses (1.5 s)
  10.times do
    break unless r.call('Post', '/v3/exports/j1/run', { 'from' => 0, 'to' => 100 })[0] == 423
    sleep 0.4
  end
  JSON.parse(r.get('/v3/exports/j1')[2])['rows'].size == 100
end

# 2. A request slower than its lease, in a live process: a duplicate after
# the lease must not execute again.
story('slower than the lease', 'lease-no-renewal') do |r|
  first = r.later { r.book('t1', SHOW, '?slow_ms=3500') }
  r.wait_claimed
  sleep 2.0
  dup = r.book('t1', SHOW, '?slow_ms=3500')
  first.join
  dup[0] == 423 && r.count('s1') == 1
end

# 3. Create, cancel, replay the create: the replay is the first answer.
story('replay after a change', 'replay-reads-current') do |r|
  s, h, b = r.book('t1', SHOW)
  r.call('Post', "/v3/bookings/#{JSON.parse(b)['booking']['id']}/cancel")
  s2, h2, b2 = r.book('t1', SHOW)
  s == 201 && h2['x-booking-replay'] == 'yes' && b2 == b
end

# 4. The same body under a new token is a new booking.
story('same body, new token', 'body-hash-key') do |r|
  r.book('t1', SHOW)
  r.book('t2', SHOW)[0] == 201 && r.count('s1') == 2
end

# 4. Two tokens sharing a long prefix are two tokens.
story('tokens sharing a prefix', 'key-truncate') do |r|
  r.book('p' * 64 + '-1', SHOW)
  r.book('p' * 64 + '-2', SHOW)[0] == 201 && r.count('s1') == 2
end

# 5. A large answer is replayed whole.
story('large answer', 'answer-truncate') do |r|
  big = SHOW.merge('lines' => (1..400).map { |i| { 'row' => "R#{i}", 'note' => 'aisle seat, near the exit' } })
  first = r.book('t1', big)
  replay = r.book('t1', big)
  first[2].size > 20_000 && replay[2] == first[2]
end

# 6. A stored 4xx repeated unchanged gets the same answer.
story('stored 4xx repeated', 'failure-replay-differs') do |r|
  bad = SHOW.merge('seats' => 30)
  first = r.book('t1', bad)
  again = r.book('t1', bad)
  first[0] == 422 && again[0] == 422 && again[2] == first[2]
end

# 7. In progress says when to retry: a positive delay.
story('Retry-After', 'retry-after-zero') do |r|
  first = r.later { r.book('t1', SHOW, '?slow_ms=1000') }
  r.wait_claimed
  s, h, = r.book('t1', SHOW, '?slow_ms=1000')
  first.join
  s == 423 && h['retry-after'].to_i >= 1
end

# 8. The store refuses the answer's write: the booking must not be
# answered 201 and then executed again by a retry after the lease.
story('store refuses a write', 'fire-and-forget-store') do |r|
  first = r.later { r.book('t1', SHOW, '?slow_ms=800') }
  r.wait_claimed
  # The store refuses SET (what stores a token's answer) for a while.
  r.redis_cli('ACL', 'SETUSER', 'default', '-set')
  answer = first.value
  sleep 0.3
  r.redis_cli('ACL', 'SETUSER', 'default', '+set')
  sleep 1.7 # past the lease
  again = r.book('t1', SHOW)
  answer.is_a?(Array) && answer[0] == 503 && again[0] == 201 && r.count('s1') == 1
end

# 9. A crashed request's key, retried byte for byte (query included), must
# come free after the lease.
story('crash, identical retry', 'key-includes-query') do |r|
  r.later { r.book('t1', SHOW, '?slow_ms=1500') }
  r.wait_claimed
  r.restart
  deadline = Time.now + 4
  status = nil
  while Time.now < deadline
    status = r.book('t1', SHOW, '?slow_ms=1500')[0]
    break unless status == 423
    sleep 0.3
  end
  status == 201 && r.count('s1') == 1
end

runs = STORIES.flat_map do |name, bug, blk|
  [[nil, true], [bug, false]].map { |mode, want| [name, mode, want, Thread.new { tell(name, mode, blk) }] }
end
runs.each do |name, mode, want, thread|
  got, seconds = Timeout.timeout(120) { thread.value }
  ok = got == want
  $failures += 1 unless ok
  puts format('%-4s %-24s %-22s %s (%.1f s)', ok ? 'ok' : 'FAIL', name, mode || 'correct',
              got ? 'behaved correctly' : 'showed the bug', seconds)
end
puts "#{$failures} failure(s)"
exit($failures.zero? ? 0 : 1)
