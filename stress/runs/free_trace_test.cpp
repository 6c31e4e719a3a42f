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

// Where to plant: the dequeue (its dequeue.begin line and its end line, on thread T) that
// returned the REMOVE packet of socket S, and the engine's closesocket.begin / closesocket lines
// of S after it, on T too (the engine closes on the thread that dequeued).
struct Plant {
  std::size_t dequeue_begin = 0;
  std::size_t dequeue_end = 0;
  std::size_t close_begin = 0;
  std::size_t close_end = 0;
};

std::uint32_t thread_of(const std::string& line) { return parsed(line).thread; }

// T's closesocket.begin of `socket` after line `after`, and its closesocket line: the first
// close of the socket on any thread must be T's, else there is none to plant.
bool find_close(const std::vector<std::string>& lines, std::size_t after, std::uint32_t thread,
                Socket socket, Plant* plant_out) {
  const std::string begin = " closesocket.begin s=" + std::to_string(socket);
  const std::string end = " closesocket s=" + std::to_string(socket) + " -> 0";
  for (std::size_t j = after + 1; j < lines.size(); ++j) {
    if (lines[j].find(begin) == std::string::npos) {
      continue;
    }
    if (thread_of(lines[j]) != thread) {
      return false;
    }
    for (std::size_t k = j + 1; k < lines.size(); ++k) {
      if (lines[k].find(end) != std::string::npos && thread_of(lines[k]) == thread) {
        plant_out->close_begin = j;
        plant_out->close_end = k;
        return true;
      }
    }
    return false;
  }
  return false;
}

// Whether `thread` wrote no line strictly between lines `from` and `to`: then it was inside its
// call all that time, and the call's begin line may move anywhere in that span (the trace stays
// one the OS could give).
bool silent_between(const std::vector<std::string>& lines, std::uint32_t thread, std::size_t from,
                    std::size_t to) {
  const std::string own = " T" + std::to_string(thread) + " ";
  for (std::size_t i = from + 1; i < to; ++i) {
    if (lines[i].find(own) != std::string::npos) {
      return false;
    }
  }
  return true;
}

// Whether the dequeue begun at line `begin` on `thread` is a call of its own: the thread's line
// before it is no psn.begin (registrations batched into the dequeue: one call, begun there).
bool own_call(const std::vector<std::string>& lines, std::uint32_t thread, std::size_t begin) {
  const std::string own = " T" + std::to_string(thread) + " ";
  for (std::size_t i = begin; i-- > 0;) {
    if (lines[i].find(own) != std::string::npos) {
      return lines[i].find(own + "psn.begin ") == std::string::npos;
    }
  }
  return true;
}

// The first dequeue that returned a REMOVE packet, is a call of its own, wrote nothing between
// its begin and end lines, and whose thread then closed that socket.
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
    } else if ((line.name == "psn" || line.name == "gqcs") && line.has_entries &&
               open_dequeue.count(line.thread) != 0) {
      for (const TraceEntry& entry : line.entries) {
        auto socket = remove_key_socket.find(entry.key);
        if ((entry.mask & kSockNotifyEventRemove) == 0 || socket == remove_key_socket.end()) {
          continue;
        }
        Plant plant{open_dequeue[line.thread], i, 0, 0};
        if (own_call(lines, line.thread, plant.dequeue_begin) &&
            silent_between(lines, line.thread, plant.dequeue_begin, i) &&
            find_close(lines, i, line.thread, socket->second, &plant)) {
          *plant_out = plant;
          return true;
        }
      }
      open_dequeue.erase(line.thread);
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

// The planted early close: T closes S, then begins the dequeue that returns S's REMOVE packet.
// The close and the dequeue.begin go just before the dequeue's end line, so they come after the
// psn.begin that asked for the REMOVE (the packet cannot be dequeued before it is asked for)
// wherever the scheduler had put T's dequeue.begin: before the socket was even registered, say.
std::vector<std::string> closed_early(const std::vector<std::string>& lines, const Plant& plant) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == plant.dequeue_end) {
      out.push_back(lines[plant.close_begin]);
      out.push_back(lines[plant.close_end]);
      out.push_back(lines[plant.dequeue_begin]);
    }
    if (i != plant.dequeue_begin && i != plant.close_begin && i != plant.close_end) {
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
  ASSERT_TRUE(find_plant(lines, &plant))
      << "seed 5 dequeued no REMOVE packet (in a call of its own) whose thread then closed it";
  LifetimeOracle early;
  early.observe_text(os_side_text(closed_early(lines, plant)));
  const Status caught = early.finish();
  ASSERT_FALSE(caught.ok()) << "a close moved before the REMOVE's dequeue was not caught";
  EXPECT_EQ(caught.message().rfind("O1 ", 0), 0u) << caught.message();

  // The engine closed on the thread that dequeued: inside that thread's own open dequeue the
  // close is impossible, and the oracle says so rather than judge it.
  LifetimeOracle inside;
  inside.observe_text(os_side_text(moved(lines, plant, plant.dequeue_end)));
  EXPECT_EQ(inside.status().message().rfind("inconsistent trace", 0), 0u)
      << inside.status().to_string();
}

}  // namespace
}  // namespace readyport
