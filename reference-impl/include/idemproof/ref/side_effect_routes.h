// SideEffectRoutes: the reference service's routes whose effect leaves the
// process or arrives from outside it (docs/reference-service.md, "Side
// effects"):
//
//   POST /payments {"biz_no", "amount"}   key required. Atomic phases: claim
//        the key; write a pending intent bound to it (UNIQUE); call the
//        provider with the intent's token as ITS idempotency key; record the
//        transaction id and mark the intent done; complete the key with the
//        answer. A pending intent met again (a retry after a crash, a
//        takeover) is first reconciled — the provider is asked whether the
//        effect happened — and charged only when it did not.
//   GET  /payments?biz_no=X               {"count", "items": [payment]}
//   POST /callbacks/payment {"seq", "biz_no", "event": "paid"|"refunded"}
//        deduplicated by the provider's sequence number; only allowed
//        transitions apply.
//   GET  /callbacks/payment?biz_no=X      {"biz_no", "state", "applied"}
//   POST /inbox {"message_id", "account", "amount"}   a queue consumer's push
//        endpoint: applied once per message id (dedup row + effect in one
//        transaction); 2xx = ack. `?slow_ms=N` (0..600000): the consumer's
//        work takes N ms more, before that transaction (a kill then loses
//        nothing but the work).
//   GET  /accounts?account=X              {"account", "balance", "applied"}
//   POST /inbox/_chaos {"die_before_ack": n}  the Redis consumer kills its own
//        process after the next n effects commit, before XACK
//
// Flaws: no-intent, callback-no-dedup, inbox-no-dedup, seen-before-apply
// (the message id committed as seen, then the work, then the effect).
// Thread-safe. Store, EffectStore, Clock and provider outlive it.
#pragma once

#include <atomic>
#include <chrono>

#include "idemproof/ref/clock.h"
#include "idemproof/ref/effect_store.h"
#include "idemproof/ref/payment_provider.h"
#include "idemproof/ref/route_extension.h"
#include "idemproof/ref/service_config.h"
#include "idemproof/ref/store.h"

namespace idemproof::ref {

class SideEffectRoutes final : public RouteExtension {
 public:
  // `provider` may be null: /payments then answers 503 provider-not-configured.
  // REQUIRES: `effects` is on the database of `store`'s orders and stock (a
  // refund callback releases stock in its own transaction).
  SideEffectRoutes(ServiceConfig config, Store& store, EffectStore& effects, const Clock& clock,
                   PaymentProvider* provider);

  std::optional<HttpResponse> route(const HttpRequest& request, std::string_view rel,
                                    const std::string& path, const std::string& query) override;

  // On start: asks the provider about every pending intent and records the
  // effects that happened. Charges nothing. Returns how many were settled;
  // an unreachable provider leaves them pending (a retry reconciles).
  std::size_t reconcile_pending();

  // The Redis consumer's effect, shared with POST /inbox.
  // `work`: how long the consumer's work takes (slow_ms) before the effect.
  InboxOutcome apply_message(const std::string& message_id, const std::string& account,
                             std::int64_t amount, std::chrono::milliseconds work = std::chrono::milliseconds(0));
  // True once per armed `die_before_ack` (consumes one).
  bool take_die_before_ack();

 private:
  HttpResponse create_payment(const HttpRequest& request, const std::string& path);
  HttpResponse list_payments(const std::string& query);
  HttpResponse callback(const HttpRequest& request);
  HttpResponse inbox(const HttpRequest& request, const std::string& query);
  HttpResponse inbox_chaos(const HttpRequest& request);
  // Settles a pending intent: reconcile if a call may have happened, else
  // charge. Returns the intent afterwards; nullopt = the provider could not
  // tell (retry later).
  std::optional<PaymentIntent> settle(PaymentIntent intent, std::string& error);

  ServiceConfig config_;
  Store& store_;
  EffectStore& effects_;
  const Clock& clock_;
  PaymentProvider* provider_;
  std::atomic<std::int64_t> die_before_ack_{0};
};

}  // namespace idemproof::ref
