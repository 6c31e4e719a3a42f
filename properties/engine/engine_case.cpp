// The engine property's commands as values and text. See engine_case.hpp.
#include "engine_case.hpp"

#include <array>
#include <charconv>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "readyport/assert.hpp"

namespace readyport::properties {
namespace {

std::string interest_text(Interest interest) {
  std::string text;
  auto add = [&](Interest bit, const char* name) {
    if ((interest & bit) == 0) {
      return;
    }
    if (!text.empty()) {
      text += "|";
    }
    text += name;
  };
  add(kInterestIn, "IN");
  add(kInterestOut, "OUT");
  add(kInterestHangup, "HANGUP");
  return text.empty() ? "NONE" : text;
}

std::string events_text(std::uint32_t events) {
  std::string text = interest_text(static_cast<Interest>(events & kInterestAll));
  if ((events & kSockNotifyEventErr) != 0) {
    text += "|ERR";
  }
  return text;
}

}  // namespace

std::string command_text(const EngineCommand& c) {
  const std::string conn = "c" + std::to_string(c.conn);
  switch (c.kind) {
    case EngineCommandKind::kAdd:
      return std::string("add(") + mode_name(c.mode) + " " + interest_text(c.interest) + ")";
    case EngineCommandKind::kPeerSend:
      return "peer_send(" + conn + ", " + std::to_string(c.value) + ")";
    case EngineCommandKind::kPeerShutdown:
      return "peer_shutdown(" + conn + ")";
    case EngineCommandKind::kPeerReset:
      return "peer_reset(" + conn + ")";
    case EngineCommandKind::kClose:
      return "close(" + conn + ")";
    case EngineCommandKind::kCloseInside:
      return "close_inside(" + conn + (c.value % 2 == 0 ? ", return)" : ", call)");
    case EngineCommandKind::kNotify:
      return "notify(" + conn + ", " + events_text(c.value) + ")";
    case EngineCommandKind::kPost:
      return "post()";
    case EngineCommandKind::kArm:
      return std::string("arm(") + fault_site_name(c.site) + ")";
    case EngineCommandKind::kRun:
      return "run(" + std::to_string(c.value) + " ms)";
    case EngineCommandKind::kAddAgain:
      return "add_again(" + conn + ")";
    case EngineCommandKind::kCloseForeign:
      return "close_foreign(" + std::to_string(c.value) + ")";
    case EngineCommandKind::kStopInside:
      return "stop_inside(" + conn + ")";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& out, const EngineCommand& command) {
  return out << command_text(command);
}

std::size_t case_command_count(const EngineCase& c) {
  std::size_t count = c.commands.size();
  for (const std::vector<EngineCommand>& branch : c.branches) {
    count += branch.size();
  }
  return count;
}

std::size_t case_step_number(const EngineCase& c, std::size_t branch, std::size_t index) {
  READYPORT_ASSERT(branch < c.branches.size());
  std::size_t number = c.commands.size();
  for (std::size_t b = 0; b < branch; ++b) {
    number += c.branches[b].size();
  }
  return number + index;
}

std::string case_text(const EngineCase& c) {
  std::ostringstream out;
  out << "seed=" << c.seed << " workers=" << c.workers << " batch=" << c.batch_count << " ("
      << c.commands.size() << " commands";
  if (!c.branches.empty()) {
    out << " then " << c.branches.size() << " parallel branches of "
        << case_command_count(c) - c.commands.size();
  }
  out << ")\n";
  for (std::size_t i = 0; i < c.commands.size(); ++i) {
    out << "  " << i << ": " << command_text(c.commands[i]) << "\n";
  }
  for (std::size_t b = 0; b < c.branches.size(); ++b) {
    out << "  branch " << b + 1 << " (parallel):\n";
    for (std::size_t i = 0; i < c.branches[b].size(); ++i) {
      out << "    " << case_step_number(c, b, i) << ": " << command_text(c.branches[b][i]) << "\n";
    }
  }
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const EngineCase& engine_case) {
  return out << case_text(engine_case);
}

namespace {

bool commands_have_edge(const std::vector<EngineCommand>& commands) {
  for (const EngineCommand& c : commands) {
    if (c.kind == EngineCommandKind::kAdd &&
        (c.mode == Mode::kPersistentEdge || c.mode == Mode::kOneshotEdge)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool case_has_edge(const EngineCase& engine_case) {
  if (commands_have_edge(engine_case.commands)) {
    return true;
  }
  for (const std::vector<EngineCommand>& branch : engine_case.branches) {
    if (commands_have_edge(branch)) {
      return true;
    }
  }
  return false;
}

// ---- The one-line form --------------------------------------------------------------------------

std::string engine_case_line(const EngineCase& c) {
  std::string line = "seed=" + std::to_string(c.seed) + " workers=" + std::to_string(c.workers) +
                     " batch=" + std::to_string(c.batch_count);
  for (const EngineCommand& command : c.commands) {
    line += "; " + command_text(command);
  }
  for (const std::vector<EngineCommand>& branch : c.branches) {
    line += " ||";
    for (std::size_t i = 0; i < branch.size(); ++i) {
      line += (i == 0 ? " " : "; ") + command_text(branch[i]);
    }
  }
  return line;
}

namespace {

Status bad(std::string_view what, std::string_view token) {
  return Status(StatusCode::kInvalidArgument,
                "engine case: " + std::string(what) + " in '" + std::string(token) + "'");
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// Splits on `separator`, trimming each piece.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  while (true) {
    const std::size_t at = text.find(separator);
    pieces.push_back(trim(text.substr(0, at)));
    if (at == std::string_view::npos) {
      return pieces;
    }
    text.remove_prefix(at + 1);
  }
}

template <typename T>
Result<T> parse_number(std::string_view text, std::string_view token) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return bad("not a decimal number: '" + std::string(text) + "'", token);
  }
  return value;
}

// `c<n>`.
Result<std::uint32_t> parse_conn(std::string_view text, std::string_view token) {
  if (text.size() < 2 || text[0] != 'c') {
    return bad("expected a connection c<n>", token);
  }
  return parse_number<std::uint32_t>(text.substr(1), token);
}

// `IN|OUT|HANGUP|ERR` (or NONE) to event bits.
Result<std::uint32_t> parse_events(std::string_view text, std::string_view token) {
  static constexpr std::array<std::pair<std::string_view, std::uint32_t>, 4> kNames = {{
      {"IN", kSockNotifyEventIn},
      {"OUT", kSockNotifyEventOut},
      {"HANGUP", kSockNotifyEventHangup},
      {"ERR", kSockNotifyEventErr},
  }};
  if (text == "NONE") {
    return std::uint32_t{0};
  }
  std::uint32_t bits = 0;
  for (std::string_view name : split(text, '|')) {
    bool known = false;
    for (const auto& [known_name, bit] : kNames) {
      if (name != known_name) {
        continue;
      }
      bits |= bit;
      known = true;
    }
    if (!known) {
      return bad("unknown event '" + std::string(name) + "'", token);
    }
  }
  return bits;
}

Result<Mode> parse_mode(std::string_view text, std::string_view token) {
  for (Mode mode :
       {Mode::kOneshotLevel, Mode::kPersistentLevel, Mode::kPersistentEdge, Mode::kOneshotEdge}) {
    if (text == mode_name(mode)) {
      return mode;
    }
  }
  return bad("unknown mode '" + std::string(text) + "'", token);
}

using K = EngineCommandKind;

// add(<mode> <interest>).
Result<EngineCommand> parse_add(std::string_view inside, std::string_view token) {
  const std::size_t space = inside.find(' ');
  if (space == std::string_view::npos) {
    return bad("expected add(<mode> <interest>)", token);
  }
  Result<Mode> mode = parse_mode(trim(inside.substr(0, space)), token);
  if (!mode.ok()) {
    return mode.status();
  }
  Result<std::uint32_t> interest = parse_events(trim(inside.substr(space + 1)), token);
  if (!interest.ok()) {
    return interest.status();
  }
  if ((interest.value() & ~static_cast<std::uint32_t>(kInterestAll)) != 0) {
    return bad("an interest is IN, OUT and HANGUP only", token);
  }
  EngineCommand c;
  c.kind = K::kAdd;
  c.mode = mode.value();
  c.interest = static_cast<Interest>(interest.value());
  return c;
}

// <name>(c<n>): the commands of one connection and nothing else.
Result<EngineCommand> parse_conn_only(K kind, const std::vector<std::string_view>& args,
                                      std::string_view token) {
  if (args.size() != 1) {
    return bad("expected one argument", token);
  }
  Result<std::uint32_t> conn = parse_conn(args[0], token);
  if (!conn.ok()) {
    return conn.status();
  }
  EngineCommand c;
  c.kind = kind;
  c.conn = conn.value();
  return c;
}

// close_foreign(<slot>), post(), arm(<site>), run(<n> ms): no connection.
Result<EngineCommand> parse_without_conn(std::string_view name, std::string_view inside,
                                         std::string_view token) {
  EngineCommand c;
  if (name == "close_foreign") {
    Result<std::uint32_t> slot = parse_number<std::uint32_t>(trim(inside), token);
    if (!slot.ok()) {
      return slot.status();
    }
    c.kind = K::kCloseForeign;
    c.value = slot.value();
    return c;
  }
  if (name == "post") {
    if (!inside.empty()) {
      return bad("post() takes no argument", token);
    }
    c.kind = K::kPost;
    return c;
  }
  if (name == "arm") {
    Result<FaultSite> site = fault_site_parse(trim(inside));
    if (!site.ok()) {
      return bad(site.status().message(), token);
    }
    c.kind = K::kArm;
    c.site = site.value();
    return c;
  }
  READYPORT_ASSERT(name == "run");
  if (inside.size() < 4 || inside.substr(inside.size() - 3) != " ms") {
    return bad("expected run(<n> ms)", token);
  }
  Result<std::uint32_t> ms =
      parse_number<std::uint32_t>(inside.substr(0, inside.size() - 3), token);
  if (!ms.ok()) {
    return ms.status();
  }
  c.kind = K::kRun;
  c.value = ms.value();
  return c;
}

// peer_send(c<n>, <bytes>), close_inside(c<n>, return|call), notify(c<n>, <events>).
Result<EngineCommand> parse_conn_and_value(std::string_view name,
                                           const std::vector<std::string_view>& args,
                                           std::string_view token) {
  if (args.size() != 2) {
    return bad("expected two arguments", token);
  }
  Result<std::uint32_t> conn = parse_conn(args[0], token);
  if (!conn.ok()) {
    return conn.status();
  }
  EngineCommand c;
  c.conn = conn.value();
  if (name == "peer_send") {
    Result<std::uint32_t> bytes = parse_number<std::uint32_t>(args[1], token);
    if (!bytes.ok()) {
      return bytes.status();
    }
    c.kind = K::kPeerSend;
    c.value = bytes.value();
    return c;
  }
  if (name == "close_inside") {
    if (args[1] != "return" && args[1] != "call") {
      return bad("expected return or call", token);
    }
    c.kind = K::kCloseInside;
    c.value = args[1] == "call" ? 1 : 0;
    return c;
  }
  READYPORT_ASSERT(name == "notify");
  Result<std::uint32_t> events = parse_events(args[1], token);
  if (!events.ok()) {
    return events.status();
  }
  c.kind = K::kNotify;
  c.value = events.value();
  return c;
}

// One command, as command_text writes it.
Result<EngineCommand> parse_command(std::string_view token) {
  const std::size_t open = token.find('(');
  if (open == std::string_view::npos || token.back() != ')') {
    return bad("expected name(arguments)", token);
  }
  const std::string_view name = trim(token.substr(0, open));
  const std::string_view inside = token.substr(open + 1, token.size() - open - 2);
  const std::vector<std::string_view> args = split(inside, ',');
  static constexpr std::pair<std::string_view, K> kConnOnly[] = {
      {"peer_shutdown", K::kPeerShutdown},
      {"peer_reset", K::kPeerReset},
      {"close", K::kClose},
      {"add_again", K::kAddAgain},
      {"stop_inside", K::kStopInside}};
  if (name == "add") {
    return parse_add(inside, token);
  }
  for (const auto& [text, kind] : kConnOnly) {
    if (name == text) {
      return parse_conn_only(kind, args, token);
    }
  }
  if (name == "close_foreign" || name == "post" || name == "arm" || name == "run") {
    return parse_without_conn(name, inside, token);
  }
  if (name == "peer_send" || name == "close_inside" || name == "notify") {
    return parse_conn_and_value(name, args, token);
  }
  return bad("unknown command '" + std::string(name) + "'", token);
}

}  // namespace

namespace {

// `seed=.. workers=.. batch=..` into `c`.
Status parse_header(std::string_view header, EngineCase& c) {
  bool seen[3] = {false, false, false};
  for (std::string_view field : split(header, ' ')) {
    if (field.empty()) {
      continue;
    }
    const std::size_t eq = field.find('=');
    const std::string_view key = field.substr(0, eq);
    const int index = key == "seed" ? 0 : key == "workers" ? 1 : key == "batch" ? 2 : -1;
    if (eq == std::string_view::npos || index < 0) {
      return bad("unknown field", field);
    }
    if (seen[index]) {
      return bad("field given twice", field);
    }
    seen[index] = true;
    const std::string_view text = field.substr(eq + 1);
    if (index == 0) {
      Result<std::uint64_t> seed = parse_number<std::uint64_t>(text, field);
      if (!seed.ok()) {
        return seed.status();
      }
      c.seed = seed.value();
      continue;
    }
    Result<std::uint32_t> value = parse_number<std::uint32_t>(text, field);
    if (!value.ok()) {
      return value.status();
    }
    (index == 1 ? c.workers : c.batch_count) = value.value();
  }
  if (!seen[0] || !seen[1] || !seen[2]) {
    return bad("expected seed=, workers= and batch=", header);
  }
  if (c.workers < 1 || c.workers > 8) {
    return bad("workers must be 1..8", header);
  }
  if (c.batch_count < 1 || c.batch_count > 4096) {
    return bad("batch must be 1..4096", header);
  }
  return Status();
}

// `tokens[first..]`, commands separated by `;` (a trailing `;` is allowed), appended to `out`.
Status parse_commands(const std::vector<std::string_view>& tokens, std::size_t first,
                      std::vector<EngineCommand>& out) {
  for (std::size_t i = first; i < tokens.size(); ++i) {
    if (tokens[i].empty() && i + 1 == tokens.size()) {
      break;  // a trailing ';' (or an empty branch)
    }
    Result<EngineCommand> command = parse_command(tokens[i]);
    if (!command.ok()) {
      return command.status();
    }
    out.push_back(command.value());
  }
  return Status();
}

// Splits on the branch separator `||`, trimming each piece.
std::vector<std::string_view> split_branches(std::string_view line) {
  std::vector<std::string_view> pieces;
  while (true) {
    const std::size_t at = line.find("||");
    pieces.push_back(trim(line.substr(0, at)));
    if (at == std::string_view::npos) {
      return pieces;
    }
    line.remove_prefix(at + 2);
  }
}

}  // namespace

Result<EngineCase> engine_case_parse(std::string_view line) {
  const std::vector<std::string_view> pieces = split_branches(trim(line));
  if (pieces.size() - 1 > kEngineBranchesMax) {
    return bad("more than " + std::to_string(kEngineBranchesMax) + " branches", line);
  }
  const std::vector<std::string_view> tokens = split(pieces[0], ';');
  if (tokens.size() - 1 > kEngineCaseCommandsMax) {
    return bad("more than " + std::to_string(kEngineCaseCommandsMax) + " commands", "...");
  }
  EngineCase c;
  if (Status header = parse_header(tokens[0], c); !header.ok()) {
    return header;
  }
  if (Status prefix = parse_commands(tokens, 1, c.commands); !prefix.ok()) {
    return prefix;
  }
  for (std::size_t b = 1; b < pieces.size(); ++b) {
    std::vector<EngineCommand>& branch = c.branches.emplace_back();
    if (Status parsed = parse_commands(split(pieces[b], ';'), 0, branch); !parsed.ok()) {
      return parsed;
    }
    if (branch.size() > kEngineBranchCommandsMax) {
      return bad("more than " + std::to_string(kEngineBranchCommandsMax) + " commands in branch " +
                     std::to_string(b),
                 pieces[b]);
    }
  }
  if (case_command_count(c) > kEngineCaseCommandsMax) {
    return bad("more than " + std::to_string(kEngineCaseCommandsMax) + " commands", "...");
  }
  return c;
}

}  // namespace readyport::properties
