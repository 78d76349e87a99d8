#include "model/naming.h"

#include "base/stable_hash.h"
#include "model/scenario.h"

namespace idemproof {

namespace {

std::string Hex(std::uint64_t v, int digits) {
  static const char* d = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = d[v & 0xf];
    v >>= 4;
  }
  return out;
}

}  // namespace

Status ValidateNamespace(const std::string& name) {
  if (name.empty() || name.size() > 32)
    return Status::InvalidArgument("a namespace has 1 to 32 characters, not " + std::to_string(name.size()));
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '_')
      return Status::InvalidArgument("namespace '" + name + "': only letters, digits and '_' (it goes into keys)");
  }
  return Status::Ok();
}

std::string FreshNamespace(std::uint64_t entropy) { return Hex(MixBits(entropy), 6); }

RunNaming::RunNaming(std::uint64_t seed, const std::string& run_namespace, const std::string& scenario, int ordinal)
    : seed_(seed),
      run_(Hex(StableHash(scenario + "#" + std::to_string(ordinal), seed ^ 0x9e3779b97f4a7c15ULL), 8) + "-" +
           run_namespace) {}

std::string RunNaming::Key(const std::string& name) const {
  if (name == kNoKey) return "";
  return "idem-" + run_ + "-" + name;
}

std::string RunNaming::Key(const std::string& name, std::size_t length) const {
  const std::string prefix = "idem-" + run_ + "-";
  if (prefix.size() + name.size() >= length) return Key(name);
  return prefix + std::string(length - prefix.size() - name.size(), 'x') + name;
}

std::string RunNaming::FreshKey(int n) const { return "idem-" + run_ + "-fresh-" + std::to_string(n); }
std::string RunNaming::Biz(const std::string& name) const { return "biz-" + run_ + "-" + name; }
std::string RunNaming::Message(const std::string& name) const { return "msg-" + run_ + "-" + name; }
std::string RunNaming::Job(const std::string& name) const { return "job-" + run_ + "-" + name; }

std::string RunNaming::Uuid(int step, int n) const {
  const std::uint64_t base = StableHash(run_ + "/" + std::to_string(step) + "/" + std::to_string(n), seed_);
  std::string h = Hex(MixBits(base), 16) + Hex(MixBits(base ^ 0x5851f42d4c957f2dULL), 16);
  h[12] = '4';
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
         h.substr(20, 12);
}

}  // namespace idemproof
