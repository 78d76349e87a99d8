#include "idemproof/ref/batch_rows.h"

#include <nlohmann/json.hpp>

#include "idemproof/ref/fingerprint.h"

namespace idemproof::ref {

BatchRow transform_source_row(std::int64_t id, std::int64_t run) {
  BatchRow r;
  r.id = id;
  r.account = "acct-" + std::to_string(id % 97);
  r.amount = (id * 7919) % 10007 + 1;
  r.fee = r.amount * 3 / 100;
  r.run = run;
  return r;
}

nlohmann::json batch_row_to_json(const BatchRow& row) {
  return {{"id", row.id}, {"account", row.account}, {"amount", row.amount}, {"fee", row.fee}, {"run", row.run}};
}

std::string rows_checksum(const std::vector<BatchRow>& rows) {
  std::string text;
  for (const auto& r : rows) {
    nlohmann::json j = batch_row_to_json(r);
    j.erase("run");
    text += j.dump() + "\n";
  }
  return sha256_hex(text);
}

nlohmann::json range_marker_to_json(const RangeMarker& m) {
  return {{"partition", m.part},         {"from", m.from},         {"to", m.to},
          {"rows_written", m.rows_written}, {"checksum", m.checksum}, {"done_at", m.done_at},
          {"run", m.run}};
}

}  // namespace idemproof::ref
