// RenderRequest: turns a target file's RequestTemplate into a concrete
// HttpRequest for one moment of a run: templates expanded with the run's
// variables, the path appended to the base URL, a JSON body serialised
// compactly with Content-Type application/json, target-wide headers first,
// then the template's, then `extra` (e.g. the idempotency key header).
//
// Errors: kInvalidArgument when a template names a variable nobody defined
// (the message names it and says where the template was declared).
//
// Thread-safety: a pure function.
#pragma once

#include <string>

#include "model/target.h"
#include "model/template.h"
#include "runtime/http_client.h"

namespace idemproof::runtime {

Result<HttpRequest> RenderRequest(const RequestTemplate& tmpl, const std::string& base_url,
                                  const TemplateVars& vars, const HeaderList& target_headers,
                                  const HeaderList& extra, Duration timeout);

// As above, with the body taken from `body_source` (an action's other_payload)
// instead of `tmpl`'s own json/body.
Result<HttpRequest> RenderRequestWithBody(const RequestTemplate& tmpl,
                                          const RequestTemplate& body_source,
                                          const std::string& base_url, const TemplateVars& vars,
                                          const HeaderList& target_headers,
                                          const HeaderList& extra, Duration timeout);

// `request` with the target's max_body (the answer-body cap) set.
Result<HttpRequest> Capped(Result<HttpRequest> request, const TargetDescription& target);

}  // namespace idemproof::runtime
