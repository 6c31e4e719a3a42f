// readyport/fake/fault_plan.hpp: which fault sites FaultyOs fires, and how often.
//
// A fault site is one named way a seam call can go wrong (a transient PSN failure, a refused
// REMOVE, a stale readiness mask...). A FaultPlan says, for each site, whether it is active and
// how it fires: at a rate per hit, with or without an outage, or at pinned hits. A plan is a
// value: printable (to_string), parseable (parse, the exact inverse), and drawn from a seed
// (draw), so the plan of a failing run is one line of text and a seed replays it (FoundationDB's
// BUGGIFY, TigerBeetle's VOPR).
//
//   readyport::FaultPlan plan = readyport::FaultPlan::draw(seed);       // swarm: a pure function
//   std::printf("faults=%s\n", plan.to_string().c_str());               // psn.call_fails@25,...
//   readyport::Result<readyport::FaultPlan> again = readyport::FaultPlan::parse(plan.to_string());
//   readyport::FaultyOs os(inner, plan, seed, &trace, &context);        // faulty_os.hpp
//
// The sites and what firing means: docs/faults.md#fault-sites. The text syntax (`site@rate`,
// `site#n`, `site@rate!k`, `site@rate~tms`): docs/faults.md#the-plans-text. Why draw() picks
// what it picks: docs/faults.md#why-the-draw-is-what-it-is.
//
// Ownership: a plain value. Threading: not synchronised; const methods may be called from any
// thread on an object nobody modifies. Errors: parse and fault_site_parse return a Status naming
// the bad token; with() asserts its rate (a contract).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/status.hpp"

namespace readyport {

// The fault sites, in a stable order (append only; kCount last).
enum class FaultSite : std::uint8_t {
  kPsnCallFails = 0,
  kPsnEnableFails,
  kPsnRemoveFails,
  kPsnWaitShort,
  kPsnDequeueFewer,
  kPostFails,
  kPortCreateFails,
  kThreadStartFails,
  kRecvWouldblock,
  kSendWouldblock,
  kRecvConnreset,
  kSendConnreset,
  kSendNobufs,
  kAcceptEmfile,
  kAcceptConnreset,
  kCloseAbortive,
  kCount,
};
inline constexpr std::size_t kFaultSiteCount = static_cast<std::size_t>(FaultSite::kCount);

// The site's stable name ("psn.call_fails"). Asserts a valid site (not kCount). Never null.
const char* fault_site_name(FaultSite site);
// Whether draw() gives `site` outages in time as well as in hits. Not for the sites whose failure
// is answered at once by another try with nothing waiting (a short wait; a stale readiness mask
// or a refused accept on a level registration, whose packet comes straight back): every thread
// would spin through the outage, and in the simulation virtual time passes only when every
// thread waits, so the outage would never end. A plan may still give them one (`~tms`): in the
// simulation such a run spins to its step limit.
bool fault_site_outage_in_time(FaultSite site);
// The site named `name` exactly; kInvalidArgument naming `name` otherwise.
Result<FaultSite> fault_site_parse(std::string_view name);

// One hit of one site: the site's `hit`-th draw in a run (1-based).
struct FaultHit {
  FaultSite site = FaultSite::kPsnCallFails;
  std::uint64_t hit = 1;

  friend bool operator==(const FaultHit& a, const FaultHit& b) = default;
  friend bool operator<(const FaultHit& a, const FaultHit& b) {
    return a.site != b.site ? a.site < b.site : a.hit < b.hit;
  }
};

struct FaultPlan {
 public:
  // The rate of a site written without `@rate`.
  static constexpr std::uint32_t kRateDefaultPercent = 25;
  // The rates draw() picks from.
  static constexpr std::array<std::uint32_t, 3> kDrawRatesPercent = {2, 10, 25};
  // The most pinned hits a plan holds (parse refuses more; of_hits asserts).
  static constexpr std::size_t kHitsMax = 20000;
  // Outages: their bounds, and the lengths draw() picks from.
  static constexpr std::uint32_t kOutageHitsMin = 2;
  static constexpr std::uint32_t kOutageHitsMax = 1000;
  static constexpr std::uint32_t kOutageMsMax = 60'000;
  static constexpr std::array<std::uint32_t, 3> kDrawOutageHits = {3, 8, 16};
  static constexpr std::array<std::uint32_t, 3> kDrawOutageMs = {50, 500, 5000};

  // No site active (the same as none()).
  FaultPlan() = default;
  static FaultPlan none() { return FaultPlan(); }
  // The swarm draw: each site active with probability 1/2, each active site's rate one of
  // kDrawRatesPercent, uniformly. A pure function of `seed`: it reads
  // SeedStreams(seed).stream(SeedStream::kFaults), two numbers per site in enum order.
  static FaultPlan draw(std::uint64_t seed);
  // The inverse of to_string (docs/faults.md#the-plans-text). kInvalidArgument naming the bad
  // token: unknown site, rate not a number, rate 0 or above 100, a hit number not a decimal from 1
  // to 2^64-1, a site given twice or both rated and pinned, a hit given twice, more than kHitsMax
  // hits, an empty token.
  static Result<FaultPlan> parse(std::string_view text);
  // The plan that fires exactly at `hits` (any order, no duplicates; at most kHitsMax:
  // asserted) and nowhere else.
  static FaultPlan of_hits(std::vector<FaultHit> hits);

  // This plan with only the sites in `sites` kept active (at their rates).
  FaultPlan restricted_to(const std::vector<FaultSite>& sites) const;
  // This plan with `site` inactive (its rate or its pinned hits gone).
  FaultPlan without(FaultSite site) const;
  // This plan with `site` active at `rate_percent`, which must be in 1..100 (asserted); no outage.
  FaultPlan with(FaultSite site, std::uint32_t rate_percent) const;
  // This plan with the rated `site` given an outage of `hits` hits (kOutageHitsMin..Max) or `ms`
  // milliseconds (1..kOutageMsMax): exactly one of the two non-zero (asserted, as the site being
  // rated).
  FaultPlan with_outage(FaultSite site, std::uint32_t hits, std::uint32_t ms) const;
  // This plan without `site`'s outage (its rate kept).
  FaultPlan without_outage(FaultSite site) const;

  bool active(FaultSite site) const { return rate_percent(site) != 0 || pinned(site); }
  // Per-hit probability in percent: 1..100 when rated, 0 when not (inactive or pinned).
  std::uint32_t rate_percent(FaultSite site) const;
  // The outage of a rated site: its length in hits, or in milliseconds; 0 when it has none.
  std::uint32_t outage_hits(FaultSite site) const;
  std::uint32_t outage_ms(FaultSite site) const;
  bool has_outage(FaultSite site) const { return outage_hits(site) != 0 || outage_ms(site) != 0; }
  // Whether any site has a time outage (FaultyOs then needs a clock: its trace context).
  bool has_time_outage() const;
  // Whether `site` fires at listed hits only (`site#n`).
  bool pinned(FaultSite site) const;
  // For a pinned site: whether its `hit`-th hit is listed.
  bool fires_at(FaultSite site, std::uint64_t hit) const;
  // The pinned hits, sorted by site (enum order), then hit.
  const std::vector<FaultHit>& hits() const { return hits_; }
  std::uint32_t active_count() const;
  // `psn.call_fails@25,psn.remove_fails#3`: active sites in enum order; `none` when empty.
  std::string to_string() const;

  friend bool operator==(const FaultPlan& a, const FaultPlan& b) {
    return a.rates_percent_ == b.rates_percent_ && a.hits_ == b.hits_ &&
           a.outage_hits_ == b.outage_hits_ && a.outage_ms_ == b.outage_ms_;
  }

 private:
  std::array<std::uint8_t, kFaultSiteCount> rates_percent_{};  // 0: not rated
  std::vector<FaultHit> hits_;                                 // sorted, unique
  std::array<std::uint16_t, kFaultSiteCount> outage_hits_{};   // 0: none; rated sites only
  std::array<std::uint32_t, kFaultSiteCount> outage_ms_{};     // 0: none; rated sites only
};

}  // namespace readyport
