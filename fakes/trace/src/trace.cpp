#include "readyport/fake/trace.hpp"

#include <algorithm>
#include <cstdio>

#include "readyport/assert.hpp"

namespace readyport {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t basis) {
  std::uint64_t hash = basis;
  for (const char c : bytes) {
    hash ^= static_cast<std::uint8_t>(c);
    hash *= kFnv1a64Prime;
  }
  return hash;
}

std::string hash_hex(std::uint64_t hash) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(hash));
  return std::string(buffer, 16);
}

std::uint32_t CountingTraceContext::trace_thread() const {
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard<std::mutex> guard(mutex_);
  // A linear search over at most kThreadsMax ids: traces of real backends are not hot paths.
  const auto found = std::find(threads_.begin(), threads_.end(), self);
  if (found != threads_.end()) {
    return static_cast<std::uint32_t>(found - threads_.begin()) + 1;
  }
  if (threads_.size() >= kThreadsMax) {
    return kThreadsMax + 1;
  }
  threads_.push_back(self);
  return static_cast<std::uint32_t>(threads_.size());
}

Trace::Trace(TraceOptions options) : options_(options) {}

void Trace::record(std::uint64_t time_ns, std::uint32_t thread, std::string_view event) {
  READYPORT_ASSERT(event.find('\n') == std::string_view::npos);
  std::lock_guard<std::mutex> guard(mutex_);
  char prefix[64];
  const int prefix_size = std::snprintf(
      prefix, sizeof(prefix), "%llu %llu T%u ", static_cast<unsigned long long>(line_count_),
      static_cast<unsigned long long>(time_ns), static_cast<unsigned>(thread));
  READYPORT_ASSERT(prefix_size > 0 && static_cast<std::size_t>(prefix_size) < sizeof(prefix));
  line_.assign(prefix, static_cast<std::size_t>(prefix_size));
  line_.append(event);
  line_.push_back('\n');
  hash_ = fnv1a64(line_, hash_);
  line_count_ += 1;
  if (options_.keep_full) {
    text_.append(line_);
  }
  if (options_.tail_lines_max > 0) {
    if (tail_.size() == options_.tail_lines_max) {
      tail_.pop_front();
    }
    tail_.push_back(line_);
  }
  // Under the mutex: the sink sees the lines one at a time and in seq order.
  if (sink_ != nullptr) {
    sink_->on_trace_line(line_);
  }
}

void Trace::set_sink(TraceSink* sink) {
  std::lock_guard<std::mutex> guard(mutex_);
  sink_ = sink;
}

std::uint64_t Trace::hash() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return hash_;
}

std::uint64_t Trace::line_count() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return line_count_;
}

std::string Trace::text() const {
  READYPORT_ASSERT(options_.keep_full);
  std::lock_guard<std::mutex> guard(mutex_);
  return text_;
}

bool Trace::try_text(std::string* text_out) const {
  if (!options_.keep_full) {
    return false;
  }
  std::unique_lock<std::mutex> guard(mutex_, std::try_to_lock);
  if (!guard.owns_lock()) {
    return false;
  }
  *text_out = text_;
  return true;
}

std::vector<std::string> Trace::tail() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return std::vector<std::string>(tail_.begin(), tail_.end());
}

void Trace::clear() {
  std::lock_guard<std::mutex> guard(mutex_);
  hash_ = kFnv1a64OffsetBasis;
  line_count_ = 0;
  text_.clear();
  tail_.clear();
}

}  // namespace readyport
