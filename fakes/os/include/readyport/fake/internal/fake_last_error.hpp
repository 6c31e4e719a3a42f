// readyport/fake/internal/fake_last_error.hpp: FakeOs internals. The calling thread's last error
// (GetLastError / WSAGetLastError), thread-local as on Windows: one value per logical thread (per
// OS thread, or per fiber under SimScheduler's fibers: logical_locals.hpp), shared by every FakeOs
// in the process, set only by calls that fail (as Windows, success leaves it alone).
//
// Not a public API: FakeOs::last_error() is. Threading: any thread; each sees its own value.
#pragma once

#include <cstdint>

namespace readyport::fake_internal {

void last_error_set(std::uint32_t code);
std::uint32_t last_error_get();

}  // namespace readyport::fake_internal
