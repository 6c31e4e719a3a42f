// FaultyOs, FaultPlan and ForwardingOs over FakeOs on its inline runtime: each fault site fires
// as faulty_os.hpp specifies (and the fake shows that nothing else changed), the controls, the
// plan's text form and its seeded draw, the exact fault trace lines, and replay by seed.
#include "readyport/fake/faulty_os.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/forwarding_os.hpp"
#include "readyport/fake/recording_os.hpp"
#include "readyport/fake/trace.hpp"

namespace readyport {
namespace {

constexpr std::uint8_t kOneshotLevel = kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel;
constexpr std::uint8_t kPersistentLevel = kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel;
constexpr std::uint32_t kUnwritten = 0xFFFF;  // a registration_result nobody wrote

// Time 0 and thread 0 for every line: the expected trace text is then exact.
class ZeroContext final : public TraceContext {
 public:
  std::uint64_t trace_time_ns() const override { return 0; }
  std::uint32_t trace_thread() const override { return 0; }
};

// A ForwardingOs that counts the calls that reach it.
class CountingOs final : public ForwardingOs {
 public:
  using ForwardingOs::ForwardingOs;
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override {
    ++thread_starts;
    return ForwardingOs::thread_start(name, std::move(body));
  }
  int set_linger(Socket s, bool enabled, std::uint16_t timeout_s) override {
    ++lingers;
    return ForwardingOs::set_linger(s, enabled, timeout_s);
  }
  int thread_starts = 0;
  int lingers = 0;
};

// The event part of every line of `trace` ("<seq> <time> T<thread> " dropped).
std::vector<std::string> events(const Trace& trace) {
  std::vector<std::string> lines;
  const std::string text = trace.text();
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    std::size_t cut = 0;
    for (int spaces = 0; spaces < 3; ++spaces) {
      cut = line.find(' ', cut) + 1;
    }
    lines.push_back(line.substr(cut));
    start = end + 1;
  }
  return lines;
}

class FaultyOsTest : public ::testing::Test {
 protected:
  FaultyOsTest() {
    port_ = fake_.create_io_completion_port(0);
    EXPECT_FALSE(port_ == kInvalidPort);
  }
  void TearDown() override { fake_.check_invariants(); }

  // A new FaultyOs over the fake (or over `inner`), writing fault lines to trace_.
  FaultyOs& faulty(FaultPlan plan = FaultPlan::none(), std::uint64_t seed = 1,
                   Os* inner = nullptr) {
    faulty_ = std::make_unique<FaultyOs>(inner != nullptr ? *inner : fake_, plan, seed, &trace_,
                                         &context_);
    return *faulty_;
  }

  Socket udp(Ipv4Address* address_out) {
    const Socket s = fake_.socket(kAfInet, kSockDgram, kIpprotoUdp);
    EXPECT_EQ(fake_.set_nonblocking(s, true), 0);
    EXPECT_EQ(fake_.bind(s, Ipv4Address{kLoopbackHost, 0}), 0);
    EXPECT_EQ(fake_.getsockname(s, address_out), 0);
    return s;
  }
  Socket tcp() {
    const Socket s = fake_.socket(kAfInet, kSockStream, kIpprotoTcp);
    EXPECT_EQ(fake_.set_nonblocking(s, true), 0);
    return s;
  }
  Socket listener(Ipv4Address* address_out) {
    const Socket s = tcp();
    EXPECT_EQ(fake_.bind(s, Ipv4Address{kLoopbackHost, 0}), 0);
    EXPECT_EQ(fake_.listen(s, kSomaxconn), 0);
    EXPECT_EQ(fake_.getsockname(s, address_out), 0);
    return s;
  }
  // A connected pair, connected and accepted through `os`.
  void pair(Os& os, Socket* client_out, Socket* server_out) {
    Ipv4Address address{};
    listener_ = listener(&address);
    *client_out = tcp();
    EXPECT_EQ(os.connect(*client_out, address), kSocketError);
    EXPECT_EQ(fake_.last_error(), kWsaEwouldblock);
    *server_out = os.accept(listener_, nullptr);
    ASSERT_NE(*server_out, kInvalidSocket);
    EXPECT_EQ(fake_.set_nonblocking(*server_out, true), 0);
  }
  std::string recv_text(Os& os, Socket s) {
    std::string buffer(64, '\0');
    const int got = os.recv(s, buffer.data(), 64, 0);
    if (got < 0) {
      return "<" + std::string(os_error_name(os.last_error())) + ">";
    }
    buffer.resize(static_cast<std::size_t>(got));
    return buffer;
  }

  // ENABLE (IN, `trigger`) of `s` through the fake itself; asserts it applied.
  void enable(Socket s, std::uintptr_t key, std::uint8_t trigger = kOneshotLevel) {
    SockNotifyRegistration reg{s,       key,       kSockNotifyRegisterEventIn, kSockNotifyOpEnable,
                               trigger, kUnwritten};
    ASSERT_EQ(fake_.process_socket_notifications(port_, 1, &reg, 0, 0, nullptr, nullptr),
              kErrorSuccess);
    ASSERT_EQ(reg.registration_result, 0u);
  }

  FakeOs fake_;  // first: outlives every decorator
  ZeroContext context_;
  Trace trace_;
  std::unique_ptr<FaultyOs> faulty_;
  Port port_{};
  Socket listener_ = kInvalidSocket;
};

// ==== FaultPlan ==================================================================================

TEST(FaultPlan, EverySiteHasAStableNameThatParsesBack) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    const auto site = static_cast<FaultSite>(i);
    const std::string name = fault_site_name(site);
    names.insert(name);
    const Result<FaultSite> parsed = fault_site_parse(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(parsed.value(), site);
  }
  EXPECT_EQ(names.size(), kFaultSiteCount);
  // The table of the design, in its order: the enum order is part of the text format.
  EXPECT_STREQ(fault_site_name(FaultSite::kPsnCallFails), "psn.call_fails");
  EXPECT_STREQ(fault_site_name(FaultSite::kPsnDequeueFewer), "psn.dequeue_fewer");
  EXPECT_STREQ(fault_site_name(FaultSite::kCloseAbortive), "close.abortive");
  EXPECT_EQ(kFaultSiteCount, 16u);
  const Result<FaultSite> unknown = fault_site_parse("psn.nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("psn.nope"), std::string::npos);
}

TEST(FaultPlan, TextFormRoundTripsAndDefaultsTo25) {
  EXPECT_EQ(FaultPlan::none().to_string(), "none");
  EXPECT_EQ(FaultPlan().active_count(), 0u);
  EXPECT_EQ(FaultPlan::parse("none").value(), FaultPlan::none());
  EXPECT_EQ(FaultPlan::parse("off").value(), FaultPlan::none());
  // Any order in, enum order out; a bare site means 25%.
  const FaultPlan plan = FaultPlan::parse("psn.remove_fails@2,psn.call_fails").value();
  EXPECT_EQ(plan.to_string(), "psn.call_fails@25,psn.remove_fails@2");
  EXPECT_EQ(plan.rate_percent(FaultSite::kPsnCallFails), 25u);
  EXPECT_EQ(plan.rate_percent(FaultSite::kPsnRemoveFails), 2u);
  EXPECT_EQ(plan.rate_percent(FaultSite::kPostFails), 0u);
  EXPECT_TRUE(plan.active(FaultSite::kPsnRemoveFails));
  EXPECT_FALSE(plan.active(FaultSite::kPostFails));
  EXPECT_EQ(plan.active_count(), 2u);
  EXPECT_EQ(FaultPlan::parse("close.abortive@100").value().to_string(), "close.abortive@100");
  // Derived plans.
  EXPECT_EQ(plan.without(FaultSite::kPsnCallFails).to_string(), "psn.remove_fails@2");
  EXPECT_EQ(plan.restricted_to({FaultSite::kPsnCallFails, FaultSite::kPostFails}).to_string(),
            "psn.call_fails@25");
  EXPECT_EQ(plan.with(FaultSite::kSendNobufs, 7).to_string(),
            "psn.call_fails@25,psn.remove_fails@2,send.nobufs@7");
  EXPECT_EQ(plan.restricted_to({}), FaultPlan::none());
}

TEST(FaultPlan, ParseErrorsNameTheBadToken) {
  struct Bad {
    const char* text;
    const char* token;
  };
  const Bad bad[] = {
      {"bogus", "'bogus'"},
      {"psn.call_fails@0", "'psn.call_fails@0'"},
      {"psn.call_fails@101", "'psn.call_fails@101'"},
      {"post.fails@x", "'post.fails@x'"},
      {"post.fails@", "'post.fails@'"},
      {"post.fails@-5", "'post.fails@-5'"},
      {"post.fails,psn.wait_short@2,post.fails@3", "'post.fails@3'"},
      {"post.fails,,send.nobufs", "''"},
      {"post.fails,", "''"},
      {"", "''"},
      {"None", "'None'"},
      {"post.fails@10 ", "'post.fails@10 '"},
  };
  for (const Bad& b : bad) {
    const Result<FaultPlan> parsed = FaultPlan::parse(b.text);
    ASSERT_FALSE(parsed.ok()) << b.text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << b.text;
    EXPECT_NE(parsed.status().message().find(b.token), std::string::npos)
        << b.text << ": " << parsed.status().message();
  }
  EXPECT_NE(FaultPlan::parse("psn.call_fails@0").status().message().find("1 to 100"),
            std::string::npos);
  EXPECT_NE(FaultPlan::parse("x,x").status().message().find("unknown site"), std::string::npos);
  EXPECT_NE(FaultPlan::parse("send.nobufs,send.nobufs").status().message().find("twice"),
            std::string::npos);
}

TEST(FaultPlan, PinnedHitsRoundTripInEnumAndHitOrder) {
  const Result<FaultPlan> parsed =
      FaultPlan::parse("psn.remove_fails#17,post.fails@10,psn.call_fails#3,psn.remove_fails#2");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const FaultPlan& plan = parsed.value();
  EXPECT_EQ(plan.to_string(),
            "psn.call_fails#3,psn.remove_fails#2,psn.remove_fails#17,post.fails@10");
  EXPECT_EQ(FaultPlan::parse(plan.to_string()).value(), plan);
  EXPECT_TRUE(plan.pinned(FaultSite::kPsnRemoveFails));
  EXPECT_TRUE(plan.active(FaultSite::kPsnRemoveFails));
  EXPECT_EQ(plan.rate_percent(FaultSite::kPsnRemoveFails), 0u);
  EXPECT_TRUE(plan.fires_at(FaultSite::kPsnRemoveFails, 17));
  EXPECT_FALSE(plan.fires_at(FaultSite::kPsnRemoveFails, 3));
  EXPECT_FALSE(plan.pinned(FaultSite::kPostFails));
  EXPECT_EQ(plan.active_count(), 3u);
  EXPECT_EQ(plan.without(FaultSite::kPsnRemoveFails).to_string(), "psn.call_fails#3,post.fails@10");
  EXPECT_EQ(plan.restricted_to({FaultSite::kPsnRemoveFails}).to_string(),
            "psn.remove_fails#2,psn.remove_fails#17");
  EXPECT_EQ(plan.with(FaultSite::kPsnCallFails, 5).to_string(),
            "psn.call_fails@5,psn.remove_fails#2,psn.remove_fails#17,post.fails@10");
  const FaultPlan hits =
      FaultPlan::of_hits({{FaultSite::kCloseAbortive, 9}, {FaultSite::kPsnWaitShort, 1}});
  EXPECT_EQ(hits.to_string(), "psn.wait_short#1,close.abortive#9");
  EXPECT_EQ(FaultPlan::of_hits({}).to_string(), "none");
  EXPECT_EQ(FaultPlan::parse("post.fails#18446744073709551615").value().hits().front().hit,
            18446744073709551615ULL);
}

TEST(FaultPlan, PinnedHitErrorsNameTheBadToken) {
  struct Bad {
    const char* text;
    const char* why;
  };
  const Bad bad[] = {
      {"post.fails#0", "from 1"},
      {"post.fails#-1", "from 1"},
      {"post.fails#+1", "from 1"},
      {"post.fails#", "from 1"},
      {"post.fails#x", "from 1"},
      {"post.fails#18446744073709551616", "from 1"},
      {"post.fails#3,post.fails#3", "hit is given twice"},
      {"post.fails@5,post.fails#3", "both rated"},
      {"post.fails#3,post.fails@5", "both rated"},
      // A rated token after hits of a site listed later (found by fuzz/fault_plan_fuzz.cpp).
      {"accept.connreset#4,psn.enable_fails#5,accept.connreset", "both rated"},
      {"bogus#3", "unknown site"},
  };
  for (const Bad& b : bad) {
    const Result<FaultPlan> parsed = FaultPlan::parse(b.text);
    ASSERT_FALSE(parsed.ok()) << b.text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << b.text;
    EXPECT_NE(parsed.status().message().find(b.why), std::string::npos)
        << b.text << ": " << parsed.status().message();
  }
  std::string many;
  for (std::size_t i = 1; i <= FaultPlan::kHitsMax + 1; ++i) {
    if (!many.empty()) {
      many += ',';
    }
    many += "post.fails#" + std::to_string(i);
  }
  EXPECT_NE(FaultPlan::parse(many).status().message().find("pinned hits"), std::string::npos);
}

TEST(FaultPlan, DrawIsAPureSwarmFunctionOfTheSeedAndRoundTrips) {
  std::array<std::uint32_t, kFaultSiteCount> active{};
  std::set<std::string> distinct;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    const FaultPlan plan = FaultPlan::draw(seed);
    EXPECT_EQ(plan, FaultPlan::draw(seed));
    const std::string text = plan.to_string();
    distinct.insert(text);
    const Result<FaultPlan> parsed = FaultPlan::parse(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().to_string();
    EXPECT_EQ(parsed.value(), plan) << text;
    EXPECT_EQ(parsed.value().to_string(), text);
    for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
      const std::uint32_t rate = plan.rate_percent(static_cast<FaultSite>(i));
      EXPECT_TRUE(rate == 0 || rate == 2 || rate == 10 || rate == 25) << text;
      active[i] += rate != 0 ? 1 : 0;
    }
  }
  // Each site on in about half the seeds (binomial(1000, 1/2): 400..600 is beyond 6 sigma).
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    EXPECT_GT(active[i], 400u) << fault_site_name(static_cast<FaultSite>(i));
    EXPECT_LT(active[i], 600u) << fault_site_name(static_cast<FaultSite>(i));
  }
  EXPECT_GT(distinct.size(), 900u);
}

// ==== ForwardingOs ===============================================================================

TEST_F(FaultyOsTest, ForwardingOsPassesEveryCallThrough) {
  CountingOs counting(fake_);
  Os& os = counting;
  const Port port = os.create_io_completion_port(0);
  ASSERT_FALSE(port == kInvalidPort);
  EXPECT_TRUE(os.post_queued_completion_status(port, 3, 9, 0));
  std::array<OverlappedEntry, 2> entries{};
  std::uint32_t received = 0;
  EXPECT_EQ(os.process_socket_notifications(port, 0, nullptr, 0, 2, entries.data(), &received),
            kErrorSuccess);
  EXPECT_EQ(received, 1u);
  EXPECT_EQ(entries[0].completion_key, 9u);
  EXPECT_EQ(entries[0].bytes_transferred, 3u);
  EXPECT_FALSE(os.close_port(Port{999}));
  EXPECT_EQ(os.last_error(), kErrorInvalidHandle);
  EXPECT_FALSE(os.thread_start("t", [] {}).ok());  // the inline runtime starts no threads
  EXPECT_EQ(counting.thread_starts, 1);
  const std::uint64_t before_ns = os.now_ns();
  os.sleep_ms(3);
  EXPECT_EQ(os.now_ns() - before_ns, 3'000'000u);
  std::unique_ptr<Mutex> mutex = os.mutex_create();
  ASSERT_NE(mutex, nullptr);
  EXPECT_TRUE(mutex->try_lock());
  mutex->unlock();
  EXPECT_TRUE(os.close_port(port));
}

// ==== PSN sites ==================================================================================

TEST_F(FaultyOsTest, CallFailsChangesNothing) {
  Ipv4Address address{};
  const Socket s = udp(&address);
  FaultyOs& os = faulty();
  ASSERT_TRUE(fake_.post_queued_completion_status(port_, 1, 5, 0));
  os.arm_next(FaultSite::kPsnCallFails);
  SockNotifyRegistration reg{
      s, 7, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel, kUnwritten};
  std::array<OverlappedEntry, 4> entries{};
  std::uint32_t received = 99;
  const std::uint32_t code =
      os.process_socket_notifications(port_, 1, &reg, 0, 4, entries.data(), &received);
  EXPECT_TRUE(code == kErrorNotEnoughMemory || code == kErrorNoSystemResources ||
              code == kWsaEnobufs)
      << code;
  EXPECT_EQ(received, 0u);
  EXPECT_EQ(reg.registration_result, kUnwritten);   // spec A3: nothing written
  EXPECT_FALSE(fake_.socket_registered(s));         // nothing applied
  EXPECT_EQ(fake_.queued_packet_count(port_), 1u);  // nothing dequeued
  EXPECT_EQ(events(trace_),
            std::vector<std::string>{
                "fault psn.call_fails code=" + std::string(os_error_name(code)) +
                " regs=[s=" + std::to_string(s) + "/key=7/filter=0x1/op=ENABLE/trig=0x5]"});
  // The next call is not armed: it applies and dequeues.
  EXPECT_EQ(os.process_socket_notifications(port_, 1, &reg, 0, 4, entries.data(), &received),
            kErrorSuccess);
  EXPECT_EQ(reg.registration_result, 0u);
  EXPECT_EQ(received, 1u);
  EXPECT_TRUE(fake_.socket_registered(s));
  const FaultCounts counts = os.counts();
  EXPECT_EQ(counts.hits_of(FaultSite::kPsnCallFails), 2u);
  EXPECT_EQ(counts.fired_of(FaultSite::kPsnCallFails), 1u);
  EXPECT_EQ(counts.fired_total, 1u);
}

TEST_F(FaultyOsTest, CallFailsWithoutRegistrationsHasNoRegsAndNullReceivedIsFine) {
  FaultyOs& os = faulty();
  os.arm_next(FaultSite::kPsnCallFails);
  std::array<OverlappedEntry, 2> entries{};
  const std::uint32_t code =
      os.process_socket_notifications(port_, 0, nullptr, 0, 2, entries.data(), nullptr);
  EXPECT_NE(code, kErrorSuccess);
  EXPECT_EQ(events(trace_), std::vector<std::string>{"fault psn.call_fails code=" +
                                                     std::string(os_error_name(code))});
}

TEST_F(FaultyOsTest, RemoveFailsLeavesTheRegistrationLiveAndQueuesNoRemove) {
  Ipv4Address address{};
  const Socket s = udp(&address);
  enable(s, 7);
  FaultyOs& os = faulty();
  os.arm_next(FaultSite::kPsnRemoveFails);
  SockNotifyRegistration remove{s, 7, 0, kSockNotifyOpRemove, 0, kUnwritten};
  EXPECT_EQ(os.process_socket_notifications(port_, 1, &remove, 0, 0, nullptr, nullptr),
            kErrorSuccess);
  EXPECT_EQ(remove.registration_result, kWsaEinval);
  EXPECT_TRUE(fake_.socket_registered(s));
  EXPECT_EQ(fake_.queued_packet_count(port_), 0u);
  EXPECT_EQ(events(trace_), std::vector<std::string>{"fault psn.remove_fails s=" +
                                                     std::to_string(s) + " code=WSAEINVAL"});
  // Not armed: the REMOVE applies and queues its packet (spec B5).
  remove.registration_result = kUnwritten;
  EXPECT_EQ(os.process_socket_notifications(port_, 1, &remove, 0, 0, nullptr, nullptr),
            kErrorSuccess);
  EXPECT_EQ(remove.registration_result, 0u);
  EXPECT_EQ(fake_.queued_packet_count(port_), 1u);
}

// FaultyOs(RecordingOs(FakeOs)): the stripped element never reaches the OS; results come back in
// the caller's order; the fault line precedes the inner call's psn.begin and psn lines.
TEST_F(FaultyOsTest, EnableFailsStripsOneElementAndKeepsTheOrder) {
  Ipv4Address address{};
  const Socket a = udp(&address);
  const Socket b = udp(&address);
  RecordingOs recording(fake_, trace_, context_);
  FaultyOs& os = faulty(FaultPlan::none(), 1, &recording);
  os.arm_next(FaultSite::kPsnEnableFails);  // the first ENABLE drawn: a's
  std::array<SockNotifyRegistration, 2> regs{{
      {a, 1, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel, kUnwritten},
      {b, 2, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel, kUnwritten},
  }};
  EXPECT_EQ(os.process_socket_notifications(port_, 2, regs.data(), 0, 0, nullptr, nullptr),
            kErrorSuccess);
  EXPECT_EQ(regs[0].registration_result, kWsaEnobufs);
  EXPECT_EQ(regs[1].registration_result, 0u);
  EXPECT_FALSE(fake_.socket_registered(a));
  EXPECT_TRUE(fake_.socket_registered(b));
  const std::string sa = std::to_string(a);
  const std::string sb = std::to_string(b);
  const std::string port = std::to_string(port_.value);
  EXPECT_EQ(
      events(trace_),
      (std::vector<std::string>{
          "fault psn.enable_fails s=" + sa + " op=ENABLE code=WSAENOBUFS",
          "psn.begin port=" + port + " regs=[s=" + sb + "/key=2/filter=0x1/op=ENABLE/trig=0x5]",
          "psn port=" + port + " regs=[s=" + sb +
              "/key=2/filter=0x1/op=ENABLE/trig=0x5/res=0] timeout=0 count=0 -> ERROR_SUCCESS",
      }));
  EXPECT_EQ(os.counts().hits_of(FaultSite::kPsnEnableFails), 2u);  // once per element
  EXPECT_EQ(os.counts().fired_of(FaultSite::kPsnEnableFails), 1u);
  faulty_.reset();  // before `recording`
}

TEST_F(FaultyOsTest, EnableFailsOnEveryElementPassesANullArray) {
  Ipv4Address address{};
  const Socket s = udp(&address);
  FaultyOs& os = faulty();
  os.arm_next(FaultSite::kPsnEnableFails);
  SockNotifyRegistration reg{
      s, 1, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel, kUnwritten};
  // Spec A4: the fake refuses count 0 with a non-null array (WSAEINVAL); FaultyOs passes null.
  EXPECT_EQ(os.process_socket_notifications(port_, 1, &reg, 0, 0, nullptr, nullptr), kErrorSuccess);
  EXPECT_EQ(reg.registration_result, kWsaEnobufs);
  EXPECT_FALSE(fake_.socket_registered(s));
}

TEST_F(FaultyOsTest, DisableFailsLeavesTheRegistrationEnabled) {
  Ipv4Address address{};
  const Socket receiver = udp(&address);
  Ipv4Address unused{};
  const Socket sender = udp(&unused);
  enable(receiver, 4, kPersistentLevel);
  FaultyOs& os = faulty();
  os.arm_next(FaultSite::kPsnEnableFails);
  SockNotifyRegistration disable{receiver, 4, 0, kSockNotifyOpDisable, 0, kUnwritten};
  EXPECT_EQ(os.process_socket_notifications(port_, 1, &disable, 0, 0, nullptr, nullptr),
            kErrorSuccess);
  EXPECT_EQ(disable.registration_result, kWsaEnobufs);
  EXPECT_EQ(events(trace_),
            std::vector<std::string>{"fault psn.enable_fails s=" + std::to_string(receiver) +
                                     " op=DISABLE code=WSAENOBUFS"});
  ASSERT_EQ(fake_.sendto(sender, "d", 1, 0, address), 1);
  EXPECT_EQ(fake_.queued_packet_count(port_), 1u);  // still enabled: IN reported
  // Not armed: DISABLE applies and the next datagram reports nothing (spec B4).
  std::array<OverlappedEntry, 2> entries{};
  std::uint32_t received = 0;
  EXPECT_EQ(os.process_socket_notifications(port_, 1, &disable, 0, 2, entries.data(), &received),
            kErrorSuccess);
  EXPECT_EQ(disable.registration_result, 0u);
  ASSERT_EQ(fake_.sendto(sender, "d", 1, 0, address), 1);
  EXPECT_EQ(fake_.queued_packet_count(port_), 0u);
}

TEST_F(FaultyOsTest, StrippedElementKeepsItsResultWhenTheInnerCallFailsAsAWhole) {
  Ipv4Address address{};
  const Socket s = udp(&address);
  FaultyOs& os = faulty();
  os.arm_next(FaultSite::kPsnRemoveFails);
  std::array<SockNotifyRegistration, 2> regs{{
      {s, 1, 0, kSockNotifyOpRemove, 0, kUnwritten},
      {s, 1, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel, kUnwritten},
  }};
  // A bad port: the inner call fails as a whole (ERROR_INVALID_HANDLE), so nothing is written.
  EXPECT_EQ(os.process_socket_notifications(Port{999}, 2, regs.data(), 0, 0, nullptr, nullptr),
            kErrorInvalidHandle);
  EXPECT_EQ(regs[0].registration_result, kUnwritten);
  EXPECT_EQ(regs[1].registration_result, kUnwritten);
  EXPECT_FALSE(fake_.socket_registered(s));
}

TEST_F(FaultyOsTest, WaitShortTimesOutAtOnce) {
  FaultyOs& os = faulty();
  std::array<OverlappedEntry, 4> entries{};
  std::uint32_t received = 99;
  const std::uint64_t start_ns = fake_.now_ns();
  os.arm_next(FaultSite::kPsnWaitShort);
  EXPECT_EQ(os.process_socket_notifications(port_, 0, nullptr, 1000, 4, entries.data(), &received),
            kWaitTimeout);
  EXPECT_EQ(received, 0u);
  EXPECT_EQ(fake_.now_ns(), start_ns);  // virtual time did not advance
  EXPECT_EQ(events(trace_), std::vector<std::string>{"fault psn.wait_short timeout=1000"});
  // Not armed: the same call waits its full timeout.
  EXPECT_EQ(os.process_socket_notifications(port_, 0, nullptr, 1000, 4, entries.data(), &received),
            kWaitTimeout);
  EXPECT_EQ(fake_.now_ns() - start_ns, 1'000'000'000u);
  // Not drawn for a zero timeout nor for a call that dequeues nothing.
  os.arm_next(FaultSite::kPsnWaitShort);
  EXPECT_EQ(os.process_socket_notifications(port_, 0, nullptr, 0, 4, entries.data(), &received),
            kWaitTimeout);
  EXPECT_EQ(os.counts().hits_of(FaultSite::kPsnWaitShort), 2u);
}

TEST_F(FaultyOsTest, DequeueFewerLeavesTheRestQueued) {
  FaultyOs& os = faulty();
  for (std::uintptr_t key = 1; key <= 4; ++key) {
    ASSERT_TRUE(fake_.post_queued_completion_status(port_, 0, key, 0));
  }
  os.arm_next(FaultSite::kPsnDequeueFewer);
  std::array<OverlappedEntry, 4> entries{};
  std::uint32_t received = 0;
  EXPECT_EQ(os.process_socket_notifications(port_, 0, nullptr, 0, 4, entries.data(), &received),
            kErrorSuccess);
  EXPECT_GE(received, 1u);
  EXPECT_LE(received, 3u);
  EXPECT_EQ(fake_.queued_packet_count(port_), 4u - received);
  EXPECT_EQ(entries[0].completion_key, 1u);  // FIFO (spec F1)
  EXPECT_EQ(events(trace_), std::vector<std::string>{"fault psn.dequeue_fewer count=4 to=" +
                                                     std::to_string(received)});
  // Not drawn when only one entry was asked for.
  os.arm_next(FaultSite::kPsnDequeueFewer);
  EXPECT_EQ(os.process_socket_notifications(port_, 0, nullptr, 0, 1, entries.data(), &received),
            kErrorSuccess);
  EXPECT_EQ(received, 1u);
  EXPECT_EQ(os.counts().hits_of(FaultSite::kPsnDequeueFewer), 1u);
}

// ==== Port, post and thread sites ================================================================

TEST_F(FaultyOsTest, PostFailsQueuesNothingAndHoldsItsLastErrorUntilTheNextCall) {
  FaultyOs& os = faulty();
  EXPECT_FALSE(os.close_port(Port{999}));  // a real failure: the fake's last error
  EXPECT_EQ(os.last_error(), kErrorInvalidHandle);
  os.arm_next(FaultSite::kPostFails);
  EXPECT_FALSE(os.post_queued_completion_status(port_, 1, 2, 0));
  EXPECT_EQ(fake_.queued_packet_count(port_), 0u);
  EXPECT_EQ(os.last_error(), kErrorNotEnoughMemory);
  EXPECT_EQ(os.last_error(), kErrorNotEnoughMemory);   // reading is not a clearing call
  EXPECT_EQ(fake_.last_error(), kErrorInvalidHandle);  // the inner Os was never told
  // Another FaultyOs on this thread does not see this one's injected error.
  FaultyOs other(fake_, FaultPlan::none(), 1, nullptr, nullptr);
  EXPECT_EQ(other.last_error(), kErrorInvalidHandle);
  // The next call of this thread through `os` ends it.
  (void)os.now_ns();
  EXPECT_EQ(os.last_error(), kErrorInvalidHandle);
  EXPECT_TRUE(os.post_queued_completion_status(port_, 1, 2, 0));
  EXPECT_EQ(fake_.queued_packet_count(port_), 1u);
  EXPECT_EQ(events(trace_),
            std::vector<std::string>{"fault post.fails code=ERROR_NOT_ENOUGH_MEMORY"});
}

TEST_F(FaultyOsTest, PortCreateFails) {
  FaultyOs& os = faulty();
  const std::uint32_t ports_before = fake_.stats().ports_open;
  os.arm_next(FaultSite::kPortCreateFails);
  EXPECT_EQ(os.create_io_completion_port(0), kInvalidPort);
  EXPECT_EQ(os.last_error(), kErrorNotEnoughMemory);
  EXPECT_EQ(fake_.stats().ports_open, ports_before);
  EXPECT_EQ(events(trace_),
            std::vector<std::string>{"fault port.create_fails code=ERROR_NOT_ENOUGH_MEMORY"});
  const Port port = os.create_io_completion_port(0);
  EXPECT_FALSE(port == kInvalidPort);
  EXPECT_TRUE(os.close_port(port));
}

TEST_F(FaultyOsTest, ThreadStartFailsWithoutCallingTheInnerOs) {
  CountingOs counting(fake_);
  FaultyOs& os = faulty(FaultPlan::none(), 1, &counting);
  os.arm_next(FaultSite::kThreadStartFails);
  bool ran = false;
  Result<std::unique_ptr<Thread>> started = os.thread_start("worker-1", [&ran] { ran = true; });
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().code(), StatusCode::kOsError);
  EXPECT_EQ(started.status().message(), "injected: thread_start failed");
  EXPECT_EQ(counting.thread_starts, 0);
  EXPECT_FALSE(ran);
  EXPECT_EQ(events(trace_), std::vector<std::string>{"fault thread.start_fails name=worker-1"});
  EXPECT_FALSE(os.thread_start("worker-2", [] {}).ok());  // the inline runtime's own refusal
  EXPECT_EQ(counting.thread_starts, 1);
  faulty_.reset();
}

// ==== Socket sites ===============================================================================

TEST_F(FaultyOsTest, RecvFaultsLeaveTheDataInPlace) {
  FaultyOs& os = faulty();
  Socket client = kInvalidSocket;
  Socket server = kInvalidSocket;
  pair(os, &client, &server);
  ASSERT_EQ(fake_.send(client, "hello", 5, 0), 5);
  os.arm_next(FaultSite::kRecvWouldblock);
  EXPECT_EQ(recv_text(os, server), "<WSAEWOULDBLOCK>");
  os.arm_next(FaultSite::kRecvConnreset);
  EXPECT_EQ(recv_text(os, server), "<WSAECONNRESET>");
  EXPECT_EQ(recv_text(os, server), "hello");
  const std::string ss = std::to_string(server);
  EXPECT_EQ(events(trace_), (std::vector<std::string>{"fault recv.wouldblock s=" + ss,
                                                      "fault recv.connreset s=" + ss}));
}

TEST_F(FaultyOsTest, SendFaultsSendNothing) {
  FaultyOs& os = faulty();
  Socket client = kInvalidSocket;
  Socket server = kInvalidSocket;
  pair(os, &client, &server);
  const std::array<std::pair<FaultSite, std::uint32_t>, 3> faults{{
      {FaultSite::kSendWouldblock, kWsaEwouldblock},
      {FaultSite::kSendConnreset, kWsaEconnreset},
      {FaultSite::kSendNobufs, kWsaEnobufs},
  }};
  std::vector<std::string> expected;
  for (const auto& [site, code] : faults) {
    os.arm_next(site);
    EXPECT_EQ(os.send(client, "x", 1, 0), kSocketError) << fault_site_name(site);
    EXPECT_EQ(os.last_error(), code) << fault_site_name(site);
    EXPECT_EQ(recv_text(fake_, server), "<WSAEWOULDBLOCK>") << fault_site_name(site);
    expected.push_back(std::string("fault ") + fault_site_name(site) +
                       " s=" + std::to_string(client));
  }
  EXPECT_EQ(os.send(client, "ok", 2, 0), 2);
  EXPECT_EQ(recv_text(fake_, server), "ok");
  EXPECT_EQ(events(trace_), expected);
}

TEST_F(FaultyOsTest, AcceptFaultsLeaveTheConnectionPending) {
  FaultyOs& os = faulty();
  Ipv4Address address{};
  const Socket listening = listener(&address);
  const Socket client = tcp();
  EXPECT_EQ(fake_.connect(client, address), kSocketError);
  os.arm_next(FaultSite::kAcceptEmfile);
  EXPECT_EQ(os.accept(listening, nullptr), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEmfile);
  os.arm_next(FaultSite::kAcceptConnreset);
  EXPECT_EQ(os.accept(listening, nullptr), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEconnreset);
  const Socket server = os.accept(listening, nullptr);
  ASSERT_NE(server, kInvalidSocket);
  EXPECT_EQ(os.accept(listening, nullptr), kInvalidSocket);  // the fake's own: none left
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  const std::string sl = std::to_string(listening);
  EXPECT_EQ(events(trace_), (std::vector<std::string>{"fault accept.emfile s=" + sl,
                                                      "fault accept.connreset s=" + sl}));
}

TEST_F(FaultyOsTest, CloseAbortiveResetsThePeer) {
  CountingOs counting(fake_);
  FaultyOs& os = faulty(FaultPlan::none(), 1, &counting);
  Socket client = kInvalidSocket;
  Socket server = kInvalidSocket;
  pair(os, &client, &server);
  enable(client, 11, kPersistentLevel);
  os.arm_next(FaultSite::kCloseAbortive);
  EXPECT_EQ(os.closesocket(server), 0);
  EXPECT_EQ(counting.lingers, 1);
  EXPECT_EQ(events(trace_),
            std::vector<std::string>{"fault close.abortive s=" + std::to_string(server)});
  std::array<OverlappedEntry, 2> entries{};
  std::uint32_t received = 0;
  ASSERT_EQ(fake_.process_socket_notifications(port_, 0, nullptr, 0, 2, entries.data(), &received),
            kErrorSuccess);
  ASSERT_EQ(received, 1u);
  EXPECT_NE(entries[0].bytes_transferred & kSockNotifyEventErr, 0u);  // spec D2
  EXPECT_EQ(recv_text(fake_, client), "<WSAECONNRESET>");

  // Not armed: a graceful close (FIN), the peer reads end of stream.
  Socket client2 = kInvalidSocket;
  Socket server2 = kInvalidSocket;
  pair(os, &client2, &server2);
  EXPECT_EQ(os.closesocket(server2), 0);
  EXPECT_EQ(counting.lingers, 1);
  EXPECT_EQ(recv_text(fake_, client2), "");
  // A socket that was never connected through `os` is not drawn, even armed.
  Ipv4Address address{};
  const Socket datagram = udp(&address);
  os.arm_next(FaultSite::kCloseAbortive);
  EXPECT_EQ(os.closesocket(datagram), 0);
  EXPECT_EQ(counting.lingers, 1);
  EXPECT_EQ(os.counts().hits_of(FaultSite::kCloseAbortive), 2u);
  EXPECT_EQ(os.counts().fired_of(FaultSite::kCloseAbortive), 1u);
  faulty_.reset();
}

// ==== Controls, rates and replay =================================================================

TEST_F(FaultyOsTest, DisabledNothingFiresButArmedStillDoes) {
  FaultPlan every = FaultPlan::none();
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    every = every.with(static_cast<FaultSite>(i), 100);
  }
  FaultyOs& os = faulty(every);
  EXPECT_TRUE(os.enabled());
  os.set_enabled(false);
  EXPECT_FALSE(os.enabled());
  Socket client = kInvalidSocket;
  Socket server = kInvalidSocket;
  pair(os, &client, &server);
  EXPECT_EQ(os.send(client, "abc", 3, 0), 3);
  EXPECT_EQ(recv_text(os, server), "abc");
  EXPECT_TRUE(os.post_queued_completion_status(port_, 0, 1, 0));
  std::array<OverlappedEntry, 4> entries{};
  std::uint32_t received = 0;
  EXPECT_EQ(os.process_socket_notifications(port_, 0, nullptr, 10, 4, entries.data(), &received),
            kErrorSuccess);
  EXPECT_EQ(received, 1u);
  const Port port = os.create_io_completion_port(0);
  EXPECT_FALSE(port == kInvalidPort);
  EXPECT_TRUE(os.close_port(port));
  EXPECT_EQ(os.closesocket(server), 0);
  FaultCounts counts = os.counts();
  EXPECT_EQ(counts.fired_total, 0u);
  EXPECT_GT(counts.hits_total, 10u);
  EXPECT_TRUE(events(trace_).empty());
  os.arm_next(FaultSite::kPostFails);
  EXPECT_FALSE(os.post_queued_completion_status(port_, 0, 1, 0));
  EXPECT_TRUE(os.post_queued_completion_status(port_, 0, 1, 0));
  os.set_enabled(true);
  EXPECT_FALSE(os.post_queued_completion_status(port_, 0, 1, 0));
  counts = os.counts();
  EXPECT_EQ(counts.fired_of(FaultSite::kPostFails), 2u);
  EXPECT_EQ(counts.fired_total, 2u);
}

TEST_F(FaultyOsTest, RateHundredFiresEveryHitAndAnInactiveSiteNever) {
  FaultyOs& always = faulty(FaultPlan::parse("post.fails@100").value());
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(always.post_queued_completion_status(port_, 0, 1, 0));
  }
  EXPECT_EQ(always.counts().hits_of(FaultSite::kPostFails), 50u);
  EXPECT_EQ(always.counts().fired_of(FaultSite::kPostFails), 50u);
  // psn.call_fails is inactive in this plan: drawn, never fired.
  std::array<OverlappedEntry, 1> entries{};
  std::uint32_t received = 0;
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(
        always.process_socket_notifications(port_, 0, nullptr, 0, 1, entries.data(), &received),
        kWaitTimeout);
  }
  EXPECT_EQ(always.counts().hits_of(FaultSite::kPsnCallFails), 50u);
  EXPECT_EQ(always.counts().fired_of(FaultSite::kPsnCallFails), 0u);

  FaultyOs& never = faulty(FaultPlan::none());
  for (int i = 0; i < 50; ++i) {
    EXPECT_TRUE(never.post_queued_completion_status(port_, 0, 1, 0));
  }
  EXPECT_EQ(never.counts().hits_of(FaultSite::kPostFails), 50u);
  EXPECT_EQ(never.counts().fired_total, 0u);
  EXPECT_EQ(fake_.queued_packet_count(port_), 50u);

  // 10%: about 100 of 1000 (a fixed seed, so a fixed count; the bound checks the rate is used).
  FaultyOs& sometimes = faulty(FaultPlan::parse("post.fails@10").value(), 5);
  Port drain = fake_.create_io_completion_port(0);
  for (int i = 0; i < 1000; ++i) {
    (void)sometimes.post_queued_completion_status(drain, 0, 1, 0);
  }
  const std::uint64_t fired = sometimes.counts().fired_of(FaultSite::kPostFails);
  EXPECT_GT(fired, 50u);
  EXPECT_LT(fired, 150u);
  EXPECT_EQ(fake_.queued_packet_count(drain), 1000u - fired);
  EXPECT_TRUE(fake_.close_port(drain));
}

constexpr const char* kScriptPlan =
    "psn.call_fails@25,psn.dequeue_fewer@50,psn.wait_short@50,post.fails@25,psn.enable_fails@25";

// One scripted sequence of calls; returns what each call returned. `fired_out`, when not null,
// gets the plan of the hits that fired.
std::vector<std::uint32_t> script(std::uint64_t seed, std::string* trace_out,
                                  const FaultPlan& plan = FaultPlan::parse(kScriptPlan).value(),
                                  FaultPlan* fired_out = nullptr) {
  FakeOs fake;
  Trace trace;
  ZeroContext context;
  FaultyOs os(fake, plan, seed, &trace, &context);
  const Port port = os.create_io_completion_port(0);
  Ipv4Address address{};
  const Socket s = fake.socket(kAfInet, kSockDgram, kIpprotoUdp);
  EXPECT_EQ(fake.bind(s, Ipv4Address{kLoopbackHost, 0}), 0);
  EXPECT_EQ(fake.getsockname(s, &address), 0);
  std::vector<std::uint32_t> results;
  std::array<OverlappedEntry, 8> entries{};
  for (int round = 0; round < 100; ++round) {
    for (std::uintptr_t key = 0; key < 3; ++key) {
      results.push_back(os.post_queued_completion_status(port, 0, key, 0) ? 1 : 0);
    }
    SockNotifyRegistration reg{
        s, 9, kSockNotifyRegisterEventOut, kSockNotifyOpEnable, kOneshotLevel, kUnwritten};
    std::uint32_t received = 0;
    results.push_back(
        os.process_socket_notifications(port, 1, &reg, 5, 8, entries.data(), &received));
    results.push_back(received);
    results.push_back(reg.registration_result);
  }
  // Drain what is left, then close.
  std::uint32_t received = 0;
  os.set_enabled(false);
  while (os.process_socket_notifications(port, 0, nullptr, 0, 8, entries.data(), &received) ==
         kErrorSuccess) {
  }
  EXPECT_EQ(fake.closesocket(s), 0);
  EXPECT_TRUE(os.close_port(port));
  *trace_out = trace.text();
  EXPECT_TRUE(os.fired_hits_complete());
  if (fired_out != nullptr) {
    *fired_out = FaultPlan::of_hits(os.fired_hits());
  }
  return results;
}

// The lines of `trace` that start with `prefix` (after the seq/time/thread columns).
std::vector<std::string> lines_with(const std::string& trace, const std::string& prefix) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < trace.size()) {
    const std::size_t end = trace.find('\n', start);
    const std::string line = trace.substr(start, end - start);
    if (line.find(" " + prefix) != std::string::npos) {
      lines.push_back(line);
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return lines;
}

// The plan of exactly the hits that fired replays the run byte for byte; leaving one post.fails
// hit out removes that one fault and changes no other post or call-failure decision.
TEST(FaultyOsReplay, FiredHitsReplayTheRunAndOneHitLessChangesOnlyIt) {
  std::string rated_trace;
  FaultPlan fired;
  const std::vector<std::uint32_t> rated =
      script(42, &rated_trace, FaultPlan::parse(kScriptPlan).value(), &fired);
  ASSERT_GT(fired.hits().size(), 20u);
  EXPECT_EQ(FaultPlan::parse(fired.to_string()).value(), fired);
  std::string pinned_trace;
  FaultPlan fired_again;
  EXPECT_EQ(script(42, &pinned_trace, fired, &fired_again), rated);
  EXPECT_EQ(pinned_trace, rated_trace);
  EXPECT_EQ(fired_again, fired);

  // Leave out the first post.fails hit.
  std::vector<FaultHit> fewer = fired.hits();
  const auto first_post = std::find_if(fewer.begin(), fewer.end(), [](const FaultHit& h) {
    return h.site == FaultSite::kPostFails;
  });
  ASSERT_NE(first_post, fewer.end());
  fewer.erase(first_post);
  std::string fewer_trace;
  FaultPlan fired_fewer;
  (void)script(42, &fewer_trace, FaultPlan::of_hits(fewer), &fired_fewer);
  EXPECT_EQ(fired_fewer.hits().size(), fired.hits().size() - 1);
  const std::vector<std::string> posts = lines_with(rated_trace, "fault post.fails");
  const std::vector<std::string> posts_fewer = lines_with(fewer_trace, "fault post.fails");
  ASSERT_EQ(posts_fewer.size() + 1, posts.size());
  const std::vector<std::string> calls = lines_with(rated_trace, "fault psn.call_fails");
  const std::vector<std::string> calls_fewer = lines_with(fewer_trace, "fault psn.call_fails");
  ASSERT_EQ(calls.size(), calls_fewer.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    // The same code at the same hit (the seq and time columns may differ: one line fewer).
    EXPECT_EQ(calls[i].substr(calls[i].find(" fault ")),
              calls_fewer[i].substr(calls_fewer[i].find(" fault ")));
  }
}

TEST(FaultyOsReplay, SameSeedSameDecisionsOtherSeedOthers) {
  std::string first_trace;
  std::string second_trace;
  std::string other_trace;
  const std::vector<std::uint32_t> first = script(42, &first_trace);
  const std::vector<std::uint32_t> second = script(42, &second_trace);
  const std::vector<std::uint32_t> other = script(43, &other_trace);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first_trace, second_trace);
  EXPECT_NE(first_trace.find("fault psn.dequeue_fewer"), std::string::npos);
  EXPECT_NE(first_trace.find("fault post.fails"), std::string::npos);
  EXPECT_NE(first, other);
  EXPECT_NE(first_trace, other_trace);
}

// ---- Outages (`site@rate!k`, `site@rate~tms`) -----------------------------------------------

TEST(FaultPlan, OutagesRoundTripAndBadOnesNameTheToken) {
  const char* text = "psn.call_fails@2!8,post.fails@10~500ms,accept.emfile@25";
  const Result<FaultPlan> plan = FaultPlan::parse(text);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan.value().to_string(), text);
  EXPECT_EQ(plan.value().outage_hits(FaultSite::kPsnCallFails), 8u);
  EXPECT_EQ(plan.value().outage_ms(FaultSite::kPostFails), 500u);
  EXPECT_FALSE(plan.value().has_outage(FaultSite::kAcceptEmfile));
  EXPECT_TRUE(plan.value().has_time_outage());
  // An outage without a rate takes the default rate.
  EXPECT_EQ(FaultPlan::parse("post.fails!3").value().to_string(), "post.fails@25!3");
  // without() and with() drop the outage; restricted_to keeps it.
  EXPECT_FALSE(plan.value().without(FaultSite::kPsnCallFails).has_outage(FaultSite::kPsnCallFails));
  EXPECT_EQ(plan.value().restricted_to({FaultSite::kPsnCallFails}).to_string(),
            "psn.call_fails@2!8");
  EXPECT_EQ(plan.value().without_outage(FaultSite::kPostFails).to_string(),
            "psn.call_fails@2!8,post.fails@10,accept.emfile@25");
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"post.fails@10!1", "!2 to !1000"},
           {"post.fails@10!1001", "!2 to !1000"},
           {"post.fails@10~0ms", "~1ms to ~60000ms"},
           {"post.fails@10~60001ms", "~1ms to ~60000ms"},
           {"post.fails@10~500", "~<milliseconds>ms"},
           {"post.fails@x!3", "whole percent"},
           {"post.fails#3!2", "whole number"},
       }) {
    const Result<FaultPlan> parsed = FaultPlan::parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find(why), std::string::npos)
        << bad << ": " << parsed.status().message();
  }
}

// draw() gives outages to rated sites only, of both kinds and every length, and the rates are
// drawn as before outages existed (the outage numbers come after them in the stream).
TEST(FaultPlan, DrawGivesRatedSitesOutagesOfEveryKind) {
  std::set<std::uint32_t> hits_seen;
  std::set<std::uint32_t> ms_seen;
  std::uint32_t sites_with_outage = 0;
  std::uint32_t sites_rated = 0;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    const FaultPlan plan = FaultPlan::draw(seed);
    EXPECT_EQ(FaultPlan::parse(plan.to_string()).value(), plan) << plan.to_string();
    for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
      const auto site = static_cast<FaultSite>(i);
      sites_rated += plan.rate_percent(site) != 0 ? 1 : 0;
      if (!plan.has_outage(site)) {
        continue;
      }
      ++sites_with_outage;
      EXPECT_NE(plan.rate_percent(site), 0u) << plan.to_string();
      if (plan.outage_hits(site) != 0) {
        hits_seen.insert(plan.outage_hits(site));
      }
      if (plan.outage_ms(site) != 0) {
        ms_seen.insert(plan.outage_ms(site));
      }
      EXPECT_TRUE(plan.outage_ms(site) == 0 || fault_site_outage_in_time(site)) << plan.to_string();
    }
  }
  EXPECT_EQ(hits_seen, (std::set<std::uint32_t>{3, 8, 16}));
  EXPECT_EQ(ms_seen, (std::set<std::uint32_t>{50, 500, 5000}));
  // About a quarter of the rated sites.
  EXPECT_GT(sites_with_outage * 5, sites_rated);
  EXPECT_LT(sites_with_outage * 3, sites_rated);
}

// A clock the test moves.
class SetClock final : public TraceContext {
 public:
  std::uint64_t trace_time_ns() const override { return now_ns; }
  std::uint32_t trace_thread() const override { return 0; }
  std::uint64_t now_ns = 0;
};

// An outage of k hits: the firing hit and the k-1 after it fire, whatever the rate says.
TEST_F(FaultyOsTest, AnOutageOfHitsFiresItsHits) {
  // A 1 % site: its first firing starts the outage; the next two hits fire with it.
  FaultyOs& os = faulty(FaultPlan::parse("post.fails@1!3").value(), 3);
  std::vector<bool> posted;
  for (int i = 0; i < 2000; ++i) {
    posted.push_back(os.post_queued_completion_status(port_, 0, 1, 0));
  }
  const auto first = std::find(posted.begin(), posted.end(), false);
  ASSERT_NE(first, posted.end()) << "no firing in 2000 hits at 1 %";
  ASSERT_LE(first + 3, posted.end());
  EXPECT_FALSE(*(first + 1));
  EXPECT_FALSE(*(first + 2));
  const FaultCounts counts = os.counts();
  const auto i = static_cast<std::size_t>(FaultSite::kPostFails);
  EXPECT_GE(counts.outages[i], 1u);
  EXPECT_EQ(counts.outage_fired[i], 2 * counts.outages[i]);
  EXPECT_EQ(counts.fired[i], 3 * counts.outages[i]);
}

// Disabling firing (the liveness phase) ends an outage, and counts it as cut.
TEST_F(FaultyOsTest, DisablingEndsAnOutage) {
  FaultyOs& os = faulty(FaultPlan::parse("post.fails@100!3").value());
  EXPECT_FALSE(os.post_queued_completion_status(port_, 0, 1, 0));
  os.set_enabled(false);
  EXPECT_TRUE(os.post_queued_completion_status(port_, 0, 2, 0));
  const FaultCounts counts = os.counts();
  EXPECT_EQ(counts.outages_cut[static_cast<std::size_t>(FaultSite::kPostFails)], 1u);
  EXPECT_EQ(counts.fired_of(FaultSite::kPostFails), 1u);
  EXPECT_EQ(FaultPlan::of_hits(os.fired_hits()).to_string(), "post.fails#1");
}

// An outage of t ms: every hit fires until t ms of the context's time have passed.
TEST_F(FaultyOsTest, AnOutageOfTimeFiresUntilItsTimeHasPassed) {
  SetClock clock;
  FaultyOs os(fake_, FaultPlan::parse("post.fails@100~5ms").value(), 1, &trace_, &clock);
  EXPECT_FALSE(os.post_queued_completion_status(port_, 0, 1, 0));  // starts at 0 ms
  clock.now_ns = 4'999'999;
  EXPECT_FALSE(os.post_queued_completion_status(port_, 0, 2, 0));
  EXPECT_FALSE(os.post_queued_completion_status(port_, 0, 3, 0));
  clock.now_ns = 5'000'000;
  os.set_enabled(false);  // the rate (100 %) would start another outage
  EXPECT_TRUE(os.post_queued_completion_status(port_, 0, 4, 0));
  EXPECT_EQ(os.counts().outages[static_cast<std::size_t>(FaultSite::kPostFails)], 1u);
  EXPECT_EQ(fake_.queued_packet_count(port_), 1u);
}

// A run with outages replays exactly from the hits that fired, as a run without them does.
TEST(FaultyOsReplay, ARunWithOutagesReplaysFromItsFiredHits) {
  const FaultPlan plan =
      FaultPlan::parse("psn.call_fails@10!8,post.fails@10!3,psn.enable_fails@25").value();
  std::string rated_trace;
  FaultPlan fired;
  const std::vector<std::uint32_t> rated = script(7, &rated_trace, plan, &fired);
  ASSERT_GT(fired.hits().size(), 20u);
  std::string pinned_trace;
  EXPECT_EQ(script(7, &pinned_trace, fired), rated);
  EXPECT_EQ(pinned_trace, rated_trace);
  // Eight whole-call failures in a row: the engine's default retry budget, spent.
  const std::vector<std::string> calls = lines_with(rated_trace, "fault psn.call_fails");
  EXPECT_GE(calls.size(), 8u);
}

}  // namespace
}  // namespace readyport
