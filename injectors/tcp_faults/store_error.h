// store-error (tcp): the store answers a write with its own error instead
// of losing the connection: the PostgreSQL wire protocol (or Redis's RESP,
// a connection whose first bytes are a RESP array: below) is read on every
// connection, and the statements whose SQL matches `statement` (an RE2
// regex, searched, case-insensitive; default: INSERT, UPDATE, DELETE, MERGE, COMMIT,
// END at the start) are counted across connections; after `skip` of them
// (default 0) the next `times` (default 1) are answered with an
// ErrorResponse of SQLSTATE `sqlstate` (default 40001, a serialization
// failure: what a real store answers a write it could not apply, on a
// connection that stays usable) and message `message`. A client whose
// driver queues writes while it reconnects sees nothing of a reset; it
// sees this.
//
// The store itself answers: the matched statement is not forwarded, a
// statement that raises that error (`DO ... RAISE`) goes in its place, so
// the ReadyForQuery that follows carries the store's real transaction state
// (an error inside BEGIN leaves it failed, 'E'; a later COMMIT of it is
// rolled back by the store). A matched COMMIT/END is turned into ROLLBACK
// followed by the error, and the ROLLBACK's own answer is dropped: a commit
// that failed, the transaction gone, ReadyForQuery 'I'. Simple query ('Q')
// and extended query (Parse/Bind/Execute up to Sync or Flush; an Execute's
// SQL is its portal's statement's, named statements included) are read.
// Extended: the failed statement's messages from its Bind (and an unnamed
// Parse for it) to the Sync are dropped, as a store discards them after an
// error; what went before in the same batch is forwarded and answered
// first; the substitute's ParseComplete and BindComplete are dropped from
// the answers (the unnamed statement and portal are the substitute's
// afterwards). Each act is an "injected" event
// naming the connection, the count and the statement.
//
// Framing: the startup message (no type byte), SSLRequest/GSSENCRequest
// and their one-byte answer are passed through; an encrypted connection,
// a CancelRequest or bytes that are not PostgreSQL's framing are passed
// through untouched. A connection the fault first sees when already open
// (a pool) is read from a message boundary (a store connection is idle
// between statements). Partial messages are held until whole (at most 1 MiB
// each, larger ones stream through unread); a healing that comes while a
// statement's messages are held drops them.
//
// Redis (RespErrorStream below): `redis_error` is the error reply; with no
// `statement`, the Redis write commands match.
//
// Thread-safety: immutable once built; PgErrorStream and RespErrorStream
// are one connection's, used by one thread.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "injectors/tcp_fault.h"

namespace re2 {
class RE2;
}

namespace idemproof::injectors {

struct StoreErrorOptions {
  std::optional<std::chrono::nanoseconds> window;
  std::string statement = R"(^\s*(INSERT|UPDATE|DELETE|MERGE|COMMIT|END)\b)";  // RE2 syntax
  std::int64_t skip = 0;
  std::int64_t times = 1;
  std::string sqlstate = "40001";
  std::string message = "could not serialize access due to concurrent update";
  bool statement_given = false;  // else Redis commands match kRedisWrites
  std::string redis_error = "OOM command not allowed when used memory > 'maxmemory'.";
};

// One connection's PostgreSQL byte streams, reframed: what store-error
// forwards instead of what it read. Public for its tests.
class PgErrorStream {
 public:
  // Asked once per statement executed (a Query's text, an Execute's
  // statement): true = answer it with the error.
  using Decide = std::function<bool(std::string_view sql)>;
  struct Answered {
    std::string sql;
    bool commit = false;  // a COMMIT/END: rolled back
  };

  PgErrorStream(std::string sqlstate, std::string message) : sqlstate_(std::move(sqlstate)), message_(std::move(message)) {}

  // Bytes read from the service; returns the bytes for the store. Every
  // statement answered with the error is appended to `answered`.
  std::string upstream(std::string_view bytes, const Decide& decide, std::vector<Answered>& answered);
  // Bytes read from the store; returns the bytes for the service.
  std::string downstream(std::string_view bytes);
  // Passed through untouched from now on (TLS, a cancel, not PostgreSQL).
  bool opaque() const { return opaque_; }

  // The statement that raises the error in the store ("DO $$ ... $$").
  std::string raise_sql() const;

 private:
  struct Message {
    char type;
    std::string bytes;  // the whole message, type and length included
    std::string_view body() const { return std::string_view(bytes).substr(5); }
  };
  struct Side {
    std::string pending;                 // read, not yet a whole message
    std::int64_t passing = 0;            // bytes of an oversized message still to pass unread
    // Moves what is pending of it to `out`; true once all of it passed.
    bool pass_on(std::string& out);
  };
  void on_message(Message m, const Decide& decide, std::vector<Answered>& answered, std::string& out);
  // A unit (extended-query messages up to Sync or Flush) whole: forwarded,
  // or its first Execute answered with the error.
  void on_unit(const Decide& decide, std::vector<Answered>& answered, std::string& out);
  void flush_unit(std::string& out);  // the unit held goes on unread
  void track(const Message& m);       // statements and portals the store knows
  void go_opaque(Side& side, std::string& out);

  const std::string sqlstate_;
  const std::string message_;
  Side up_, down_;
  bool startup_ = true;       // upstream: the next message has no type byte
  bool seen_ = false;         // any byte upstream yet
  int one_byte_answers_ = 0;  // downstream: SSLRequest/GSSENCRequest answers due
  bool opaque_ = false;
  std::vector<Message> unit_;       // extended-query messages held until Sync or Flush
  std::size_t unit_bytes_ = 0;
  bool unit_unread_ = false;        // an oversized message passed: the unit goes on unread
  std::map<std::string, std::string> statements_, portals_;  // name -> SQL
  std::deque<char> drop_;           // downstream message types to drop, in order,
  std::int64_t pass_first_ = 0;     // after this many answers to messages forwarded before
};

// One connection's Redis commands (RESP arrays of bulk strings), reframed:
// a matching command goes to the store as an EVAL that answers the error
// (`redis.error_reply`), so the error comes back in the command's place,
// in order (inside MULTI: queued, then in EXEC's answers). Inline commands
// or an argument over 1 MiB: passed through untouched from there on.
// Public for its tests.
class RespErrorStream {
 public:
  explicit RespErrorStream(std::string error) : error_(std::move(error)) {}
  // As PgErrorStream::upstream; a command is decided on its arguments
  // joined by spaces ("SET k v"). Its answers need no change.
  std::string upstream(std::string_view bytes, const PgErrorStream::Decide& decide,
                       std::vector<PgErrorStream::Answered>& answered);
  bool opaque() const { return opaque_; }
  std::string eval_command() const;  // what goes in a matched command's place

 private:
  const std::string error_;
  std::string pending_;
  bool opaque_ = false;
};

class StoreError final : public TcpFault {
 public:
  static constexpr const char* kKind = "store-error";
  // Errors go into `options`.
  static StoreErrorOptions parse(YamlOptions& options);

  // A `statement` that does not compile matches nothing (parse refused it).
  explicit StoreError(StoreErrorOptions options);
  const char* kind() const override { return kKind; }
  void on_chunk(TcpChunk& chunk) const override;
  std::optional<std::chrono::nanoseconds> window() const override { return options_.window; }
  const StoreErrorOptions& options() const { return options_; }

 private:
  StoreErrorOptions options_;
  std::shared_ptr<const re2::RE2> pattern_;        // `statement`, compiled
  std::shared_ptr<const re2::RE2> redis_pattern_;  // `statement` if given, else the Redis writes
};

}  // namespace idemproof::injectors
