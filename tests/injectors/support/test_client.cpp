#include "support/test_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace idemproof::testkit {

static size_t append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

TestClient::TestClient(bool fresh) : curl_(curl_easy_init()), fresh_(fresh) {}
TestClient::~TestClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

ClientAnswer TestClient::send(const std::string& method, const std::string& url,
                              const std::vector<std::string>& headers, const std::string& body,
                              long timeout_ms) {
  CURL* h = static_cast<CURL*>(curl_);
  ClientAnswer a;
  curl_slist* list = nullptr;
  for (const auto& line : headers) list = curl_slist_append(list, line.c_str());
  list = curl_slist_append(list, "Expect:");
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(h, CURLOPT_NOBODY, method == "HEAD" ? 1L : 0L);
  if (!body.empty() || method == "POST" || method == "PUT") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  } else {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, fresh_ ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_FORBID_REUSE, fresh_ ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, append);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &a.headers);
  const CURLcode rc = curl_easy_perform(h);
  curl_slist_free_all(list);
  a.curl_code = static_cast<int>(rc);
  a.answered = rc == CURLE_OK;
  if (!a.answered) a.error = curl_easy_strerror(rc);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &a.new_connections);
  curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &a.seconds);
  return a;
}

std::string header_value(const std::string& raw, const std::string& name) {
  std::istringstream in(raw);
  std::string line;
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  const std::string want = lower(name) + ":";
  std::string value;
  while (std::getline(in, line)) {
    if (lower(line.substr(0, want.size())) == want) {
      value = line.substr(want.size());
      value.erase(0, value.find_first_not_of(" \t"));
      while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
    }
  }
  return value;
}

}  // namespace idemproof::testkit
