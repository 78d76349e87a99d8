// ServiceConfig: what ReferenceService needs to know (the request-handling
// part of the command line, see docs/reference-service.md). Plain value.
#pragma once

#include <chrono>
#include <string>

#include "idemproof/ref/clock.h"
#include "idemproof/ref/flaw.h"

namespace idemproof::ref {

struct ServiceConfig {
  Nanos lease = std::chrono::seconds(30);
  Nanos dedup_ttl = std::chrono::hours(24);  // as documented; the flaw short-ttl divides it
  std::string key_header = "Idempotency-Key";
  std::string replay_header = "Idempotent-Replayed";
  std::string base_path;  // "" or "/api/v9"
  Nanos business_delay{0};
  Flaw flaw = Flaw::none;

  // The TTL really applied to completed records (1/100 of it under short-ttl).
  Nanos effective_dedup_ttl() const {
    return flaw == Flaw::short_ttl ? dedup_ttl / 100 : dedup_ttl;
  }
};

}  // namespace idemproof::ref
