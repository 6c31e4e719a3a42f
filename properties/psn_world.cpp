// PsnFakeWorld: loopback connections through FakeOs.
#include "psn_world.hpp"

#include "readyport/assert.hpp"

namespace readyport::properties {

PsnFakeWorld::PsnFakeWorld(const FakeOptions& options, int sockets_count, int ports_count,
                           std::optional<PsnRule> rule)
    : os_(options),
      rule_(rule),
      fake_rules_(options.oneshot_disarm),
      model_rules_(options.oneshot_disarm) {
  READYPORT_ASSERT(sockets_count > 0 && ports_count > 0);
  for (int i = 0; i < ports_count; ++i) {
    const Port created = os_.create_io_completion_port(0);
    READYPORT_ASSERT(!(created == kInvalidPort));
    ports_.push_back(created);
  }
  listener_ = os_.socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(listener_ != kInvalidSocket);
  READYPORT_ASSERT(os_.bind(listener_, Ipv4Address{kLoopbackHost, 0}) == 0);
  READYPORT_ASSERT(os_.getsockname(listener_, &listener_address_) == 0);
  READYPORT_ASSERT(os_.listen(listener_, kSomaxconn) == 0);
  READYPORT_ASSERT(os_.set_nonblocking(listener_, true) == 0);
  for (int i = 0; i < sockets_count; ++i) connections_.push_back(connect_pair());
}

PsnFakeWorld::Connection PsnFakeWorld::connect_pair() {
  Connection made;
  made.local = os_.socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(made.local != kInvalidSocket);
  // A blocking loopback connect completes at once in the fake; then non-blocking for the test.
  READYPORT_ASSERT(os_.connect(made.local, listener_address_) == 0);
  READYPORT_ASSERT(os_.set_nonblocking(made.local, true) == 0);
  made.peer = os_.accept(listener_, nullptr);  // non-blocking, like the listener
  READYPORT_ASSERT(made.peer != kInvalidSocket);
  return made;
}

Port PsnFakeWorld::port(int index) const {
  READYPORT_ASSERT(index >= 0 && static_cast<std::size_t>(index) < ports_.size());
  return ports_[static_cast<std::size_t>(index)];
}

Socket PsnFakeWorld::local(int s) const {
  if (s == kModelNotSocket) return kNotSocketValue;
  READYPORT_ASSERT(s >= 0 && static_cast<std::size_t>(s) < connections_.size());
  return connections_[static_cast<std::size_t>(s)].local;
}

Socket PsnFakeWorld::peer(int s) const {
  READYPORT_ASSERT(s >= 0 && static_cast<std::size_t>(s) < connections_.size());
  return connections_[static_cast<std::size_t>(s)].peer;
}

void PsnFakeWorld::port_create(int index) {
  const Port created = os_.create_io_completion_port(0);
  READYPORT_ASSERT(!(created == kInvalidPort));
  ports_.at(static_cast<std::size_t>(index)) = created;
}

void PsnFakeWorld::peer_closed(int s) {
  connections_.at(static_cast<std::size_t>(s)).peer = kInvalidSocket;
}

void PsnFakeWorld::reopen(int s) {
  Connection& connection = connections_.at(static_cast<std::size_t>(s));
  if (connection.peer != kInvalidSocket) READYPORT_ASSERT(os_.closesocket(connection.peer) == 0);
  connection = connect_pair();
}

}  // namespace readyport::properties
