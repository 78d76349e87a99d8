// Templates ({{name}}) over any text: expanding with known variables, listing
// the variables, and expanding a JSON document never throw; a text whose
// variables all expand has no "{{" of a known variable left.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "model/template.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const idemproof::TemplateVars vars = {{"biz", "b-1"}, {"key", "k-1"}, {"port", "8080"}, {"run", "r"}};
  const std::string text = FuzzText(data, size);
  auto names = idemproof::TemplateVariables(text);
  auto expanded = idemproof::ExpandTemplate(text, vars);
  if (names.ok() && expanded.ok()) {
    for (const auto& n : *names) FUZZ_ASSERT(vars.count(n));  // an unknown name is an error, never passed through
  }
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) (void)idemproof::ExpandTemplateJson(doc, vars);
  return 0;
}
