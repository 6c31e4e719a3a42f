// readyport/fake/fault_plan.hpp: which fault sites FaultyOs fires, and how often.
//
// A fault site is one named way a seam call can go wrong (a transient PSN failure, a refused
// REMOVE, a stale readiness mask...). A FaultPlan says, for each site, whether it is active and
// its probability per hit in percent. A plan is a value: printable (to_string), parseable
// (parse, the exact inverse), and drawn from a seed (draw), so the plan of a failing run is one
// line of text and a seed replays it (FoundationDB's BUGGIFY, TigerBeetle's VOPR).
//
//   readyport::FaultPlan plan = readyport::FaultPlan::draw(seed);       // swarm: a pure function
//   std::printf("faults=%s\n", plan.to_string().c_str());               // psn.call_fails@25,...
//   readyport::Result<readyport::FaultPlan> again = readyport::FaultPlan::parse(plan.to_string());
//   readyport::FaultyOs os(inner, plan, seed, &trace, &context);        // faulty_os.hpp
//
// The sites, their stable names and what firing means (FaultyOs implements them; spec rules in
// brackets). Per-registration sites are drawn once per element of a PSN call's array; every
// other site once per eligible call.
//   psn.call_fails     PSN fails as a whole, nothing applied or dequeued; code ERROR_NOT_ENOUGH_
//                      MEMORY, ERROR_NO_SYSTEM_RESOURCES or WSAENOBUFS [A3]
//   psn.enable_fails   one ENABLE or DISABLE element not applied, result WSAENOBUFS [A8]
//   psn.remove_fails   one REMOVE element not applied, result WSAEINVAL [B6, E4]
//   psn.wait_short     a timed wait (timeout > 0, count > 0) ends at once [A2, A5]
//   psn.dequeue_fewer  fewer entries dequeued than were ready (count >= 2) [A1]
//   post.fails         PostQueuedCompletionStatus fails, ERROR_NOT_ENOUGH_MEMORY [F2]
//   port.create_fails  CreateIoCompletionPort fails, ERROR_NOT_ENOUGH_MEMORY [F5]
//   thread.start_fails thread_start fails with a Status, nothing started
//   recv.wouldblock    recv says WSAEWOULDBLOCK with data present (a stale mask) [D5]
//   send.wouldblock    send says WSAEWOULDBLOCK, nothing sent [D5]
//   recv.connreset     recv says WSAECONNRESET [D2]
//   send.connreset     send says WSAECONNRESET [D2]
//   send.nobufs        send says WSAENOBUFS
//   accept.emfile      accept says WSAEMFILE, the connection stays pending
//   accept.connreset   accept says WSAECONNRESET, the connection stays pending
//   close.abortive     closesocket of a connected stream socket resets it (the peer sees ERR) [D2]
// The enum order is stable (it fixes to_string's order and draw's stream): append new sites only.
//
// Text syntax: `none` (or `off`), or comma-separated tokens:
//   `site@rate`  the site fires on each hit with probability rate (a decimal percent 1..100);
//                `site` alone means rate kRateDefaultPercent;
//   `site#n`     the site fires at exactly its n-th hit (n from 1: FaultyOs counts each site's
//                hits from the start of the run), and at no other; one token per firing, so a
//                site pinned this way is given by all its `#n` tokens, e.g.
//                `psn.remove_fails#3,psn.remove_fails#17`.
//   `site@rate!k` a rated site with an outage of k hits (2..1000): once it fires by its rate, it
//                also fires at its next k-1 hits;
//   `site@rate~tms` a rated site with an outage of t milliseconds of virtual time (1..60000): once
//                it fires by its rate, it fires at every hit until t ms have passed since.
//                (FoundationDB's clogged links and machines down for a while, Jepsen's
//                partitions: independent per-hit faults reach the first failure of a path and
//                almost never the last; an outage reaches the paths behind an exhausted retry.)
// A site is either rated or pinned, never both. to_string writes the sites in enum order, rated
// ones with `@rate`, pinned ones as their `#n` tokens in increasing n; parse accepts any order
// but refuses a site given twice, a hit given twice, and a site both rated and pinned.
// Why pinned hits: a run's decision at a hit depends only on (seed, site, hit number)
// (faulty_os.hpp, DETERMINISM), so the plan made of exactly the hits that fired in a run replays
// that run, and leaving one of them out changes that one fault only. The shrinker
// (stress/jobs/stress_shrink.hpp) removes fired faults one at a time this way.
//
// Why draw() activates each site with probability 1/2 at 2, 10 or 25 percent: swarm testing
// (Groce et al.) wins by leaving some sites off in each run, so that paths which a frequent
// fault would always cut short get explored; FoundationDB activates about 25% of its BUGGIFY
// sites and fires an active one 25% of the time. Our site list is short (16) and each site
// guards a distinct engine path, so we keep half of them per run (about 8, so most runs still
// combine several recovery paths), and we add the low rates 2% and 10% because the engine's long
// paths (connect, many re-arms, REMOVE handshake, quarantine drain) take dozens of seam calls:
// at 25% per hit almost no connection would survive to the end of such a path, at 2% most do and
// the fault lands in the middle of one.
//
// draw() also gives each active site an outage with probability 1/4: half of them k hits (3, 8
// or 16: 8 and 16 exhaust the engine's default call_retry_max), half a window (50, 500 or 5000
// ms: the longest outlasts every backoff in the engine and the workload), in hits always for the
// sites fault_site_outage_in_time() excludes.
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
  // The inverse of to_string (see the syntax at the top). kInvalidArgument naming the bad token:
  // unknown site, rate not a number, rate 0 or above 100, a hit number not a decimal from 1 to
  // 2^64-1, a site given twice or both rated and pinned, a hit given twice, more than kHitsMax
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
