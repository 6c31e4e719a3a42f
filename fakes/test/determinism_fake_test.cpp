// A long scripted scenario over 64 sockets and two ports runs twice on FakeOs
// (one thread, the inline runtime, every call through RecordingOs) and yields identical traces,
// compared in full. Label determinism.
//
// The script is fixed: its choices come from an Rng with a constant seed, so "the same script"
// means the same calls in the same order; what this test proves is that the fake's answers (handle
// values, ports, masks, batches, virtual times, errors) depend on nothing but those calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/inline_runtime.hpp"
#include "readyport/fake/recording_os.hpp"
#include "readyport/fake/rng.hpp"

namespace readyport {
namespace {

constexpr std::uint32_t kStreamPairs = 16;  // 32 stream sockets
constexpr std::uint32_t kDatagrams = 31;    // + 31 UDP sockets + 1 listener = 64 sockets
constexpr std::uint32_t kSteps = 3000;
constexpr std::uint32_t kScriptSeed = 2024;
constexpr std::uintptr_t kPostedKeyFirst = 100000;

struct Slot {
  Socket socket = kInvalidSocket;
  bool stream = false;
  std::uint32_t port_index = 0;  // which of the two ports it registers with
  std::uint16_t filter = 0;
  std::uint8_t trigger = 0;
  Ipv4Address address;  // UDP: where datagrams go
};

class Script {
 public:
  explicit Script(Os& os) : os_(os), rng_(kScriptSeed) {}

  void run() {
    setup();
    for (std::uint32_t step = 0; step < kSteps; ++step) {
      act(step);
    }
    teardown();
  }

 private:
  void setup() {
    ports_[0] = os_.create_io_completion_port(0);
    ports_[1] = os_.create_io_completion_port(0);
    listener_ = os_.socket(kAfInet, kSockStream, kIpprotoTcp);
    Ipv4Address address{kLoopbackHost, 0};
    os_.bind(listener_, address);
    os_.getsockname(listener_, &listen_address_);
    os_.listen(listener_, 64);
    os_.set_nonblocking(listener_, true);
    for (std::uint32_t i = 0; i < kStreamPairs; ++i) {
      Slot client;
      client.socket = os_.socket(kAfInet, kSockStream, kIpprotoTcp);
      client.stream = true;
      os_.set_nonblocking(client.socket, true);
      os_.connect(client.socket, listen_address_);
      os_.last_error();
      add(client);
      Slot server;
      server.socket = os_.accept(listener_, nullptr);
      server.stream = true;
      os_.set_nonblocking(server.socket, true);
      add(server);
    }
    for (std::uint32_t i = 0; i < kDatagrams; ++i) {
      add(open_datagram());
    }
    // Every socket (and the listener, key 0) registered, the two ports in turn, every trigger mode.
    std::vector<SockNotifyRegistration> registrations[2];
    registrations[0].push_back(enable(listener_, 0, kSockNotifyRegisterEventIn,
                                      kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel));
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      registrations[slots_[i].port_index].push_back(enable_slot(i));
    }
    for (std::uint32_t p = 0; p < 2; ++p) {
      os_.process_socket_notifications(ports_[p],
                                       static_cast<std::uint32_t>(registrations[p].size()),
                                       registrations[p].data(), 0, 0, nullptr, nullptr);
    }
  }

  Slot open_datagram() {
    Slot slot;
    slot.socket = os_.socket(kAfInet, kSockDgram, kIpprotoUdp);
    Ipv4Address address{kLoopbackHost, 0};
    os_.bind(slot.socket, address);
    os_.getsockname(slot.socket, &slot.address);
    os_.set_nonblocking(slot.socket, true);
    return slot;
  }

  void add(Slot slot) {
    const auto index = static_cast<std::uint32_t>(slots_.size());
    static constexpr std::uint8_t kTriggers[4] = {
        kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
        kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel,
        kSockNotifyTriggerOneshot | kSockNotifyTriggerEdge,
        kSockNotifyTriggerPersistent | kSockNotifyTriggerEdge};
    slot.port_index = index % 2;
    slot.trigger = kTriggers[(index / 2) % 4];
    slot.filter = slot.stream ? kSockNotifyRegisterEventsAll : kSockNotifyRegisterEventIn;
    slots_.push_back(slot);
  }

  static SockNotifyRegistration enable(Socket s, std::uintptr_t key, std::uint16_t filter,
                                       std::uint8_t trigger) {
    return SockNotifyRegistration{s, key, filter, kSockNotifyOpEnable, trigger, 0};
  }
  SockNotifyRegistration enable_slot(std::uint32_t index) const {
    const Slot& slot = slots_[index];
    return enable(slot.socket, index + 1, slot.filter, slot.trigger);
  }

  std::uint32_t pick_slot(bool stream) {
    for (;;) {  // both kinds exist and are never all gone: bounded in expectation
      const auto index = static_cast<std::uint32_t>(rng_.below(slots_.size()));
      if (slots_[index].stream == stream) {
        return index;
      }
    }
  }

  void act(std::uint32_t step) {
    char buffer[4096] = {};
    const std::uint32_t p = static_cast<std::uint32_t>(rng_.below(2));
    switch (rng_.below(10)) {
      case 0: {  // send a burst on a stream socket (may fill the peer's buffer: OUT false)
        const Slot& slot = slots_[pick_slot(true)];
        os_.send(slot.socket, buffer, static_cast<int>(1 + rng_.below(sizeof(buffer))), 0);
        break;
      }
      case 1: {  // read from a stream socket (often WSAEWOULDBLOCK)
        const Slot& slot = slots_[pick_slot(true)];
        if (os_.recv(slot.socket, buffer, static_cast<int>(sizeof(buffer)), 0) < 0) {
          os_.last_error();
        }
        break;
      }
      case 2: {  // a datagram between two UDP sockets
        const Slot& from = slots_[pick_slot(false)];
        const Slot& to = slots_[pick_slot(false)];
        os_.sendto(from.socket, buffer, static_cast<int>(1 + rng_.below(512)), 0, to.address);
        break;
      }
      case 3: {
        const Slot& slot = slots_[pick_slot(false)];
        Ipv4Address from;
        os_.recvfrom(slot.socket, buffer, static_cast<int>(sizeof(buffer)), 0, &from);
        break;
      }
      case 4:
      case 5:
        dequeue(p, rng_.chance(1, 4) ? 1u : 0u);
        break;
      case 6:
        os_.post_queued_completion_status(ports_[p], step, kPostedKeyFirst + step, 0);
        break;
      case 7: {
        OverlappedEntry entries[16];
        std::uint32_t removed = 0;
        if (!os_.get_queued_completion_status_ex(ports_[p], entries, 16, &removed, 0, false)) {
          os_.last_error();
        }
        break;
      }
      case 8:
        change_registration(static_cast<std::uint32_t>(rng_.below(slots_.size())));
        break;
      case 9:
        churn(static_cast<std::uint32_t>(rng_.below(slots_.size())));
        break;
    }
  }

  // One PSN call: the pending re-arms of port p, then up to 8..64 entries; one-shot slots that
  // came out are re-armed in the next call on their port (as the engine batches them).
  void dequeue(std::uint32_t p, std::uint32_t timeout_ms) {
    std::vector<SockNotifyRegistration>& rearm = rearm_[p];
    OverlappedEntry entries[64];
    const auto count = static_cast<std::uint32_t>(8 + rng_.below(57));
    std::uint32_t received = 0;
    const std::uint32_t result = os_.process_socket_notifications(
        ports_[p], static_cast<std::uint32_t>(rearm.size()), rearm.empty() ? nullptr : rearm.data(),
        timeout_ms, count, entries, &received);
    rearm.clear();
    if (result != kErrorSuccess) {
      return;
    }
    for (std::uint32_t i = 0; i < received; ++i) {
      const std::uintptr_t key = entries[i].completion_key;
      if (key == 0) {  // the listener: nothing more will connect; accept fails with WOULDBLOCK
        os_.accept(listener_, nullptr);
        continue;
      }
      if (key >= kPostedKeyFirst || key > slots_.size()) {
        continue;
      }
      const std::uint32_t index = static_cast<std::uint32_t>(key - 1);
      if ((entries[i].bytes_transferred & kSockNotifyEventRemove) != 0) {
        continue;
      }
      if ((slots_[index].trigger & kSockNotifyTriggerOneshot) != 0 &&
          slots_[index].port_index == p) {
        rearm.push_back(enable_slot(index));
      }
    }
  }

  void change_registration(std::uint32_t index) {
    Slot& slot = slots_[index];
    SockNotifyRegistration registration = enable_slot(index);
    std::uint32_t port_index = slot.port_index;
    switch (rng_.below(4)) {
      case 0:
        registration.operation = kSockNotifyOpDisable;
        break;
      case 1:
        registration.operation = kSockNotifyOpRemove;
        break;
      case 2:
        break;  // re-enable (or register again after a REMOVE)
      case 3:
        port_index = 1 - port_index;
        break;  // the other port: fails while registered (B8)
    }
    os_.process_socket_notifications(ports_[port_index], 1, &registration, 0, 0, nullptr, nullptr);
  }

  // Closes a socket and opens a replacement in its slot (SOCKET values are reused, spec E5).
  void churn(std::uint32_t index) {
    Slot& slot = slots_[index];
    if (slot.stream) {
      os_.shutdown(slot.socket, kSdSend);  // the peer sees IN|HANGUP; the slot stays
      return;
    }
    os_.closesocket(slot.socket);
    Slot fresh = open_datagram();
    slot.socket = fresh.socket;
    slot.address = fresh.address;
    SockNotifyRegistration registration = enable_slot(index);
    os_.process_socket_notifications(ports_[slot.port_index], 1, &registration, 0, 0, nullptr,
                                     nullptr);
  }

  void teardown() {
    for (std::uint32_t p = 0; p < 2; ++p) {
      std::vector<SockNotifyRegistration> removes;
      for (std::uint32_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].port_index != p) {
          continue;
        }
        SockNotifyRegistration registration = enable_slot(i);
        registration.operation = kSockNotifyOpRemove;
        removes.push_back(registration);
      }
      os_.process_socket_notifications(ports_[p], static_cast<std::uint32_t>(removes.size()),
                                       removes.data(), 0, 0, nullptr, nullptr);
      // Drain until nothing is left (every REMOVE packet included); bounded.
      for (int round = 0; round < 1000; ++round) {
        OverlappedEntry entries[64];
        std::uint32_t received = 0;
        if (os_.process_socket_notifications(ports_[p], 0, nullptr, 0, 64, entries, &received) !=
            kErrorSuccess) {
          break;
        }
      }
    }
    for (const Slot& slot : slots_) {
      os_.closesocket(slot.socket);
    }
    os_.closesocket(listener_);
    os_.close_port(ports_[0]);
    os_.close_port(ports_[1]);
  }

  Os& os_;
  Rng rng_;
  Port ports_[2];
  Socket listener_ = kInvalidSocket;
  Ipv4Address listen_address_;
  std::vector<Slot> slots_;
  std::vector<SockNotifyRegistration> rearm_[2];
};

std::string run_script_once(FakeStats* stats_out) {
  InlineRuntime runtime;
  FakeOs fake(FakeOptions{}, runtime);
  Trace trace;
  RuntimeTraceContext context(runtime);
  RecordingOs os(fake, trace, context);
  Script(os).run();
  *stats_out = fake.stats();
  return trace.text();
}

TEST(FakeDeterminism, LongScriptOverSixtyFourSocketsAndTwoPortsGivesIdenticalTraces) {
  FakeStats first_stats;
  FakeStats second_stats;
  const std::string first = run_script_once(&first_stats);
  const std::string second = run_script_once(&second_stats);
  const auto lines = static_cast<std::size_t>(std::count(first.begin(), first.end(), '\n'));
  std::printf("script trace: %zu lines, %zu bytes, hash %s\n", lines, first.size(),
              hash_hex(fnv1a64(first)).c_str());
  ASSERT_GT(lines, static_cast<std::size_t>(kSteps));
  // Compared in full, byte for byte (on a mismatch, the first differing line is shown).
  if (first != second) {
    const std::size_t at = static_cast<std::size_t>(
        std::mismatch(first.begin(), first.end(), second.begin(), second.end()).first -
        first.begin());
    const std::size_t line_start =
        first.rfind('\n', at) == std::string::npos ? 0 : first.rfind('\n', at) + 1;
    FAIL() << "traces differ at byte " << at << ", line:\n"
           << first.substr(line_start, first.find('\n', at) - line_start) << "\nvs\n"
           << second.substr(line_start, second.find('\n', at) - line_start);
  }
  // The script exercised what it claims: both ports, packets of every kind, two ports emptied.
  EXPECT_NE(first.find("psn port=2 "), std::string::npos);
  EXPECT_NE(first.find("psn port=6 "), std::string::npos);
  EXPECT_NE(first.find("/mask=0x8"), std::string::npos);  // REMOVE packets (maybe OR-ed)
  EXPECT_NE(first.find("op=REMOVE/trig="), std::string::npos);
  EXPECT_NE(first.find("-> WSAEWOULDBLOCK"), std::string::npos);
  EXPECT_EQ(first_stats.ports_open, 0u);
  EXPECT_EQ(first_stats.sockets_open, 0u);
}

}  // namespace
}  // namespace readyport
