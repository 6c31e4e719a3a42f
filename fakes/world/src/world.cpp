// One seed's world. See world.hpp.
#include "readyport/fake/world.hpp"

#include <mutex>
#include <vector>

#include "readyport/assert.hpp"
#include "readyport/fake/rng.hpp"

namespace readyport {
namespace {

// The rows behind a spent retry budget and a dropped REMOVE (coverage_names()).
constexpr const char* kDeepRows[] = {"deep.psn_regs_failed_8_in_a_row",
                                     "deep.psn_dequeue_failed_8_in_a_row",
                                     "deep.post_failed_3_in_a_row",
                                     "deep.thread_start_failed_3_in_a_row",
                                     "deep.outage_cut_by_liveness",
                                     "deep.remove_dropped_by_close",
                                     "boundary.slot_last",
                                     "boundary.last_free_slot_taken"};

std::string fake_stats_text(const FakeStats& stats) {
  return "sockets=" + std::to_string(stats.sockets_open) +
         " registrations=" + std::to_string(stats.registrations_live) +
         " packets=" + std::to_string(stats.packets_queued) +
         " ports=" + std::to_string(stats.ports_open) + " waiters=" + std::to_string(stats.waiters);
}

}  // namespace

void World::CheckingSink::on_trace_line(std::string_view line) {
  if (embedder_ != nullptr) {
    embedder_->on_trace_line(line);
  }
  oracle_.on_trace_line(line);
  report_once();
}

void World::CheckingSink::on_trace_event(const TraceEvent& event) {
  if (embedder_ != nullptr) {
    embedder_->on_trace_event(event);
    if (!reported_ && embedder_->violated()) {
      report_once();
    }
  }
  oracle_.on_trace_event(event);
  if (!reported_ && oracle_.violated()) {  // report_once()'s own test, inline: every event asks
    report_once();
  }
}

void World::CheckingSink::report_once() {
  const bool embedder_violated = embedder_ != nullptr && embedder_->violated();
  if (reported_ || !hook_ || !(embedder_violated || oracle_.violated())) {
    return;
  }
  const Status status = embedder_violated ? embedder_->status() : oracle_.status();
  if (!status.ok()) {
    reported_ = true;
    hook_(status);
  }
}

namespace {

// A simulated world's trace is serialized: its SimScheduler runs one logical thread at a time.
TraceOptions world_trace_options(const WorldOptions& options) {
  TraceOptions trace = options.trace;
  trace.serialized = options.backend == WorldOptions::Backend::kSim;
  return trace;
}

}  // namespace

World::World(WorldOptions options)
    : backend_(options.backend),
      sink_(oracle_, std::move(options.on_violation)),
      trace_(world_trace_options(options)) {
  if (backend_ == WorldOptions::Backend::kSim) {
    oracle_.set_serialized();
  }
  using Backend = WorldOptions::Backend;
  Os* backend = nullptr;
  if (backend_ == Backend::kOs) {
    READYPORT_ASSERT(options.os != nullptr);
    context_ = std::make_unique<CountingTraceContext>();
    clock_ = std::make_unique<OsClock>(*options.os);
    ledger_ = std::make_unique<SocketLedgerOs>(*options.os);
    backend = ledger_.get();
  } else {
    Runtime* runtime = nullptr;
    if (backend_ == Backend::kSim) {
      options.sim.trace = options.scheduler_lines ? &trace_ : nullptr;
      sim_ = std::make_unique<SimScheduler>(options.sim);
      runtime = sim_.get();
    } else {
      if (!options.free.hang_detail) {
        options.free.hang_detail = [this] { return hang_detail(); };
      }
      free_runtime_ = std::make_unique<FreeRuntime>(options.free);
      runtime = free_runtime_.get();
    }
    context_ = std::make_unique<RuntimeTraceContext>(*runtime);
    fake_ = std::make_unique<FakeOs>(options.fake, *runtime);
    backend = fake_.get();
  }
  // On the fake, begin lines where it takes effect (exact intervals); elsewhere before the call.
  recording_ = std::make_unique<RecordingOs>(
      *backend, trace_, *context_,
      fake_ ? RecordingOs::BeginLines::kAtEffect : RecordingOs::BeginLines::kBeforeCall);
  faulty_ = std::make_unique<FaultyOs>(*recording_, options.plan,
                                       SeedStreams(options.seed).seed(SeedStream::kFaults), &trace_,
                                       context_.get(), clock_.get());
  if (sim_ && options.explore_faults) {
    READYPORT_ASSERT(options.sim.strategy == SimStrategy::kExplore);
    SimScheduler* sim = sim_.get();
    faulty_->set_chooser([sim](FaultSite) { return sim->choose(); });
  }
  observer_ = std::make_unique<TraceObserver>(trace_, *context_, &tuples_);
  if (options.embedder) {
    boundary_ = std::make_unique<BoundaryRecorder>(trace_, *context_, observer_.get());
    recording_->set_boundary(boundary_.get());
    embedder_oracle_ = std::make_unique<EmbedderOracle>(backend_ == Backend::kSim);
    if (backend_ == Backend::kSim) {
      embedder_oracle_->set_serialized();
    }
    sink_.set_embedder(embedder_oracle_.get());
  }
  trace_.set_sink(&sink_);
  if (!options.embedder) {
    observer_->set_table_slots(options.engine.connections_max);
    options.engine.observer = observer_.get();
    engine_ = std::make_unique<Engine>(*faulty_, options.engine);
  }
}

World::~World() {
  trace_.set_sink(nullptr);
  engine_.reset();
}

const Runtime* World::runtime() const {
  if (sim_) {
    return sim_.get();
  }
  return free_runtime_.get();
}

Status World::run(const std::function<void()>& body) {
  if (sim_) {
    return sim_->run(body);
  }
  if (free_runtime_) {
    free_runtime_->run(body);
    return Status();
  }
  body();
  return Status();
}

bool World::completed() const { return !sim_ || sim_->outcome() == SimOutcome::kCompleted; }

Status World::first_violation() const {
  Status lifetime = oracle_.status();
  if (embedder_oracle_ == nullptr) {
    return lifetime;
  }
  return embedder_first_violation(embedder_oracle_->status(), lifetime);
}

Status World::verdict(const Status& run_status, const Status& workload, const EngineStats& stats) {
  if (Status status = first_violation(); !status.ok()) {
    return status;
  }
  const bool run_completed = run_status.ok() && completed();
  if (embedder_oracle_ != nullptr && !run_completed) {
    if (Status status = embedder_oracle_->finish(/*run_completed=*/false); !status.ok()) {
      return status;  // U9: the run was cut inside a callback
    }
  }
  if (!run_status.ok()) {
    return run_status;
  }
  if (!completed()) {
    return Status(StatusCode::kInternal, "the run did not complete");
  }
  if (Status status = oracle_.finish(); !status.ok()) {
    return status;
  }
  if (embedder_oracle_ != nullptr) {
    if (Status status = embedder_oracle_->finish(); !status.ok()) {
      return status;
    }
  }
  if (!workload.ok()) {
    return workload;
  }
  if (Status status = engine_verdict(stats); !status.ok()) {
    return status;
  }
  return leak_verdict();
}

Status World::engine_verdict(const EngineStats& stats) const {
  if (stats.connections_live != 0) {
    return Status(StatusCode::kInternal, "engine reports " +
                                             std::to_string(stats.connections_live) +
                                             " live connections after stop()");
  }
  if (!fake_) {
    return Status();
  }
  // Every REMOVE the fake dropped with a close behind the engine's back was found lost (or stop()
  // would not have returned), and no other: one that still came answered its probe.
  const std::uint64_t dropped = fake_->stats().removes_dropped;
  if (stats.removes_lost != dropped) {
    return Status(StatusCode::kInternal,
                  "the fake dropped " + std::to_string(dropped) +
                      " REMOVE packets with closes behind the engine's back, and the engine "
                      "counts " +
                      std::to_string(stats.removes_lost) + " lost REMOVEs");
  }
  return Status();
}

Status World::leak_verdict() const {
  if (ledger_) {
    return ledger_->check_closed();
  }
  const FakeStats stats = fake_->stats();
  if (stats.registrations_live == 0 && stats.packets_queued == 0 && stats.ports_open == 0 &&
      stats.waiters == 0 && stats.sockets_open == 0) {
    return Status();
  }
  return Status(StatusCode::kInternal,
                "leak: after stop() the fake still holds " + fake_stats_text(stats));
}

std::vector<std::pair<std::string, std::uint64_t>> World::coverage() const {
  std::vector<std::pair<std::string, std::uint64_t>> rows;
  for (auto& row : oracle_.coverage()) {
    if (row.first.rfind("fault.", 0) != 0) {
      rows.push_back(row);
    }
  }
  // Every fault site from FaultyOs's own counts (zero rows included, so that a site that never
  // fired shows; the oracle lists only the sites it saw fire).
  const FaultCounts faults = faulty_->counts();
  std::uint64_t outages_cut = 0;
  for (std::uint32_t i = 0; i < kFaultSiteCount; ++i) {
    rows.emplace_back(std::string("fault.") + fault_site_name(static_cast<FaultSite>(i)),
                      faults.fired[i]);
  }
  for (std::uint32_t i = 0; i < kFaultSiteCount; ++i) {
    rows.emplace_back(std::string("outage.") + fault_site_name(static_cast<FaultSite>(i)),
                      faults.outages[i]);
    outages_cut += faults.outages_cut[i];
  }
  const std::uint64_t deep[] = {faults.psn_regs_runs, faults.psn_dequeue_runs,
                                faults.post_runs,     faults.thread_start_runs,
                                outages_cut,          fake_ ? fake_->stats().removes_dropped : 0,
                                tuples_.slot_last,    tuples_.last_free_taken};
  static_assert(std::size(deep) == std::size(kDeepRows));
  for (std::size_t i = 0; i < std::size(kDeepRows); ++i) {
    rows.emplace_back(kDeepRows[i], deep[i]);
  }
  return rows;
}

std::vector<std::string> World::coverage_names() {
  std::vector<std::string> rows = LifetimeOracle::coverage_names();
  for (const char* prefix : {"fault.", "outage."}) {
    for (std::uint32_t i = 0; i < kFaultSiteCount; ++i) {
      rows.push_back(std::string(prefix) + fault_site_name(static_cast<FaultSite>(i)));
    }
  }
  for (const char* row : kDeepRows) {
    rows.push_back(row);
  }
  return rows;
}

void world_keep_abandoned(std::shared_ptr<void> run) {
  static auto* mutex = new std::mutex;  // never destroyed: used until exit
  static auto* runs = new std::vector<std::shared_ptr<void>>;
  std::lock_guard<std::mutex> guard(*mutex);
  runs->push_back(std::move(run));
}

std::string World::hang_detail() {
  std::string open;
  if (!oracle_.try_describe_open(&open)) {
    open = "(the oracle was busy)";
  }
  return "the fake holds: " + fake_stats_text(fake_->stats()) + "\n" + open;
}

}  // namespace readyport
