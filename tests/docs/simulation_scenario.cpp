// docs/simulation.md's "Running a scenario", as the program it shows (docs.snippets checks that
// the document's block is this file's marked lines): compiled and run by ctest (docs.example.*).
// doc-snippet: docs/simulation.md scenario begin
#include <cstdio>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/recording_os.hpp"
#include "readyport/fake/sim_scheduler.hpp"

int main() {
  readyport::Trace trace;  // full text; or TraceOptions{false, 64}
  readyport::SimOptions options;
  options.seed = 42;                                // the master seed
  options.strategy = readyport::SimStrategy::kPct;  // or kRandom, kRoundRobin, kDelayBounded
  options.pct_depth = 3;
  options.pct_steps_estimate = 200;  // about the steps of one run
  options.trace = &trace;            // scheduler decisions go here
  readyport::SimScheduler sim(options);
  readyport::FakeOs fake(readyport::FakeOptions{}, sim);
  readyport::RuntimeTraceContext context(sim);      // lines stamped with virtual time, thread
  readyport::RecordingOs os(fake, trace, context);  // calls and results go to the same trace

  readyport::Status status = sim.run([&] {  // runs as logical thread 1, "main"
    auto worker = os.thread_start("worker", [&] { os.sleep_ms(5); }).value();
    os.sleep_ms(2);  // seam calls: each may switch threads
    worker->join();
  });
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.to_string().c_str());
  }
  std::printf("%s\n", trace.hash_hex().c_str());  // names the run
  return status.ok() ? 0 : 1;
}
// doc-snippet: scenario end
