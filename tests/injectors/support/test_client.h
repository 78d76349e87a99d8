// TestClient: one libcurl easy handle (keep-alive between calls) for the
// injector tests; every call has a deadline.
//
// Thread-safety: none; one handle per thread.
#pragma once

#include <string>
#include <vector>

namespace idemproof::testkit {

struct ClientAnswer {
  bool answered = false;   // a complete HTTP answer arrived
  int curl_code = 0;       // CURLcode
  std::string error;       // curl's message when not answered
  long status = 0;
  std::string headers;     // raw header block(s)
  std::string body;
  long new_connections = 0;  // connections curl opened for this call
  double seconds = 0;        // total time
};

class TestClient {
 public:
  // `fresh`: a new connection for every call. Needed wherever a connection is
  // reset or closed without an answer: on a reused connection libcurl
  // silently resends the request on a new one (a duplicate of its own).
  explicit TestClient(bool fresh = false);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  ClientAnswer send(const std::string& method, const std::string& url,
                    const std::vector<std::string>& headers = {}, const std::string& body = "",
                    long timeout_ms = 5000);

 private:
  void* curl_;
  bool fresh_;
};

// A header's value in a raw header block ("" when absent; case-insensitive name).
std::string header_value(const std::string& raw_headers, const std::string& name);

}  // namespace idemproof::testkit
