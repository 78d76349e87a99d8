#include "model/target_commands.h"

#include "model/console_text.h"
#include "model/target/description.h"

namespace idemproof {
namespace {

void AddCall(std::vector<DeclaredCommand>& out, const std::string& where, const TargetCall& call) {
  if (call.command) out.push_back({where, *call.command, {}, "", call.mark});
}

void AddStart(std::vector<DeclaredCommand>& out, const std::string& where, const StartCommand& start) {
  out.push_back({where, start.argv, start.env, start.cwd, start.mark});
}

}  // namespace

std::string ShellQuote(const std::string& arg) {
  bool plain = !arg.empty();
  for (char c : arg) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                    c == '.' || c == '-' || c == '_' || c == '=' || c == ':' || c == ',';
    if (!ok) plain = false;
  }
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<DeclaredCommand> DeclaredCommands(const TargetDescription& t, const std::optional<std::string>& flaw) {
  std::vector<DeclaredCommand> out;
  if (t.start) {
    AddStart(out, t.instance_count > 1 ? "start (x" + std::to_string(t.instance_count) + " instances)" : "start",
             *t.start);
    if (flaw) {
      for (const auto& a : t.start->flaw_args) out.back().argv.push_back(a);
      out.back().where += " with flaw " + *flaw;
    }
  }
  for (const auto& [name, svc] : t.services) AddStart(out, "services." + name + ".start", svc.start);
  if (t.reset) AddCall(out, "reset", *t.reset);
  for (const auto& [name, hook] : t.hooks) AddCall(out, "hooks." + name, hook.call);
  for (const auto& [name, action] : t.actions)
    if (action.records) AddCall(out, "actions." + name + ".records", action.records->call);
  for (const auto& [name, probe] : t.probes) AddCall(out, "probes." + name, probe.call);
  if (t.batch) {
    AddCall(out, "batch.result", t.batch->result);
    if (t.batch->markers_call) AddCall(out, "batch.markers", *t.batch->markers_call);
  }
  return out;
}

std::string DeclaredCommandsText(const std::vector<DeclaredCommand>& commands) {
  // Each piece escaped on its own: a newline inside an argument shows as
  // "\n" and can never start a line of its own.
  const auto safe = [](const std::string& text) { return ConsoleSafe(text, LineBreaks::kEscape); };
  std::string out;
  for (const DeclaredCommand& c : commands) {
    out += "  " + safe(c.where) + (c.mark.known() ? " (" + safe(c.mark.ToString()) + ")" : "") + ":";
    for (const auto& arg : c.argv) out += " " + safe(ShellQuote(arg));
    out += "\n";
    for (const auto& [name, value] : c.env) out += "      env " + safe(ShellQuote(name + "=" + value)) + "\n";
    if (!c.cwd.empty()) out += "      cwd " + safe(ShellQuote(c.cwd)) + "\n";
  }
  return out;
}

std::string DeclaredCommandsNotice(const TargetDescription& target, const std::optional<std::string>& flaw) {
  const std::vector<DeclaredCommand> commands = DeclaredCommands(target, flaw);
  if (commands.empty()) return "";
  return "idemproof: " + ConsoleSafe(target.file) + " makes the harness run these " +
         std::to_string(commands.size()) + " command(s) ({{templates}} filled in as each runs):\n" +
         DeclaredCommandsText(commands);
}

}  // namespace idemproof
