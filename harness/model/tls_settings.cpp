#include "model/tls_settings.h"

#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "model/yaml_reader.h"

namespace idemproof {

void ParseTlsSettings(const yaml::Reader& r, const YAML::Node& map, const std::string& file, TlsOptions& out,
                      const std::string& what) {
  const YAML::Node tls = map["tls"];
  if (!tls) return;
  r.CheckKeys(tls, {"ca_file", "insecure", "server_name"}, what);
  if (const YAML::Node insecure = tls["insecure"]) out.insecure = r.Bool(insecure, what + ".insecure");
  if (const YAML::Node name = tls["server_name"]) out.server_name = r.String(name, what + ".server_name");
  if (const YAML::Node ca = tls["ca_file"]) {
    // Trusting a CA and checking nothing contradict each other: say which.
    if (out.insecure) r.Fail(ca, what + ".ca_file with insecure: true: give one or the other");
    std::filesystem::path path = r.String(ca, what + ".ca_file");
    if (path.is_relative()) path = std::filesystem::path(file).parent_path() / path;
    if (!std::ifstream(path).good()) r.Fail(ca, what + ".ca_file: cannot read " + path.string());
    out.ca_file = path.lexically_normal().string();
  }
}

}  // namespace idemproof
