// ProxyExchange: one client request the chaos proxy has read and handed to a
// proxy fault (proxy_fault.h), with the session's means to act on it: send
// the request upstream, answer the client, wait, close or reset the client's
// connection, and record the fault event.
//
// Below it, what the proxy's sessions and faults share: sending upstream,
// answering the client, and the snapshots that go into FaultEvents (the loop,
// its connections and answers are in proxy_loop.h).
// The proxy's session code is in chaos_proxy.cpp; concurrent upstream copies
// are in upstream_flight.h.
//
// This header is internal to injectors/ (it carries Asio and Beast); the
// public face of the proxy is chaos_proxy.h.
//
// Thread-safety: everything here lives on the proxy's one io_context thread,
// so nothing is locked; only ProxyLoop's counters are read from other
// threads (atomics).
#pragma once

#include "injectors/proxy_loop.h"

namespace idemproof::injectors {

// One request/answer on `conn`, connecting first if needed; never throws.
ProxyTask<UpstreamAnswer> send_upstream(ProxyLoop& loop, UpstreamConn& conn, ProxyRequest request);
// Writes `response` to the client; false when the write failed.
ProxyTask<bool> answer_client(ProxyLoop& loop, boost::beast::tcp_stream& client,
                              ProxyResponse response, bool keep_alive);
// Waits `d`, or less when the proxy heals.
ProxyTask<void> sleep_for(ProxyLoop& loop, std::chrono::nanoseconds d);
// Closes the client's connection: an orderly shutdown, or a reset (RST).
void close_client(boost::beast::tcp_stream& client, bool reset);
// 502 (504 when the upstream timed out) with X-Idemproof-Proxy: upstream-error.
ProxyResponse gateway_error(const UpstreamAnswer& failed, unsigned version);

RequestSnapshot snapshot(const ProxyRequest& request);
AnswerSnapshot snapshot(const ProxyResponse& response, std::int64_t time_ns);

class ProxyExchange {
 public:
  // `event` is the fault's event, already stamped (time, fault, name, phase
  // "injected", the request as read).
  ProxyExchange(ProxyLoop& loop, boost::beast::tcp_stream& client, UpstreamConn& primary,
                ProxyRequest request, FaultEvent event);

  // The request as read from the client; a fault may move it out.
  ProxyRequest& request() { return request_; }
  // The client's HTTP version and wish to keep the connection, as read.
  unsigned version() const { return version_; }
  bool keep_alive() const { return keep_alive_; }
  // True once the proxy is healing: answer nothing more, return false.
  bool closing() const { return loop_.closing; }
  // The event the fault fills in and records once with record().
  FaultEvent& event() { return event_; }
  void record() { loop_.record(std::move(event_)); }

  // On the client's own upstream connection.
  ProxyTask<UpstreamAnswer> send_upstream(ProxyRequest request) {
    return injectors::send_upstream(loop_, primary_, std::move(request));
  }
  ProxyTask<bool> answer(ProxyResponse response) {
    return answer_client(loop_, client_, std::move(response), keep_alive_);
  }
  ProxyTask<void> sleep(std::chrono::nanoseconds d) { return sleep_for(loop_, d); }
  ProxyResponse gateway_error(const UpstreamAnswer& failed) const {
    return injectors::gateway_error(failed, version_);
  }

  // For faults that need more: extra upstream connections (UpstreamFlight),
  // the client's socket itself.
  ProxyLoop& loop() { return loop_; }
  boost::beast::tcp_stream& client() { return client_; }

 private:
  ProxyLoop& loop_;
  boost::beast::tcp_stream& client_;
  UpstreamConn& primary_;
  ProxyRequest request_;
  unsigned version_;
  bool keep_alive_;
  FaultEvent event_;
};

}  // namespace idemproof::injectors
