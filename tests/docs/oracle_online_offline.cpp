// docs/oracle.md's example of the oracle, online and offline, run as written (docs.snippets checks
// that the document's block is this file's marked lines): compiled and run by ctest
// (docs.example.*). The run between the two is left out, as in the document: the oracle judges an
// empty run, and the offline one the same run's text.
#include <cstdio>
#include <string>

#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/fake/trace.hpp"

int main() {
  readyport::Trace trace;
  const std::string text = trace.text();
  // doc-snippet: docs/oracle.md oracle begin
  readyport::LifetimeOracle oracle;
  trace.set_sink(&oracle);  // online: before the run
  // ... run: Engine(RecordingOs(FakeOs)), a TraceObserver, a workload writing wl.*/hnd.*
  readyport::Status verdict = oracle.finish();                    // after the run
  readyport::OracleJudgement judged = oracle.counts().judgement;  // per rule, see below

  readyport::LifetimeOracle offline;  // or: a recorded file
  offline.observe_text(text);
  verdict = offline.finish();
  // doc-snippet: oracle end
  std::printf("verdict %s; %s\n", verdict.to_string().c_str(),
              readyport::oracle_rules_text(judged).c_str());
  return verdict.ok() && judged.not_judged() == 0 ? 0 : 1;
}
