// FaultPlan: site names, the swarm draw, and the text form. See fault_plan.hpp.
#include "readyport/fake/fault_plan.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "readyport/assert.hpp"
#include "readyport/fake/rng.hpp"

namespace readyport {

namespace {

// Indexed by FaultSite; the names are the stable text of plans, traces and coverage rows.
constexpr std::array<const char*, kFaultSiteCount> kSiteNames = {
    "psn.call_fails",    "psn.enable_fails", "psn.remove_fails",  "psn.wait_short",
    "psn.dequeue_fewer", "post.fails",       "port.create_fails", "thread.start_fails",
    "recv.wouldblock",   "send.wouldblock",  "recv.connreset",    "send.connreset",
    "send.nobufs",       "accept.emfile",    "accept.connreset",  "close.abortive",
};

std::size_t index_of(FaultSite site) {
  const auto index = static_cast<std::size_t>(site);
  READYPORT_ASSERT(index < kFaultSiteCount);
  return index;
}

// "psn.call_fails, psn.enable_fails, ...": for messages.
std::string known_sites() {
  std::string text;
  for (const char* name : kSiteNames) {
    if (!text.empty()) {
      text += ", ";
    }
    text += name;
  }
  return text;
}

Status bad_token(std::string_view token, std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                "fault plan: bad token '" + std::string(token) + "': " + std::string(why));
}

// A decimal rate 1..100 (at most three digits, no sign); false otherwise.
bool parse_rate(std::string_view text, std::uint32_t* rate_out) {
  if (text.empty() || text.size() > 3) {
    return false;
  }
  std::uint32_t rate = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
    rate = rate * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (rate == 0 || rate > 100) {
    return false;
  }
  *rate_out = rate;
  return true;
}

// A decimal hit number 1..2^64-1 (no sign, no leading '+'); false otherwise.
bool parse_hit(std::string_view text, std::uint64_t* hit_out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') {
    return false;
  }
  std::uint64_t hit = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), hit);
  if (error != std::errc() || end != text.data() + text.size() || hit == 0) {
    return false;
  }
  *hit_out = hit;
  return true;
}

// The "@rate" and the "!hits" or "~msms" parts of a rated token whose site ends at `at`.
void split_rate_and_outage(std::string_view token, std::size_t at, std::string_view* rate_out,
                           std::string_view* outage_out) {
  const std::string_view rest =
      at == std::string_view::npos ? std::string_view() : token.substr(at);
  const std::size_t outage_at = rest.find_first_of("!~");
  *outage_out = outage_at == std::string_view::npos ? std::string_view() : rest.substr(outage_at);
  *rate_out = rest.substr(0, outage_at);
}

// An outage after a site and its rate: "!<hits>" or "~<milliseconds>ms", into one of the two.
Status parse_outage(std::string_view token, std::string_view outage, std::uint16_t* hits_out,
                    std::uint32_t* ms_out) {
  std::uint64_t length = 0;
  const bool in_hits = outage.front() == '!';
  std::string_view digits = outage.substr(1);
  if (!in_hits) {
    if (digits.size() < 3 || digits.substr(digits.size() - 2) != "ms") {
      return bad_token(token, "a time outage is written ~<milliseconds>ms");
    }
    digits.remove_suffix(2);
  }
  const std::uint64_t low = in_hits ? FaultPlan::kOutageHitsMin : 1;
  const std::uint64_t high = in_hits ? FaultPlan::kOutageHitsMax : FaultPlan::kOutageMsMax;
  if (!parse_hit(digits, &length) || length < low || length > high) {
    return bad_token(token, in_hits ? "an outage of hits is !2 to !1000"
                                    : "an outage of time is ~1ms to ~60000ms");
  }
  if (in_hits) {
    *hits_out = static_cast<std::uint16_t>(length);
  } else {
    *ms_out = static_cast<std::uint32_t>(length);
  }
  return Status();
}

}  // namespace

const char* fault_site_name(FaultSite site) { return kSiteNames[index_of(site)]; }

bool fault_site_outage_in_time(FaultSite site) {
  switch (site) {
    case FaultSite::kPsnWaitShort:
    case FaultSite::kRecvWouldblock:
    case FaultSite::kSendWouldblock:
    case FaultSite::kSendNobufs:
    case FaultSite::kAcceptEmfile:
    case FaultSite::kAcceptConnreset:
      return false;
    default:
      return true;
  }
}

Result<FaultSite> fault_site_parse(std::string_view name) {
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    if (name == kSiteNames[i]) {
      return static_cast<FaultSite>(i);
    }
  }
  return Status(StatusCode::kInvalidArgument, "unknown fault site '" + std::string(name) + "'");
}

FaultPlan FaultPlan::draw(std::uint64_t seed) {
  Rng rng = SeedStreams(seed).stream(SeedStream::kFaults);
  FaultPlan plan;
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    // Two numbers per site whatever the outcome, so a site's draw never depends on another's.
    const bool active = rng.chance(1, 2);
    const std::uint64_t rate = rng.below(kDrawRatesPercent.size());
    if (active) {
      plan.rates_percent_[i] = static_cast<std::uint8_t>(kDrawRatesPercent[rate]);
    }
  }
  // Outages after the rates (so the rates are those of the draw before outages existed): three
  // numbers per site, whatever the outcome.
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    const bool outage = rng.chance(1, 4);
    const bool in_hits = rng.chance(1, 2);
    const std::uint64_t length = rng.below(kDrawOutageHits.size());
    if (!outage || plan.rates_percent_[i] == 0) {
      continue;
    }
    if (in_hits || !fault_site_outage_in_time(static_cast<FaultSite>(i))) {
      plan.outage_hits_[i] = static_cast<std::uint16_t>(kDrawOutageHits[length]);
    } else {
      plan.outage_ms_[i] = kDrawOutageMs[length];
    }
  }
  return plan;
}

Result<FaultPlan> FaultPlan::parse(std::string_view text) {
  if (text == "none" || text == "off") {
    return FaultPlan();
  }
  if (text.empty()) {
    return bad_token(text, "empty plan (write 'none')");
  }
  FaultPlan plan;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view token = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (token.empty()) {
      return bad_token(token, "empty token in '" + std::string(text) + "'");
    }
    const std::size_t at = token.find_first_of("@#!~");
    const Result<FaultSite> site = fault_site_parse(token.substr(0, at));
    if (!site.ok()) {
      return bad_token(token, "unknown site (known: " + known_sites() + ")");
    }
    const std::size_t i = index_of(site.value());
    if (at != std::string_view::npos && token[at] == '#') {
      std::uint64_t hit = 0;
      if (!parse_hit(token.substr(at + 1), &hit)) {
        return bad_token(token, "the hit must be a whole number from 1 to 2^64-1");
      }
      if (plan.rates_percent_[i] != 0) {
        return bad_token(token, "the site is both rated (@) and pinned (#)");
      }
      if (plan.hits_.size() >= kHitsMax) {
        return bad_token(token, "more than " + std::to_string(kHitsMax) + " pinned hits");
      }
      const FaultHit entry{site.value(), hit};
      if (std::binary_search(plan.hits_.begin(), plan.hits_.end(), entry)) {
        return bad_token(token, "the hit is given twice");
      }
      // Kept sorted as they come: pinned(), asked for each later rated token, binary-searches.
      plan.hits_.insert(std::upper_bound(plan.hits_.begin(), plan.hits_.end(), entry), entry);
    } else {
      // site[@rate][!hits|~msms]
      std::string_view rest;
      std::string_view outage;
      split_rate_and_outage(token, at, &rest, &outage);
      std::uint32_t rate = kRateDefaultPercent;
      if (!rest.empty() && (rest.front() != '@' || !parse_rate(rest.substr(1), &rate))) {
        return bad_token(token, "the rate must be a whole percent from 1 to 100");
      }
      if (!outage.empty()) {
        if (Status parsed = parse_outage(token, outage, &plan.outage_hits_[i], &plan.outage_ms_[i]);
            !parsed.ok()) {
          return parsed;
        }
      }
      if (plan.rates_percent_[i] != 0) {
        return bad_token(token, "the site is given twice");
      }
      if (plan.pinned(site.value())) {
        return bad_token(token, "the site is both rated (@) and pinned (#)");
      }
      plan.rates_percent_[i] = static_cast<std::uint8_t>(rate);
    }
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  return plan;  // hits_ sorted as they were inserted
}

FaultPlan FaultPlan::of_hits(std::vector<FaultHit> hits) {
  READYPORT_ASSERT(hits.size() <= kHitsMax);
  std::sort(hits.begin(), hits.end());
  READYPORT_ASSERT(std::adjacent_find(hits.begin(), hits.end()) == hits.end());
  FaultPlan plan;
  for (const FaultHit& entry : hits) {
    READYPORT_ASSERT(entry.hit >= 1);
    (void)index_of(entry.site);
  }
  plan.hits_ = std::move(hits);
  return plan;
}

FaultPlan FaultPlan::restricted_to(const std::vector<FaultSite>& sites) const {
  FaultPlan plan;
  for (const FaultSite site : sites) {
    const std::size_t i = index_of(site);
    plan.rates_percent_[i] = rates_percent_[i];
    plan.outage_hits_[i] = outage_hits_[i];
    plan.outage_ms_[i] = outage_ms_[i];
    for (const FaultHit& entry : hits_) {
      if (entry.site == site) {
        plan.hits_.push_back(entry);
      }
    }
  }
  std::sort(plan.hits_.begin(), plan.hits_.end());
  plan.hits_.erase(std::unique(plan.hits_.begin(), plan.hits_.end()), plan.hits_.end());
  return plan;
}

FaultPlan FaultPlan::without(FaultSite site) const {
  FaultPlan plan = without_outage(site);
  plan.rates_percent_[index_of(site)] = 0;
  std::erase_if(plan.hits_, [site](const FaultHit& entry) { return entry.site == site; });
  return plan;
}

FaultPlan FaultPlan::with(FaultSite site, std::uint32_t rate_percent) const {
  READYPORT_ASSERT(rate_percent >= 1 && rate_percent <= 100);
  FaultPlan plan = without(site);
  plan.rates_percent_[index_of(site)] = static_cast<std::uint8_t>(rate_percent);
  return plan;
}

FaultPlan FaultPlan::with_outage(FaultSite site, std::uint32_t hits, std::uint32_t ms) const {
  READYPORT_ASSERT(rate_percent(site) != 0);
  READYPORT_ASSERT((hits == 0) != (ms == 0));
  READYPORT_ASSERT(hits == 0 || (hits >= kOutageHitsMin && hits <= kOutageHitsMax));
  READYPORT_ASSERT(ms <= kOutageMsMax);
  FaultPlan plan = *this;
  plan.outage_hits_[index_of(site)] = static_cast<std::uint16_t>(hits);
  plan.outage_ms_[index_of(site)] = ms;
  return plan;
}

FaultPlan FaultPlan::without_outage(FaultSite site) const {
  FaultPlan plan = *this;
  plan.outage_hits_[index_of(site)] = 0;
  plan.outage_ms_[index_of(site)] = 0;
  return plan;
}

std::uint32_t FaultPlan::outage_hits(FaultSite site) const { return outage_hits_[index_of(site)]; }

std::uint32_t FaultPlan::outage_ms(FaultSite site) const { return outage_ms_[index_of(site)]; }

bool FaultPlan::has_time_outage() const {
  return std::any_of(outage_ms_.begin(), outage_ms_.end(),
                     [](std::uint32_t ms) { return ms != 0; });
}

std::uint32_t FaultPlan::rate_percent(FaultSite site) const {
  return rates_percent_[index_of(site)];
}

bool FaultPlan::pinned(FaultSite site) const {
  const auto it = std::lower_bound(hits_.begin(), hits_.end(), FaultHit{site, 0});
  return it != hits_.end() && it->site == site;
}

bool FaultPlan::fires_at(FaultSite site, std::uint64_t hit) const {
  return std::binary_search(hits_.begin(), hits_.end(), FaultHit{site, hit});
}

std::uint32_t FaultPlan::active_count() const {
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    count += active(static_cast<FaultSite>(i)) ? 1 : 0;
  }
  return count;
}

std::string FaultPlan::to_string() const {
  std::string text;
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    if (rates_percent_[i] != 0) {
      if (!text.empty()) {
        text += ',';
      }
      text += kSiteNames[i];
      text += '@';
      text += std::to_string(rates_percent_[i]);
      if (outage_hits_[i] != 0) {
        text += '!';
        text += std::to_string(outage_hits_[i]);
      } else if (outage_ms_[i] != 0) {
        text += '~';
        text += std::to_string(outage_ms_[i]);
        text += "ms";
      }
    }
    for (const FaultHit& entry : hits_) {
      if (index_of(entry.site) != i) {
        continue;
      }
      if (!text.empty()) {
        text += ',';
      }
      text += kSiteNames[i];
      text += '#';
      text += std::to_string(entry.hit);
    }
  }
  return text.empty() ? std::string("none") : text;
}

}  // namespace readyport
