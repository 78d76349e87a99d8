// RenderRequest: turns a target file's RequestTemplate into a concrete
// OutgoingRequest for one moment of a run: templates expanded with the run's
// variables, the template's `query` parameters (request variants) merged
// into the path's query string percent-encoded (a same-named one replaced),
// the path appended to the base URL, a JSON body serialised compactly with
// Content-Type application/json (or the declared content_type), a raw body
// with the declared content_type only (none declared: no Content-Type), a
// Content-Type among the headers always winning; target-wide headers first,
// then the template's, then `extra` (e.g. the idempotency key header).
//
// Errors: kInvalidArgument when a template names a variable nobody defined
// (the message names it and says where the template was declared).
//
// Thread-safety: a pure function.
#pragma once

#include <string>

#include "clients/http_client.h"
#include "model/target.h"
#include "model/template.h"

namespace idemproof::runtime {

Result<OutgoingRequest> RenderRequest(const RequestTemplate& tmpl, const std::string& base_url,
                                      const TemplateVars& vars, const HeaderList& target_headers,
                                      const HeaderList& extra, Duration timeout);

// Whom a request goes to: only the target's own instances speak its `http:`
// version; the harness's own chaos proxy and the target's services (a
// stub, a provider) are spoken to in HTTP/1.1.
enum class Hop { kTarget, kHarnessProxyOrService };

// `request` with the target's max_body (the answer-body cap), the run's
// budget of kept body bytes (kept_budget.h; may be null), the target's
// tls: checks and, for `hop` kTarget, its HTTP version set.
Result<OutgoingRequest> Capped(Result<OutgoingRequest> request, const TargetDescription& target, KeptBudget* kept,
                               Hop hop);

}  // namespace idemproof::runtime
