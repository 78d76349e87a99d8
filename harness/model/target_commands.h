// The processes a target file makes the harness start, gathered in one
// place so no command from a target file runs unseen (issue 43): `run`,
// `discover` and `explore` print them before the first one starts, and
// `run --dry-run` lists them without starting anything. A target file from
// a third party (or one `init` wrote from a third party's document) can name
// any program; the user sees which before it runs.
//
// Every place a target file holds an argv: `start:` (the target, each of
// its instances and every spawned one), each service's `start:`, `reset:`,
// each hook, each action's `records:` probe, each probe, and the batch's
// `result:` and `markers:` calls, when they are commands.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace idemproof {

struct TargetDescription;  // model/target/description.h

struct DeclaredCommand {
  std::string where;              // "start", "services.stub.start", "hooks.heal", "reset", "probes.ledger"...
  std::vector<std::string> argv;  // as written: {{templates}} are filled in when it runs
  std::map<std::string, std::string> env;  // start blocks only
  std::string cwd;                         // start blocks only; "" = the run directory
  SourceMark mark;
};

// `arg` as one word a POSIX shell reads back unchanged: bare when it holds
// only letters, digits and / . - _ = : , (no glob, brace or variable), else
// in single quotes ('\'' for a quote). For commands shown to be copied.
std::string ShellQuote(const std::string& arg);

// Every command `target` declares, in the order above. With `flaw`, the
// start argv ends with the target's flaw_args (its {{flaw}} is `flaw`).
std::vector<DeclaredCommand> DeclaredCommands(const TargetDescription& target,
                                              const std::optional<std::string>& flaw = std::nullopt);

// One line per command, terminal-safe (ConsoleSafe, newlines as "\n"):
// "  start (file:3:8): sh -c 'touch marker'" with each argument quoted as a
// POSIX shell would need it, then its env and cwd when declared. "" when
// there is none.
std::string DeclaredCommandsText(const std::vector<DeclaredCommand>& commands);

// What run, discover and explore print on stderr before starting anything:
// a line naming the target file, then DeclaredCommandsText of its commands
// (with `flaw`). "" when the file declares none.
std::string DeclaredCommandsNotice(const TargetDescription& target,
                                   const std::optional<std::string>& flaw = std::nullopt);

}  // namespace idemproof
