// The harness's last words: while a seed runs, a process that dies of a signal (an assertion's
// abort, a crash in the embedder's code) first writes which seed it was running and the command
// that replays it. Internal to the harness.
//
// Ownership: one static message. Threading: arm and disarm from the harness's thread; the handler
// runs on whichever thread dies, and only writes the message (async-signal-safe on POSIX). Errors:
// none; where handlers cannot be installed, nothing is printed.
#pragma once

#include <string>

namespace readyport::harness_internal {

// Installs the handlers (once) and sets the message (cut at 4 KiB) for the seed about to run.
void last_words_arm(const std::string& message);
// No message: a death from now on prints nothing of the harness's, and the handlers before the
// first arm are back.
void last_words_disarm();

}  // namespace readyport::harness_internal
