// The PSN commands: generation, preconditions, the model side (apply) and the fake side (run).
#include "psn_commands.hpp"

#include <array>
#include <initializer_list>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#include "psn_checks.hpp"
#include "psn_keys.hpp"

namespace readyport::properties {

namespace {

constexpr std::uint32_t kResultUnwritten = 0xFFFF;  // registration_result before the call
constexpr std::uint32_t kDequeueMax = 4;
constexpr std::uint32_t kPeerSendMax = 64;
constexpr std::uint32_t kPostedIndexes = 4;

std::string show_text(const PsnCommand& command) {
  std::ostringstream text;
  command.show(text);
  return text.str();
}

const char* operation_name(std::uint8_t operation) {
  switch (operation) {
    case kSockNotifyOpNone:
      return "none";
    case kSockNotifyOpEnable:
      return "enable";
    case kSockNotifyOpDisable:
      return "disable";
    case kSockNotifyOpRemove:
      return "remove";
    default:
      return "op?";
  }
}

std::string trigger_name(std::uint8_t flags) {
  static constexpr struct {
    std::uint8_t bit;
    const char* name;
  } kFlags[] = {{kSockNotifyTriggerOneshot, "oneshot"},
                {kSockNotifyTriggerPersistent, "persistent"},
                {kSockNotifyTriggerLevel, "level"},
                {kSockNotifyTriggerEdge, "edge"}};
  std::string text;
  for (const auto& flag : kFlags) {
    if ((flags & flag.bit) == 0) {
      continue;
    }
    if (!text.empty()) {
      text += "|";
    }
    text += flag.name;
  }
  return text.empty() ? "no-trigger" : text;
}

std::string filter_name(std::uint16_t filter) {
  if (filter == 0) {
    return "none";
  }
  std::string text;
  if ((filter & kSockNotifyRegisterEventIn) != 0) {
    text += "IN";
  }
  if ((filter & kSockNotifyRegisterEventOut) != 0) {
    text += text.empty() ? "OUT" : "|OUT";
  }
  if ((filter & kSockNotifyRegisterEventHangup) != 0) {
    text += text.empty() ? "HUP" : "|HUP";
  }
  return text;
}

// An index in [0, count), uniform whatever RapidCheck's size, shrinking towards 0 (RapidCheck's
// elementOf and weightedElement do not shrink, and its inRange narrows with the size).
std::size_t draw_index(std::size_t count) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::size_t>(0, count));
}

// One of `choices`, each as likely as its weight, shrinking towards the first.
template <typename T>
T draw_weighted(std::initializer_list<std::pair<std::size_t, T>> choices) {
  std::size_t total = 0;
  for (const auto& choice : choices) {
    total += choice.first;
  }
  std::size_t drawn = draw_index(total);
  for (const auto& choice : choices) {
    if (drawn < choice.first) {
      return choice.second;
    }
    drawn -= choice.first;
  }
  RC_FAIL("draw_weighted: weights changed while drawing");
}

// Socket indexes where `allowed` holds, or a discard when there is none.
template <typename Allowed>
int draw_socket(const PsnModel& model, Allowed allowed) {
  std::vector<int> candidates;
  for (int s = 0; s < model.sockets_count(); ++s) {
    if (allowed(s)) {
      candidates.push_back(s);
    }
  }
  RC_PRE(!candidates.empty());
  return candidates[draw_index(candidates.size())];
}

PsnElementDraw draw_element(const PsnModel& model) {
  PsnElementDraw draw;
  std::vector<int> open;
  for (int s = 0; s < model.sockets_count(); ++s) {
    if (model.socket(s).open) {
      open.push_back(s);
    }
  }
  const bool not_socket = open.empty() || draw_weighted<bool>({{12, false}, {1, true}});
  draw.socket = not_socket ? kModelNotSocket : open[draw_index(open.size())];
  // A registered socket gets DISABLE and REMOVE more often, so that removals and their packets
  // are common; every operation stays possible on every socket (spec B6 failures included).
  const bool registered = !not_socket && model.socket_registered(draw.socket);
  draw.operation = draw_weighted<std::uint8_t>({{registered ? 4u : 8u, kSockNotifyOpEnable},
                                                {registered ? 4u : 1u, kSockNotifyOpRemove},
                                                {registered ? 2u : 1u, kSockNotifyOpDisable},
                                                {1, kSockNotifyOpNone}});
  draw.event_filter = draw_weighted<std::uint16_t>(
      {{4, kSockNotifyRegisterEventIn},
       {3, kSockNotifyRegisterEventsAll},
       {2, kSockNotifyRegisterEventIn | kSockNotifyRegisterEventOut},
       {2, kSockNotifyRegisterEventIn | kSockNotifyRegisterEventHangup},
       {2, kSockNotifyRegisterEventOut},
       {1, kSockNotifyRegisterEventHangup},
       {1, kSockNotifyRegisterEventNone}});
  constexpr std::uint8_t kOneshot = kSockNotifyTriggerOneshot;
  constexpr std::uint8_t kPersistent = kSockNotifyTriggerPersistent;
  constexpr std::uint8_t kLevel = kSockNotifyTriggerLevel;
  constexpr std::uint8_t kEdge = kSockNotifyTriggerEdge;
  draw.trigger_flags = draw_weighted<std::uint8_t>(
      {{5, kOneshot | kLevel},
       {3, kPersistent | kLevel},
       {3, kOneshot | kEdge},
       {3, kPersistent | kEdge},
       {1, kLevel},  // spec C1: Microsoft's samples; lenient reads PERSISTENT
       {1, kEdge},
       {1, kOneshot | kLevel | kEdge},
       {1, kOneshot | kPersistent | kLevel},
       {1, 0}});
  draw.key_variant = draw_weighted<int>({{5, 0}, {1, 1}});
  return draw;
}

// A port index, the first more often (registrations and their packets meet on it; the second
// port is there for spec B8 and F6).
int draw_port(const PsnModel& model) {
  const bool first = model.ports_count() == 1 || draw_weighted<bool>({{3, true}, {1, false}});
  return first
             ? 0
             : 1 + static_cast<int>(draw_index(static_cast<std::size_t>(model.ports_count() - 1)));
}

// Packets queued on the port before a call, for the rule checkers: only the fake shows it (0
// elsewhere, where no rule checker runs).
std::size_t fake_queued(PsnWorld& world, int port) {
  FakeOs* fake = world.fake();
  return fake == nullptr ? 0 : fake->queued_packet_count(world.port(port));
}

std::vector<OverlappedEntry> first(const std::array<OverlappedEntry, kDequeueMax>& entries,
                                   std::uint32_t count) {
  RC_ASSERT(count <= kDequeueMax);
  return std::vector<OverlappedEntry>(entries.begin(), entries.begin() + count);
}

}  // namespace

// ---- psn ----------------------------------------------------------------------------------------

PsnCallCommand::PsnCallCommand(const PsnModel& model) : port_(draw_port(model)) {
  const int count = draw_weighted<int>({{4, 1}, {1, 2}});
  for (int i = 0; i < count; ++i) {
    elements_.push_back(draw_element(model));
  }
  dequeue_count_ = draw_weighted<std::uint32_t>({{3, 0}, {1, 1}, {1, 2}, {1, 4}});
}

void PsnCallCommand::checkPreconditions(const PsnModel& model) const {
  for (const PsnElementDraw& element : elements_) {
    // Evaluated first: RapidCheck's capture of an expression does not short-circuit.
    const bool named = element.socket == kModelNotSocket || model.socket(element.socket).open;
    RC_PRE(named);
  }
}

std::vector<ModelElement> PsnCallCommand::elements_for(const PsnModel& model) const {
  std::vector<ModelElement> elements;
  for (const PsnElementDraw& draw : elements_) {
    ModelElement element;
    element.socket = draw.socket;
    element.completion_key =
        draw.socket == kModelNotSocket
            ? socket_key(kIncarnationsMax - 1, draw.key_variant)
            : socket_key(model.socket(draw.socket).incarnation, draw.key_variant);
    element.event_filter = draw.event_filter;
    element.operation = draw.operation;
    element.trigger_flags = draw.trigger_flags;
    elements.push_back(element);
  }
  return elements;
}

void PsnCallCommand::apply(PsnModel& model) const {
  std::vector<std::uint32_t> results;
  std::vector<OverlappedEntry> entries;
  (void)model.process(port_, elements_for(model), dequeue_count_, &results, &entries);
}

void PsnCallCommand::run(const PsnModel& model, PsnWorld& world) const {
  // Keys and socket indexes follow from the connections, the same under every reading.
  const std::vector<ModelElement> elements = elements_for(model);
  const auto predict = [&](PsnModel& m) {
    PsnOutcome want;
    want.queued_before = m.queued_count(port_);
    want.code = m.process(port_, elements, dequeue_count_, &want.results, &want.entries);
    return want;
  };

  PsnStep step;
  step.command = show_text(*this);
  step.port = port_;
  std::vector<SockNotifyRegistration> registrations;
  for (const ModelElement& element : elements) {
    registrations.push_back(SockNotifyRegistration{
        world.local(element.socket), element.completion_key, element.event_filter,
        element.operation, element.trigger_flags, kResultUnwritten});
    step.elements.push_back(PsnElementFact{
        element.socket == kModelNotSocket ? 0 : model.socket(element.socket).incarnation,
        element.operation, element.trigger_flags});
  }
  PsnOutcome got;
  got.queued_before = fake_queued(world, port_);
  std::array<OverlappedEntry, kDequeueMax> entries{};
  std::uint32_t received = 0xBAD;
  const bool dequeue = dequeue_count_ > 0;
  got.code = world.os().process_socket_notifications(
      world.port(port_), static_cast<std::uint32_t>(registrations.size()), registrations.data(), 0,
      dequeue_count_, dequeue ? entries.data() : nullptr, dequeue ? &received : nullptr);
  const bool failed = got.code != kErrorSuccess && got.code != kWaitTimeout;
  for (const SockNotifyRegistration& registration : registrations) {
    if (failed) {
      // Spec A3: nothing changed, not even the results.
      RC_ASSERT(registration.registration_result == kResultUnwritten);
    } else {
      got.results.push_back(registration.registration_result);
    }
  }
  if (dequeue && got.code == kErrorSuccess) {
    got.entries = first(entries, received);
  }
  if (dequeue && got.code == kWaitTimeout) {
    RC_ASSERT(received == 0u);  // spec A2
  }
  judge_step(step, model, predict, got, world);
}

void PsnCallCommand::show(std::ostream& os) const {
  os << "psn(port " << port_ << ", [";
  for (std::size_t i = 0; i < elements_.size(); ++i) {
    const PsnElementDraw& element = elements_[i];
    if (i > 0) {
      os << "; ";
    }
    os << operation_name(element.operation) << " ";
    if (element.socket == kModelNotSocket) {
      os << "not-a-socket";
    } else {
      os << "s" << element.socket;
    }
    if (element.operation == kSockNotifyOpEnable) {
      os << " key" << element.key_variant << " " << filter_name(element.event_filter) << " "
         << trigger_name(element.trigger_flags);
    }
  }
  os << "]";
  if (dequeue_count_ > 0) {
    os << ", dequeue " << dequeue_count_;
  }
  os << ")";
}

// ---- dequeue ------------------------------------------------------------------------------------

DequeueCommand::DequeueCommand(const PsnModel& model)
    : port_(draw_port(model)),
      count_(draw_weighted<std::uint32_t>({{2, 1}, {1, 2}, {2, kDequeueMax}})),
      gqcs_(draw_weighted<bool>({{3, false}, {1, true}})) {}

void DequeueCommand::checkPreconditions(const PsnModel& model) const {
  RC_PRE(port_ < model.ports_count());
}

void DequeueCommand::apply(PsnModel& model) const {
  std::vector<OverlappedEntry> entries;
  (void)model.dequeue(port_, count_, &entries);
}

void DequeueCommand::run(const PsnModel& model, PsnWorld& world) const {
  const auto predict = [&](PsnModel& m) {
    PsnOutcome want;
    want.queued_before = m.queued_count(port_);
    want.code = m.dequeue(port_, count_, &want.entries);
    return want;
  };

  PsnOutcome got;
  got.queued_before = fake_queued(world, port_);
  std::array<OverlappedEntry, kDequeueMax> entries{};
  std::uint32_t received = 0xBAD;
  if (gqcs_) {
    // Spec F3: TRUE with entries, or FALSE with the reason in last_error.
    const bool ok = world.os().get_queued_completion_status_ex(world.port(port_), entries.data(),
                                                               count_, &received, 0, false);
    got.code = ok ? kErrorSuccess : world.os().last_error();
  } else {
    got.code = world.os().process_socket_notifications(world.port(port_), 0, nullptr, 0, count_,
                                                       entries.data(), &received);
  }
  if (got.code == kErrorSuccess) {
    got.entries = first(entries, received);
  }
  if (got.code == kWaitTimeout) {
    RC_ASSERT(received == 0u);  // spec A2
  }

  PsnStep step;
  step.command = show_text(*this);
  step.port = port_;
  judge_step(step, model, predict, got, world);
}

void DequeueCommand::show(std::ostream& os) const {
  os << (gqcs_ ? "gqcs" : "dequeue") << "(port " << port_ << ", " << count_ << ")";
}

// ---- post ---------------------------------------------------------------------------------------

PostCommand::PostCommand(const PsnModel& model)
    : port_(draw_port(model)), index_(static_cast<std::uint32_t>(draw_index(kPostedIndexes))) {}

void PostCommand::checkPreconditions(const PsnModel& model) const {
  RC_PRE(port_ < model.ports_count());
}

void PostCommand::apply(PsnModel& model) const {
  (void)model.post(port_, index_, posted_key(index_), 16 * std::uintptr_t{index_});
}

void PostCommand::run(const PsnModel& model, PsnWorld& world) const {
  const auto predict = [&](PsnModel& m) {
    PsnOutcome want;
    want.code = m.post(port_, index_, posted_key(index_), 16 * std::uintptr_t{index_})
                    ? kErrorSuccess
                    : kErrorInvalidHandle;
    return want;
  };
  PsnOutcome got;
  got.code = world.os().post_queued_completion_status(world.port(port_), index_, posted_key(index_),
                                                      16 * index_)
                 ? kErrorSuccess
                 : world.os().last_error();
  PsnStep step;
  step.command = show_text(*this);
  step.port = port_;
  judge_step(step, model, predict, got, world);
}

void PostCommand::show(std::ostream& os) const {
  os << "post(port " << port_ << ", #" << index_ << ")";
}

// ---- sockets ------------------------------------------------------------------------------------

bool SocketCommand::allowed(const PsnModel& model, SocketAction action, int s) {
  const ModelSocket& state = model.socket(s);
  const std::uint32_t buffer_bytes = model.options().receive_buffer_bytes;
  switch (action) {
    case SocketAction::kPeerSend:
      return state.open && state.peer_open && !state.peer_shut &&
             state.unread_bytes + kPeerSendMax <= buffer_bytes;
    case SocketAction::kDrain:
    case SocketAction::kClosesocket:
      return state.open;
    case SocketAction::kPeerShutdown:
      return state.open && state.peer_open && !state.peer_shut;
    case SocketAction::kPeerClose:
    case SocketAction::kPeerReset:
      return state.open && state.peer_open;
    case SocketAction::kFill:
      return model.can_send(s) && state.peer_unread_bytes < buffer_bytes;
    case SocketAction::kPeerDrain:
      return state.open && state.peer_open && state.peer_unread_bytes > 0;
    case SocketAction::kShutdown:
      return state.open && !state.reset && !state.send_shut;
    case SocketAction::kReopen:
      return !state.open;
  }
  return false;
}

SocketCommand::SocketCommand(const PsnModel& model, SocketAction action)
    : action_(action),
      socket_(draw_socket(model, [&](int s) { return allowed(model, action, s); })) {
  if (action == SocketAction::kPeerSend) {
    bytes_ = 1 + static_cast<std::uint32_t>(draw_index(kPeerSendMax));
  }
}

void SocketCommand::checkPreconditions(const PsnModel& model) const {
  RC_PRE(allowed(model, action_, socket_));
}

void SocketCommand::apply(PsnModel& model) const {
  switch (action_) {
    case SocketAction::kPeerSend:
      model.peer_send(socket_, bytes_);
      return;
    case SocketAction::kDrain:
      model.drain(socket_);
      return;
    case SocketAction::kPeerShutdown:
      model.peer_shutdown(socket_);
      return;
    case SocketAction::kPeerClose:
      model.peer_close(socket_, false);
      return;
    case SocketAction::kPeerReset:
      model.peer_close(socket_, true);
      return;
    case SocketAction::kFill:
      model.local_fill(socket_);
      return;
    case SocketAction::kPeerDrain:
      model.peer_drain(socket_);
      return;
    case SocketAction::kShutdown:
      model.local_shutdown(socket_);
      return;
    case SocketAction::kClosesocket:
      model.socket_close(socket_);
      return;
    case SocketAction::kReopen:
      model.socket_reopen(socket_);
      return;
  }
}

namespace {

// recv until nothing moves: the bytes moved and the last call's code (0 for end of stream).
void recv_all(Os& os, Socket s, PsnOutcome* got_out) {
  std::array<char, 8192> buffer{};
  // Bounded: every turn but the last moves at least one byte of a bounded buffer.
  for (int turn = 0; turn < 64; ++turn) {
    const int moved = os.recv(s, buffer.data(), static_cast<int>(buffer.size()), 0);
    if (moved > 0) {
      got_out->bytes += moved;
      continue;
    }
    got_out->code = moved == 0 ? 0 : os.last_error();
    return;
  }
  RC_FAIL("recv never stopped moving bytes");
}

}  // namespace

void SocketCommand::run(const PsnModel& model, PsnWorld& world) const {
  const ModelSocket& before = model.socket(socket_);
  const std::uint32_t buffer_bytes = model.options().receive_buffer_bytes;
  Os& os = world.os();
  PsnOutcome want;
  PsnOutcome got;
  PsnStep step;
  step.command = show_text(*this);
  std::vector<char> bytes(buffer_bytes, 'x');
  switch (action_) {
    case SocketAction::kPeerSend:
      want.bytes = bytes_;
      got.bytes = os.send(world.peer(socket_), bytes.data(), static_cast<int>(bytes_), 0);
      break;
    case SocketAction::kDrain:
      // What recv says follows from the connection: reset, end of stream, or would-block.
      want.bytes = before.reset ? 0 : before.unread_bytes;
      want.code = before.reset ? kWsaEconnreset : (before.peer_fin ? 0 : kWsaEwouldblock);
      recv_all(os, world.local(socket_), &got);
      break;
    case SocketAction::kPeerShutdown:
      got.code = static_cast<std::uint32_t>(os.shutdown(world.peer(socket_), kSdSend));
      break;
    case SocketAction::kPeerClose:
    case SocketAction::kPeerReset:
      if (action_ == SocketAction::kPeerReset) {
        RC_ASSERT(os.set_linger(world.peer(socket_), true, 0) == 0);
      }
      got.code = static_cast<std::uint32_t>(os.closesocket(world.peer(socket_)));
      world.peer_closed(socket_);
      break;
    case SocketAction::kFill: {
      const std::uint32_t room = buffer_bytes - before.peer_unread_bytes;
      want.bytes = room;
      got.bytes = os.send(world.local(socket_), bytes.data(), static_cast<int>(room), 0);
      break;
    }
    case SocketAction::kPeerDrain:
      want.bytes = before.peer_unread_bytes;
      want.code = before.send_shut ? 0 : kWsaEwouldblock;
      recv_all(os, world.peer(socket_), &got);
      break;
    case SocketAction::kShutdown:
      got.code = static_cast<std::uint32_t>(os.shutdown(world.local(socket_), kSdSend));
      break;
    case SocketAction::kClosesocket:
      step.socket_closed = before.incarnation;
      got.code = static_cast<std::uint32_t>(os.closesocket(world.local(socket_)));
      world.local_closed(socket_);
      break;
    case SocketAction::kReopen:
      world.reopen(socket_);
      break;
  }
  // Socket calls are the scenario, not the rule under test: they must do what the model says in
  // every mode, or the rest of the run would compare different worlds.
  RC_ASSERT(got.code == want.code);
  RC_ASSERT(got.bytes == want.bytes);
  // What went over the wire reaches our end before anything else is called (a real network is
  // asynchronous). drain only reads what is there already.
  if (action_ != SocketAction::kDrain) {
    world.settle();
  }
  // The socket's outcome is the same under every reading of the open questions.
  const auto predict = [&](PsnModel& m) {
    apply(m);
    return want;
  };
  judge_step(step, model, predict, got, world);
}

void SocketCommand::show(std::ostream& os) const {
  static constexpr const char* kNames[] = {"peer_send",   "drain", "peer_shutdown", "peer_close",
                                           "peer_reset",  "fill",  "peer_drain",    "shutdown",
                                           "closesocket", "reopen"};
  os << kNames[static_cast<int>(action_)] << "(s" << socket_;
  if (action_ == SocketAction::kPeerSend) {
    os << ", " << bytes_;
  }
  os << ")";
}

// ---- ports --------------------------------------------------------------------------------------

PortCommand::PortCommand(const PsnModel& model, bool close) : close_(close) {
  std::vector<int> candidates;
  for (int port = 0; port < model.ports_count(); ++port) {
    if (model.port_open(port) == close) {
      candidates.push_back(port);
    }
  }
  RC_PRE(!candidates.empty());
  port_ = candidates[draw_index(candidates.size())];
}

void PortCommand::checkPreconditions(const PsnModel& model) const {
  const bool valid = port_ < model.ports_count() && model.port_open(port_) == close_;
  RC_PRE(valid);
}

void PortCommand::apply(PsnModel& model) const {
  if (close_) {
    (void)model.port_close(port_);
  } else {
    model.port_create(port_);
  }
}

void PortCommand::run(const PsnModel& model, PsnWorld& world) const {
  const auto predict = [&](PsnModel& m) {
    PsnOutcome want;
    want.queued_before = m.queued_count(port_);
    apply(m);
    return want;
  };
  PsnOutcome got;
  PsnStep step;
  step.command = show_text(*this);
  step.port = port_;
  if (close_) {
    got.queued_before = fake_queued(world, port_);
    RC_ASSERT(world.os().close_port(world.port(port_)));
    world.port_closed(port_);
    step.port_closed = true;
  } else {
    world.port_create(port_);
  }
  judge_step(step, model, predict, got, world);
}

void PortCommand::show(std::ostream& os) const {
  os << (close_ ? "close_port(" : "open_port(") << port_ << ")";
}

// ---- the generator ------------------------------------------------------------------------------

namespace {

rc::Gen<std::shared_ptr<const PsnCommand>> command_generator(const PsnModel& model,
                                                             bool fixed_buffers) {
  using CommandPtr = std::shared_ptr<const PsnCommand>;
  // One copy of the model, shared by the generators: RapidCheck may run a generator again while
  // shrinking, after the state it was made from is gone.
  const auto state = std::make_shared<const PsnModel>(model);
  auto make = [state](auto construct) {
    return rc::gen::exec([state, construct] { return CommandPtr(construct(*state)); });
  };
  auto socket_command = [&](SocketAction action) {
    return make([action](const PsnModel& m) { return std::make_shared<SocketCommand>(m, action); });
  };
  auto port_command = [&](bool close) {
    return make([close](const PsnModel& m) { return std::make_shared<PortCommand>(m, close); });
  };
  return rc::gen::weightedOneOf<CommandPtr>({
      {8, make([](const PsnModel& m) { return std::make_shared<PsnCallCommand>(m); })},
      {6, make([](const PsnModel& m) { return std::make_shared<DequeueCommand>(m); })},
      {1, make([](const PsnModel& m) { return std::make_shared<PostCommand>(m); })},
      {4, socket_command(SocketAction::kPeerSend)},
      {3, socket_command(SocketAction::kDrain)},
      {1, socket_command(SocketAction::kPeerShutdown)},
      {1, socket_command(SocketAction::kPeerClose)},
      {1, socket_command(SocketAction::kPeerReset)},
      {fixed_buffers ? 1u : 0u, socket_command(SocketAction::kFill)},
      {fixed_buffers ? 1u : 0u, socket_command(SocketAction::kPeerDrain)},
      {1, socket_command(SocketAction::kShutdown)},
      {2, socket_command(SocketAction::kClosesocket)},
      {2, socket_command(SocketAction::kReopen)},
      {1, port_command(true)},
      {1, port_command(false)},
  });
}

}  // namespace

rc::Gen<std::shared_ptr<const PsnCommand>> psn_command_generator(const PsnModel& model) {
  return command_generator(model, true);
}

rc::Gen<std::shared_ptr<const PsnCommand>> psn_os_command_generator(const PsnModel& model) {
  return command_generator(model, false);
}

}  // namespace readyport::properties
