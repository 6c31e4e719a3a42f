// The harness's last words. See last_words.hpp.
#include "last_words.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace readyport::harness_internal {
namespace {

constexpr int kSignals[] = {SIGABRT, SIGSEGV, SIGILL, SIGFPE};
constexpr std::size_t kMessageBytesMax = 4096;
char g_message[kMessageBytesMax + 2];
volatile std::sig_atomic_t g_length = 0;
bool g_installed = false;
#if !defined(_WIN32)
struct sigaction g_previous[std::size(kSignals)];
#else
void (*g_previous[std::size(kSignals)])(int);
#endif

extern "C" void on_fatal_signal(int signal_number) {
  const auto length = static_cast<std::size_t>(g_length);
  if (length > 0) {
#if !defined(_WIN32)
    const ssize_t written = write(STDERR_FILENO, g_message, length);
    (void)written;
#else
    std::fwrite(g_message, 1, length, stderr);
#endif
  }
  // The default action (or the handler before ours) follows: the process still dies of it.
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    if (kSignals[i] == signal_number) {
#if !defined(_WIN32)
      sigaction(signal_number, &g_previous[i], nullptr);
#else
      std::signal(signal_number, g_previous[i]);
#endif
    }
  }
  std::raise(signal_number);
}

void install() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
#if !defined(_WIN32)
    struct sigaction action{};
    action.sa_handler = on_fatal_signal;
    sigemptyset(&action.sa_mask);
    sigaction(kSignals[i], &action, &g_previous[i]);
#else
    g_previous[i] = std::signal(kSignals[i], on_fatal_signal);
#endif
  }
  g_installed = true;
}

}  // namespace

void last_words_arm(const std::string& message) {
  g_length = 0;
  const std::size_t length = std::min(message.size(), kMessageBytesMax);
  std::memcpy(g_message, message.data(), length);
  g_message[length] = '\n';
  if (!g_installed) {
    install();
  }
  g_length = static_cast<std::sig_atomic_t>(length + 1);
}

void last_words_disarm() {
  g_length = 0;
  if (!g_installed) {
    return;
  }
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
#if !defined(_WIN32)
    sigaction(kSignals[i], &g_previous[i], nullptr);
#else
    std::signal(kSignals[i], g_previous[i]);
#endif
  }
  g_installed = false;
}

}  // namespace readyport::harness_internal
