#include "model/scenario.h"

#include <algorithm>

#include "model/capabilities.h"
#include "model/target/instances.h"
#include "model/yaml_reader.h"

namespace idemproof {

const char* LayerName(Layer layer) {
  switch (layer) {
    case Layer::kClient: return "client";
    case Layer::kGateway: return "gateway";
    case Layer::kQueue: return "queue";
    case Layer::kSideEffect: return "side-effect";
    case Layer::kConcurrency: return "concurrency";
    case Layer::kBatch: return "batch";
    case Layer::kCluster: return "cluster";
  }
  return "?";
}

Result<Layer> ParseLayer(const std::string& text) {
  for (Layer l : {Layer::kClient, Layer::kGateway, Layer::kQueue, Layer::kSideEffect, Layer::kConcurrency,
                  Layer::kBatch, Layer::kCluster}) {
    if (text == LayerName(l)) return l;
  }
  return Status::InvalidArgument("unknown layer '" + text + "'" +
                                 yaml::DidYouMean(text, {"client", "gateway", "queue", "side-effect",
                                                         "concurrency", "batch", "cluster"}) +
                                 " (client, gateway, queue, side-effect, concurrency, batch, cluster)");
}

std::vector<std::string> Scenario::ActionsUsed() const {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    const auto* send = s.Find<SendOptions>();
    if (send != nullptr && s.kind->sends_request() && std::find(out.begin(), out.end(), send->action) == out.end())
      out.push_back(send->action);
  }
  return out;
}

bool Scenario::UsesBatch() const {
  for (const auto& s : steps)
    if (s.kind->runs_batch()) return true;
  return false;
}

namespace {

bool JsonReferences(const nlohmann::json& value, const std::string& ref) {
  if (value.is_string()) return value.get<std::string>() == ref;
  if (value.is_array() || value.is_object()) {
    for (const auto& item : value)
      if (JsonReferences(item, ref)) return true;
  }
  return false;
}

}  // namespace

bool Scenario::ReferencesParameter(const std::string& name) const {
  const std::string ref = kParameterSigil + name;
  for (const auto& s : steps) {
    for (const auto& name : s.kind->ParameterNames(s))
      if (name == ref) return true;
  }
  for (const auto& spec : expect)
    if (JsonReferences(spec.params, ref)) return true;
  return false;
}



std::optional<Duration> PastWindowWait(const IdempotencyContract& contract) {
  if (!contract.window || *contract.window > kLongestPastWindow) return std::nullopt;
  const Duration margin = std::max<Duration>(std::chrono::milliseconds(200), *contract.window / 10);
  return *contract.window + margin;
}

Duration WaitDuration(const WaitOptions& wait, const IdempotencyContract& contract) {
  if (!wait.past_window) return wait.duration;
  return PastWindowWait(contract).value_or(Duration::zero());
}

int Scenario::InstancesNeeded() const {
  int needed = min_instances;
  auto named = [&](const std::string& name) {
    if (name == kOtherInstance) needed = std::max(needed, 2);
    if (auto i = TargetInstanceIndex(name)) needed = std::max(needed, *i + 1);
  };
  for (const Step& s : steps) {
    named(s.NamedInstance());
    if (const auto* queue = s.Find<QueueOptions>())
      for (const auto& c : queue->consumers) named(c);
  }
  return needed;
}

const std::string& Step::NamedInstance() const {
  static const std::string kNone = kBalancedInstance;
  return std::visit(
      [](const auto& o) -> const std::string& {
        if constexpr (requires { o.instance; }) {
          return o.instance;
        } else {
          return kNone;
        }
      },
      options);
}

std::string BoundName(const std::string& name, const std::map<std::string, std::string>& binding) {
  if (name.empty() || name[0] != kParameterSigil) return name;
  auto it = binding.find(name.substr(1));
  return it == binding.end() ? name : it->second;
}

namespace {
constexpr char kEgressHopPrefix[] = "egress.";
}  // namespace

std::string EgressHop(const std::string& egress) { return kEgressHopPrefix + egress; }

std::string EgressOfHop(const std::string& on) {
  const std::string prefix = kEgressHopPrefix;
  return on.rfind(prefix, 0) == 0 ? on.substr(prefix.size()) : std::string();
}

Step MakeStep(const std::string& kind_name) {
  Step step;
  step.kind = &StepKindNamed(kind_name);
  step.options = step.kind->NewOptions();
  return step;
}

}  // namespace idemproof
