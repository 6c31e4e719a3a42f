#include "readyport/fake/trace.hpp"

#include <algorithm>
#include <charconv>
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

namespace {

// Appends `value` in decimal.
void append_decimal(std::string& text, std::uint64_t value) {
  char digits[24];
  const std::to_chars_result written = std::to_chars(digits, digits + sizeof(digits), value);
  READYPORT_ASSERT(written.ec == std::errc());
  text.append(digits, written.ptr);
}

}  // namespace

Trace::Trace(TraceOptions options) : options_(options) {}

void Trace::record(std::uint64_t time_ns, std::uint32_t thread, std::string_view event) {
  READYPORT_ASSERT(event.find('\n') == std::string_view::npos);
  std::lock_guard<std::mutex> guard(mutex_);
  // "<seq> <time_ns> T<thread> " (to_chars: the same digits as printf's %llu, without its cost).
  line_.clear();
  append_decimal(line_, line_count_);
  line_.append(" ");
  append_decimal(line_, time_ns);
  line_.append(" T");
  append_decimal(line_, thread);
  line_.append(" ");
  line_.append(event);
  line_.push_back('\n');
  hash_ = fnv1a64(line_, hash_);
  line_count_ += 1;
  if (options_.projections && event.substr(0, 6) != "sched.") {
    if (thread_hashes_.size() <= thread) {
      thread_hashes_.resize(std::size_t{thread} + 1, kFnv1a64OffsetBasis);
    }
    // The line without its seq: "<time_ns> T<thread> <event>\n".
    const std::size_t seq_end = line_.find(' ');
    thread_hashes_[thread] =
        fnv1a64(std::string_view(line_).substr(seq_end + 1), thread_hashes_[thread]);
  }
  if (options_.keep_full) {
    text_.append(line_);
  }
  if (options_.tail_lines_max > 0) {
    // A ring: once full, the oldest line's string is overwritten in place (no allocation).
    if (tail_.size() < options_.tail_lines_max) {
      tail_.push_back(line_);
    } else {
      tail_[tail_oldest_].assign(line_);
      tail_oldest_ = (tail_oldest_ + 1) % tail_.size();
    }
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

std::uint64_t Trace::projection_hash() const {
  READYPORT_ASSERT(options_.projections);
  std::lock_guard<std::mutex> guard(mutex_);
  std::uint64_t hash = kFnv1a64OffsetBasis;
  for (const std::uint64_t thread_hash : thread_hashes_) {
    for (int shift = 0; shift < 64; shift += 8) {
      hash = (hash ^ static_cast<std::uint8_t>(thread_hash >> shift)) * kFnv1a64Prime;
    }
  }
  return hash;
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
  std::vector<std::string> lines;
  lines.reserve(tail_.size());
  for (std::size_t i = 0; i < tail_.size(); ++i) {
    lines.push_back(tail_[(tail_oldest_ + i) % tail_.size()]);
  }
  return lines;
}

void Trace::clear() {
  std::lock_guard<std::mutex> guard(mutex_);
  hash_ = kFnv1a64OffsetBasis;
  line_count_ = 0;
  thread_hashes_.clear();
  text_.clear();
  tail_.clear();
  tail_oldest_ = 0;
}

}  // namespace readyport
