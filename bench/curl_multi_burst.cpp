#include "curl_multi_burst.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>

#include "support/test_client.h"

namespace idemproof::bench {

namespace {
size_t append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}
}  // namespace

CurlMultiResult curl_multi_burst(std::size_t n, const std::string& method, const std::string& url,
                                 const std::vector<std::string>& headers, const std::string& body,
                                 long timeout_ms) {
  CURLM* multi = curl_multi_init();
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  list = curl_slist_append(list, "Expect:");
  std::vector<CURL*> handles(n);
  std::vector<std::string> head(n), payload(n);
  for (std::size_t i = 0; i < n; ++i) {
    CURL* h = handles[i] = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
    if (!body.empty()) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, append);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &head[i]);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &payload[i]);
    curl_multi_add_handle(multi, h);
  }
  int running = 0;
  do {
    curl_multi_perform(multi, &running);
    if (running) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  } while (running);
  CurlMultiResult result;
  std::vector<std::int64_t> arrivals;
  int left = 0;
  std::vector<bool> ok(n, false);
  while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    for (std::size_t i = 0; i < n; ++i) {
      if (handles[i] == msg->easy_handle) ok[i] = msg->data.result == CURLE_OK;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    CurlMultiAnswer a;
    a.answered = ok[i];
    curl_easy_getinfo(handles[i], CURLINFO_RESPONSE_CODE, &a.status);
    const std::string v = idemproof::testkit::header_value(head[i], "X-Arrival-Ns");
    if (a.answered && !v.empty()) {
      a.arrival_ns = std::stoll(v);
      arrivals.push_back(*a.arrival_ns);
    }
    result.answers.push_back(a);
    curl_multi_remove_handle(multi, handles[i]);
    curl_easy_cleanup(handles[i]);
  }
  curl_slist_free_all(list);
  curl_multi_cleanup(multi);
  if (arrivals.size() >= 2) {
    auto [lo, hi] = std::minmax_element(arrivals.begin(), arrivals.end());
    result.target_spread_ns = *hi - *lo;
  }
  return result;
}

}  // namespace idemproof::bench
