// core/test/mock_os.hpp: a GoogleMock Os for the engine's unit tests.
//
// MockOs has a MOCK_METHOD for every method of readyport::EngineOs, the engine's whole seam. Tests
// wrap it in StrictMock and pin the exact sequence of port and socket calls of one lifetime path.
// mutex_create() hands out a StdMutex (a real lock, so tests with several threads work).
//
//   testing::StrictMock<readyport::test::MockOs> os;
//   readyport::test::allow_mutexes(os);
//   EXPECT_CALL(os, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
//       .With(readyport::test::RegsAre({enable(sock, key, kInterestIn, kOneshotLevelFlags)}))
//       .WillOnce(readyport::test::Psn({0}, {}, kErrorSuccess));
//
// Helpers: RegsAre (matches the registration array by value), Psn (writes registration results
// and entries, returns a code), and registration/entry builders.
// Ownership: plain test objects. Threading: gmock's mocks may be called from any thread.
#pragma once

#include <gmock/gmock.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "readyport/engine_os.hpp"

namespace readyport::test {

// A real, non-recursive lock for Os::mutex_create().
class StdMutex final : public Mutex {
 public:
  void lock() override { mutex_.lock(); }
  bool try_lock() override { return mutex_.try_lock(); }
  void unlock() override { mutex_.unlock(); }

 private:
  std::mutex mutex_;
};

class MockOs : public EngineOs {
 public:
  MOCK_METHOD(Port, create_io_completion_port, (std::uint32_t concurrency), (override));
  MOCK_METHOD(bool, close_port, (Port port), (override));
  MOCK_METHOD(std::uint32_t, process_socket_notifications,
              (Port port, std::uint32_t registration_count, SockNotifyRegistration* registrations,
               std::uint32_t timeout_ms, std::uint32_t completion_count, OverlappedEntry* entries,
               std::uint32_t* received_out),
              (override));
  MOCK_METHOD(bool, post_queued_completion_status,
              (Port port, std::uint32_t bytes_transferred, std::uintptr_t completion_key,
               std::uintptr_t overlapped),
              (override));
  MOCK_METHOD(int, closesocket, (Socket s), (override));
  MOCK_METHOD(std::uint32_t, last_error, (), (override));
  MOCK_METHOD(std::unique_ptr<Mutex>, mutex_create, (), (override));
  MOCK_METHOD(std::uint64_t, now_ns, (), (override));
  MOCK_METHOD(void, sleep_ms, (std::uint32_t duration_ms), (override));
  MOCK_METHOD(std::uint64_t, thread_id, (), (override));
};

// Lets `os` hand out any number of StdMutex locks (lock calls are not Os calls) and answer
// thread_id() with an id of the calling OS thread (neither is a call the tests pin).
inline void allow_mutexes(MockOs& os) {
  EXPECT_CALL(os, mutex_create()).Times(testing::AnyNumber()).WillRepeatedly([] {
    return std::unique_ptr<Mutex>(std::make_unique<StdMutex>());
  });
  EXPECT_CALL(os, thread_id()).Times(testing::AnyNumber()).WillRepeatedly([] {
    return static_cast<std::uint64_t>(std::hash<std::thread::id>{}(std::this_thread::get_id())) | 1;
  });
}

// ---- Builders -------------------------------------------------------------------------------

inline SockNotifyRegistration enable(Socket socket, std::uintptr_t key, std::uint16_t filter,
                                     std::uint8_t trigger) {
  return SockNotifyRegistration{socket, key, filter, kSockNotifyOpEnable, trigger, 0};
}
inline SockNotifyRegistration disable(Socket socket) {
  return SockNotifyRegistration{socket, 0, 0, kSockNotifyOpDisable, 0, 0};
}
inline SockNotifyRegistration remove(Socket socket) {
  return SockNotifyRegistration{socket, 0, 0, kSockNotifyOpRemove, 0, 0};
}
inline OverlappedEntry packet(std::uintptr_t key, std::uint32_t events) {
  return OverlappedEntry{key, 0xDEAD0000u, 0, events};
}
inline OverlappedEntry posted(std::uintptr_t key, std::uintptr_t overlapped) {
  return OverlappedEntry{key, overlapped, 0, 0};
}

inline constexpr std::uint8_t kOneshotLevelFlags =
    kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel;
inline constexpr std::uint8_t kPersistentLevelFlags =
    kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel;

// ---- Matchers and actions -----------------------------------------------------------------------

// Matches the (registration_count, registrations) of a PSN call against `expected` by value:
// socket, operation, and for ENABLE the key, filter and trigger (REMOVE ignores them, spec B5).
MATCHER_P(RegsAre, expected, "registrations are " + testing::PrintToString(expected.size())) {
  const std::uint32_t count = std::get<1>(arg);
  const SockNotifyRegistration* regs = std::get<2>(arg);
  if (count != expected.size()) {
    *result_listener << "registration_count " << count;
    return false;
  }
  if (count == 0) {
    return regs == nullptr;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const SockNotifyRegistration& got = regs[i];
    const SockNotifyRegistration& want = expected[i];
    bool same = got.socket == want.socket && got.operation == want.operation;
    if (want.operation == kSockNotifyOpEnable) {
      same = same && got.completion_key == want.completion_key &&
             got.event_filter == want.event_filter && got.trigger_flags == want.trigger_flags;
    }
    if (!same) {
      *result_listener << "registration " << i << " is {socket " << got.socket << ", key "
                       << got.completion_key << ", filter " << got.event_filter << ", op "
                       << int{got.operation} << ", trigger " << int{got.trigger_flags} << "}";
      return false;
    }
  }
  return true;
}

// The action of one PSN call: writes `results` into the registrations, copies `entries` out,
// returns `code` (with nothing dequeued unless code is kErrorSuccess).
inline auto Psn(std::vector<std::uint32_t> results, std::vector<OverlappedEntry> entries,
                std::uint32_t code) {
  return [results, entries, code](Port, std::uint32_t count, SockNotifyRegistration* regs,
                                  std::uint32_t, std::uint32_t completion_count,
                                  OverlappedEntry* out, std::uint32_t* received) {
    EXPECT_EQ(results.size(), count);
    for (std::size_t i = 0; i < count && i < results.size(); ++i) {
      regs[i].registration_result = results[i];
    }
    if (received != nullptr) {
      *received = 0;
    }
    if (code == kErrorSuccess && !entries.empty()) {
      EXPECT_LE(entries.size(), completion_count);
      for (std::size_t i = 0; i < entries.size(); ++i) {
        out[i] = entries[i];
      }
      *received = static_cast<std::uint32_t>(entries.size());
    }
    return code;
  };
}

}  // namespace readyport::test

namespace readyport {
inline void PrintTo(const SockNotifyRegistration& r, std::ostream* os) {
  *os << "{socket " << r.socket << ", key " << r.completion_key << ", filter " << r.event_filter
      << ", op " << int{r.operation} << ", trigger " << int{r.trigger_flags} << "}";
}
}  // namespace readyport
