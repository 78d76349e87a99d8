// ServiceConfig: what ReferenceService needs to know (the request-handling
// part of the command line, see docs/reference-service.md). Plain value.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

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
  // The claim-conflict-500 flaw's pause between reading the key and
  // claiming it (--check-insert-pause).
  Nanos claim_race_pause{0};
  // How a payment whose provider call may have charged is settled on its
  // retry (--reconcile): look the charge up by its provider key (false), or
  // re-send the charge with the SAME provider key (true), which a provider
  // that honours idempotency keys answers with the first charge.
  bool reconcile_by_resend = false;
  Flaw flaw = Flaw::none;
  // "" = the flaw is everywhere; else only requests on this route template
  // ("/refunds", without the base path) have it (--flaw-route; only flaws
  // of the request path, see flaw_can_be_aimed()).
  std::string flaw_route;

  // True when `flaw` is on for requests on `route_template`.
  bool has_flaw(Flaw f, std::string_view route_template) const {
    return flaw == f && (flaw_route.empty() || route_template == flaw_route);
  }

  // The TTL really applied to completed records (1/100 of it under short-ttl).
  Nanos effective_dedup_ttl() const {
    return flaw == Flaw::short_ttl ? dedup_ttl / 100 : dedup_ttl;
  }
  // The same for the records of one route.
  Nanos effective_dedup_ttl(std::string_view route_template) const {
    return has_flaw(Flaw::short_ttl, route_template) ? dedup_ttl / 100 : dedup_ttl;
  }
};

}  // namespace idemproof::ref
