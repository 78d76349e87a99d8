// JSON paths: the first line is a path, the rest a JSON document. A path that
// parses reads back from its own text as the same path, and finding, reading
// as text and erasing never throw.
#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "model/json_path.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = FuzzText(data, size);
  const auto nl = text.find('\n');
  auto path = idemproof::JsonPath::Parse(text.substr(0, nl));
  if (!path.ok()) return 0;
  auto again = idemproof::JsonPath::Parse(path->text());
  FUZZ_ASSERT(again.ok() && *again == *path);
  if (nl == std::string::npos) return 0;
  nlohmann::json doc = nlohmann::json::parse(text.substr(nl + 1), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  auto found = path->Find(doc);
  if (path->has_wildcard()) FUZZ_ASSERT(found.ok() && found->is_array());
  (void)path->FindText(doc);
  path->EraseFrom(doc);
  return 0;
}
