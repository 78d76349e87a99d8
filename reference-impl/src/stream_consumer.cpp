#include "idemproof/ref/stream_consumer.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

namespace idemproof::ref {
namespace {

using Reply = std::unique_ptr<redisReply, decltype(&freeReplyObject)>;

Reply command(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  void* r = redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data());
  return Reply(static_cast<redisReply*>(r), freeReplyObject);
}

struct Entry {
  std::string id;
  std::map<std::string, std::string> fields;
};

std::string str(const redisReply* r) {
  return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
             ? std::string(r->str, r->len)
             : std::string();
}

// [[id, [f, v, ...]], ...]
std::vector<Entry> parse_entries(const redisReply* list) {
  std::vector<Entry> out;
  if (!list || list->type != REDIS_REPLY_ARRAY) return out;
  for (size_t i = 0; i < list->elements; ++i) {
    const redisReply* e = list->element[i];
    if (!e || e->type != REDIS_REPLY_ARRAY || e->elements < 2) continue;
    Entry entry{str(e->element[0]), {}};
    const redisReply* f = e->element[1];
    if (f && f->type == REDIS_REPLY_ARRAY) {
      for (size_t k = 0; k + 1 < f->elements; k += 2) {
        entry.fields[str(f->element[k])] = str(f->element[k + 1]);
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// XREADGROUP reply: [[stream, entries]] or nil.
std::vector<Entry> parse_read(const redisReply* r) {
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0) return {};
  const redisReply* s = r->element[0];
  if (!s || s->type != REDIS_REPLY_ARRAY || s->elements < 2) return {};
  return parse_entries(s->element[1]);
}

}  // namespace

StreamConsumer::StreamConsumer(const ServiceOptions& options, SideEffectRoutes& routes)
    : stream_(options.stream),
      group_(options.group),
      consumer_(options.consumer.empty() ? "ref-" + std::to_string(::getpid()) : options.consumer),
      claim_idle_(options.claim_idle),
      routes_(routes) {
  const auto colon = options.redis.rfind(':');
  host_ = colon == std::string::npos ? options.redis : options.redis.substr(0, colon);
  if (colon != std::string::npos) port_ = std::stoi(options.redis.substr(colon + 1));
}

StreamConsumer::~StreamConsumer() { stop(); }

void StreamConsumer::start() { thread_ = std::thread([this] { run(); }); }

void StreamConsumer::stop() {
  {
    std::lock_guard lock(socket_mu_);
    stopping_ = true;
    if (socket_fd_ >= 0) ::shutdown(socket_fd_, SHUT_RDWR);  // the blocked read returns an error now
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StreamConsumer::pause_unless_stopping(std::chrono::milliseconds d) {
  std::unique_lock lock(socket_mu_);
  stop_cv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

void StreamConsumer::run() {
  const timeval timeout{2, 0};
  std::unique_ptr<redisContext, decltype(&redisFree)> ctx(nullptr, redisFree);
  // Every change of ctx goes through here, so stop() never shuts a reused fd.
  auto replace_context = [&](redisContext* next) {
    std::lock_guard lock(socket_mu_);
    ctx.reset(next);
    socket_fd_ = ctx && !ctx->err ? ctx->fd : -1;
    if (stopping_ && socket_fd_ >= 0) ::shutdown(socket_fd_, SHUT_RDWR);
  };
  bool own_pending_done = false;
  const std::string idle_ms =
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(claim_idle_).count());

  // `fresh`: the entry's first delivery (XREADGROUP >), not a pending one
  // read again or claimed from a dead consumer.
  auto process = [&](const Entry& e, bool fresh) {
    auto id = e.fields.find("message_id");
    auto account = e.fields.find("account");
    auto amount = e.fields.find("amount");
    if (id != e.fields.end() && account != e.fields.end() && amount != e.fields.end()) {
      std::int64_t n = 0;
      try {
        n = std::stoll(amount->second);
      } catch (const std::exception&) {
        std::cerr << "idemproof-ref: stream entry " << e.id << " has a bad amount; skipped\n";
      }
      // The entry's own chaos, as /inbox's query: slow_ms (the work, so a
      // kill can land mid-work) and die_before_ack (this entry only).
      auto number = [&](const char* field) -> std::int64_t {
        auto f = e.fields.find(field);
        if (f == e.fields.end()) return 0;
        try {
          return std::clamp<std::int64_t>(std::stoll(f->second), 0, 600'000);
        } catch (const std::exception&) {
          return 0;
        }
      };
      const std::chrono::milliseconds work(number("slow_ms"));
      if (n != 0) routes_.apply_message(id->second, account->second, n, work);
      // The chaos hook: die with the effect committed and the entry
      // unacknowledged. The entry's own field only on its first delivery:
      // its redelivery carries the field too, and must get through.
      if (routes_.take_die_before_ack() || (fresh && number("die_before_ack") > 0)) ::kill(::getpid(), SIGKILL);
    } else {
      std::cerr << "idemproof-ref: stream entry " << e.id << " lacks fields; skipped\n";
    }
    command(ctx.get(), {"XACK", stream_, group_, e.id});
  };

  while (!stopping_) {
    if (!ctx || ctx->err) {
      replace_context(redisConnectWithTimeout(host_.c_str(), port_, timeout));
      if (!ctx || ctx->err) {
        replace_context(nullptr);
        pause_unless_stopping(std::chrono::milliseconds(200));
        continue;
      }
      redisSetTimeout(ctx.get(), timeout);
      command(ctx.get(), {"XGROUP", "CREATE", stream_, group_, "0", "MKSTREAM"});  // BUSYGROUP is fine
    }
    try {
      if (!own_pending_done) {
        auto r = command(ctx.get(), {"XREADGROUP", "GROUP", group_, consumer_, "COUNT", "100",
                                     "STREAMS", stream_, "0"});
        if (!r) continue;
        for (const auto& e : parse_read(r.get())) process(e, false);
        own_pending_done = true;
      }
      auto claimed = command(ctx.get(), {"XAUTOCLAIM", stream_, group_, consumer_, idle_ms, "0-0",
                                         "COUNT", "100"});
      if (!claimed) continue;
      if (claimed->type == REDIS_REPLY_ARRAY && claimed->elements >= 2) {
        for (const auto& e : parse_entries(claimed->element[1])) process(e, false);
      }
      auto r = command(ctx.get(), {"XREADGROUP", "GROUP", group_, consumer_, "COUNT", "100",
                                   "BLOCK", "200", "STREAMS", stream_, ">"});
      if (!r) continue;
      for (const auto& e : parse_read(r.get())) process(e, true);
    } catch (const std::exception& ex) {
      // A store failure: the entry stays pending and is claimed again later.
      std::cerr << "idemproof-ref: consumer: " << ex.what() << "\n";
      pause_unless_stopping(std::chrono::milliseconds(200));
    }
  }
  replace_context(nullptr);
}

}  // namespace idemproof::ref
