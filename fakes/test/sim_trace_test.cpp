// Trace (format, hash, bounded memory) and RecordingOs (one exact line per call) on FakeOs.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/inline_runtime.hpp"
#include "readyport/fake/recording_os.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/fake/trace.hpp"
#include "readyport/fake/trace_parse.hpp"

namespace readyport {
namespace {

TEST(Trace, Fnv1a64KnownValues) {
  // Reference values of FNV-1a 64 (the FNV authors' test vectors).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
  EXPECT_EQ(hash_hex(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
  EXPECT_EQ(hash_hex(1), "0000000000000001");
}

TEST(Trace, LinesHaveSequenceTimeThreadAndEvent) {
  Trace trace;
  trace.record(0, 0, "first");
  trace.record(1500, 3, "second x=1 -> 2");
  EXPECT_EQ(trace.text(), "0 0 T0 first\n1 1500 T3 second x=1 -> 2\n");
  EXPECT_EQ(trace.line_count(), 2u);
  // A line recorded as text is hashed as its bytes, with its time and thread (not its seq).
  const std::uint64_t first = trace_text_hash("first", 0, 0, kFnv1a64OffsetBasis);
  EXPECT_EQ(trace.hash(), trace_text_hash("second x=1 -> 2", 1500, 3, first));
  EXPECT_EQ(trace.hash_hex(), hash_hex(trace.hash()));
  trace.clear();
  EXPECT_EQ(trace.line_count(), 0u);
  EXPECT_EQ(trace.hash(), kFnv1a64OffsetBasis);
  EXPECT_EQ(trace.text(), "");
}

TEST(Trace, BoundedTraceKeepsTheHashAndTheLastLines) {
  TraceOptions bounded;
  bounded.keep_full = false;
  bounded.tail_lines_max = 3;
  Trace small(bounded);
  Trace full;
  for (int i = 0; i < 100; ++i) {
    small.record(static_cast<std::uint64_t>(i), 1, "event " + std::to_string(i));
    full.record(static_cast<std::uint64_t>(i), 1, "event " + std::to_string(i));
  }
  EXPECT_FALSE(small.keeps_full());
  EXPECT_EQ(small.hash(), full.hash());
  EXPECT_EQ(small.line_count(), 100u);
  EXPECT_EQ(small.tail(), (std::vector<std::string>{"97 97 T1 event 97\n", "98 98 T1 event 98\n",
                                                    "99 99 T1 event 99\n"}));
}

TEST(Trace, RecordIsSafeFromSeveralThreads) {
  Trace trace;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&trace, t] {
      for (int i = 0; i < 200; ++i) {
        trace.record(0, static_cast<std::uint32_t>(t), "e");
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(trace.line_count(), 800u);
  // The hash is the lines' in the order the text shows them: no line lost or torn.
  std::uint64_t hash = kFnv1a64OffsetBasis;
  TraceEvent line;
  const std::string text = trace.text();
  std::size_t at = 0;
  for (std::uint64_t seq = 0; at < text.size(); ++seq) {
    const std::size_t end = text.find('\n', at);
    const std::string one = text.substr(at, end - at);  // outlives `line`'s views
    ASSERT_TRUE(parse_trace_line(one, &line).ok());
    EXPECT_EQ(line.seq, seq);
    hash = trace_text_hash(line.name, line.time_ns, line.thread, hash);
    at = end + 1;
  }
  EXPECT_EQ(trace.hash(), hash);
}

// An event recorded as values: its text is rendered as a recorder would have written it, and its
// hash covers the values (their kinds included), not that text.
TEST(Trace, EventsRenderTheirTextAndHashTheirValues) {
  const SockNotifyRegistration regs[2] = {{256, 7, 0x3, kSockNotifyOpEnable, 0x5, 0},
                                          {260, 9, 0x1, kSockNotifyOpRemove, 0x1, 10022}};
  const OverlappedEntry entries[1] = {{7, 0, 0, 0x81}};
  const std::uint64_t threads[2] = {1, 4};
  TraceEvent psn("psn");
  psn.num("port", 2).registrations(regs, 2, true).num_signed("delta", -3).hex("mask", 0x1f);
  psn.arrow_error(0).num("n", 1).completions(entries, 1);
  TraceEvent pick("sched.pick");
  pick.word_thread(3).list("of", TraceValueKind::kThread, threads, 2).text("at", "lock");
  TraceEvent add("wl.add");
  add.id("id", 3, 9).address("addr", Ipv4Address{kLoopbackHost, 49152}).arrow_text("ok");
  Trace trace;
  trace.record(10, 1, psn);
  trace.record(20, 2, pick);
  trace.record(30, 3, add);
  const std::string expected =
      "0 10 T1 psn port=2 regs=[s=256/key=7/filter=0x3/op=ENABLE/trig=0x5/res=0,"
      "s=260/key=9/filter=0x1/op=REMOVE/trig=0x1/res=WSAEINVAL] delta=-3 mask=0x1f -> "
      "ERROR_SUCCESS n=1 entries=[key=7/mask=0x81]\n"
      "1 20 T2 sched.pick T3 of=[T1,T4] at=lock\n"
      "2 30 T3 wl.add id=3/9 addr=127.0.0.1:49152 -> ok\n";
  EXPECT_EQ(trace.text(), expected);
  EXPECT_EQ(trace.tail(),
            (std::vector<std::string>{expected.substr(0, expected.find('\n') + 1),
                                      "1 20 T2 sched.pick T3 of=[T1,T4] at=lock\n",
                                      "2 30 T3 wl.add id=3/9 addr=127.0.0.1:49152 -> ok\n"}));
  EXPECT_EQ(
      trace.hash(),
      trace_event_hash(add, trace_event_hash(pick, trace_event_hash(psn, kFnv1a64OffsetBasis))));
  // The parser reads the text back as the same values (as text), and renders it the same.
  const std::string first_line = expected.substr(0, expected.find('\n') + 1);  // outlives parsed
  TraceEvent parsed;
  ASSERT_TRUE(parse_trace_line(first_line, &parsed).ok());
  std::string rendered;
  trace_event_render(parsed, &rendered);
  EXPECT_EQ(rendered, first_line);
  ASSERT_EQ(parsed.regs.size(), 2u);
  EXPECT_FALSE(parsed.regs[1].applied);
  // One value changed: another hash. The same text from a number or from a text: another hash too
  // (a value's kind is part of the encoding; a recorder always writes a field the same way).
  TraceEvent changed("wl.add");
  changed.id("id", 3, 8).address("addr", Ipv4Address{kLoopbackHost, 49152}).arrow_text("ok");
  EXPECT_NE(trace_event_hash(changed, 1), trace_event_hash(add, 1));
  TraceEvent as_number("x");
  as_number.num("n", 5);
  TraceEvent as_text("x");
  as_text.text("n", "5");
  EXPECT_NE(trace_event_hash(as_number, 1), trace_event_hash(as_text, 1));
  // Time and thread are part of it; the seq is not (it is the event's place in the trace).
  const std::uint64_t before = trace_event_hash(add, 1);
  add.seq = 99;
  EXPECT_EQ(trace_event_hash(add, 1), before);
  add.thread += 1;
  EXPECT_NE(trace_event_hash(add, 1), before);
  add.thread -= 1;
  add.time_ns += 1;
  EXPECT_NE(trace_event_hash(add, 1), before);
}

TEST(Trace, CountingContextNumbersThreadsInFirstUseOrder) {
  CountingTraceContext context;
  EXPECT_EQ(context.trace_thread(), 1u);
  EXPECT_EQ(context.trace_thread(), 1u);
  std::uint32_t other = 0;
  std::thread([&] { other = context.trace_thread(); }).join();
  EXPECT_EQ(other, 2u);
  EXPECT_EQ(context.trace_time_ns(), 0u);
}

// Every line RecordingOs writes for a short single-threaded session, exactly.
TEST(RecordingOs, WritesOneExactLinePerCall) {
  InlineRuntime runtime;
  FakeOs fake(FakeOptions{}, runtime);
  Trace trace;
  RuntimeTraceContext context(runtime);
  RecordingOs os(fake, trace, context);

  const Port port = os.create_io_completion_port(0);
  const Socket s = os.socket(kAfInet, kSockDgram, kIpprotoUdp);
  Ipv4Address address{kLoopbackHost, 0};
  ASSERT_EQ(os.bind(s, address), 0);
  ASSERT_EQ(os.getsockname(s, &address), 0);
  ASSERT_EQ(os.set_nonblocking(s, true), 0);
  SockNotifyRegistration registration{s,
                                      7,
                                      kSockNotifyRegisterEventOut,
                                      kSockNotifyOpEnable,
                                      kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
                                      0};
  OverlappedEntry entries[4];
  std::uint32_t received = 0;
  ASSERT_EQ(os.process_socket_notifications(port, 1, &registration, 10, 4, entries, &received),
            kErrorSuccess);
  ASSERT_TRUE(os.post_queued_completion_status(port, 5, 99, 0));
  ASSERT_TRUE(os.get_queued_completion_status_ex(port, entries, 4, &received, 0, false));
  EXPECT_FALSE(os.get_queued_completion_status_ex(port, entries, 4, &received, 20, false));
  EXPECT_EQ(os.last_error(), kWaitTimeout);
  char byte = 0;
  EXPECT_EQ(os.recvfrom(s, &byte, 1, 0, nullptr), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  {
    std::unique_ptr<Mutex> mutex = os.mutex_create();
    mutex->lock();
    EXPECT_FALSE(mutex->try_lock());
    mutex->unlock();
  }
  EXPECT_FALSE(os.thread_start("nope", [] {}).ok());
  os.sleep_ms(5);
  EXPECT_EQ(os.now_ns(), 25'000'000u);
  EXPECT_EQ(os.closesocket(s), 0);
  EXPECT_TRUE(os.close_port(port));

  const std::string bound = std::to_string(address.port);
  const std::string expected =
      "0 0 T0 create_port concurrency=0 -> 2\n"
      "1 0 T0 socket af=2 type=2 proto=17 -> 256\n"
      "2 0 T0 bind s=256 addr=127.0.0.1:0 -> 0\n"
      "3 0 T0 getsockname s=256 -> 0 addr=127.0.0.1:" +
      bound +
      "\n"
      "4 0 T0 set_nonblocking s=256 on=1 -> 0\n"
      "5 0 T0 psn.begin port=2 regs=[s=256/key=7/filter=0x2/op=ENABLE/trig=0x5]\n"
      "6 0 T0 dequeue.begin port=2\n"
      "7 0 T0 psn port=2 regs=[s=256/key=7/filter=0x2/op=ENABLE/trig=0x5/res=0] timeout=10 "
      "count=4 -> ERROR_SUCCESS n=1 entries=[key=7/mask=0x2]\n"
      "8 0 T0 post.begin port=2 bytes=0x5 key=99\n"
      "9 0 T0 post port=2 bytes=0x5 key=99 -> 1\n"
      "10 0 T0 dequeue.begin port=2\n"
      "11 0 T0 gqcs port=2 count=4 timeout=0 alertable=0 -> 1 n=1 entries=[key=99/mask=0x5]\n"
      "12 0 T0 dequeue.begin port=2\n"
      "13 20000000 T0 gqcs port=2 count=4 timeout=20 alertable=0 -> 0\n"
      "14 20000000 T0 last_error -> WAIT_TIMEOUT\n"
      "15 20000000 T0 recvfrom s=256 len=1 flags=0 -> -1\n"
      "16 20000000 T0 last_error -> WSAEWOULDBLOCK\n"
      "17 20000000 T0 mutex_create -> m1\n"
      "18 20000000 T0 m1.lock\n"
      "19 20000000 T0 m1.try_lock -> 0\n"
      "20 20000000 T0 m1.unlock\n"
      "21 20000000 T0 thread_start name=nope -> FAIL failed_precondition\n"
      "22 25000000 T0 sleep_ms ms=5\n"
      "23 25000000 T0 now_ns -> 25000000\n"
      "24 25000000 T0 closesocket.begin s=256\n"
      "25 25000000 T0 closesocket s=256 -> 0\n"
      "26 25000000 T0 close_port port=2 -> 1\n";
  EXPECT_EQ(trace.text(), expected);
}

// A dequeue's begin line: before the call with kBeforeCall; at the fake's effect with kAtEffect.
// Here T1 waits and T2's post hands it the packet (spec F1): the hand-off is T1's dequeue, so its
// begin line is written there, inside T2's post interval, by T2 on T1's behalf, and not where T1
// next runs (on real threads that can be many lines later, after a drain its dequeue preceded).
TEST(RecordingOs, BeginLinesAtTheFakesEffectAreExactInSimulation) {
  for (const RecordingOs::BeginLines mode :
       {RecordingOs::BeginLines::kBeforeCall, RecordingOs::BeginLines::kAtEffect}) {
    SimOptions options;
    options.strategy = SimStrategy::kRoundRobin;
    SimScheduler sim(options);
    FakeOs fake(FakeOptions{}, sim);
    Trace trace;
    RuntimeTraceContext context(sim);
    RecordingOs os(fake, trace, context, mode);
    const Status run = sim.run([&] {
      const Port port = os.create_io_completion_port(0);
      Result<std::unique_ptr<Thread>> poster = os.thread_start("poster", [&] {
        os.sleep_ms(1);
        EXPECT_TRUE(os.post_queued_completion_status(port, 1, 5, 0));
      });
      ASSERT_TRUE(poster.ok());
      OverlappedEntry entries[2] = {};
      std::uint32_t removed = 0;
      EXPECT_TRUE(os.get_queued_completion_status_ex(port, entries, 2, &removed, 1000, false));
      poster.value()->join();
      EXPECT_TRUE(os.close_port(port));
    });
    ASSERT_TRUE(run.ok()) << run.to_string();
    const std::string text = trace.text();
    const std::size_t begin = text.find("T1 dequeue.begin port=");
    const std::size_t post_begin = text.find("T2 post.begin port=");
    const std::size_t posted = text.find("T2 post port=");
    const std::size_t dequeued = text.find("T1 gqcs port=");
    ASSERT_NE(begin, std::string::npos) << text;
    ASSERT_NE(posted, std::string::npos) << text;
    ASSERT_NE(dequeued, std::string::npos) << text;
    if (mode == RecordingOs::BeginLines::kBeforeCall) {
      EXPECT_LT(begin, posted) << text;
    } else {
      // Within the post's interval: after its begin line, before its own.
      ASSERT_NE(post_begin, std::string::npos) << text;
      EXPECT_GT(begin, post_begin) << text;
      EXPECT_LT(begin, posted) << text;
      EXPECT_EQ(text.find('\n', post_begin) + 1, text.rfind('\n', begin) + 1) << text;
    }
  }
}

}  // namespace
}  // namespace readyport
