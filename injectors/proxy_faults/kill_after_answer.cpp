#include "injectors/proxy_faults/kill_after_answer.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace idemproof::injectors {

KillAfterAnswerOptions KillAfterAnswer::parse(YamlOptions& o) {
  KillAfterAnswerOptions out;
  // A string too: the harness fills it from "{{target_pid}}".
  if (std::optional<std::string> text = o.string("pid")) {
    try {
      std::size_t used = 0;
      out.pid = std::stol(*text, &used);
      if (used != text->size()) out.pid = 0;
    } catch (...) {
      out.pid = 0;
    }
    if (out.pid <= 1) o.fail_at("pid", "expected a process id > 1, got '" + *text + "'");
  } else {
    o.require("pid");
  }
  out.group = o.boolean("group").value_or(true);
  return out;
}

ProxyTask<bool> KillAfterAnswer::act(ProxyExchange& x) const {
  UpstreamAnswer ex = co_await x.send_upstream(std::move(x.request()));
  FaultEvent& ev = x.event();
  ev.upstream_sends = 1;
  if (!ex.response) {
    ev.detail = ex.error + "; the downstream did not answer: nothing killed";
    ev.missed = "the downstream did not answer (" + ex.error + "): nothing killed";
    ProxyResponse res = x.gateway_error(ex);
    ev.client_answer = snapshot(res, steady_now_ns());
    x.record();
    if (!x.closing()) co_await x.answer(std::move(res));
    co_return false;
  }
  ev.upstream.push_back(snapshot(*ex.response, ex.done_ns));
  // The answer is read in full and not forwarded: kill first, so the service
  // cannot have seen a byte of it.
  const pid_t target = static_cast<pid_t>(options_.group ? -options_.pid : options_.pid);
  const std::string who = (options_.group ? "process group " : "process ") + std::to_string(options_.pid);
  if (::kill(target, SIGKILL) == 0) {
    ev.detail = "SIGKILLed " + who + " after the downstream answered " +
                std::to_string(ex.response->result_int()) + "; the answer was not forwarded";
  } else {
    ev.detail = "could not SIGKILL " + who + ": " + std::strerror(errno) + "; the answer was not forwarded";
    ev.missed = "could not SIGKILL " + who + ": nothing killed";
  }
  x.record();
  close_client(x.client(), /*reset=*/false);
  co_return false;
}

}  // namespace idemproof::injectors
