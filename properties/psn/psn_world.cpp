// PsnWorld: loopback connections through any Os; PsnFakeWorld: over a FakeOs of its own.
#include "psn_world.hpp"

#include <rapidcheck.h>

#include <string>

#include "readyport/assert.hpp"

namespace readyport::properties {

namespace {

// A port value that is never a handle (handles are multiples of 4): what a closed index answers
// where a stale handle could name something new.
constexpr Port kNeverPort{0x3};
// accept() right after a loopback connect: a real stack may queue the connection a moment later.
constexpr int kAcceptTurnsMax = 1000;  // of 1 ms each

void require(Os& os, bool ok, const char* call) {
  if (ok) {
    return;
  }
  RC_FAIL(std::string("PSN world setup: ") + call + " failed, last error " +
          std::to_string(os.last_error()));
}

}  // namespace

PsnWorld::PsnWorld(OneshotDisarm disarm, std::optional<PsnRule> rule, bool closed_port_stale)
    : closed_port_stale_(closed_port_stale),
      rule_(rule),
      fake_rules_(disarm),
      model_rules_(disarm) {}

void PsnWorld::populate(int sockets_count, int ports_count) {
  READYPORT_ASSERT(sockets_count > 0 && ports_count > 0);
  READYPORT_ASSERT(ports_.empty() && connections_.empty());
  Os& system = os();
  for (int i = 0; i < ports_count; ++i) {
    const Port created = system.create_io_completion_port(0);
    require(system, !(created == kInvalidPort), "CreateIoCompletionPort");
    ports_.push_back(PortSlot{created, true});
  }
  listener_ = system.socket(kAfInet, kSockStream, kIpprotoTcp);
  require(system, listener_ != kInvalidSocket, "socket (listener)");
  require(system, system.bind(listener_, Ipv4Address{kLoopbackHost, 0}) == 0, "bind");
  require(system, system.getsockname(listener_, &listener_address_) == 0, "getsockname");
  require(system, system.listen(listener_, kSomaxconn) == 0, "listen");
  require(system, system.set_nonblocking(listener_, true) == 0, "ioctlsocket (listener)");
  for (int i = 0; i < sockets_count; ++i) {
    connections_.push_back(connect_pair());
  }
}

PsnWorld::Connection PsnWorld::connect_pair() {
  Os& system = os();
  Connection made;
  made.local = system.socket(kAfInet, kSockStream, kIpprotoTcp);
  require(system, made.local != kInvalidSocket, "socket");
  // A blocking loopback connect completes before it returns; then non-blocking for the test.
  require(system, system.connect(made.local, listener_address_) == 0, "connect");
  require(system, system.set_nonblocking(made.local, true) == 0, "ioctlsocket");
  for (int turn = 0; turn < kAcceptTurnsMax; ++turn) {
    made.peer = system.accept(listener_, nullptr);  // non-blocking, like the listener
    if (made.peer != kInvalidSocket) {
      break;
    }
    require(system, system.last_error() == kWsaEwouldblock, "accept");
    system.sleep_ms(1);
  }
  require(system, made.peer != kInvalidSocket, "accept (no connection within 1 s)");
  require(system, system.set_nonblocking(made.peer, true) == 0, "ioctlsocket (peer)");
  return made;
}

void PsnWorld::release() {
  Os& system = os();
  // Best effort: a close that fails here cannot change the verdict of the finished case.
  for (Connection& connection : connections_) {
    if (connection.local != kInvalidSocket) {
      (void)system.closesocket(connection.local);
    }
    if (connection.peer != kInvalidSocket) {
      (void)system.closesocket(connection.peer);
    }
    connection = Connection{};
  }
  for (PortSlot& slot : ports_) {
    if (slot.open) {
      (void)system.close_port(slot.handle);
    }
    slot.open = false;
  }
  if (listener_ != kInvalidSocket) {
    (void)system.closesocket(listener_);
  }
  listener_ = kInvalidSocket;
}

Port PsnWorld::port(int index) const {
  READYPORT_ASSERT(index >= 0 && static_cast<std::size_t>(index) < ports_.size());
  const PortSlot& slot = ports_[static_cast<std::size_t>(index)];
  return slot.open || closed_port_stale_ ? slot.handle : kNeverPort;
}

Socket PsnWorld::local(int s) const {
  if (s == kModelNotSocket) {
    return kNotSocketValue;
  }
  READYPORT_ASSERT(s >= 0 && static_cast<std::size_t>(s) < connections_.size());
  const Connection& connection = connections_[static_cast<std::size_t>(s)];
  return connection.local != kInvalidSocket ? connection.local : connection.local_stale;
}

Socket PsnWorld::peer(int s) const {
  READYPORT_ASSERT(s >= 0 && static_cast<std::size_t>(s) < connections_.size());
  return connections_[static_cast<std::size_t>(s)].peer;
}

void PsnWorld::port_create(int index) {
  PortSlot& slot = ports_.at(static_cast<std::size_t>(index));
  READYPORT_ASSERT(!slot.open);
  const Port created = os().create_io_completion_port(0);
  require(os(), !(created == kInvalidPort), "CreateIoCompletionPort");
  slot = PortSlot{created, true};
}

void PsnWorld::port_closed(int index) { ports_.at(static_cast<std::size_t>(index)).open = false; }

void PsnWorld::local_closed(int s) {
  Connection& connection = connections_.at(static_cast<std::size_t>(s));
  connection.local_stale = connection.local;
  connection.local = kInvalidSocket;
}

void PsnWorld::peer_closed(int s) {
  connections_.at(static_cast<std::size_t>(s)).peer = kInvalidSocket;
}

void PsnWorld::reopen(int s) {
  Connection& connection = connections_.at(static_cast<std::size_t>(s));
  READYPORT_ASSERT(connection.local == kInvalidSocket);
  if (connection.peer != kInvalidSocket) {
    require(os(), os().closesocket(connection.peer) == 0, "closesocket (old peer)");
  }
  connection = connect_pair();
}

PsnFakeWorld::PsnFakeWorld(const FakeOptions& options, int sockets_count, int ports_count,
                           std::optional<PsnRule> rule)
    : PsnWorld(options.oneshot_disarm, rule, true), os_(options) {
  populate(sockets_count, ports_count);
}

}  // namespace readyport::properties
