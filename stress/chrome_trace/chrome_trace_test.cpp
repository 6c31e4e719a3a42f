// The Chrome trace-event export (chrome_trace.hpp): hand-written traces, read back with
// nlohmann-json, and one real seed of the stress world (stress_run.hpp) converted.
#include "chrome_trace.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runs/stress_run.hpp"

namespace readyport {
namespace {

using Json = nlohmann::json;

// Two threads; T2 blocks 5 ms in a gqcs; a fault, scheduler lines, workload lines (one with
// ` -> `), calls without a result (th1.join, sleep_ms, m1.lock) and a psn.begin.
constexpr const char* kSmallTrace =
    "0 0 T0 sched.params seed=7 strategy=random steps_max=100\n"
    "1 0 T1 create_port concurrency=0 -> 2\n"
    "2 0 T1 sched.start T2 name=worker-1\n"
    "3 0 T1 thread_start name=worker-1 -> th1\n"
    "4 0 T1 sched.pick T2 of=[T1,T2] at=thread_start\n"
    "5 0 T2 sched.park call=get_queued_completion_status_ex deadline=5000000\n"
    "6 0 T1 fault post.fails code=ERROR_NOT_ENOUGH_MEMORY\n"
    "7 0 T1 post port=2 bytes=0x0 key=7 -> 0\n"
    "8 0 T1 sched.park call=Thread::join target=T2\n"
    "9 5000000 T1 sched.time to=5000000 ready=[T2]\n"
    "10 5000000 T2 gqcs port=2 count=1 timeout=5 alertable=0 -> 0\n"
    "11 5000000 T2 wl.add s=256 -> ok id=0/1\n"
    "12 5000000 T2 phase chaos\n"
    "13 5000000 T2 psn.begin port=2 regs=[s=256/key=7/filter=0x1/op=ENABLE/trig=0x5]\n"
    "14 5000250 T2 psn port=2 regs=[s=256/key=7/filter=0x1/op=ENABLE/trig=0x5/res=0] "
    "timeout=0 count=0 -> ERROR_SUCCESS\n"
    "15 5000250 T2 m1.lock\n"
    "16 5000250 T2 sched.finish\n"
    "17 5000250 T1 th1.join\n"
    "18 5000250 T1 sleep_ms ms=0\n";
constexpr std::size_t kSmallTraceLines = 19;

Json convert(std::string_view text, ChromeTraceOptions options = {}) {
  Result<std::string> json = chrome_trace_json(text, options);
  EXPECT_TRUE(json.ok()) << json.status().to_string();
  if (!json.ok()) {
    return Json();
  }
  // nlohmann's parser without exceptions: a discarded value means invalid JSON.
  Json parsed = Json::parse(json.value(), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << json.value();
  return parsed;
}

std::vector<Json> events_with(const Json& document, std::string_view ph) {
  std::vector<Json> found;
  for (const Json& event : document.at("traceEvents")) {
    if (event.at("ph") == ph) {
      found.push_back(event);
    }
  }
  return found;
}

// The event whose args.line starts with "<seq> ".
Json event_of_seq(const Json& document, std::uint64_t seq) {
  const std::string prefix = std::to_string(seq) + " ";
  for (const Json& event : document.at("traceEvents")) {
    if (event.contains("args") && event["args"].contains("line") &&
        event["args"]["line"].get<std::string>().rfind(prefix, 0) == 0) {
      return event;
    }
  }
  ADD_FAILURE() << "no event for seq " << seq;
  return Json();
}

// thread_name per tid; fails on a second name for one tid.
std::map<std::uint32_t, std::string> thread_names(const Json& document) {
  std::map<std::uint32_t, std::string> names;
  for (const Json& event : events_with(document, "M")) {
    if (event.at("name") != "thread_name") {
      continue;
    }
    const auto tid = event.at("tid").get<std::uint32_t>();
    EXPECT_EQ(names.count(tid), 0u) << "two thread_name events for tid " << tid;
    names[tid] = event.at("args").at("name").get<std::string>();
  }
  return names;
}

TEST(ChromeTrace, SmallTraceIsValidJsonWithOneNamedTrackPerThread) {
  const Json document = convert(kSmallTrace);
  ASSERT_TRUE(document.is_object());
  EXPECT_EQ(document.at("displayTimeUnit"), "ns");
  EXPECT_EQ(document.at("otherData").at("clock"), "virtual");
  EXPECT_EQ(document.at("otherData").at("lines"), kSmallTraceLines);
  EXPECT_EQ(thread_names(document),
            (std::map<std::uint32_t, std::string>{{0, "T0"}, {1, "T1"}, {2, "T2 worker-1"}}));
  // Every line is one event (plus metadata), with its full text, on pid 1 and its thread.
  std::size_t line_events = 0;
  for (const Json& event : document.at("traceEvents")) {
    EXPECT_EQ(event.at("pid"), 1);
    if (event.at("ph") == "M") {
      continue;
    }
    line_events += 1;
    const std::string line = event.at("args").at("line").get<std::string>();
    EXPECT_NE(std::string(kSmallTrace).find(line + "\n"), std::string::npos) << line;
    EXPECT_EQ(line.find(" T" + std::to_string(event.at("tid").get<int>()) + " "),
              line.find(' ', line.find(' ') + 1))
        << "tid does not match the line's T<n>: " << event.dump();
  }
  EXPECT_EQ(line_events, kSmallTraceLines);
}

TEST(ChromeTrace, CallsAreSlicesFromTheThreadsPreviousLineToTheReturn) {
  const Json document = convert(kSmallTrace);
  std::set<std::string> slice_names;
  for (const Json& slice : events_with(document, "X")) {
    EXPECT_EQ(slice.at("cat"), "call");
    EXPECT_GE(slice.at("dur").get<double>(), 0.0);
    slice_names.insert(slice.at("name").get<std::string>());
  }
  EXPECT_EQ(slice_names, (std::set<std::string>{"create_port", "thread_start", "post", "gqcs",
                                                "psn", "m1.lock", "th1.join", "sleep_ms"}));
  // gqcs: T2's previous line (its park) was at 0 ns, the call returned at 5 ms.
  const Json gqcs = event_of_seq(document, 10);
  EXPECT_EQ(gqcs.at("ph"), "X");
  EXPECT_EQ(gqcs.at("tid"), 2);
  EXPECT_DOUBLE_EQ(gqcs.at("ts").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(gqcs.at("dur").get<double>(), 5000.0);
  // psn: from psn.begin at 5,000,000 ns to 5,000,250 ns: 0.25 us, in microseconds.
  const Json psn = event_of_seq(document, 14);
  EXPECT_DOUBLE_EQ(psn.at("ts").get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(psn.at("dur").get<double>(), 0.25);
  // th1.join: T1's previous line was the sched.time at 5 ms; no time passed since.
  const Json join = event_of_seq(document, 17);
  EXPECT_EQ(join.at("ph"), "X");
  EXPECT_DOUBLE_EQ(join.at("ts").get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(join.at("dur").get<double>(), 0.25);
  // A thread's first line is a slice of its own time.
  EXPECT_DOUBLE_EQ(event_of_seq(document, 1).at("dur").get<double>(), 0.0);
}

TEST(ChromeTrace, FaultsSchedulerAndWorkloadLinesAreThreadInstants) {
  const Json document = convert(kSmallTrace);
  const Json fault = event_of_seq(document, 6);
  EXPECT_EQ(fault.at("ph"), "i");
  EXPECT_EQ(fault.at("s"), "t");
  EXPECT_EQ(fault.at("cat"), "fault");
  EXPECT_EQ(fault.at("name"), "fault post.fails");
  for (const std::uint64_t seq : {0u, 2u, 4u, 5u, 8u, 9u, 16u}) {
    const Json event = event_of_seq(document, seq);
    EXPECT_EQ(event.at("ph"), "i") << event.dump();
    EXPECT_EQ(event.at("s"), "t") << event.dump();
    EXPECT_EQ(event.at("cat"), "sched") << event.dump();
  }
  EXPECT_DOUBLE_EQ(event_of_seq(document, 9).at("ts").get<double>(), 5000.0);
  // Workload and phase lines: instants of their own category, even with ` -> `.
  for (const std::uint64_t seq : {11u, 12u}) {
    const Json event = event_of_seq(document, seq);
    EXPECT_EQ(event.at("ph"), "i") << event.dump();
    EXPECT_EQ(event.at("cat"), "other") << event.dump();
  }
  const Json begin = event_of_seq(document, 13);
  EXPECT_EQ(begin.at("ph"), "i");
  EXPECT_EQ(begin.at("cat"), "call");
}

// Timestamps never go back on a track, in the order of the array, and a track's slices never
// overlap (each starts at or after the previous one's end), as the format requires.
void expect_monotone_per_thread(const Json& document) {
  std::map<std::uint32_t, double> last_ts;
  std::map<std::uint32_t, double> last_slice_end;
  for (const Json& event : document.at("traceEvents")) {
    if (event.at("ph") == "M") {
      continue;
    }
    const auto tid = event.at("tid").get<std::uint32_t>();
    const double ts = event.at("ts").get<double>();
    if (last_ts.count(tid) != 0) {
      EXPECT_GE(ts, last_ts[tid]) << event.dump();
    }
    last_ts[tid] = ts;
    if (event.at("ph") != "X") {
      continue;
    }
    if (last_slice_end.count(tid) != 0) {
      // ts + dur is rounded once more than ts: allow a nanosecond's millionth.
      EXPECT_GE(ts, last_slice_end[tid] - 1e-6) << event.dump();
    }
    last_slice_end[tid] = ts + event.at("dur").get<double>();
  }
}

TEST(ChromeTrace, TimestampsAreMonotonePerThread) {
  expect_monotone_per_thread(convert(kSmallTrace));
}

TEST(ChromeTrace, AllZeroTimesUseTheSequenceNumberAndSaySo) {
  const char* real_threads =
      "0 0 T1 socket af=2 type=1 proto=6 -> 256\n"
      "1 0 T2 post port=2 bytes=0x0 key=1 -> 1\n"
      "2 0 T1 gqcs port=2 count=1 timeout=10 alertable=0 -> 1 n=1 entries=[key=1/mask=0x0]\n"
      "3 0 T2 closesocket s=256 -> 0\n";
  const Json document = convert(real_threads);
  EXPECT_EQ(document.at("otherData").at("clock"), "sequence");
  EXPECT_NE(document.at("otherData").at("clock_note").get<std::string>().find("seq"),
            std::string::npos);
  const Json gqcs = event_of_seq(document, 2);
  EXPECT_DOUBLE_EQ(gqcs.at("ts").get<double>(), 0.0);  // T1's previous line: seq 0
  EXPECT_DOUBLE_EQ(gqcs.at("dur").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(event_of_seq(document, 3).at("ts").get<double>(), 1.0);
  expect_monotone_per_thread(document);
  // The clock can be forced either way.
  EXPECT_EQ(
      convert(kSmallTrace, {.clock = ChromeTraceClock::kSequence}).at("otherData").at("clock"),
      "sequence");
  EXPECT_EQ(chrome_trace_clock_detect(kSmallTrace), ChromeTraceClock::kVirtual);
  EXPECT_EQ(chrome_trace_clock_detect(""), ChromeTraceClock::kSequence);
}

TEST(ChromeTrace, StreamingInPiecesGivesTheSameDocument) {
  const std::string whole = chrome_trace_json(kSmallTrace).value();
  const std::string text = kSmallTrace;
  for (const std::size_t piece : {1u, 7u, 64u}) {
    std::ostringstream out;
    ChromeTraceWriter writer(out, {.clock = ChromeTraceClock::kVirtual});
    for (std::size_t at = 0; at < text.size(); at += piece) {
      ASSERT_TRUE(writer.add_text(std::string_view(text).substr(at, piece)).ok());
    }
    ASSERT_TRUE(writer.finish().ok());
    EXPECT_EQ(out.str(), whole) << "pieces of " << piece;
    EXPECT_EQ(writer.line_count(), kSmallTraceLines);
  }
  // A last line without its '\n', and "\r\n" endings.
  std::ostringstream out;
  ChromeTraceWriter writer(out, {.clock = ChromeTraceClock::kVirtual});
  ASSERT_TRUE(writer.add_line("0 0 T1 now_ns -> 0\r\n").ok());
  ASSERT_TRUE(writer.add_text("1 0 T1 now_ns -> 0").ok());
  ASSERT_TRUE(writer.finish().ok());
  const Json document = Json::parse(out.str(), nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << out.str();
  EXPECT_EQ(events_with(document, "X").size(), 2u);
  EXPECT_EQ(events_with(document, "X").front().at("args").at("line"), "0 0 T1 now_ns -> 0");
}

TEST(ChromeTrace, EmptyInputAndAwkwardTextStayValidJson) {
  const Json empty = convert("");
  ASSERT_TRUE(empty.is_object());
  EXPECT_EQ(empty.at("traceEvents").size(), 1u);  // process_name only
  EXPECT_EQ(empty.at("otherData").at("lines"), 0);
  // Quotes, backslashes, a tab and UTF-8 in a thread name survive, escaped.
  const std::string awkward = "0 0 T1 sched.start T2 name=a\"b\\c\td\xC3\xA9\n";
  const Json document = convert(awkward);
  EXPECT_EQ(event_of_seq(document, 0).at("args").at("line"), awkward.substr(0, awkward.size() - 1));
  EXPECT_EQ(thread_names(document).at(2), "T2 a\"b\\c\td\xC3\xA9");
}

void expect_error(std::string_view text, StatusCode code, std::string_view message_part) {
  Result<std::string> json = chrome_trace_json(text);
  ASSERT_FALSE(json.ok()) << "accepted: " << text;
  EXPECT_EQ(json.status().code(), code) << json.status().to_string();
  EXPECT_NE(json.status().message().find(message_part), std::string::npos)
      << json.status().to_string();
}

TEST(ChromeTrace, MalformedInputIsAnErrorNamingTheLine) {
  const std::string good = "0 0 T1 now_ns -> 0\n";
  expect_error(good + "1 0 X1 now_ns -> 0\n", StatusCode::kInvalidArgument, "line 2: no T<thread>");
  expect_error(good + "\n", StatusCode::kInvalidArgument, "line 2: no sequence number");
  expect_error(good + "1 0 T1 now_ns ->\n", StatusCode::kInvalidArgument,
               "line 2: '->' without a result");
  expect_error(good + "1 0 T1  now_ns\n", StatusCode::kInvalidArgument, "line 2:");
  expect_error(good + "0 0 T1 now_ns -> 0\n", StatusCode::kInvalidArgument,
               "line 2: seq 0 does not follow seq 0");
  expect_error("0 5 T1 now_ns -> 5\n1 4 T1 now_ns -> 4\n", StatusCode::kInvalidArgument,
               "line 2: T1's time 4 is before its previous time 5");
  expect_error(good + "1 0 T1 bad\xFF\n", StatusCode::kInvalidArgument,
               "line 2: not UTF-8 at byte 11");
  expect_error(good + "1 0 T1 sched.start name=x\n", StatusCode::kInvalidArgument,
               "line 2: sched.start names no T<thread>");
  expect_error("0 0 T99999999999 now_ns -> 0\n", StatusCode::kInvalidArgument, "line 1:");
  // The writer refuses input after an error.
  std::ostringstream out;
  ChromeTraceWriter writer(out, {.clock = ChromeTraceClock::kVirtual});
  EXPECT_FALSE(writer.add_line("garbage").ok());
  EXPECT_FALSE(writer.add_line(good).ok());
  EXPECT_FALSE(writer.finish().ok());
}

TEST(ChromeTrace, LimitsOnLinesLineLengthAndThreads) {
  ChromeTraceOptions options;
  options.lines_max = 2;
  Result<std::string> json = chrome_trace_json("0 0 T1 a\n1 0 T1 b\n2 0 T1 c\n", options);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(json.status().message().find("line 3: more than 2 lines"), std::string::npos);

  options = ChromeTraceOptions{};
  options.line_bytes_max = 16;
  json = chrome_trace_json("0 0 T1 short\n1 0 T1 this line is far too long\n", options);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(json.status().message().find("line 2:"), std::string::npos)
      << json.status().to_string();
  // The same through add_text, whose partial line is bounded too.
  std::ostringstream out;
  ChromeTraceWriter writer(out, {.clock = ChromeTraceClock::kVirtual, .line_bytes_max = 16});
  EXPECT_EQ(writer.add_text(std::string(100, '7')).code(), StatusCode::kResourceExhausted);

  options = ChromeTraceOptions{};
  options.threads_max = 2;
  json = chrome_trace_json("0 0 T1 a\n1 0 T2 b\n2 0 T3 c\n", options);
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.status().message().find("line 3: more than 2 threads"), std::string::npos)
      << json.status().to_string();
}

// The T<n> of every line, and every thread a sched.start line started.
std::set<std::uint32_t> threads_in(const std::string& text) {
  std::set<std::uint32_t> threads;
  std::istringstream lines(text);
  std::string line;
  TraceEvent parsed;
  while (std::getline(lines, line)) {
    EXPECT_TRUE(parse_trace_line(line, &parsed).ok()) << line;
    threads.insert(parsed.thread);
    std::uint64_t started = 0;
    if (parsed.name == "sched.start" && !parsed.words.empty() &&
        parse_trace_u64(parsed.words[0].text.substr(1), &started)) {
      threads.insert(static_cast<std::uint32_t>(started));
    }
  }
  return threads;
}

TEST(ChromeTrace, ARealSeedOfTheStressWorldHasOneTrackPerLogicalThread) {
  StressOptions options;
  options.trace = true;  // keep the full text in the report
  const SeedReport report = stress_run_seed(options, 7);
  ASSERT_TRUE(report.status.ok()) << report.status.to_string();
  ASSERT_FALSE(report.trace_text.empty());
  const Json document = convert(report.trace_text);
  ASSERT_TRUE(document.is_object());
  EXPECT_EQ(document.at("otherData").at("clock"), "virtual");
  EXPECT_EQ(document.at("otherData").at("lines").get<std::uint64_t>(), report.trace_lines);

  const std::set<std::uint32_t> threads = threads_in(report.trace_text);
  const std::map<std::uint32_t, std::string> names = thread_names(document);
  std::set<std::uint32_t> named;
  for (const auto& [tid, name] : names) {
    named.insert(tid);
  }
  EXPECT_EQ(named, threads);
  EXPECT_GE(threads.size(), 3u);  // T0 (sched.params), T1 (main) and the workers

  std::size_t slices = 0;
  std::size_t faults = 0;
  std::size_t scheds = 0;
  for (const Json& event : document.at("traceEvents")) {
    if (event.at("ph") == "X") {
      slices += 1;
    }
    if (event.value("cat", "") == "fault") {
      faults += 1;
    }
    if (event.value("cat", "") == "sched") {
      scheds += 1;
    }
  }
  std::printf("[ chrome   ] seed 7: %llu lines, %zu threads, %zu slices, %zu faults, %zu sched\n",
              static_cast<unsigned long long>(report.trace_lines), threads.size(), slices, faults,
              scheds);
  EXPECT_GT(slices, 0u);
  EXPECT_GT(scheds, 0u);
  expect_monotone_per_thread(document);
}

}  // namespace
}  // namespace readyport
