// Golden tests: the HTML page, the Markdown and its SVG timelines rendered
// from the literal run directories in data/ must equal the files in golden/.
// After an intended change: IDEMPROOF_UPDATE_GOLDEN=1 ./test-reports "[golden]"
// and review the diff of tests/reports/golden/.
#include <catch2/catch.hpp>

#include "session/run_contents.h"
#include "report_files.h"
#include "reports/design_review/html_report.h"
#include "reports/design_review/markdown_report.h"
#include "reports/design_review/run_review.h"

using namespace idemproof;
using namespace idemproof::testing;

TEST_CASE("design reports equal their golden files", "[golden]") {
  for (const std::string run : {"broken", "clean", "injection", "hunted"}) {
    SECTION(run) {
      auto contents = ReadRunDirectory(DataRun(run).string());
      REQUIRE(contents.ok());
      REQUIRE(contents->Gaps().empty());
      const RunReview review = ReviewRun(*contents);
      CheckGolden(GoldenDir() / run / "report.html", RenderHtmlReport(*contents, review));
      const MarkdownReport md = RenderMarkdownReport(*contents, review, "report-timelines");
      CheckGolden(GoldenDir() / run / "report.md", md.markdown);
      for (const auto& [file, svg] : md.timelines) CheckGolden(GoldenDir() / run / file, svg);
    }
  }
}
