#include "readyport/fake/trace.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

#include "event_hash.hpp"
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

bool is_scheduler_line(std::string_view name) { return name.substr(0, 6) == "sched."; }

// `to` = `from`, without touching the lists when both are empty (most events have none).
template <typename Vector>
void copy_list(const Vector& from, Vector* to) {
  if (!from.empty() || !to->empty()) {
    *to = from;
  }
}

void tail_copy(const TraceEvent& from, TraceEvent* to) {
  to->seq = from.seq;
  to->time_ns = from.time_ns;
  to->thread = from.thread;
  to->name = from.name;
  to->name_word = from.name_word;
  to->words = from.words;
  to->fields = from.fields;
  to->has_result = from.has_result;
  to->result = from.result;
  to->result_fields = from.result_fields;
  to->has_regs = from.has_regs;
  copy_list(from.regs, &to->regs);
  to->has_entries = from.has_entries;
  copy_list(from.entries, &to->entries);
  copy_list(from.numbers, &to->numbers);
}

}  // namespace

void TraceSink::on_trace_event(const TraceEvent& event) {
  std::string line;
  trace_event_render(event, &line);
  on_trace_line(line);
}

Trace::Trace(TraceOptions options) : options_(options) {}

void Trace::record(std::uint64_t time_ns, std::uint32_t thread, TraceEvent& event) {
  std::unique_lock<std::mutex> guard(mutex_, std::defer_lock);
  if (!options_.serialized) {
    guard.lock();
  }
  event.seq = line_count_;
  event.time_ns = time_ns;
  event.thread = thread;
  hash_ = trace_internal::event_hash(event, hash_);
  line_count_ += 1;
  if (options_.projections && !is_scheduler_line(event.name)) {
    std::uint64_t& projection = projection_locked(thread);
    projection = trace_event_hash(event, projection);
  }
  if (options_.keep_full && keep_text_locked()) {
    trace_event_render(event, &text_);
  }
  if (options_.tail_lines_max > 0) {
    TailEntry& entry = tail_next_locked();
    tail_copy(event, &entry.event);
    entry.line.clear();
  }
  // Under the mutex: the sink sees the events one at a time and in seq order.
  if (sink_ != nullptr) {
    sink_->on_trace_event(event);
  }
}

void Trace::record(std::uint64_t time_ns, std::uint32_t thread, std::string_view event) {
  READYPORT_ASSERT(event.find('\n') == std::string_view::npos);
  std::lock_guard<std::mutex> guard(mutex_);
  // "<seq> <time_ns> T<thread> <event>\n" (to_chars: the same digits as printf's %llu).
  line_.clear();
  append_decimal(line_, line_count_);
  line_.append(" ");
  append_decimal(line_, time_ns);
  line_.append(" T");
  append_decimal(line_, thread);
  line_.append(" ");
  line_.append(event);
  line_.push_back('\n');
  hash_ = trace_text_hash(event, time_ns, thread, hash_);
  line_count_ += 1;
  if (options_.projections && !is_scheduler_line(event)) {
    std::uint64_t& projection = projection_locked(thread);
    projection = trace_text_hash(event, time_ns, thread, projection);
  }
  if (options_.keep_full && keep_text_locked()) {
    text_.append(line_);
  }
  if (options_.tail_lines_max > 0) {
    TailEntry& entry = tail_next_locked();
    entry.event.clear();
    entry.line.assign(line_);
  }
  if (sink_ != nullptr) {
    sink_->on_trace_line(line_);
  }
}

std::uint64_t& Trace::projection_locked(std::uint32_t thread) {
  if (thread_hashes_.size() <= thread) {
    thread_hashes_.resize(std::size_t{thread} + 1, kFnv1a64OffsetBasis);
  }
  return thread_hashes_[thread];
}

Trace::TailEntry& Trace::tail_next_locked() {
  // A ring: once full, the oldest entry is overwritten in place (its buffers are reused).
  if (tail_.size() < options_.tail_lines_max) {
    return tail_.emplace_back();
  }
  TailEntry& entry = tail_[tail_oldest_];
  tail_oldest_ = (tail_oldest_ + 1) % tail_.size();
  return entry;
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

std::uint64_t Trace::text_bytes() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return text_.capacity();
}

bool Trace::full_cut() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return full_cut_;
}

bool Trace::keep_text_locked() {
  // Room for the longest line, so that the text grows to its bound without doubling past it: once
  // a doubling would reach the bound, the bound is reserved instead (the old buffer and the new
  // are held together only then, at most 1.5 times the bound).
  constexpr std::size_t kLineRoom = 64 * 1024;
  READYPORT_ASSERT(!taken_);  // take_text() ends the recording
  const std::uint64_t max = options_.full_bytes_max;
  if (max == 0) {
    return true;
  }
  if (text_.size() >= max) {
    full_cut_ = true;
    return false;
  }
  if (text_.capacity() - text_.size() < kLineRoom && 2 * text_.capacity() >= max &&
      text_.capacity() < max + kLineRoom) {
    text_.reserve(static_cast<std::size_t>(max) + kLineRoom);
  }
  return true;
}

std::string Trace::take_text() {
  READYPORT_ASSERT(options_.keep_full);
  std::lock_guard<std::mutex> guard(mutex_);
  taken_ = true;
  return std::move(text_);
}

std::string Trace::text() const {
  READYPORT_ASSERT(options_.keep_full);
  std::lock_guard<std::mutex> guard(mutex_);
  READYPORT_ASSERT(!taken_);
  return text_;
}

bool Trace::try_text(std::string* text_out) const {
  if (!options_.keep_full) {
    return false;
  }
  std::unique_lock<std::mutex> guard(mutex_, std::try_to_lock);
  if (!guard.owns_lock() || full_cut_) {
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
    const TailEntry& entry = tail_[(tail_oldest_ + i) % tail_.size()];
    if (!entry.line.empty()) {
      lines.push_back(entry.line);
      continue;
    }
    std::string line;
    trace_event_render(entry.event, &line);
    lines.push_back(std::move(line));
  }
  return lines;
}

void Trace::clear() {
  std::lock_guard<std::mutex> guard(mutex_);
  hash_ = kFnv1a64OffsetBasis;
  line_count_ = 0;
  thread_hashes_.clear();
  text_.clear();
  full_cut_ = false;
  taken_ = false;
  tail_.clear();
  tail_oldest_ = 0;
}

}  // namespace readyport
