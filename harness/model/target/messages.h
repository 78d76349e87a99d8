// `messages:` and `broker:` of the target file: queue messages the scenarios
// deliver or publish, and the broker a target consumes from.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/duration.h"
#include "base/header_list.h"
#include "base/status.h"
#include "model/roles.h"
#include "model/target/request.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// A queue message the scenarios deliver (push over HTTP) or publish (into
// the broker). Its templates see {{key}} = the concrete message id (the
// business id a consumer dedups by), {{biz}}, {{run}}...
struct MessageDescription {
  std::string name;
  std::string role = kMessageRole;  // the only message role (roles.h)
  std::optional<RequestTemplate> push;  // how the deliverer pushes it to a consumer (2xx = ack)
  HeaderList fields;                    // the broker entry's fields (templated values), in order
  // Named changes to one push (`variants:`, as an action's), asked for by a
  // `deliver` step's `variant:` (a slow push a kill can cut); a variant's
  // `fields:` change the broker entry of a `publish` instead.
  std::map<std::string, RequestVariant> variants;
  SourceMark mark;
};

// The broker a target consumes from: Redis Streams with a consumer group.
struct BrokerDescription {
  std::string address;  // templated "host:port", e.g. "127.0.0.1:{{services.redis.port}}"
  std::string stream;   // templated stream name
  std::string group;    // the consumer group: a publish waits until it has delivered and acked everything
  Duration settle = std::chrono::seconds(10);  // how long a publish waits for that
  SourceMark mark;
};

// Reads `messages:` into t.messages.
void ParseMessages(TargetLoadContext& cx, const YAML::Node& messages, TargetDescription& t);
// Reads `broker:`.
BrokerDescription ParseBroker(TargetLoadContext& cx, const YAML::Node& node);

}  // namespace idemproof
