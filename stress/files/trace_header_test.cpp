// The header line of a trace file (trace_header.hpp): written from the options, read back, and
// every malformed field refused by name.
#include "files/trace_header.hpp"

#include "runs/stress_run.hpp"

#include <gtest/gtest.h>

#include <string>

namespace readyport {
namespace {

TEST(TraceHeaderTest, RoundTripsTheRuntimeTheOsAndTheFakesOptions) {
  StressOptions options;
  options.runtime = StressRuntime::kFree;
  FakeOptions fake;
  fake.remove_separate_packet = true;
  const std::string line = stress_trace_header_line(options, &fake);
  ASSERT_EQ(line.rfind(std::string(kStressTraceHeaderPrefix), 0), 0u) << line;
  const Result<StressTraceHeader> header = stress_trace_header_parse(line + "0 0 T0 phase chaos\n");
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_TRUE(header.value().has);
  EXPECT_EQ(header.value().runtime, StressRuntime::kFree);
  EXPECT_EQ(header.value().os, StressOs::kFake);
  EXPECT_EQ(header.value().length, line.size());
  EXPECT_EQ(header.value().format, kTraceFormat);
  EXPECT_EQ(header.value().fake, stress_fake_options_text(fake, ','));
  EXPECT_NE(header.value().fake.find("remove_separate=1"), std::string::npos) << line;
  EXPECT_TRUE(stress_trace_header_real_threads(header.value()));
  options.runtime = StressRuntime::kSim;
  const Result<StressTraceHeader> simulated =
      stress_trace_header_parse(stress_trace_header_line(options, nullptr));
  ASSERT_TRUE(simulated.ok());
  EXPECT_FALSE(stress_trace_header_real_threads(simulated.value()));
  EXPECT_EQ(simulated.value().fake, "");
  EXPECT_FALSE(simulated.value().cut);
  const Result<StressTraceHeader> cut =
      stress_trace_header_parse(stress_trace_header_line(options, nullptr, /*cut=*/true));
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  EXPECT_TRUE(cut.value().cut);
}

TEST(TraceHeaderTest, ATraceWithoutOneHasNone) {
  const Result<StressTraceHeader> header = stress_trace_header_parse("0 0 T0 phase chaos\n");
  ASSERT_TRUE(header.ok());
  EXPECT_FALSE(header.value().has);
  EXPECT_EQ(header.value().length, 0u);
}

TEST(TraceHeaderTest, MalformedFieldsAreRefusedByName) {
  const std::string prefix(kStressTraceHeaderPrefix);
  const struct {
    const char* fields;
    const char* named;
  } cases[] = {
      {"format=4 runtime=sim os=fake", "format 4"},
      {"runtime=sim os=fake", "no format"},
      {"format=1 runtime=fast os=fake", "runtime 'fast'"},
      {"format=1 runtime=sim os=linux", "os 'linux'"},
      {"format=1 runtime=sim colour=blue", "unknown field 'colour'"},
  };
  for (const auto& c : cases) {
    const Result<StressTraceHeader> header = stress_trace_header_parse(prefix + c.fields + "\n");
    ASSERT_FALSE(header.ok()) << c.fields;
    EXPECT_EQ(header.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(header.status().message().find(c.named), std::string::npos)
        << header.status().message();
  }
}

}  // namespace
}  // namespace readyport
