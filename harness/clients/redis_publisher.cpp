#include "clients/redis_publisher.h"

#include <hiredis/hiredis.h>

#include <cstdlib>

namespace idemproof::runtime {

namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

Result<Reply> command(redisContext* ctx, const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  Reply r(static_cast<redisReply*>(
      redisCommandArgv(ctx, static_cast<int>(args.size()), args.data(), lens.data())));
  if (!r) return Status(StatusCode::kUnavailable, std::string("redis: ") + (ctx->err ? ctx->errstr : "no reply"));
  if (r->type == REDIS_REPLY_ERROR) return Status(StatusCode::kProcessError, "redis " + argv[0] + ": " + std::string(r->str, r->len));
  return r;
}

std::pair<unsigned long long, unsigned long long> parse_id(const std::string& id) {
  const auto dash = id.find('-');
  const unsigned long long ms = std::strtoull(id.substr(0, dash).c_str(), nullptr, 10);
  const unsigned long long seq = dash == std::string::npos ? 0 : std::strtoull(id.substr(dash + 1).c_str(), nullptr, 10);
  return {ms, seq};
}

}  // namespace

bool StreamIdNotAfter(const std::string& a, const std::string& b) { return parse_id(a) <= parse_id(b); }

Result<RedisPublisher> RedisPublisher::Connect(const std::string& address, std::chrono::milliseconds timeout) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("broker address '" + address + "' is not host:port");
  const std::string host = address.substr(0, colon);
  const int port = std::atoi(address.substr(colon + 1).c_str());
  const timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  redisContext* ctx = redisConnectWithTimeout(host.c_str(), port, tv);
  if (ctx == nullptr) return Status(StatusCode::kUnavailable, "redis: cannot allocate a context");
  if (ctx->err) {
    Status s(StatusCode::kUnavailable, "redis at " + address + ": " + ctx->errstr);
    redisFree(ctx);
    return s;
  }
  redisSetTimeout(ctx, tv);
  return RedisPublisher(ctx);
}

RedisPublisher::RedisPublisher(RedisPublisher&& o) noexcept : ctx_(o.ctx_) { o.ctx_ = nullptr; }
RedisPublisher& RedisPublisher::operator=(RedisPublisher&& o) noexcept {
  if (this != &o) {
    if (ctx_) redisFree(ctx_);
    ctx_ = o.ctx_;
    o.ctx_ = nullptr;
  }
  return *this;
}
RedisPublisher::~RedisPublisher() {
  if (ctx_) redisFree(ctx_);
}

Result<std::string> RedisPublisher::Add(const std::string& stream,
                                        const std::vector<std::pair<std::string, std::string>>& fields) {
  std::vector<std::string> argv = {"XADD", stream, "*"};
  for (const auto& [k, v] : fields) {
    argv.push_back(k);
    argv.push_back(v);
  }
  auto r = command(ctx_, argv);
  if (!r.ok()) return r.status();
  if ((*r)->type != REDIS_REPLY_STRING) return Status(StatusCode::kProcessError, "redis XADD: unexpected reply");
  return std::string((*r)->str, (*r)->len);
}

Result<StreamGroupState> RedisPublisher::Group(const std::string& stream, const std::string& group) {
  StreamGroupState state;
  auto r = command(ctx_, {"XINFO", "GROUPS", stream});
  if (!r.ok()) {
    // No stream yet: nobody created the group.
    if (r.status().code() == StatusCode::kProcessError) return state;
    return r.status();
  }
  const redisReply* groups = r->get();
  if (groups->type != REDIS_REPLY_ARRAY) return Status(StatusCode::kProcessError, "redis XINFO: unexpected reply");
  for (size_t g = 0; g < groups->elements; ++g) {
    const redisReply* info = groups->element[g];
    if (info->type != REDIS_REPLY_ARRAY) continue;
    StreamGroupState s;
    std::string name;
    for (size_t i = 0; i + 1 < info->elements; i += 2) {
      const std::string key(info->element[i]->str, info->element[i]->len);
      const redisReply* v = info->element[i + 1];
      if (key == "name" && v->type == REDIS_REPLY_STRING) name.assign(v->str, v->len);
      if (key == "pending" && v->type == REDIS_REPLY_INTEGER) s.pending = v->integer;
      if (key == "last-delivered-id" && v->type == REDIS_REPLY_STRING) s.last_delivered_id.assign(v->str, v->len);
    }
    if (name == group) {
      s.exists = true;
      return s;
    }
  }
  return state;
}

Result<std::vector<std::string>> RedisPublisher::PendingIds(const std::string& stream, const std::string& group,
                                                           int max) {
  auto r = command(ctx_, {"XPENDING", stream, group, "-", "+", std::to_string(max)});
  if (!r.ok()) return r.status();
  const redisReply* rows = r->get();
  if (rows->type != REDIS_REPLY_ARRAY) return Status(StatusCode::kProcessError, "redis XPENDING: unexpected reply");
  std::vector<std::string> ids;
  for (size_t i = 0; i < rows->elements; ++i) {
    const redisReply* row = rows->element[i];
    if (row->type != REDIS_REPLY_ARRAY || row->elements < 1 || row->element[0]->type != REDIS_REPLY_STRING)
      return Status(StatusCode::kProcessError, "redis XPENDING: unexpected row");
    ids.emplace_back(row->element[0]->str, row->element[0]->len);
  }
  return ids;
}

}  // namespace idemproof::runtime
