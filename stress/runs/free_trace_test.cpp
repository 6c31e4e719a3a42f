// A trace recorded on real threads (--runtime free) is judged in full by the oracle alone, and a
// planted reorder of it is caught: the engine's closesocket of a socket moved before the dequeue
// that returned that socket's REMOVE packet is O1. (A close overlapping another thread's dequeue
// is ambiguous: LifetimeOracleIntervals in fakes/test.)
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/fake/trace_parse.hpp"
#include "runs/stress_run.hpp"

namespace readyport {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return lines;
}

// The lines renumbered from 0 (the oracle needs increasing seq), without the engine's obs.* lines:
// what the OS saw alone judges.
std::string os_side_text(const std::vector<std::string>& lines) {
  std::string text;
  std::uint64_t seq = 0;
  for (const std::string& line : lines) {
    if (line.find(" obs.") != std::string::npos) {
      continue;
    }
    text += std::to_string(seq++) + line.substr(line.find(' ')) + "\n";
  }
  return text;
}

TraceEvent parsed(const std::string& line) {
  TraceEvent out;
  EXPECT_TRUE(parse_trace_line(line, &out).ok()) << line;
  return out;
}

// Where to plant: the dequeue (its dequeue.begin line and its end line) that returned the REMOVE
// packet of socket S, and the engine's closesocket.begin / closesocket lines of S after it.
struct Plant {
  std::size_t dequeue_begin = 0;
  std::size_t dequeue_end = 0;
  std::size_t close_begin = 0;
  std::size_t close_end = 0;
};

bool find_plant(const std::vector<std::string>& lines, Plant* plant_out) {
  std::map<std::uintptr_t, Socket> remove_key_socket;  // key of a REMOVE element -> its socket
  std::map<std::uint32_t, std::size_t> open_dequeue;   // thread -> its dequeue.begin line
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const TraceEvent line = parsed(lines[i]);
    if (line.name == "psn.begin") {
      for (const TraceReg& reg : line.regs) {
        if (reg.operation == kSockNotifyOpRemove) {
          remove_key_socket[reg.key] = reg.socket;
        }
      }
    } else if (line.name == "dequeue.begin") {
      open_dequeue[line.thread] = i;
    } else if ((line.name == "psn" || line.name == "gqcs") && line.has_entries) {
      for (const TraceEntry& entry : line.entries) {
        if ((entry.mask & kSockNotifyEventRemove) == 0) {
          continue;
        }
        auto socket = remove_key_socket.find(entry.key);
        if (socket == remove_key_socket.end() || open_dequeue.count(line.thread) == 0) {
          continue;
        }
        // The engine's close of that socket, on any thread, after this line.
        const std::string begin = "closesocket.begin s=" + std::to_string(socket->second);
        const std::string end = "closesocket s=" + std::to_string(socket->second) + " -> 0";
        for (std::size_t j = i + 1; j < lines.size(); ++j) {
          if (lines[j].find(" " + begin) == std::string::npos) {
            continue;
          }
          const std::string thread = " T" + std::to_string(parsed(lines[j]).thread) + " ";
          for (std::size_t k = j + 1; k < lines.size(); ++k) {
            if (lines[k].find(thread + end) == std::string::npos) {
              continue;
            }
            *plant_out = Plant{open_dequeue[line.thread], i, j, k};
            return true;
          }
        }
      }
    }
  }
  return false;
}

// `lines` with the close's two lines moved to just before line `at`.
std::vector<std::string> moved(const std::vector<std::string>& lines, const Plant& plant,
                               std::size_t at) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == at) {
      out.push_back(lines[plant.close_begin]);
      out.push_back(lines[plant.close_end]);
    }
    if (i != plant.close_begin && i != plant.close_end) {
      out.push_back(lines[i]);
    }
  }
  return out;
}

TEST(FreeTraceTest, ARealThreadTraceIsJudgedInFullAndAPlantedEarlyCloseIsO1) {
  StressOptions options;
  options.runtime = StressRuntime::kFree;
  options.trace = true;
  const SeedReport report = stress_run_seed(options, 5);
  ASSERT_TRUE(report.status.ok()) << report.status.to_string();
  const std::vector<std::string> lines = lines_of(report.trace_text);

  LifetimeOracle whole;
  whole.observe_text(os_side_text(lines));
  const Status verdict = whole.finish();
  ASSERT_TRUE(verdict.ok()) << verdict.to_string();
  const OracleJudgement& judged = whole.counts().judgement;
  EXPECT_GT(judged.judged[1], 0u);
  EXPECT_EQ(judged.unjudged[1], 0u);

  Plant plant;
  ASSERT_TRUE(find_plant(lines, &plant)) << "seed 5 dequeued no REMOVE packet the engine closed";
  LifetimeOracle early;
  early.observe_text(os_side_text(moved(lines, plant, plant.dequeue_begin)));
  const Status caught = early.finish();
  ASSERT_FALSE(caught.ok()) << "a close moved before the REMOVE's dequeue was not caught";
  EXPECT_EQ(caught.message().rfind("O1 ", 0), 0u) << caught.message();

  // The engine closed on the thread that dequeued: inside that thread's own open dequeue the
  // close is impossible, and the oracle says so rather than judge it.
  LifetimeOracle inside;
  inside.observe_text(os_side_text(moved(lines, plant, plant.dequeue_end)));
  const std::string thread = " T" + std::to_string(parsed(lines[plant.dequeue_end]).thread) + " ";
  if (lines[plant.close_begin].find(thread) != std::string::npos) {
    EXPECT_EQ(inside.status().message().rfind("inconsistent trace", 0), 0u)
        << inside.status().to_string();
  }
}

}  // namespace
}  // namespace readyport
