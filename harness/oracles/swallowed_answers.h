// Swallowed answers: answers the target gave that the client never saw,
// because a proxy fault took them (a dropped response, the first answer of a
// gateway retry the proxy replayed, the losing copies of a hedge). The
// runtime records each firing of a proxy fault as an event on the "proxy"
// lane (f "fault", phase "injected") with the request it acted on and its
// `upstream` answers (injectors/fault_event.h; `at_ns` = the answer's time in
// the history's time base, else the event's time).
//
// An oracle that judges "the first answer of a key" or "did anything
// execute" must count them: the client's only answer to a proxy-replayed
// request is a replay of an answer it never saw.
//
// Each swallowed answer is attributed to the client request group it belongs
// to by the key header the request carried (the target's declared
// key_header; with `key_header: none`, the client key found in the request's
// target, body or header values), and among client requests with that key,
// the action whose
// recorded URL ends with the proxied request-target (first one otherwise).
//
// Thread-safety: views into a const History; pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/history.h"
#include "model/operation.h"
#include "model/target/contract.h"

namespace idemproof::oracles {

struct SwallowedAnswer {
  std::string key;     // the concrete key the proxied request carried
  std::string action;  // "" when no client request carried that key
  std::string biz;
  HttpAnswer answer;
  std::int64_t at_ns = 0;
  std::int64_t event_index = -1;  // the proxy event in the history
  std::string fault;              // the proxy fault's kind
};

// Every swallowed answer of the history, in event order.
std::vector<SwallowedAnswer> SwallowedAnswers(const History& history, const IdempotencyContract& contract);

// A compact reference for verdict details: {"swallowed_by", "proxy_event", "at_ns", "status", "headers", "body"}.
nlohmann::json SwallowedJson(const SwallowedAnswer& s);

}  // namespace idemproof::oracles
