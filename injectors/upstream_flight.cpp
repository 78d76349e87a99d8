#include "injectors/upstream_flight.h"

#include <exception>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace idemproof::injectors {

namespace asio = boost::asio;

UpstreamFlight::UpstreamFlight(ProxyLoop& loop)
    : loop_(loop),
      signal_(std::make_shared<asio::steady_timer>(loop.io)),
      tracked_(loop, [t = signal_.get()] { t->cancel(); }) {}

void UpstreamFlight::launch(const ProxyRequest& request) {
  auto leg = std::make_shared<Leg>(loop_);
  legs_.push_back(leg);
  asio::co_spawn(loop_.io, run(loop_, leg, request, signal_), [](std::exception_ptr) {});
}

ProxyTask<void> UpstreamFlight::run(ProxyLoop& loop, std::shared_ptr<Leg> leg, ProxyRequest request,
                                    std::shared_ptr<asio::steady_timer> signal) {
  leg->result = co_await send_upstream(loop, leg->conn, std::move(request));
  leg->done = true;
  signal->cancel();
}

bool UpstreamFlight::satisfied(Until what, std::size_t leg) const {
  switch (what) {
    case Until::kLegDone: return legs_[leg]->done;
    case Until::kAllDone: return all_done();
    case Until::kAnyAnswer:
      for (const auto& l : legs_) {
        if (l->done && l->result.response) return true;
      }
      return all_done();
  }
  return true;
}

bool UpstreamFlight::all_done() const {
  for (const auto& l : legs_) {
    if (!l->done) return false;
  }
  return true;
}

ProxyTask<bool> UpstreamFlight::wait(Until what, std::size_t leg,
                                     std::chrono::steady_clock::time_point deadline) {
  while (!satisfied(what, leg)) {
    if (loop_.closing || std::chrono::steady_clock::now() >= deadline) co_return satisfied(what, leg);
    signal_->expires_at(deadline);
    boost::system::error_code ec;
    co_await signal_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return true;
}

ProxyTask<void> UpstreamFlight::drain() {
  co_await wait(Until::kAllDone, 0, std::chrono::steady_clock::now() + 2 * loop_.settings.upstream_timeout);
}

std::vector<UpstreamAnswer> UpstreamFlight::take_results() {
  std::vector<UpstreamAnswer> out;
  out.reserve(legs_.size());
  for (const auto& leg : legs_) out.push_back(std::move(leg->result));
  return out;
}

}  // namespace idemproof::injectors
