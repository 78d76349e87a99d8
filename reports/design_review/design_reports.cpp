#include "reports/design_review/design_reports.h"

#include <filesystem>
#include <fstream>

#include "session/run_contents.h"
#include "reports/design_review/html_report.h"
#include "reports/design_review/markdown_report.h"
#include "reports/design_review/run_review.h"
#include "reports/junit.h"
#include "model/results_json.h"

namespace idemproof {
namespace {

namespace fs = std::filesystem;

Status WriteText(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  // Temp file + rename: a reader never sees half a report.
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return Status::IoError("cannot write " + tmp.string());
  }
  fs::rename(tmp, path, ec);
  if (ec) return Status::IoError("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  return Status::Ok();
}

std::string TimelineDirFor(const fs::path& markdown_file) {
  return markdown_file.stem().string() + "-timelines";
}

Status WriteMarkdown(const RunDirectoryContents& contents, const RunReview& review, const fs::path& file) {
  const MarkdownReport md = RenderMarkdownReport(contents, review, TimelineDirFor(file));
  for (const auto& [relative, svg] : md.timelines) {
    Status s = WriteText(file.parent_path() / relative, svg);
    if (!s.ok()) return s;
  }
  return WriteText(file, md.markdown);
}

}  // namespace

Result<ReportFormat> ParseReportFormat(const std::string& text) {
  if (text == "html") return ReportFormat::kHtml;
  if (text == "md" || text == "markdown") return ReportFormat::kMarkdown;
  if (text == "junit") return ReportFormat::kJunit;
  if (text == "json") return ReportFormat::kJson;
  return Status::InvalidArgument("unknown report format '" + text + "' (html, md, junit, json)");
}

Status WriteDesignReports(const std::string& run_dir) {
  auto contents = ReadRunDirectory(run_dir);
  if (!contents.ok()) return contents.status();
  const RunReview review = ReviewRun(*contents);
  Status s = WriteText(fs::path(run_dir) / "report.html", RenderHtmlReport(*contents, review));
  if (!s.ok()) return s;
  return WriteMarkdown(*contents, review, fs::path(run_dir) / "report.md");
}

Result<std::string> RenderReport(const std::string& run_dir, ReportFormat format) {
  auto contents = ReadRunDirectory(run_dir);
  if (!contents.ok()) return contents.status();
  switch (format) {
    case ReportFormat::kHtml: return RenderHtmlReport(*contents, ReviewRun(*contents));
    case ReportFormat::kMarkdown:
      return RenderMarkdownReport(*contents, ReviewRun(*contents), TimelineDirFor("report.md")).markdown;
    case ReportFormat::kJunit: return RenderJUnit(contents->results);
    case ReportFormat::kJson: return RunResultsToJson(contents->results).dump(2) + "\n";
  }
  return Status::Internal("unhandled report format");
}

Status WriteReport(const std::string& run_dir, ReportFormat format, const std::string& out_file) {
  if (format != ReportFormat::kMarkdown) {
    auto text = RenderReport(run_dir, format);
    if (!text.ok()) return text.status();
    return WriteText(out_file, *text);
  }
  auto contents = ReadRunDirectory(run_dir);
  if (!contents.ok()) return contents.status();
  return WriteMarkdown(*contents, ReviewRun(*contents), fs::path(out_file));
}

}  // namespace idemproof
