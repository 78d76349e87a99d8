#include "model/http_settings.h"

#include <string>

#include <yaml-cpp/yaml.h>

#include "model/yaml_reader.h"

namespace idemproof {

void ParseHttpSettings(const yaml::Reader& r, const YAML::Node& root, HttpSettings& out) {
  if (const YAML::Node http = root["http"]) {
    const long long v = r.Int(http, "http");
    if (v != 1 && v != 2) r.Fail(http, "http: " + std::to_string(v) + " is not one of 1, 2");
    out.version = static_cast<int>(v);
  }
  if (const YAML::Node trace = root["trace"]) out.trace = r.Bool(trace, "trace");
}

}  // namespace idemproof
