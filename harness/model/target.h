// The target file: everything idemproof knows about one service under test
// (model/target/description.h) and its loader (model/target/load.h). A
// translation unit that needs one section includes that section's header
// (model/target/actions.h, contract.h, batch.h...); this umbrella keeps every
// type of the file in reach for those that need the whole description.
#pragma once

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/header_list.h"
#include "base/status.h"
#include "base/tls_options.h"
#include "model/http_settings.h"
#include "model/json_path.h"
#include "model/roles.h"
#include "model/target/actions.h"
#include "model/target/batch.h"
#include "model/target/callers.h"
#include "model/target/contract.h"
#include "model/target/description.h"
#include "model/target/egress.h"
#include "model/target/hooks.h"
#include "model/target/instances.h"
#include "model/target/load.h"
#include "model/target/messages.h"
#include "model/target/probes.h"
#include "model/target/request.h"
#include "model/target/services.h"
#include "model/target/start.h"
