#include "model/job_result.h"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <set>

#include "model/json_path.h"

namespace idemproof {
namespace {

Result<std::int64_t> IntAt(const JsonPath& path, const nlohmann::json& doc, const std::string& what) {
  auto v = path.Find(doc);
  if (!v.ok()) return Status::InvalidArgument(what + ": " + path.text() + " is missing");
  if (!v->is_number_integer())
    return Status::InvalidArgument(what + ": " + path.text() + " is not an integer (" + DescribeJsonValue(*v) + ")");
  return v->get<std::int64_t>();
}

Result<std::vector<nlohmann::json>> ArrayAt(const JsonPath& path, const nlohmann::json& doc,
                                            const std::string& what) {
  auto v = path.Find(doc);
  if (!v.ok()) return Status::InvalidArgument(what + ": " + path.text() + " is missing");
  if (!v->is_array()) return Status::InvalidArgument(what + ": " + path.text() + " is not an array");
  return v->get<std::vector<nlohmann::json>>();
}

std::string Hex(const unsigned char* p, unsigned n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 15]);
  }
  return out;
}

// Rows of one id in a comparable order, so copies compare as multisets.
std::map<std::int64_t, std::vector<std::string>> ById(const JobResult& r, bool stable) {
  std::map<std::int64_t, std::vector<std::string>> out;
  for (const auto& row : r.rows) out[row.id].push_back((stable ? row.stable : row.full).dump());
  for (auto& [id, v] : out) std::sort(v.begin(), v.end());
  return out;
}

std::optional<std::int64_t> AsInt(const std::string& s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<const ResultRow*> JobResult::RowsIn(std::int64_t from, std::int64_t to) const {
  std::vector<const ResultRow*> out;
  for (const auto& r : rows)
    if (r.id >= from && r.id < to) out.push_back(&r);
  return out;
}

std::string JobTotals::Text() const {
  return std::to_string(rows) + (rows == 1 ? " row" : " rows") + ", sum " +
         (sum.is_string() ? sum.get<std::string>() : sum.dump());
}

Result<JobResult> ReadJobResult(const BatchDescription& batch, const nlohmann::json& result,
                                const std::optional<nlohmann::json>& markers_doc) {
  JobResult out;
  std::size_t n = 0;
  if (batch.totals()) {
    auto count = IntAt(batch.rows, result, "result");
    if (!count.ok()) return count.status();
    auto sum = batch.sum->Find(result);
    if (!sum.ok()) return Status::InvalidArgument("result: " + batch.sum->text() + " is missing");
    if (!sum->is_number() && !sum->is_string())
      return Status::InvalidArgument("result: " + batch.sum->text() + " is neither a number nor text");
    out.totals = JobTotals{*count, *sum};
  } else {
    auto rows = ArrayAt(batch.rows, result, "result");
    if (!rows.ok()) return rows.status();
    for (const auto& doc : *rows) {
      auto id = IntAt(batch.row_id, doc, "row " + std::to_string(n++));
      if (!id.ok()) return id.status();
      out.rows.push_back(ResultRow{*id, doc, WithoutPaths(doc, batch.volatile_paths)});
    }
    std::stable_sort(out.rows.begin(), out.rows.end(),
                     [](const ResultRow& a, const ResultRow& b) { return a.id < b.id; });
  }
  if (!batch.declares_markers()) return out;

  std::vector<nlohmann::json> items;
  if (batch.markers) {
    auto m = ArrayAt(*batch.markers, result, "result");
    if (!m.ok()) return m.status();
    items = *m;
  } else {
    if (!markers_doc) return Status::InvalidArgument("markers: the markers call returned nothing");
    auto m = ArrayAt(batch.markers_items, *markers_doc, "markers");
    if (!m.ok()) return m.status();
    items = *m;
  }
  std::vector<RangeMarker> markers;
  n = 0;
  for (const auto& doc : items) {
    const std::string what = "marker " + std::to_string(n++);
    RangeMarker m;
    m.raw = doc;
    auto from = IntAt(batch.marker.from, doc, what);
    if (!from.ok()) return from.status();
    auto to = IntAt(batch.marker.to, doc, what);
    if (!to.ok()) return to.status();
    auto written = IntAt(batch.marker.rows_written, doc, what);
    if (!written.ok()) return written.status();
    m.from = *from;
    m.to = *to;
    m.rows_written = *written;
    m.key = "[" + std::to_string(m.from) + ", " + std::to_string(m.to) + ")";
    if (batch.marker.key) {
      if (auto k = batch.marker.key->FindText(doc)) m.key = *k;
    }
    if (batch.marker.checksum && batch.checksum != ChecksumAlgorithm::kNone) {
      // sha256-rows is hex text; the target's own form is text or a number.
      auto c = batch.marker.checksum->Find(doc);
      const bool text_only = batch.checksum == ChecksumAlgorithm::kSha256Rows;
      if (c.ok() && !c->is_string() && (text_only || !c->is_number()))
        return Status::InvalidArgument(what + ": " + batch.marker.checksum->text() + " is " + DescribeJsonValue(*c) +
                                       (text_only ? ", not text (sha256-rows is hex text)" : ", not text or a number"));
      if (c.ok()) m.checksum = *c;
    }
    markers.push_back(std::move(m));
  }
  std::stable_sort(markers.begin(), markers.end(),
                   [](const RangeMarker& a, const RangeMarker& b) { return a.from < b.from; });
  out.markers = std::move(markers);
  return out;
}

std::string RowsChecksum(ChecksumAlgorithm algorithm, const std::vector<const ResultRow*>& rows) {
  if (algorithm != ChecksumAlgorithm::kSha256Rows) return "";
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  for (const ResultRow* r : rows) {
    // nlohmann's object is a std::map: dump() sorts members and adds no white space.
    std::string line = r->stable.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    EVP_DigestUpdate(ctx.get(), line.data(), line.size());
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  return Hex(digest, len);
}

std::int64_t RowComparison::diff_rows() const {
  return static_cast<std::int64_t>(missing.size() + extra.size() + doubled.size() + differing.size());
}

RowComparison CompareRows(const JobResult& rerun, const JobResult& clean) {
  RowComparison c;
  auto a = ById(rerun, true), b = ById(clean, true);
  for (const auto& [id, rows] : a) c.max_copies = std::max<std::int64_t>(c.max_copies, static_cast<std::int64_t>(rows.size()));
  for (const auto& [id, rows] : b)
    if (!a.count(id)) c.missing.push_back(id);
  for (const auto& [id, rows] : a) {
    auto it = b.find(id);
    if (it == b.end()) {
      c.extra.push_back(id);
    } else if (rows.size() > it->second.size()) {
      c.doubled.push_back(id);
      c.extra_copies += static_cast<std::int64_t>(rows.size() - it->second.size());
    } else if (rows != it->second) {
      c.differing.push_back(id);
    }
  }
  return c;
}

std::vector<std::int64_t> RewrittenRows(const JobResult& before, const JobResult& after) {
  std::vector<std::int64_t> out;
  auto a = ById(before, false), b = ById(after, false);
  for (const auto& [id, rows] : a) {
    auto it = b.find(id);
    if (it == b.end() || it->second != rows) out.push_back(id);
  }
  return out;
}

std::string MarkerChanges(const JobResult& before, const JobResult& after) {
  if (!before.markers || !after.markers) return "";
  std::set<std::string> a, b;
  for (const auto& m : *before.markers) a.insert(m.raw.dump());
  std::vector<std::string> keys;
  for (const auto& m : *after.markers) {
    b.insert(m.raw.dump());
    if (!a.count(m.raw.dump())) keys.push_back(m.key);
  }
  std::size_t removed = 0;
  for (const auto& s : a) removed += b.count(s) ? 0 : 1;
  if (keys.empty() && removed == 0) return "";
  const auto plural = [](std::size_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
  };
  if (!keys.empty()) return "changed the markers of " + plural(keys.size(), "partition") + " (e.g. " + keys.front() + ")";
  return "changed the markers (" + plural(removed, "marker") + " removed)";
}

MarkerCoverage CoverageOf(const std::vector<RangeMarker>& markers, std::int64_t from, std::int64_t to) {
  MarkerCoverage out;
  if (to <= from) return out;
  // Per id of [from, to): how many markers cover it (a difference array).
  std::vector<int> delta(static_cast<std::size_t>(to - from) + 1, 0);
  for (const auto& m : markers) {
    const std::int64_t lo = std::max(m.from, from), hi = std::min(m.to, to);
    if (lo >= hi) continue;
    ++delta[static_cast<std::size_t>(lo - from)];
    --delta[static_cast<std::size_t>(hi - from)];
  }
  int n = 0;
  for (std::int64_t id = from; id < to; ++id) {
    n += delta[static_cast<std::size_t>(id - from)];
    if (n == 0) out.uncovered.push_back(id);
    if (n > 1) out.overlapped.push_back(id);
  }
  return out;
}

std::string FormatIdRanges(std::vector<std::int64_t> ids, std::size_t max_ranges) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  std::size_t ranges = 0;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (ranges == max_ranges) {
      out += ", …";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(ids[i]);
    if (j > i) out += "–" + std::to_string(ids[j]);
    ++ranges;
    i = j + 1;
  }
  return out;
}

std::string PartitionsOf(const std::vector<std::int64_t>& ids, const std::vector<RangeMarker>& markers) {
  std::vector<const RangeMarker*> hit;
  std::set<const RangeMarker*> seen;
  for (std::int64_t id : ids) {
    for (const auto& m : markers) {
      if (id >= m.from && id < m.to && seen.insert(&m).second) hit.push_back(&m);
    }
  }
  if (hit.empty()) return "";
  std::vector<std::int64_t> numeric;
  for (const RangeMarker* m : hit) {
    auto n = AsInt(m->key);
    if (!n) {
      numeric.clear();
      break;
    }
    numeric.push_back(*n);
  }
  std::string names;
  if (numeric.size() == hit.size()) {
    names = FormatIdRanges(numeric);
  } else {
    for (std::size_t i = 0; i < hit.size() && i < 4; ++i) names += (i ? ", " : "") + hit[i]->key;
    if (hit.size() > 4) names += ", …";
  }
  return (hit.size() == 1 ? "partition " : "partitions ") + names;
}

}  // namespace idemproof
