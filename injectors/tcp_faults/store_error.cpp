#include "injectors/tcp_faults/store_error.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <utility>

#include <re2/re2.h>

namespace idemproof::injectors {
namespace {

constexpr std::size_t kMaxMessage = 1 << 20;    // a message held whole at most; larger ones stream through
constexpr std::size_t kMaxNames = 4096;         // prepared statements and portals remembered per connection
constexpr std::uint32_t kSslRequest = 80877103;
constexpr std::uint32_t kGssEncRequest = 80877104;

std::uint32_t Be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) | u[3];
}

void Put32(std::string& s, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::string Msg(char type, const std::string& body) {
  std::string m(1, type);
  Put32(m, static_cast<std::uint32_t>(body.size() + 4));
  return m + body;
}

// The NUL-terminated string at `pos` of `body` (pos moves past it); empty
// when it runs off the end.
std::string_view CString(std::string_view body, std::size_t& pos) {
  const std::size_t end = body.find('\0', pos);
  if (end == std::string_view::npos) {
    pos = body.size();
    return {};
  }
  std::string_view s = body.substr(pos, end - pos);
  pos = end + 1;
  return s;
}

std::string Cstr(std::string_view s) { return std::string(s) + '\0'; }

// Parse, Bind and Execute of one SQL statement without parameters, on the
// unnamed statement and portal.
std::string RunUnnamed(const std::string& sql) {
  std::string bind = Cstr("") + Cstr("");
  bind.append(6, '\0');  // no format codes, no parameters, no result formats
  std::string execute = Cstr("");
  execute.append(4, '\0');  // all rows
  return Msg('P', Cstr("") + Cstr(sql) + std::string(2, '\0')) + Msg('B', bind) + Msg('E', execute);
}

std::shared_ptr<const re2::RE2> CompileStatement(const std::string& text) {
  re2::RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  return std::make_shared<const re2::RE2>(text, options);
}

// COMMIT or END (not COMMIT PREPARED, a two-phase commit's second step).
bool IsCommit(std::string_view sql) {
  static const std::shared_ptr<const re2::RE2> kCommit = CompileStatement(R"(^\s*(?:COMMIT|END)\b\s*(\w*))");
  std::string next;
  if (!re2::RE2::PartialMatch(re2::StringPiece(sql.data(), sql.size()), *kCommit, &next)) return false;
  for (char& ch : next) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return next != "PREPARED";
}

// The Redis commands that write (when `statement` is not given).
constexpr const char* kRedisWrites =
    R"(^(SET|SETNX|SETEX|PSETEX|GETSET|GETDEL|GETEX|MSET|MSETNX|APPEND|INCR|INCRBY|INCRBYFLOAT|DECR|DECRBY|)"
    R"(DEL|UNLINK|EXPIRE|PEXPIRE|EXPIREAT|PEXPIREAT|PERSIST|RENAME|RENAMENX|HSET|HSETNX|HMSET|HDEL|HINCRBY|)"
    R"(LPUSH|RPUSH|LPOP|RPOP|LREM|LSET|SADD|SREM|ZADD|ZREM|ZINCRBY|XADD|XACK|XDEL|EVAL|EVALSHA|FCALL)\b)";

bool Extended(char type) { return type == 'P' || type == 'B' || type == 'D' || type == 'E' || type == 'C'; }

}  // namespace

std::string PgErrorStream::raise_sql() const {
  std::string message;
  for (char ch : message_) message += ch == '\'' ? std::string("''") : std::string(1, ch);
  return "DO $idemproof$BEGIN RAISE EXCEPTION USING ERRCODE = '" + sqlstate_ + "', MESSAGE = '" + message +
         "', DETAIL = 'answered by the idemproof store-error fault'; END$idemproof$";
}

bool PgErrorStream::Side::pass_on(std::string& out) {
  const std::size_t n = std::min<std::size_t>(pending.size(), static_cast<std::size_t>(passing));
  out.append(pending, 0, n);
  pending.erase(0, n);
  passing -= static_cast<std::int64_t>(n);
  return passing == 0;
}

void PgErrorStream::go_opaque(Side& side, std::string& out) {
  opaque_ = true;
  if (&side == &up_) {  // what was held of a unit came first
    for (const Message& m : unit_) out += m.bytes;
    unit_.clear();
    unit_bytes_ = 0;
  }
  out += side.pending;
  side.pending.clear();
}

void PgErrorStream::track(const Message& m) {
  const std::string_view body = m.body();
  std::size_t pos = 0;
  if (statements_.size() > kMaxNames || portals_.size() > kMaxNames) {
    statements_.clear();
    portals_.clear();
  }
  if (m.type == 'P') {
    const std::string name(CString(body, pos));
    statements_[name] = std::string(CString(body, pos));
  } else if (m.type == 'B') {
    const std::string portal(CString(body, pos));
    const std::string statement(CString(body, pos));
    auto it = statements_.find(statement);
    portals_[portal] = it == statements_.end() ? std::string() : it->second;
  } else if (m.type == 'C' && !body.empty()) {
    pos = 1;
    const std::string name(CString(body, pos));
    (body[0] == 'S' ? statements_ : portals_).erase(name);
  }
}

void PgErrorStream::flush_unit(std::string& out) {
  for (const Message& m : unit_) {
    track(m);
    out += m.bytes;
  }
  unit_.clear();
  unit_bytes_ = 0;
}

void PgErrorStream::on_unit(const Decide& decide, std::vector<Answered>& answered, std::string& out) {
  for (std::size_t i = 0; i < unit_.size(); ++i) {
    const Message& m = unit_[i];
    if (m.type != 'E') {
      track(m);
      continue;
    }
    std::size_t pos = 0;
    const std::string portal(CString(m.body(), pos));
    auto it = portals_.find(portal);
    const std::string sql = it == portals_.end() ? std::string() : it->second;
    if (!decide(sql)) continue;
    // From the Bind that made the portal on, the store never sees the
    // statement; what it runs instead answers with the error.
    std::size_t split = i;
    std::string statement;
    for (std::size_t j = i; j-- > 0;) {
      std::size_t p = 0;
      if (unit_[j].type == 'B' && CString(unit_[j].body(), p) == portal) {
        split = j;
        statement = std::string(CString(unit_[j].body(), p));
        break;
      }
    }
    // An unnamed statement parsed for it goes too (a named one is kept: the
    // client may execute it again).
    if (split < i && statement.empty()) {
      for (std::size_t j = split; j-- > 0;) {
        std::size_t p = 0;
        if (unit_[j].type == 'P' && CString(unit_[j].body(), p).empty()) {
          split = j;
          break;
        }
      }
    }
    // The store answers what goes before it first: the drop waits for that.
    pass_first_ = 0;
    for (std::size_t j = 0; j < split; ++j) {
      out += unit_[j].bytes;
      const char t = unit_[j].type;
      if (t == 'P' || t == 'B' || t == 'C' || t == 'E') ++pass_first_;
      if (t == 'D') pass_first_ += unit_[j].body().starts_with("S") ? 2 : 1;
    }
    drop_.clear();
    const bool commit = IsCommit(sql);
    if (commit) {
      out += RunUnnamed("ROLLBACK");
      drop_.insert(drop_.end(), {'1', '2', 'C'});
    }
    out += RunUnnamed(raise_sql());
    drop_.insert(drop_.end(), {'1', '2'});
    out += unit_.back().bytes;  // the Sync or Flush that ended it
    answered.push_back(Answered{sql, commit});
    unit_.clear();
    unit_bytes_ = 0;
    return;
  }
  for (const Message& m : unit_) out += m.bytes;
  unit_.clear();
  unit_bytes_ = 0;
}

void PgErrorStream::on_message(Message m, const Decide& decide, std::vector<Answered>& answered,
                               std::string& out) {
  if (Extended(m.type)) {
    if (unit_unread_) {
      track(m);
      out += m.bytes;
      return;
    }
    unit_bytes_ += m.bytes.size();
    unit_.push_back(std::move(m));
    if (unit_bytes_ > kMaxMessage) {  // too much to hold: this one goes on unread
      flush_unit(out);
      unit_unread_ = true;
    }
    return;
  }
  if (m.type == 'S' || m.type == 'H') {
    if (unit_unread_ || unit_.empty()) {
      unit_unread_ = false;
      out += m.bytes;
      return;
    }
    unit_.push_back(std::move(m));
    on_unit(decide, answered, out);
    return;
  }
  if (!unit_.empty() || unit_unread_) {  // anything else inside a unit (unusual): the unit goes as it is
    flush_unit(out);
    unit_unread_ = false;
  }
  if (m.type == 'Q') {
    std::size_t pos = 0;
    const std::string sql(CString(m.body(), pos));
    if (decide(sql)) {
      const bool commit = IsCommit(sql);
      if (commit) {
        out += Msg('Q', Cstr("ROLLBACK"));
        pass_first_ = 0;
        drop_.clear();
        drop_.insert(drop_.end(), {'C', 'Z'});
      }
      out += Msg('Q', Cstr(raise_sql()));
      answered.push_back(Answered{sql, commit});
      return;
    }
  }
  out += m.bytes;
}

std::string PgErrorStream::upstream(std::string_view bytes, const Decide& decide, std::vector<Answered>& answered) {
  std::string out;
  if (opaque_) {
    up_.pending.append(bytes);
    return std::exchange(up_.pending, std::string());
  }
  if (!seen_ && !bytes.empty()) {
    seen_ = true;
    startup_ = bytes[0] == '\0';  // a startup message's length begins with 0; a type byte is a letter
  }
  up_.pending.append(bytes);
  while (!opaque_) {
    std::string& p = up_.pending;
    if (up_.passing > 0) {
      if (!up_.pass_on(out)) break;
      continue;
    }
    if (startup_) {
      if (p.size() < 8) break;
      const std::uint32_t len = Be32(p.data());
      const std::uint32_t code = Be32(p.data() + 4);
      if (len < 8 || len > 10000) {
        go_opaque(up_, out);
        break;
      }
      if (p.size() < len) break;
      out.append(p, 0, len);
      p.erase(0, len);
      if (code == kSslRequest || code == kGssEncRequest) {
        ++one_byte_answers_;  // the next message again has no type byte
      } else if ((code >> 16) == 3) {
        startup_ = false;
      } else {
        go_opaque(up_, out);  // a CancelRequest, or no PostgreSQL
      }
      continue;
    }
    if (p.size() < 5) break;
    const char type = p[0];
    const std::uint32_t len = Be32(p.data() + 1);
    if (len < 4 || !std::isalpha(static_cast<unsigned char>(type))) {
      go_opaque(up_, out);
      break;
    }
    if (std::size_t{len} + 1 > kMaxMessage) {  // too large to hold: it streams through unread
      const bool in_unit = !unit_.empty() || Extended(type);
      flush_unit(out);
      unit_unread_ = unit_unread_ || in_unit;
      up_.passing = std::int64_t{len} + 1;
      continue;
    }
    if (p.size() < std::size_t{len} + 1) break;
    Message m{type, p.substr(0, len + 1)};
    p.erase(0, len + 1);
    on_message(std::move(m), decide, answered, out);
  }
  return out;
}

std::string PgErrorStream::downstream(std::string_view bytes) {
  std::string out;
  if (opaque_) {
    down_.pending.append(bytes);
    return std::exchange(down_.pending, std::string());
  }
  down_.pending.append(bytes);
  while (!opaque_) {
    std::string& p = down_.pending;
    if (down_.passing > 0) {
      if (!down_.pass_on(out)) break;
      continue;
    }
    if (one_byte_answers_ > 0) {  // 'N': go on in the clear; 'S', 'G': encrypted from here
      if (p.empty()) break;
      const char answer = p[0];
      out += answer;
      p.erase(0, 1);
      --one_byte_answers_;
      if (answer != 'N') go_opaque(down_, out);
      continue;
    }
    if (p.size() < 5) break;
    const char type = p[0];
    const std::uint32_t len = Be32(p.data() + 1);
    if (len < 4 || !std::isalnum(static_cast<unsigned char>(type))) {
      go_opaque(down_, out);
      break;
    }
    if (std::size_t{len} + 1 > kMaxMessage) {
      drop_.clear();
      down_.passing = std::int64_t{len} + 1;
      continue;
    }
    if (p.size() < std::size_t{len} + 1) break;
    if (!drop_.empty()) {
      const bool error = type == 'E' || type == 'Z';
      if (pass_first_ > 0 && !error) {  // an answer to a message forwarded before the statement
        if (std::string_view("123tTnCIs").find(type) != std::string_view::npos) --pass_first_;
      } else if (pass_first_ == 0 && type == drop_.front()) {  // the answer to what ran in its place
        drop_.pop_front();
        p.erase(0, len + 1);
        continue;
      } else if (pass_first_ == 0 && type == 'N') {  // its notice ("there is no transaction in progress")
        p.erase(0, len + 1);
        continue;
      } else {
        drop_.clear();  // not what was expected (an earlier error skipped it): pass everything
        pass_first_ = 0;
      }
    }
    out.append(p, 0, len + 1);
    p.erase(0, len + 1);
  }
  return out;
}

std::string RespErrorStream::eval_command() const {
  const std::string script = "return redis.error_reply([==[" + error_ + "]==])";
  return "*3\r\n$4\r\nEVAL\r\n$" + std::to_string(script.size()) + "\r\n" + script + "\r\n$1\r\n0\r\n";
}

std::string RespErrorStream::upstream(std::string_view bytes, const PgErrorStream::Decide& decide,
                                      std::vector<PgErrorStream::Answered>& answered) {
  pending_.append(bytes);
  std::string out;
  while (!opaque_ && !pending_.empty()) {
    // *<n>\r\n then n times $<len>\r\n<len bytes>\r\n
    std::size_t pos = 0;
    // The line "<kind><digits>\r\n" at pos: its number; nullopt when it is
    // not whole yet, or (opaque_ set) when it is no such line.
    const auto read_line = [&](char kind, std::int64_t max) -> std::optional<std::int64_t> {
      if (pos >= pending_.size()) return std::nullopt;
      const std::size_t end = pending_.find("\r\n", pos);
      const bool too_long = (end == std::string::npos ? pending_.size() : end) - pos > 21;
      if (pending_[pos] != kind || too_long || end == pos + 1) {
        opaque_ = true;
        return std::nullopt;
      }
      if (end == std::string::npos) return std::nullopt;
      std::int64_t n = 0;
      for (std::size_t i = pos + 1; i < end; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(pending_[i])) || n > max) {
          opaque_ = true;
          return std::nullopt;
        }
        n = n * 10 + (pending_[i] - '0');
      }
      if (n > max) {
        opaque_ = true;
        return std::nullopt;
      }
      pos = end + 2;
      return n;
    };
    const auto count = read_line('*', 1 << 20);
    if (!count) break;
    std::string command;
    bool whole = true;
    for (std::int64_t i = 0; i < *count && whole; ++i) {
      const auto len = read_line('$', kMaxMessage);
      if (!len) {
        whole = false;
        break;
      }
      if (pending_.size() < pos + static_cast<std::size_t>(*len) + 2) {
        whole = false;
        break;
      }
      if (!command.empty()) command += ' ';
      command.append(pending_, pos, static_cast<std::size_t>(*len));
      pos += static_cast<std::size_t>(*len) + 2;
    }
    if (!whole) break;
    if (decide(command)) {
      out += eval_command();
      answered.push_back(PgErrorStream::Answered{command, false});
    } else {
      out.append(pending_, 0, pos);
    }
    pending_.erase(0, pos);
  }
  if (opaque_) out += std::exchange(pending_, std::string());
  return out;
}

StoreErrorOptions StoreError::parse(YamlOptions& o) {
  StoreErrorOptions out;
  out.window = ReadTcpWindow(o);
  if (auto statement = o.string("statement")) {
    out.statement = *statement;
    out.statement_given = true;
    if (auto compiled = CompileStatement(out.statement); !compiled->ok())
      o.fail_at("statement", "bad regex '" + out.statement + "': " + compiled->error());
  }
  out.skip = o.integer("skip", 0, 1000000).value_or(0);
  out.times = o.integer("times", 1, 1000000).value_or(1);
  if (auto state = o.string("sqlstate")) {
    const bool five = state->size() == 5 && std::all_of(state->begin(), state->end(), [](char ch) {
                        return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z');
                      });
    if (!five || state->starts_with("00") || state->starts_with("01") || state->starts_with("02"))
      o.fail_at("sqlstate", "expected an error SQLSTATE: five digits or capitals, not of class 00, 01 or 02, found '" +
                                *state + "'");
    out.sqlstate = *state;
  }
  if (auto message = o.string("message")) {
    const bool printable = std::all_of(message->begin(), message->end(), [](char ch) { return ch >= ' ' && ch <= '~'; });
    if (message->empty() || message->size() > 200 || !printable || message->find("$idemproof$") != std::string::npos)
      o.fail_at("message", "expected 1 to 200 printable ASCII characters");
    out.message = *message;
  }
  if (auto error = o.string("redis_error")) {
    const bool printable = std::all_of(error->begin(), error->end(), [](char ch) { return ch >= ' ' && ch <= '~'; });
    if (error->empty() || error->size() > 200 || !printable || error->find("]==]") != std::string::npos ||
        !std::isupper(static_cast<unsigned char>((*error)[0])))
      o.fail_at("redis_error", "expected 1 to 200 printable ASCII characters, starting with an error code (OOM, ERR, ...)");
    out.redis_error = *error;
  }
  return out;
}

StoreError::StoreError(StoreErrorOptions options)
    : options_(std::move(options)),
      pattern_(CompileStatement(options_.statement)),
      redis_pattern_(options_.statement_given ? pattern_ : CompileStatement(kRedisWrites)) {}

void StoreError::on_chunk(TcpChunk& chunk) const {
  if (!pattern_->ok()) return;
  // The connection's protocol, from its first bytes to the store: a RESP
  // array is Redis, anything else is read as PostgreSQL.
  using Streams = std::pair<std::shared_ptr<PgErrorStream>, std::shared_ptr<RespErrorStream>>;
  std::any& state = chunk.state();
  const std::span<char> bytes = chunk.bytes();
  const std::string_view read(bytes.data(), bytes.size());
  if (!state.has_value()) {
    if (chunk.direction() == TcpDirection::kDownstream || read.empty()) return;  // nothing asked yet
    state = read[0] == '*' ? Streams{nullptr, std::make_shared<RespErrorStream>(options_.redis_error)}
                           : Streams{std::make_shared<PgErrorStream>(options_.sqlstate, options_.message), nullptr};
  }
  const Streams streams = std::any_cast<Streams>(state);
  const std::shared_ptr<PgErrorStream>& pg = streams.first;
  const std::shared_ptr<RespErrorStream>& resp = streams.second;
  if (pg ? pg->opaque() : resp->opaque()) return;
  if (chunk.direction() == TcpDirection::kDownstream) {
    if (pg) chunk.replace(pg->downstream(read));  // a Redis answer needs no change
    return;
  }
  const re2::RE2& pattern = pg ? *pattern_ : *redis_pattern_;
  std::vector<std::int64_t> counts;
  const auto decide = [&](std::string_view sql) {
    if (!re2::RE2::PartialMatch(re2::StringPiece(sql.data(), sql.size()), pattern)) return false;
    const std::int64_t n = ++chunk.tally();
    if (n <= options_.skip || n > options_.skip + options_.times) return false;
    counts.push_back(n);
    return true;
  };
  std::vector<PgErrorStream::Answered> answered;
  chunk.replace(pg ? pg->upstream(read, decide, answered) : resp->upstream(read, decide, answered));
  for (std::size_t i = 0; i < answered.size(); ++i) {
    std::string sql = answered[i].sql.substr(0, 80);
    std::replace_if(sql.begin(), sql.end(), [](char ch) { return ch < ' ' || ch > '~'; }, ' ');
    const std::string error = pg ? "ErrorResponse " + options_.sqlstate : "-" + options_.redis_error.substr(0, options_.redis_error.find(' '));
    chunk.record("answered matching write " + std::to_string(counts[i]) + " on connection " +
                 std::to_string(chunk.link().id()) + " with " + error +
                 (answered[i].commit ? " (a COMMIT: the store rolled the transaction back)" : "") +
                 " instead of forwarding it: " + sql);
  }
}

}  // namespace idemproof::injectors
