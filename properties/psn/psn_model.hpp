// properties/psn/psn_model.hpp: PsnModel, a small reference model of ProcessSocketNotifications
// (docs/rules.md) against which RapidCheck checks FakeOs.
//
// It keeps only what the rules talk about: each socket reduced to what the test did to its TCP
// connection (bytes unread, peer shut down or closed or reset, our sending side shut), so its
// readiness bits (IN, OUT, HANGUP, ERR) follow from the commands; registrations (port, key,
// filter, trigger, state); and one FIFO of packets per port, with at most one queued event packet
// per registration (spec D4), REMOVE packets and posted packets. Every open question of the spec
// is read from the FakeOptions switch that answers it in the fake (fake_options.hpp), so the model
// predicts the fake under each setting. The model is written from the spec, rule by rule (the
// rule IDs are cited in psn_model.cpp), not from the fake's code: its queue is a plain vector
// searched by registration id, where the fake keeps iterators.
//
//   readyport::properties::PsnModel model(readyport::FakeOptions{}, 3, 2);  // 3 sockets, 2 ports
//   model.peer_send(0, 10);
//   std::vector<std::uint32_t> results;
//   std::vector<readyport::OverlappedEntry> entries;
//   std::uint32_t code = model.process(0, {{0, 7, kSockNotifyRegisterEventIn,
//       kSockNotifyOpEnable, kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel}}, 4,
//       &results, &entries);  // kErrorSuccess, results {0}, one entry {key 7, IN}
//
// Sockets and ports are named by index (0..count-1), never by handle value: the system under test
// maps indices to the fake's handles. A socket index names one end (ours) of a loopback TCP
// connection whose other end (the peer) the test drives; socket_reopen gives the index a new
// connection (a new incarnation). Ports are closed and created again by index.
//
// Ownership and lifetime: a plain value (copyable, as RapidCheck's models must be); it owns
// everything it models. Threading: none; one thread at a time. Errors: the modelled calls return
// what the fake returns (Winsock and Win32 codes); calling a socket operation whose precondition
// does not hold (the socket closed, the peer gone) is a broken contract and asserts: the
// commands' checkPreconditions exclude those sequences.
//
// READYPORT_PROPERTY_PLANT_CLOSE_REMOVE (compile-time, never set by default): plants a wrong rule,
// "closesocket queues a REMOVE packet", to show that the properties catch a wrong model
// (docs/properties.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "readyport/fake/fake_options.hpp"
#include "readyport/os.hpp"

namespace readyport::properties {

// A PSN element naming this socket index names a value that is not a socket (spec B9).
inline constexpr int kModelNotSocket = -1;

// One SOCK_NOTIFY_REGISTRATION element, with a socket index instead of a SOCKET value.
struct ModelElement {
  int socket = 0;  // socket index, or kModelNotSocket
  std::uintptr_t completion_key = 0;
  std::uint16_t event_filter = 0;
  std::uint8_t operation = kSockNotifyOpNone;
  std::uint8_t trigger_flags = 0;
};

// What the test did to one socket index's connection: the readiness bits follow from it.
struct ModelSocket {
  bool open = true;                     // our end is open (false after closesocket)
  std::uint32_t incarnation = 0;        // which connection the index holds (new on reopen)
  std::uint32_t unread_bytes = 0;       // in our receive buffer (peer sends minus drained)
  std::uint32_t peer_unread_bytes = 0;  // in the peer's receive buffer (our sends)
  bool peer_open = true;                // the peer end is open
  bool peer_shut = false;               // the peer called shutdown(SD_SEND)
  bool peer_fin = false;                // end of stream from the peer (shutdown or graceful close)
  bool reset = false;                   // the peer reset the connection (SO_LINGER {on, 0})
  bool send_shut = false;               // we called shutdown(SD_SEND)
  std::uint32_t registration = 0;       // the attached registration's id, 0 when none
};

// Which paths the commands reached (rule-independent bookkeeping, for RC_TAG and the coverage
// table of the properties). Counts over the model's whole history.
struct ModelCoverage {
  std::uint32_t modes_enabled = 0;  // bit (level ? 0 : 2) + (oneshot ? 0 : 1) of applied ENABLEs
  std::uint32_t ops_applied = 0;    // bit per operation value applied with result 0
  std::uint32_t elements_failed = 0;
  std::uint32_t remove_merged = 0;       // REMOVE dequeued OR-ed into an event packet (spec D4)
  std::uint32_t remove_separate = 0;     // REMOVE dequeued as a packet of its own
  std::uint32_t close_plain = 0;         // closesocket of a registered socket, nothing queued
  std::uint32_t close_queued = 0;        // closesocket with an event packet queued (spec E2)
  std::uint32_t close_removing = 0;      // closesocket after REMOVE, before its packet
  std::uint32_t detached_delivered = 0;  // a packet of a closed socket dequeued (spec E2)
  std::uint32_t oneshot_disarms = 0;     // a one-shot registration disarmed (spec C2)
  std::uint32_t disarmed_rises = 0;      // a filtered condition rose on a disarmed one-shot (C2)
  std::uint32_t port_closes_registered = 0;  // close_port dropped registrations (spec F6)
  std::uint32_t posted_delivered = 0;
  std::uint32_t or_merges = 0;  // event bits OR-ed into a queued packet (spec D4)
};

class PsnModel {
 public:
  // `sockets_count` connected sockets (incarnations 1..sockets_count) and `ports_count` open
  // ports. options.receive_buffer_bytes is the buffer the readiness of OUT depends on.
  PsnModel(const FakeOptions& options, int sockets_count, int ports_count);

  // ---- ports (spec A, F) ----
  int ports_count() const { return static_cast<int>(ports_.size()); }
  bool port_open(int port) const;
  // A new port in a closed index (CreateIoCompletionPort).
  void port_create(int port);
  // CloseHandle(port), spec F6. Returns false for a closed index (ERROR_INVALID_HANDLE).
  bool port_close(int port);
  // PostQueuedCompletionStatus, spec F2. Returns false for a closed index.
  bool post(int port, std::uint32_t bytes_transferred, std::uintptr_t completion_key,
            std::uintptr_t overlapped);
  // ProcessSocketNotifications with timeout 0: applies `elements` (results in *results_out, one
  // per element), then dequeues up to completion_count entries into *entries_out. Returns
  // kErrorSuccess, kWaitTimeout or kErrorInvalidHandle (nothing applied, results_out left
  // empty). completion_count 0 is a registrations-only call.
  std::uint32_t process(int port, const std::vector<ModelElement>& elements,
                        std::uint32_t completion_count, std::vector<std::uint32_t>* results_out,
                        std::vector<OverlappedEntry>* entries_out);
  // GetQueuedCompletionStatusEx with timeout 0: kErrorSuccess, kWaitTimeout, kErrorInvalidHandle.
  std::uint32_t dequeue(int port, std::uint32_t count, std::vector<OverlappedEntry>* entries_out);
  // Packets queued on an open port index (0 for a closed one).
  std::size_t queued_count(int port) const;

  // ---- sockets: what the test does to the connection at index s ----
  int sockets_count() const { return static_cast<int>(sockets_.size()); }
  const ModelSocket& socket(int s) const;
  // True while the socket is registered with a port (enabled, disabled or removing).
  bool socket_registered(int s) const;
  // The readiness bits that hold now (kSockNotifyEvent* bits, never REMOVE).
  std::uint32_t conditions(int s) const;
  // Registrations alive, including closed sockets' leftovers whose packets are still queued.
  std::size_t registrations_count() const { return registrations_.size(); }

  // Preconditions (asserted) in brackets.
  void socket_close(int s);                    // closesocket of our end [open]
  void socket_reopen(int s);                   // a new connection [closed]
  void peer_send(int s, std::uint32_t bytes);  // [open, peer open, not peer_shut, fits]
  void drain(int s);                           // recv until WSAEWOULDBLOCK or EOF [open]
  void peer_shutdown(int s);                   // shutdown(SD_SEND) by the peer [peer open]
  void peer_close(int s, bool abortive);       // closesocket by the peer [peer open]
  void local_fill(int s);                      // we fill the peer's buffer [can send]
  void peer_drain(int s);                      // the peer reads everything [peer open]
  void local_shutdown(int s);                  // shutdown(SD_SEND) by us [not reset/shut]
  // Whether we can send now (open, not reset, not shut, peer open): local_fill's precondition.
  bool can_send(int s) const;

  const FakeOptions& options() const { return options_; }
  const ModelCoverage& coverage() const { return coverage_; }

 private:
  enum class RegistrationState : std::uint8_t {
    kEnabled,
    kDisabled,
    kRemoving,
    kClosedRemoving,  // socket closed after REMOVE; the REMOVE packet still queued
    kClosed,          // socket closed; its event packet still queued
  };
  struct Registration {
    std::uint32_t id = 0;
    int socket = kModelNotSocket;  // kModelNotSocket once the socket was closed
    int port = 0;
    std::uintptr_t key = 0;
    std::uint16_t filter = 0;
    bool level = true;
    bool oneshot = true;
    bool disarmed = false;  // disabled by a one-shot, not by DISABLE (coverage only)
    RegistrationState state = RegistrationState::kEnabled;
    std::uint32_t seen = 0;  // conditions at the last evaluation (EDGE, spec C5)
  };
  struct Packet {
    std::uint32_t registration = 0;  // 0: a posted packet
    std::uintptr_t key = 0;
    std::uintptr_t overlapped = 0;  // posted packets only
    std::uint32_t bits = 0;         // event mask, or bytes_transferred of a posted packet
  };
  struct ModelPort {
    bool open = true;
    std::vector<Packet> packets;  // FIFO, oldest first (spec F1); a few packets at most
  };

  std::uint32_t apply(int port, const ModelElement& element);
  std::uint32_t apply_enable(int port, const ModelElement& element);
  std::uint32_t find_for_change(int port, const ModelElement& element, Registration** out);
  void evaluate(Registration& registration, std::uint32_t conditions);
  void evaluate_socket(int s);
  void post_event(Registration& registration, std::uint32_t bits);
  void queue_remove(Registration& registration);
  void drop_event_packet(Registration& registration);
  void close_registered(Registration& registration);
  void close_removing(Registration& registration);
  void destroy(Registration& registration);
  std::uint32_t dequeue_into(int port, std::uint32_t count, std::vector<OverlappedEntry>* out);
  // Index of the registration's queued event packet / REMOVE packet in its port's FIFO, or -1.
  std::ptrdiff_t find_event(const Registration& registration) const;
  std::ptrdiff_t find_remove(const Registration& registration) const;
  void erase_packet(int port, std::ptrdiff_t index);
  Packet socket_packet(const Registration& registration, std::uint32_t bits) const;
  ModelSocket& open_socket(int s);
  ModelPort& open_port(int port);

  FakeOptions options_;
  std::vector<ModelSocket> sockets_;
  std::vector<ModelPort> ports_;
  std::map<std::uint32_t, Registration> registrations_;  // by id (ordered: deterministic)
  std::uint32_t next_registration_id_ = 1;
  std::uint32_t next_incarnation_ = 1;
  ModelCoverage coverage_;
};

}  // namespace readyport::properties
