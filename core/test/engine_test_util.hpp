// core/test/engine_test_util.hpp: handlers and observers shared by the engine's tests.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "readyport/engine.hpp"

namespace readyport::test {

// Records every call; `on_event` decides the return value (default: IN). Thread-safe.
class RecordingHandler final : public Handler {
 public:
  std::function<Interest(ConnId, Socket, std::uint32_t)> on_event =
      [](ConnId, Socket, std::uint32_t) { return kInterestIn; };

  Interest on_events(ConnId id, Socket socket, std::uint32_t events) noexcept override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      calls_.push_back({id, events});
      ++inside_;
      if (inside_ > inside_max_) {
        inside_max_ = inside_;
      }
    }
    const Interest result = on_event(id, socket, events);
    std::lock_guard<std::mutex> lock(mutex_);
    --inside_;
    return result;
  }
  void on_closed(ConnId id) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_.push_back(id);
  }

  std::vector<std::pair<ConnId, std::uint32_t>> calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  std::vector<ConnId> closed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }
  int inside_max() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return inside_max_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<ConnId, std::uint32_t>> calls_;
  std::vector<ConnId> closed_;
  int inside_ = 0;
  int inside_max_ = 0;
};

// A one-shot gate between two test threads.
class Gate {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

class CountingTask final : public Task {
 public:
  void run() noexcept override { ++runs; }
  int runs = 0;
};

}  // namespace readyport::test
