// idemproof-bench: measures what the injectors achieve against the reference
// service (which it starts itself) and prints Markdown tables:
//   1. arrival spread at the target for bursts of N = 8, 20, 32: last-byte sync
//      vs naive threads vs curl multi vs single-packet HTTP/2 (p50/p99 in µs;
//      h2c through haproxy's `proto h2` front, so the reference's arrival
//      times are those of haproxy's HTTP/1.1 forwarding, not of the packet),
//      and over TLS through haproxy's TLS front (ALPN h2,http/1.1; certificates
//      made by tests/transport/tls_front.sh): last-byte HTTP/1.1 and
//      single-packet HTTP/2, each beside its plain row through the same
//      haproxy, with the ratio TLS / plain;
//   2. check-then-insert detection rate per burst mode and flaw pause (0, 10,
//      50, 200 µs), single-packet HTTP/2 also straight at the reference's own
//      h2c front (no haproxy);
//   3. proxy overhead: latency through the proxy (no fault) vs direct,
//      interleaved request by request;
//   4. (--sections explore) `idemproof explore` live: trials/s against the
//      correct reference, time to first violation per flaw (explore_section.h);
//   5. (--sections store) the reference's throughput with distinct keys on
//      SQLite vs PostgreSQL, 1 vs 3 instances sharing the store.
// Modes are interleaved round by round so machine noise hits all alike.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "curl_multi_burst.h"
#include "explore_section.h"
#include "h2_arrival_server.h"
#include "relay_floor.h"
#include "clients/h2_burst.h"
#include "injectors/burst.h"
#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"
#include "support/reference_process.h"
#include "support/test_client.h"

using namespace idemproof::injectors;
using idemproof::bench::curl_multi_burst;
using idemproof::testkit::ReferenceProcess;
using idemproof::testkit::TestClient;

namespace {

std::vector<std::string> g_ref_args;  // --ref-arg: appended to every reference start

std::vector<std::string> ref_args(std::vector<std::string> args) {
  args.insert(args.end(), g_ref_args.begin(), g_ref_args.end());
  return args;
}

enum class Mode { kSync, kSyncSendLoop, kThreads, kCurl, kSyncFront, kSyncTls, kH2, kH2Tls, kH2Direct, kH2Ref };
const std::vector<Mode> kModes{Mode::kSync,    Mode::kSyncSendLoop, Mode::kThreads,  Mode::kCurl,  Mode::kSyncFront,
                               Mode::kSyncTls, Mode::kH2,           Mode::kH2Tls,    Mode::kH2Direct, Mode::kH2Ref};
// Whether the single-packet row straight at the reference's h2c front (its
// own port) is measured.
bool g_h2_at_ref = false;
// The h2c front (haproxy `proto h2`) in front of the reference of the section
// running now, and the bench's own h2c server (h2_arrival_server.h, the
// spread table only); 0: none (their single-packet rows are left out).
std::uint16_t g_h2_port = 0;
std::uint16_t g_h2_direct_port = 0;
// The same haproxy's plain HTTP/1.1 and TLS fronts (the spread table only)
// and the CA its TLS front's certificate is checked with; 0: none (the TLS
// rows and their plain counterparts are left out).
std::uint16_t g_plain_front_port = 0;
std::uint16_t g_tls_port = 0;
std::string g_ca_file;
// A TLS row's plain counterpart: the same burst through the same haproxy, in clear.
std::optional<Mode> plain_of(Mode m) {
  if (m == Mode::kSyncTls) return Mode::kSyncFront;
  if (m == Mode::kH2Tls) return Mode::kH2;
  return std::nullopt;
}
const char* name(Mode m) {
  switch (m) {
    case Mode::kSync: return "last-byte sync (io_uring)";
    case Mode::kSyncSendLoop: return "last-byte sync (send loop)";
    case Mode::kThreads: return "naive threads";
    case Mode::kCurl: return "curl multi";
    case Mode::kSyncFront: return "last-byte HTTP/1.1 (io_uring, via haproxy)";
    case Mode::kSyncTls: return "last-byte HTTP/1.1 over TLS (io_uring, via haproxy)";
    case Mode::kH2: return "single-packet HTTP/2 (h2c, via haproxy)";
    case Mode::kH2Tls: return "single-packet HTTP/2 over TLS (ALPN h2, via haproxy)";
    case Mode::kH2Direct: return "single-packet HTTP/2 (h2c, at an nghttp2 server's parse loop)";
    case Mode::kH2Ref: return "single-packet HTTP/2 (h2c, at the reference)";
  }
  return "?";
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const std::size_t rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(v.size()))));
  return v[std::min(rank, v.size()) - 1];
}

std::string fmt(double x, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

struct Shot {
  bool complete = false;               // every request answered
  std::map<long, int> statuses;        // status -> count (0: no answer)
  std::optional<double> target_us;     // spread at the target
  std::optional<double> harness_us;    // spread on the harness side (not for curl)
};

// A single-packet HTTP/2 burst (clients/h2_burst.h) to `origin` (through a
// haproxy front, h2c or TLS: the arrival times are the reference's, behind
// haproxy's forwarding; or the bench's own h2c server).
Shot fire_h2(const std::string& origin, std::size_t n, const RequestSnapshot& req,
             const idemproof::TlsOptions& tls = {}) {
  Shot s;
  std::vector<idemproof::runtime::OutgoingRequest> requests(n);
  for (auto& r : requests) {
    r.origin = origin;
    r.message = req;
    r.timeout = std::chrono::seconds(30);
    r.tls = tls;
  }
  idemproof::runtime::H2BurstResult r = idemproof::runtime::FireH2Burst(requests, {});
  std::vector<long long> arrivals;
  s.complete = true;
  for (const auto& e : r.exchanges) {
    const bool answered = e.outcome == idemproof::runtime::HttpOutcome::kAnswered;
    s.complete = s.complete && answered;
    ++s.statuses[answered ? e.status : 0];
    if (auto v = e.response_header("X-Arrival-Ns")) arrivals.push_back(std::atoll(v->c_str()));
  }
  if (arrivals.size() >= 2) {
    auto [lo, hi] = std::minmax_element(arrivals.begin(), arrivals.end());
    s.target_us = static_cast<double>(*hi - *lo) / 1000.0;
  }
  if (r.release_ns) s.harness_us = static_cast<double>(*r.release_ns) / 1000.0;
  if (r.segments != 1) std::cerr << "single-packet release took " << r.segments << " segments\n";
  if (!s.complete && !r.exchanges.empty() && !r.exchanges.front().error.empty())
    std::cerr << "single-packet burst to " << origin << ": " << r.exchanges.front().error << "\n";
  return s;
}

Shot fire(Mode mode, std::uint16_t port, std::size_t n, const RequestSnapshot& req) {
  Shot s;
  const auto loopback = [](std::uint16_t p) { return "127.0.0.1:" + std::to_string(p); };
  if (mode == Mode::kH2) return fire_h2("http://" + loopback(g_h2_port), n, req);
  if (mode == Mode::kH2Tls) return fire_h2("https://" + loopback(g_tls_port), n, req, {g_ca_file, false, ""});
  if (mode == Mode::kH2Direct) return fire_h2("http://" + loopback(g_h2_direct_port), n, req);
  if (mode == Mode::kH2Ref) return fire_h2("http://" + loopback(port), n, req);
  if (mode == Mode::kCurl) {
    std::vector<std::string> headers;
    for (const auto& [k, v] : req.headers) headers.push_back(k + ": " + v);
    auto r = curl_multi_burst(n, req.method, "http://127.0.0.1:" + std::to_string(port) + req.target,
                              headers, req.body, 30000);
    s.complete = std::all_of(r.answers.begin(), r.answers.end(), [](const auto& a) { return a.answered; });
    for (const auto& a : r.answers) ++s.statuses[a.answered ? a.status : 0];
    if (r.target_spread_ns) s.target_us = static_cast<double>(*r.target_spread_ns) / 1000.0;
    return s;
  }
  BurstOptions o;
  o.target = {"127.0.0.1", mode == Mode::kSyncFront ? g_plain_front_port : mode == Mode::kSyncTls ? g_tls_port : port};
  if (mode == Mode::kSyncTls) o.tls = idemproof::TlsOptions{g_ca_file, false, ""};
  o.arrival_header = "X-Arrival-Ns";  // the reference's --report-arrival
  o.mode = mode == Mode::kThreads ? BurstMode::kThreads : BurstMode::kLastByte;
  o.release = mode == Mode::kSyncSendLoop ? BurstRelease::kSendLoop : BurstRelease::kIoUring;
  auto r = fire_burst(std::vector<std::string>(n, format_request(req, "127.0.0.1")), o);
  if (!r) {
    std::cerr << "burst: " << r.status().ToString() << "\n";
    return s;
  }
  if (mode == Mode::kSync && r.value().release != BurstRelease::kIoUring) {
    static bool told = false;
    if (!std::exchange(told, true)) std::cerr << "io_uring unavailable: the io_uring rows used the send loop\n";
  }
  s.complete = r.value().count(BurstOutcome::kAnswered) == n;
  for (const auto& a : r.value().answers) ++s.statuses[a.outcome == BurstOutcome::kAnswered ? a.status : 0];
  if (r.value().target_spread_ns) s.target_us = static_cast<double>(*r.value().target_spread_ns) / 1000.0;
  if (r.value().harness_spread_ns) s.harness_us = static_cast<double>(*r.value().harness_spread_ns) / 1000.0;
  return s;
}

RequestSnapshot create_order(const std::string& key, const std::string& biz) {
  return {"POST", "/orders", {{"Idempotency-Key", key}, {"Content-Type", "application/json"}},
          R"({"biz_no":")" + biz + R"(","sku":"sku-)" + biz + R"(","qty":1,"amount":100})"};  // own sku: stock never runs out
}

long orders_for(std::uint16_t port, const std::string& biz) {
  TestClient c;
  auto a = c.send("GET", "http://127.0.0.1:" + std::to_string(port) + "/orders?biz_no=" + biz);
  if (!a.answered || a.status != 200) return -1;
  return nlohmann::json::parse(a.body).at("count").get<long>();
}

std::uint16_t free_loopback_port();

// Runs argv to its end (no shell); its exit status, -1 when it did not run.
int run_to_end(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Debian's haproxy with an h2c front (`bind ... proto h2`) in front of the
// reference (HTTP/1.1 to it), for the single-packet rows; sets g_h2_port.
// `certs` set (a folder tls_front.sh's `certs` filled): a plain HTTP/1.1 and a
// TLS front (ALPN h2,http/1.1) too, for the TLS rows and their plain
// counterparts; sets g_plain_front_port, g_tls_port and g_ca_file.
// Empty on success, else why not (the rows are then left out).
std::string start_h2c_front(ReferenceProcess& haproxy, std::uint16_t upstream_port, const std::string& certs = "") {
  const std::uint16_t port = free_loopback_port();
  const std::uint16_t plain = certs.empty() ? 0 : free_loopback_port();
  const std::uint16_t tls = certs.empty() ? 0 : free_loopback_port();
  if (port == 0 || (!certs.empty() && (plain == 0 || tls == 0))) return "no free port";
  const std::string config = "/tmp/idemproof-bench-h2c-" + std::to_string(getpid()) + ".cfg";
  std::ofstream out(config);
  out << "global\n  maxconn 512\n"
      << "defaults\n  mode http\n  option http-keep-alive\n  timeout connect 5s\n"
      << "  timeout client 30s\n  timeout server 30s\n"
      << "frontend h2c\n  bind 127.0.0.1:" << port << " proto h2\n  default_backend reference\n";
  if (!certs.empty())
    out << "frontend plain\n  bind 127.0.0.1:" << plain << "\n  default_backend reference\n"
        << "frontend tls\n  bind 127.0.0.1:" << tls << " ssl crt " << certs
        << "/server.pem alpn h2,http/1.1\n  default_backend reference\n";
  out << "backend reference\n  server ref 127.0.0.1:" << upstream_port << "\n";
  out.close();
  std::string why = haproxy.start_listening({"haproxy", "-db", "-f", config}, port);
  if (!why.empty()) return why;
  g_h2_port = port;
  if (!certs.empty()) {
    g_plain_front_port = plain;
    g_tls_port = tls;
    g_ca_file = certs + "/ca.pem";
  }
  return "";
}

// The modes measured now: the single-packet rows only with an h2c front.
std::vector<Mode> modes() {
  std::vector<Mode> out;
  for (Mode m : kModes)
    if ((m != Mode::kH2 || g_h2_port != 0) && (m != Mode::kH2Direct || g_h2_direct_port != 0) &&
        (m != Mode::kH2Ref || g_h2_at_ref) &&
        (m != Mode::kSyncFront || g_plain_front_port != 0) && ((m != Mode::kSyncTls && m != Mode::kH2Tls) || g_tls_port != 0))
      out.push_back(m);
  return out;
}

void spread_section(const std::string& ref_binary, int bursts) {
  ReferenceProcess ref;
  if (auto why = ref.start(ref_binary, ref_args({"--report-arrival"})); !why.empty()) {
    std::cerr << why << "\n";
    return;
  }
  // The TLS front's CA and certificate, made as the transport tests make them.
  const std::string certs =
      (std::filesystem::temp_directory_path() / ("idemproof-bench-certs-" + std::to_string(getpid()))).string();
  const bool made_certs =
      run_to_end({"bash", std::string(IDEMPROOF_SOURCE_DIR) + "/tests/transport/tls_front.sh", "certs", certs}) == 0;
  if (!made_certs) std::cerr << "no certificates (tls_front.sh certs): the TLS rows are left out\n";
  ReferenceProcess front;
  if (auto why = start_h2c_front(front, ref.port(), made_certs ? certs : ""); !why.empty())
    std::cerr << "no h2c front: " << why << "\n";
  g_h2_at_ref = true;  // the reference's own h2c front: the packet and last-byte at one server
  idemproof::bench::H2ArrivalServer h2_server;
  if (auto why = h2_server.Start(); why.empty()) {
    g_h2_direct_port = h2_server.port();
  } else {
    std::cerr << why << "\n";
  }
  std::cout << "\n### Arrival spread at the target (GET /healthz, " << bursts
            << " bursts per cell, µs; harness = last final write - first)\n\n"
            << "| N | mode | target p50 | target p99 | target max | harness p50 | harness p99 | incomplete bursts "
               "| TLS / plain, target p50 | TLS / plain, harness p50 |\n"
            << "|---|---|---|---|---|---|---|---|---|---|\n";
  const RequestSnapshot health{"GET", "/healthz", {}, ""};
  for (std::size_t n : {std::size_t{8}, std::size_t{20}, std::size_t{32}}) {
    std::map<Mode, std::vector<double>> target, harness;
    std::map<Mode, int> incomplete;
    for (int round = 0; round < bursts; ++round) {
      for (Mode m : modes()) {
        Shot s = fire(m, ref.port(), n, health);
        if (!s.complete) ++incomplete[m];
        if (s.target_us) target[m].push_back(*s.target_us);
        if (s.harness_us) harness[m].push_back(*s.harness_us);
      }
    }
    // A TLS row against its plain counterpart through the same haproxy.
    auto ratio = [](const std::vector<double>& tls, const std::vector<double>& plain) {
      return tls.empty() || plain.empty() ? std::string("-")
                                          : fmt(percentile(tls, 50) / percentile(plain, 50), 2) + "×";
    };
    for (Mode m : modes()) {
      std::cout << "| " << n << " | " << name(m) << " | " << fmt(percentile(target[m], 50)) << " | "
                << fmt(percentile(target[m], 99)) << " | " << fmt(percentile(target[m], 100)) << " | "
                << (harness[m].empty() ? "-" : fmt(percentile(harness[m], 50))) << " | "
                << (harness[m].empty() ? "-" : fmt(percentile(harness[m], 99))) << " | " << incomplete[m] << " | ";
      if (auto plain = plain_of(m))
        std::cout << ratio(target[m], target[*plain]) << " | " << ratio(harness[m], harness[*plain]) << " |\n";
      else
        std::cout << " | |\n";
    }
    std::cout << "| " << n << " | **sync vs threads, p50** | **"
              << fmt(percentile(target[Mode::kThreads], 50) / percentile(target[Mode::kSync], 50)) << "× tighter** | | | | | | | |\n";
    if (g_h2_port != 0)
      std::cout << "| " << n << " | **single-packet h2 vs last-byte (send loop), p50** | **"
                << fmt(percentile(target[Mode::kSyncSendLoop], 50) / percentile(target[Mode::kH2], 50))
                << "×** | | | | | | | |\n";
    std::cout << "| " << n << " | **single-packet h2 vs last-byte (send loop), both at the reference, p50** | **"
              << fmt(percentile(target[Mode::kSyncSendLoop], 50) / percentile(target[Mode::kH2Ref], 50))
              << "×** | | | | | | | |\n";
    if (g_h2_direct_port != 0)
      std::cout << "| " << n << " | **single-packet h2 at the parse loop vs last-byte (send loop), p50** | **"
                << fmt(percentile(target[Mode::kSyncSendLoop], 50) / percentile(target[Mode::kH2Direct], 50))
                << "×** | | | | | | | |\n";
  }
  g_h2_port = 0;
  g_h2_direct_port = 0;
  g_h2_at_ref = false;
  g_plain_front_port = 0;
  g_tls_port = 0;
  front.stop();  // before its certificates go
  std::error_code ignored;
  std::filesystem::remove_all(certs, ignored);
}

void detection_section(const std::string& ref_binary, int bursts, std::size_t n) {
  std::cout << "\n### check-then-insert detection per burst (N = " << n << ", " << bursts
            << " bursts per cell; detected = more than one order for the burst's biz_no)\n\n"
            << "| --check-insert-pause | mode | detected | rate | median orders | target spread p50 (µs) | answers (status×count, all bursts) |\n"
            << "|---|---|---|---|---|---|---|\n";
  g_h2_at_ref = true;
  for (const char* pause : {"0us", "10us", "50us", "200us"}) {
    ReferenceProcess ref;
    if (auto why = ref.start(ref_binary, ref_args({"--flaw", "check-then-insert", "--check-insert-pause", pause,
                                                   "--report-arrival"}));
        !why.empty()) {
      std::cerr << why << "\n";
      g_h2_at_ref = false;
      return;
    }
    ReferenceProcess front;
    if (auto why = start_h2c_front(front, ref.port()); !why.empty()) std::cerr << "no h2c front: " << why << "\n";
    std::map<Mode, int> detected;
    std::map<Mode, std::vector<double>> orders, spread;
    std::map<Mode, std::map<long, int>> statuses;
    for (int round = 0; round < bursts; ++round) {
      for (Mode m : modes()) {
        const std::string biz = std::string("b-") + pause + "-" + std::to_string(static_cast<int>(m)) + "-" +
                                std::to_string(round);
        Shot s = fire(m, ref.port(), n, create_order("k-" + biz, biz));
        if (s.target_us) spread[m].push_back(*s.target_us);
        for (const auto& [st, c] : s.statuses) statuses[m][st] += c;
        const long count = orders_for(ref.port(), biz);
        orders[m].push_back(static_cast<double>(count));
        if (count > 1) ++detected[m];
      }
    }
    for (Mode m : modes()) {
      std::cout << "| " << pause << " | " << name(m) << " | " << detected[m] << "/" << bursts << " | "
                << fmt(100.0 * detected[m] / bursts, 0) << "% | " << fmt(percentile(orders[m], 50), 0) << " | "
                << fmt(percentile(spread[m], 50)) << " | ";
      for (const auto& [st, c] : statuses[m]) std::cout << (st == 0 ? std::string("none") : std::to_string(st)) << "×" << c << " ";
      std::cout << "|\n";
    }
    g_h2_port = 0;
  }
  g_h2_at_ref = false;
}

// A free loopback port (bound, then released: a small race, fine for a bench).
std::uint16_t free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  std::uint16_t port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

// HAProxy (Debian `haproxy`) in HTTP mode in front of the reference, keep-alive
// on both sides, as the peer of the chaos proxy. Empty on success, else why not.
std::string start_haproxy(ReferenceProcess& haproxy, std::uint16_t upstream_port, const std::string& config_path) {
  const std::uint16_t port = free_loopback_port();
  if (port == 0) return "no free port";
  std::ofstream(config_path) << "global\n  maxconn 256\n"
                             << "defaults\n  mode http\n  option http-keep-alive\n  timeout connect 5s\n"
                             << "  timeout client 30s\n  timeout server 30s\n"
                             << "frontend bench\n  bind 127.0.0.1:" << port << "\n  default_backend reference\n"
                             << "backend reference\n  http-reuse always\n  server ref 127.0.0.1:" << upstream_port << "\n";
  // -db: stay in the foreground, so the child is the proxy itself and is reaped.
  return haproxy.start_listening({"haproxy", "-db", "-f", config_path}, port);
}

void overhead_section(const std::string& ref_binary, int requests) {
  ReferenceProcess ref;
  if (auto why = ref.start(ref_binary, ref_args({})); !why.empty()) {
    std::cerr << why << "\n";
    return;
  }
  ProxySettings settings;  // by member: the settings struct grows
  settings.upstream = {"127.0.0.1", ref.port()};
  ChaosProxy proxy(settings, nullptr);
  if (idemproof::Status st = proxy.start(); !st.ok()) {
    std::cerr << st.ToString() << "\n";
    return;
  }
  const auto config = std::filesystem::temp_directory_path() / ("idemproof-bench-haproxy-" + std::to_string(getpid()) + ".cfg");
  ReferenceProcess haproxy;
  const std::string haproxy_why = start_haproxy(haproxy, ref.port(), config.string());
  struct Side {
    std::string name, base;
    std::unique_ptr<TestClient> client{};  // a fresh keep-alive client per request type
    std::vector<double> us{};
  };
  std::vector<Side> sides;
  sides.push_back({"direct", "http://127.0.0.1:" + std::to_string(ref.port())});
  sides.push_back({"chaos proxy", "http://" + proxy.endpoint().to_string()});
  if (haproxy_why.empty()) sides.push_back({"HAProxy", "http://127.0.0.1:" + std::to_string(haproxy.port())});
  std::cout << "\n### Proxy overhead, no fault (keep-alive libcurl client, " << requests
            << " requests each, direct and each proxy interleaved; µs)\n\n"
            << "| request | via | direct p50 | proxied p50 | ratio p50 | added p50 | direct p99 | proxied p99 | ratio p99 |\n"
            << "|---|---|---|---|---|---|---|---|---|\n";
  const auto row = [](const std::string& what, const std::string& via, const std::vector<double>& d,
                      const std::vector<double>& p) {
    const double d50 = percentile(d, 50), p50 = percentile(p, 50), d99 = percentile(d, 99), p99 = percentile(p, 99);
    std::cout << "| " << what << " | " << via << " | " << fmt(d50) << " | " << fmt(p50) << " | " << fmt(p50 / d50, 2)
              << "× | " << fmt(p50 - d50) << " | " << fmt(d99) << " | " << fmt(p99) << " | " << fmt(p99 / d99, 2)
              << "× |\n";
  };
  for (const char* what : {"GET /healthz", "POST /orders (new key)"}) {
    const bool post = what[0] == 'P';
    for (auto& side : sides) {
      side.client = std::make_unique<TestClient>();
      side.us.clear();
    }
    for (int i = 0; i < requests + 20; ++i) {
      // Rotate which side goes first, so none always runs on a warm cache.
      for (std::size_t k = 0; k < sides.size(); ++k) {
        Side& side = sides[(k + static_cast<std::size_t>(i)) % sides.size()];
        const std::string biz = "ovh-" + std::to_string(i) + "-" + std::to_string(&side - sides.data());
        auto a = post ? side.client->send("POST", side.base + "/orders",
                                         {"Idempotency-Key: k-" + biz, "Content-Type: application/json"},
                                         create_order("", biz).body)
                      : side.client->send("GET", side.base + "/healthz");
        if (!a.answered || i < 20) continue;  // the first 20 are warm-up
        side.us.push_back(a.seconds * 1e6);
      }
    }
    for (std::size_t k = 1; k < sides.size(); ++k) row(what, sides[k].name, sides[0].us, sides[k].us);
    if (!haproxy_why.empty()) std::cout << "| " << what << " | HAProxy | not measured: " << haproxy_why << " |||||||\n";
  }
  proxy.heal();
  haproxy.stop();
  std::error_code ec;
  std::filesystem::remove(config, ec);
  // The same extra hop with nothing but blocking sockets (relay_floor.h).
  const auto floor = idemproof::bench::measure_relay_floor(requests);
  if (floor.ok) {
    row("fixed GET", "floor: raw blocking relay (not a proxy)", floor.direct_us, floor.relayed_us);
  } else {
    std::cerr << "relay floor: a socket call failed\n";
  }
}

// The store section: POST /orders with distinct keys (every request a new
// claim, a new order, a completion) from `clients` threads, each with one
// keep-alive connection per instance, `requests` in all, request i going to
// instance i mod N (round-robin). The instances share the store: one SQLite
// file, or one PostgreSQL server started by scripts/postgres-service.sh (a
// fresh one per row). Latency is per request, client side.
struct StoreRow {
  std::string store;
  int instances;
};

struct Load {
  double seconds = 0;
  std::vector<double> ms;  // answered 2xx
  int errors = 0;          // no answer or not 2xx
};

Load drive_orders(const std::vector<std::string>& bases, int clients, int requests, const std::string& tag) {
  std::atomic<int> next{0};
  std::atomic<int> errors{0};
  std::vector<std::vector<double>> ms(static_cast<std::size_t>(clients));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      std::vector<std::unique_ptr<TestClient>> connections;
      for (std::size_t k = 0; k < bases.size(); ++k) connections.push_back(std::make_unique<TestClient>());
      for (int i = next++; i < requests; i = next++) {
        const std::size_t instance = static_cast<std::size_t>(i) % bases.size();
        const std::string biz = tag + "-" + std::to_string(i);
        auto a = connections[instance]->send("POST", bases[instance] + "/orders",
                                            {"Idempotency-Key: k-" + biz, "Content-Type: application/json"},
                                            create_order("", biz).body, 30000);
        if (!a.answered || a.status / 100 != 2) {
          ++errors;
        } else {
          ms[static_cast<std::size_t>(c)].push_back(a.seconds * 1e3);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  Load load;
  load.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& v : ms) load.ms.insert(load.ms.end(), v.begin(), v.end());
  load.errors = errors;
  return load;
}

void store_section(const std::string& ref_binary, int clients, int requests) {
  namespace fs = std::filesystem;
  const fs::path scratch = fs::temp_directory_path() / ("idemproof-bench-store-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  fs::permissions(scratch, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);  // nobody's server
  std::cout << "\n### Store: throughput with distinct keys (POST /orders, " << clients << " keep-alive clients, "
            << requests << " requests per row, round-robin over the instances; latency in ms)\n\n"
            << "| store | instances | requests/s | p50 | p99 | errors |\n|---|---|---|---|---|---|\n";
  const std::vector<StoreRow> rows = {{"SQLite", 1}, {"SQLite", 3}, {"PostgreSQL", 1}, {"PostgreSQL", 3}};
  int n = 0;
  for (const StoreRow& row : rows) {
    const std::string folder = (scratch / std::to_string(++n)).string();
    fs::create_directories(folder);
    ReferenceProcess postgres;  // declared before the instances: stopped after them
    std::vector<std::string> store_args;
    if (row.store == "PostgreSQL") {
      const std::uint16_t port = free_loopback_port();
      const std::string why = postgres.start_printing(
          {"bash", std::string(IDEMPROOF_SOURCE_DIR) + "/scripts/postgres-service.sh", std::to_string(port),
           folder + "/pg"},
          port, "database system is ready to accept connections", std::chrono::seconds(120));
      if (!why.empty()) {
        std::cout << "| " << row.store << " | " << row.instances << " | not measured: " << why << " ||||\n";
        continue;
      }
      store_args = {"--db", folder + "/ref.db",  // what --store leaves in SQLite, shared too
                    "--store", "postgres://postgres@127.0.0.1:" + std::to_string(port) + "/postgres"};
    } else {
      store_args = {"--db", folder + "/ref.db"};
    }
    std::vector<std::unique_ptr<ReferenceProcess>> instances;
    std::vector<std::string> bases;
    std::string why;
    for (int k = 0; k < row.instances && why.empty(); ++k) {
      std::vector<std::string> argv = {ref_binary, "--port", "0"};
      argv.insert(argv.end(), store_args.begin(), store_args.end());
      instances.push_back(std::make_unique<ReferenceProcess>());
      why = instances.back()->start_command(ref_args(argv), std::chrono::seconds(30));
      bases.push_back("http://127.0.0.1:" + std::to_string(instances.back()->port()));
    }
    if (!why.empty()) {
      std::cout << "| " << row.store << " | " << row.instances << " | not measured: " << why << " ||||\n";
      continue;
    }
    drive_orders(bases, clients, std::min(requests, 10 * clients), "warm-" + std::to_string(n));
    const Load load = drive_orders(bases, clients, requests, "store-" + std::to_string(n));
    std::cout << "| " << row.store << " | " << row.instances << " | "
              << fmt(static_cast<double>(load.ms.size()) / load.seconds, 0) << " | " << fmt(percentile(load.ms, 50), 2)
              << " | " << fmt(percentile(load.ms, 99), 2) << " | " << load.errors << " |\n";
    std::cout.flush();
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"idemproof-bench: burst spread, check-then-insert detection, proxy overhead, explore, store"};
  std::string ref_binary;
  int bursts = 50, detect_bursts = 40, requests = 2000, store_clients = 8, store_requests = 3000;
  std::size_t detect_n = 32;
  std::vector<std::string> sections{"spread", "detect", "overhead"};
  app.add_option("--ref", ref_binary, "idemproof-ref binary")->required();
  app.add_option("--bursts", bursts, "bursts per cell of the spread table")->capture_default_str();
  app.add_option("--detect-bursts", detect_bursts, "bursts per cell of the detection table")->capture_default_str();
  app.add_option("--detect-n", detect_n, "requests per detection burst")->capture_default_str();
  app.add_option("--requests", requests, "requests per side of the overhead table")->capture_default_str();
  app.add_option("--sections", sections, "spread, detect, overhead, explore, store")->capture_default_str();
  app.add_option("--store-clients", store_clients, "store: concurrent clients")->capture_default_str();
  app.add_option("--store-requests", store_requests, "store: requests per row")->capture_default_str();
  idemproof::bench::ExploreBenchOptions explore;  // the explore section (explore_section.h)
  app.add_option("--idemproof", explore.idemproof, "idemproof binary (explore; default: next to --ref)");
  app.add_option("--explore-trials", explore.clean_trials, "explore: trials per file against the correct reference")
      ->capture_default_str();
  app.add_option("--explore-seed", explore.seed, "explore: seed of every run")->capture_default_str();
  app.add_option("--explore-flaws", explore.flaws,
                 "explore: flaws to run (default: every flaw of the reference; none: no flaw table)");
  app.add_option("--explore-files", explore.files,
                 "explore: explore files (stems) of the trials/s table (default: every scenarios/explore/*.yaml; none: no such table)");
  app.add_option("--explore-jobs", explore.jobs, "explore: --jobs values of the trials/s table")->capture_default_str();
  app.add_option("--explore-out", explore.out_dir, "explore: run directories (default: a temp folder)");
  app.add_option("--ref-arg", g_ref_args, "extra argument for every reference start (repeatable)")
      ->allow_extra_args(false);
  CLI11_PARSE(app, argc, argv);
  std::cout << "## idemproof-bench\n\nreference: " << ref_binary;
  for (const auto& a : g_ref_args) std::cout << " " << a;
  std::ifstream loadavg("/proc/loadavg");
  std::string load;
  std::getline(loadavg, load);
  std::cout << "\nload average at start (1, 5, 15 min; 2 cores shared): " << load << "\n";
  for (const auto& s : sections) {
    if (s == "spread") spread_section(ref_binary, bursts);
    if (s == "detect") detection_section(ref_binary, detect_bursts, detect_n);
    if (s == "overhead") overhead_section(ref_binary, requests);
    if (s == "store") store_section(ref_binary, store_clients, store_requests);
    if (s == "explore") {
      // build/reference-impl/idemproof-ref -> build/
      const auto build = std::filesystem::absolute(ref_binary).parent_path().parent_path();
      explore.ref = ref_binary;
      explore.build_dir = build.string();
      if (explore.idemproof.empty()) explore.idemproof = (build / "harness/cli/idemproof").string();
      explore.source_dir = IDEMPROOF_SOURCE_DIR;
      if (explore.out_dir.empty()) explore.out_dir = (std::filesystem::temp_directory_path() / "idemproof-bench-explore").string();
      idemproof::bench::explore_section(explore);
    }
  }
  return 0;
}
