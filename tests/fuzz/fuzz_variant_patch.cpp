// Request variant patches (issue 31): the first line is an action's json
// body, each further line a patch, "PATH<TAB>VALUE" (a JSON value; null
// without a tab). Applying never throws: it sets the value or returns an
// error with the body unchanged. The same body and patches as a target file:
// a variant the loader accepts applies to that body without error.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "model/request_variant.h"
#include "model/target.h"

using idemproof::JsonPath;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = FuzzText(data, size);
  std::size_t nl = text.find('\n');
  nlohmann::json body = nlohmann::json::parse(text.substr(0, nl), nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;
  idemproof::RequestVariant variant;
  variant.name = "v";
  while (nl != std::string::npos && variant.patch.size() < 16) {
    const std::size_t start = nl + 1;
    nl = text.find('\n', start);
    const std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    const std::size_t tab = line.find('\t');
    auto path = JsonPath::Parse(line.substr(0, tab));
    if (!path.ok()) continue;
    nlohmann::json value = tab == std::string::npos ? nlohmann::json()
                                                    : nlohmann::json::parse(line.substr(tab + 1), nullptr, false);
    if (value.is_discarded()) continue;
    // One patch alone: set (and then found there) or an error, body unchanged.
    nlohmann::json doc = body;
    idemproof::Status s = path->SetIn(doc, value);
    if (s.ok()) {
      auto found = path->Find(doc);
      FUZZ_ASSERT(found.ok() && *found == value);
    } else {
      FUZZ_ASSERT(doc == body);
    }
    variant.patch.emplace_back(*path, value);
  }
  if (variant.patch.empty()) return 0;

  // Every patch in order, as a run applies them: a value or an error, never a throw.
  idemproof::RequestTemplate request;
  request.json = body;
  auto applied = idemproof::ApplyVariant(request, variant);
  if (applied.ok()) {
    FUZZ_ASSERT(applied->json.has_value());
    auto last = variant.patch.back().first.Find(*applied->json);
    FUZZ_ASSERT(last.ok() && *last == variant.patch.back().second);
  }

  // The same as a target file: what the loader accepts applies.
  std::string yaml = "name: f\nbase_url: http://127.0.0.1:1\nactions:\n  a:\n    role: create\n"
                     "    request: {method: POST, path: /a, json: " + body.dump() + "}\n"
                     "    variants:\n      v:\n        patch:\n";
  for (const auto& [path, value] : variant.patch)
    yaml += "          " + nlohmann::json(path.text()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
            ": " + value.dump() + "\n";
  auto target = idemproof::ParseTarget(yaml, "fuzz.yaml");
  if (!target.ok()) {
    FUZZ_ASSERT(target.status().ToString().rfind("fuzz.yaml", 0) == 0);
    return 0;
  }
  const idemproof::ActionDescription& a = target->actions.at("a");
  auto loaded = idemproof::ApplyVariant(a.request, a.variants.at("v"));
  FUZZ_ASSERT(loaded.ok());
  return 0;
}
