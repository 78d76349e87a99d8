// RedisPublisher: the harness's side of a Redis Streams broker a target
// consumes from (through a consumer group): it adds entries (XADD) and tells
// whether the group has consumed everything (delivered and acknowledged).
// hiredis, blocking, with a connect and command timeout.
//
// Errors are values: kUnavailable (cannot connect, connection lost),
// kProcessError (Redis answered an error: the message quotes it).
//
// Thread-safety: one thread at a time per object.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

struct redisContext;

namespace idemproof::runtime {

// Where a consumer group stands (XINFO GROUPS).
struct StreamGroupState {
  bool exists = false;
  long long pending = 0;            // delivered, not acknowledged
  std::string last_delivered_id;    // "ms-seq"
};

class RedisPublisher {
 public:
  // Connects to "host:port".
  static Result<RedisPublisher> Connect(const std::string& address, std::chrono::milliseconds timeout);

  RedisPublisher(RedisPublisher&&) noexcept;
  RedisPublisher& operator=(RedisPublisher&&) noexcept;
  ~RedisPublisher();

  // XADD stream * field value...; returns the entry id.
  Result<std::string> Add(const std::string& stream,
                          const std::vector<std::pair<std::string, std::string>>& fields);
  // The group's state; exists = false while nobody created it.
  Result<StreamGroupState> Group(const std::string& stream, const std::string& group);
  // Ids of the group's entries delivered and not acknowledged (XPENDING), at
  // most `max`, oldest first.
  Result<std::vector<std::string>> PendingIds(const std::string& stream, const std::string& group, int max = 1000);

 private:
  explicit RedisPublisher(redisContext* ctx) : ctx_(ctx) {}
  redisContext* ctx_ = nullptr;
};

// Stream entry ids compare as (ms, seq): true when a <= b.
bool StreamIdNotAfter(const std::string& a, const std::string& b);

}  // namespace idemproof::runtime
