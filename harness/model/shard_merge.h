// MergeShardResults: `idemproof merge`'s judgement of the shards' results,
// with no file touched (the CLI reads the folders and writes the merged
// run directory).
//
// The shards must be one suite cut N ways: each finished, each a shard
// (`run --shard`), all of one target, seed, flaw, profile, strictness,
// shard count and suite digest (model/shard.h), no shard index twice.
// Anything else is refused (kInvalidArgument, naming the folder and what
// differs): merging them would claim a run that never happened.
//
// A missing shard is not refused: the merge goes on and is marked
// incomplete (RunResults::Incomplete(): exit 3, or 1 when a present shard
// holds a violation), so a CI job whose shard died still reports what ran
// and can never pass.
//
// Rows come back in the unsharded run's order (item i of the bound list is
// row i / N of shard i mod N + 1), so the merged results.json lists the
// scenarios as one unsharded run would.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "model/results.h"

namespace idemproof {

struct ShardRun {
  std::string dir;  // the shard's run folder, as given (named in errors)
  RunResults results;
};

struct ShardMerge {
  RunResults results;                 // run_id, started, finished: the caller's to set as it likes
  std::vector<std::string> row_dirs;  // per merged row: the folder of the shard it came from
};

// REQUIRES: !shards.empty().
Result<ShardMerge> MergeShardResults(const std::vector<ShardRun>& shards);

}  // namespace idemproof
