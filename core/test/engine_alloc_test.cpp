// Nothing is allocated on the wait path: after start() and add(), batches of dispatches,
// re-arms, merges and closes run without one call to operator new. The binary's global
// operator new counts allocations while a window is open on the calling thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "engine_test_util.hpp"
#include "mock_os.hpp"
#include "readyport/engine.hpp"
#include "readyport/internal/slot_table.hpp"

// The replacements pair malloc with free on purpose; GCC sees them inlined into each other.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

// ThreadSanitizer's runtime defines operator new and delete itself: no counting there.
#if defined(__SANITIZE_THREAD__)
#define READYPORT_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define READYPORT_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef READYPORT_COUNT_ALLOCATIONS
#define READYPORT_COUNT_ALLOCATIONS 1
#endif

namespace {
thread_local bool t_counting = false;
thread_local std::size_t t_allocations = 0;
}  // namespace

#if READYPORT_COUNT_ALLOCATIONS
void* operator new(std::size_t size) {
  if (t_counting) {
    ++t_allocations;
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace readyport::test {
namespace {

constexpr Port kPort{0x99};
constexpr std::uint32_t kConnections = 16;
constexpr std::uint32_t kBatch = 8;

// Every connection is always readable: each dequeue returns the next kBatch keys round-robin,
// and a re-arm in the call is checked against the key it names. No allocation anywhere.
class BusyOs : public testing::NiceMock<MockOs> {
 public:
  std::uint32_t process_socket_notifications(Port, std::uint32_t count,
                                             SockNotifyRegistration* regs, std::uint32_t,
                                             std::uint32_t completion_count,
                                             OverlappedEntry* entries,
                                             std::uint32_t* received) override {
    for (std::uint32_t i = 0; i < count; ++i) {
      regs[i].registration_result = 0;
      // REMOVE (only at stop): its packet comes next, and nothing else does any more.
      if (regs[i].operation == kSockNotifyOpRemove) {
        removes_.push_back(regs[i].completion_key);
        stopping_ = true;
      }
    }
    if (completion_count == 0) {
      return kErrorSuccess;
    }
    if (stopping_) {
      std::uint32_t n = 0;
      while (n < completion_count && !removes_.empty()) {
        entries[n++] = OverlappedEntry{removes_.back(), 0, 0, kSockNotifyEventRemove};
        removes_.pop_back();
      }
      *received = n;
      return n > 0 ? kErrorSuccess : kWaitTimeout;
    }
    for (std::uint32_t i = 0; i < completion_count; ++i) {
      const std::uint32_t slot = next_++ % kConnections;
      entries[i] = OverlappedEntry{internal::completion_key_for(ConnId{slot, 1}, kConnections), 0,
                                   0, kSockNotifyEventIn};
    }
    *received = completion_count;
    return kErrorSuccess;
  }
  // Not through gmock, whose call bookkeeping allocates: one thread drives this engine.
  std::uint64_t thread_id() override { return 1; }

 private:
  std::uint32_t next_ = 0;
  bool stopping_ = false;
  std::vector<std::uintptr_t> removes_;
};

TEST(EngineAllocationTest, TheWaitPathAllocatesNothing) {
  if (!READYPORT_COUNT_ALLOCATIONS) {
    GTEST_SKIP() << "operator new belongs to ThreadSanitizer";
  }
  BusyOs os;
  allow_mutexes(os);
  ON_CALL(os, create_io_completion_port(0)).WillByDefault(testing::Return(kPort));
  ON_CALL(os, post_queued_completion_status(testing::_, testing::_, testing::_, testing::_))
      .WillByDefault(testing::Return(true));
  EngineOptions options;
  options.connections_max = kConnections;
  options.batch_count = kBatch;
  Engine engine(os, options);
  ASSERT_TRUE(engine.start().ok());
  RecordingHandler unused;
  class Quiet final : public Handler {
   public:
    Interest on_events(ConnId, Socket, std::uint32_t) noexcept override { return kInterestIn; }
    void on_closed(ConnId) noexcept override {}
  } handler;
  for (std::uint32_t i = 0; i < kConnections; ++i) {
    ASSERT_TRUE(engine.add(0x100 + 4 * i, kInterestIn, Mode::kOneshotLevel, handler).ok());
  }

  t_allocations = 0;
  t_counting = true;
  std::uint64_t handled = 0;
  for (int i = 0; i < 200; ++i) {
    handled += engine.poll(0).value();
  }
  t_counting = false;
  EXPECT_EQ(t_allocations, 0u);
  EXPECT_EQ(handled, 200u * kBatch);
  EXPECT_EQ(engine.stats().notifications, handled);
  EXPECT_EQ(engine.stats().port_calls, kConnections + 200u);  // adds + one call per batch
  ASSERT_TRUE(engine.stop().ok());
  (void)unused;
}

}  // namespace
}  // namespace readyport::test
