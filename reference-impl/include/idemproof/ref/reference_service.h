// ReferenceService: the reference idempotent order service as a pure map from
// HttpRequest (+ Store, Clock, chaos settings) to HttpResponse, as in Beast's
// examples. It knows nothing of sockets; the server runs handle_request() on
// worker threads. Routes and rules: docs/reference-service.md.
//
// Thread-safe: handle_request() may run concurrently; it blocks for the
// business delay and for the store. The Store and Clock must outlive it.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <condition_variable>
#include <string>
#include <vector>

#include "idemproof/ref/chaos_control.h"
#include "idemproof/ref/clock.h"
#include "base/http_message.h"
#include "idemproof/ref/request_record.h"
#include "idemproof/ref/route_extension.h"
#include "idemproof/ref/service_config.h"
#include "idemproof/ref/store.h"

namespace idemproof::ref {

class ReferenceService {
 public:
  ReferenceService(ServiceConfig config, Store& store, const Clock& clock);
  ~ReferenceService();  // joins the deferred completions (flaw store-after-answer)
  ReferenceService(const ReferenceService&) = delete;
  ReferenceService& operator=(const ReferenceService&) = delete;

  // Answers one request. Never throws: store failures become 500 problems.
  HttpResponse handle_request(const HttpRequest& request);

  // Deletes dead idempotency records (the TTL sweep); returns how many.
  std::size_t sweep_expired();

  const ServiceConfig& config() const { return config_; }
  // The flaw serve-before-recovery: while true, /healthz answers 503 and the
  // keyed routes run without their key (the idempotency layer fails open).
  void set_recovering(bool recovering) { recovering_.store(recovering); }

  // Routes answered by `extension` (tried after the built-in ones, in the
  // order added). Call before serving; `extension` must outlive this object.
  void add_extension(RouteExtension& extension) { extensions_.push_back(&extension); }

 private:
  struct Call;      // one claimed idempotent execution
  struct Step;      // the business step of one route

  HttpResponse route(const HttpRequest& request);
  HttpResponse create_order(const HttpRequest& request, const std::string& path);
  HttpResponse list_orders(const std::string& query);
  HttpResponse get_order(std::int64_t id);
  HttpResponse set_address(const HttpRequest& request, const std::string& path, std::int64_t id);
  HttpResponse cancel_order(const HttpRequest& request, const std::string& path, std::int64_t id);
  HttpResponse get_stock(const std::string& query);
  HttpResponse create_movement(MovementKind kind, const HttpRequest& request, const std::string& path);
  HttpResponse list_movements(MovementKind kind, const std::string& query);
  HttpResponse chaos(const HttpRequest& request);

  // Runs `step` at most once per `key` of `route_template` (see the rules);
  // without a key, runs it unconditionally.
  HttpResponse execute_once(const HttpRequest& request, const std::optional<std::string>& key,
                            const std::string& route_template, const std::string& path,
                            const std::string& canonical_body, const Step& step);
  // `requested`: the chaos the request itself asked for (request_chaos).
  HttpResponse perform(const Step& step, const std::optional<Call>& call, const ChaosForStep& requested);
  HttpResponse replay(const RequestRecord& record);
  void finish_terminal(const Call& call, const HttpResponse& response);

  // The flaw fast-path-skips-fingerprint: replays served before, by scope,
  // with when they stop being served.
  struct CachedReplay {
    HttpResponse response;
    TimePoint until;
  };
  std::optional<HttpResponse> cached_replay(const RequestScope& scope, TimePoint now);
  void cache_replay(const RequestScope& scope, const HttpResponse& response, TimePoint now);

  ServiceConfig config_;
  Store& store_;
  const Clock& clock_;
  ChaosControl chaos_;
  std::vector<RouteExtension*> extensions_;
  // The flaw store-after-answer: completions stored after the answer left.
  void complete_later(const Call& call, const HttpResponse& response);
  std::mutex deferred_mu_;
  std::condition_variable deferred_done_;
  int deferred_ = 0;  // completions not stored yet; guarded by deferred_mu_
  std::mutex replay_cache_mu_;
  std::map<RequestScope, CachedReplay> replay_cache_;  // guarded by replay_cache_mu_
  std::atomic<bool> recovering_{false};  // set only under serve-before-recovery
};

}  // namespace idemproof::ref
