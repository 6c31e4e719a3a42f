// Trace's bound on its kept text (TraceOptions::full_bytes_max).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "readyport/fake/trace.hpp"

namespace readyport {
namespace {

// A kept text past full_bytes_max stops growing: its prefix of whole lines is kept, and the hash,
// the count and the tail go on as in an uncut trace.
TEST(Trace, TextPastItsBoundIsAPrefixAndTheHashGoesOn) {
  TraceOptions cut_options;
  cut_options.tail_lines_max = 2;
  cut_options.full_bytes_max = 1000;
  Trace cut(cut_options);
  Trace full;
  for (int i = 0; i < 1000; ++i) {
    cut.record(static_cast<std::uint64_t>(i), 1, "event " + std::to_string(i));
    full.record(static_cast<std::uint64_t>(i), 1, "event " + std::to_string(i));
  }
  EXPECT_TRUE(cut.full_cut());
  EXPECT_FALSE(full.full_cut());
  EXPECT_EQ(cut.hash(), full.hash());
  EXPECT_EQ(cut.line_count(), 1000u);
  const std::string prefix = cut.text();
  EXPECT_GE(prefix.size(), 1000u);
  EXPECT_LT(prefix.size(), 1100u);  // the line that passed the bound is the last one kept
  EXPECT_EQ(full.text().substr(0, prefix.size()), prefix);
  EXPECT_EQ(prefix.back(), '\n');
  const std::vector<std::string> tail = cut.tail();
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0], "998 998 T1 event 998\n");
  EXPECT_EQ(tail[1], "999 999 T1 event 999\n");
  std::string whole;
  EXPECT_FALSE(cut.try_text(&whole));  // a last report never takes a prefix for the whole
  EXPECT_TRUE(full.try_text(&whole));
}

// take_text() moves the kept text out, cut or whole, without a copy.
TEST(Trace, TakeTextMovesTheKeptTextOut) {
  Trace trace;
  trace.record(1, 1, "event one");
  trace.record(2, 1, "event two");
  const std::string expected = trace.text();
  EXPECT_EQ(trace.take_text(), expected);
  EXPECT_EQ(trace.line_count(), 2u);
}

}  // namespace
}  // namespace readyport
