// sim_fiber.hpp: SimScheduler internals. One user-space execution context (a "fiber"): its own
// stack, entered and left only by explicit switches on one OS thread, without the kernel.
//
// Mechanism. POSIX: a stack mapped by mmap below a PROT_NONE guard page, so an overflow faults at
// once instead of corrupting a neighbour. On x86-64 Linux a switch is a few instructions of
// assembly (sim_fiber.cpp, readyport_sim_switch: the System V callee-saved registers, MXCSR and
// the x87 control word pushed on the old stack, the stack pointer swapped, popped from the new):
// no system call. Elsewhere ucontext (getcontext/makecontext/swapcontext), portable and without
// assembly, whose swapcontext saves and restores the signal mask with one rt_sigprocmask system
// call per switch (~0.1-0.2 us: a tenth of a small world's time went to it). The signal mask is
// the OS thread's and no fiber changes it, so the assembly switch need not carry it.
// READYPORT_SIM_FIBERS_UCONTEXT_ONLY (a compile definition) keeps ucontext on x86-64 too.
// Windows: Win32 fibers (ConvertThreadToFiber, CreateFiber, SwitchToFiber); their stacks get the
// system's guard page.
//
// Sanitizers. Under AddressSanitizer every switch is wrapped in __sanitizer_start_switch_fiber /
// __sanitizer_finish_switch_fiber (so ASan knows which stack is current), and a fiber's stack is
// unpoisoned before it is unmapped. An abandoned fiber's stack (see abandon()) stays mapped and is
// registered as a LeakSanitizer root region: what its frames point to is reachable, as it is from
// a blocked real thread's stack. Under ThreadSanitizer each fiber is a __tsan_create_fiber fiber
// and every switch calls __tsan_switch_to_fiber first (flags 0: the switch synchronises).
//
// Ownership and lifetime: the scheduler's SimThread owns its SimFiber, which owns its stack
// mapping until destroyed (an abandoned fiber's stack is kept mapped for the process's life).
// Threading: a SimFiber is used by one OS thread at a time, the one running its scheduler. The
// only per-OS-thread state is the transient "who switched" pointer of the ASan bookkeeping
// (thread_local): several schedulers may run on different OS threads at once.
// Errors: start() returns a Status when the OS refuses a stack; broken contracts assert.
#pragma once

#include <cstddef>
#include <cstdint>

#include "readyport/status.hpp"

#if defined(_WIN32)
#define READYPORT_SIM_FIBERS_WIN32 1
#elif defined(__linux__) || defined(__APPLE__) || defined(__unix__)
#define READYPORT_SIM_FIBERS_UCONTEXT 1
#include <ucontext.h>
#if defined(__x86_64__) && defined(__linux__) && !defined(READYPORT_SIM_FIBERS_UCONTEXT_ONLY)
#define READYPORT_SIM_SWITCH_ASM 1  // the stack is mapped as for ucontext; the switch is ours
#endif
#endif

namespace readyport::internal {

// Whether this build can run fibers (false: SimMechanism::kFibers is refused).
bool sim_fibers_available();

class SimFiber {
 public:
  // Called on the fiber's own stack when it is first switched to. Must never return: it ends by
  // switch_final() (or is abandoned, switched away from and never resumed).
  using Entry = void (*)(void* argument);

  // An empty context. Either adopt_thread() (the OS thread's own context) or start() it.
  SimFiber() = default;
  // Frees the stack, unless abandon() kept it. Must not be the running context.
  ~SimFiber();
  SimFiber(const SimFiber&) = delete;
  SimFiber& operator=(const SimFiber&) = delete;

  // Makes this the calling OS thread's own context (the one run() was called on), to switch back
  // to. Windows: converts the thread into a fiber (undone by release_thread()); a thread that is
  // a fiber already is refused with kFailedPrecondition.
  Status adopt_thread();
  // Undoes adopt_thread(); call on the same OS thread, from this context, after the last switch.
  void release_thread();

  // Gives this context a stack of `stack_bytes` (rounded up to whole pages; plus a guard page on
  // POSIX) on which `entry(argument)` runs when first switched to. kResourceExhausted if the OS
  // refuses the memory.
  Status start(std::size_t stack_bytes, Entry entry, void* argument);

  // Switches from `from` (the running context) to `to`. Returns when some context switches back
  // to `from`.
  static void switch_to(SimFiber& from, SimFiber& to);
  // The last switch away from `from`, whose work is done: it is never resumed (ASan drops its
  // fake stack). `from`'s stack may be freed once this returned elsewhere.
  [[noreturn]] static void switch_final(SimFiber& from, SimFiber& to);

  // `from` will never run again but its frames may still be referenced (an abandoned logical
  // thread): keeps the stack mapped for good and lets LeakSanitizer scan it.
  void abandon();

  bool started() const { return entry_ != nullptr || thread_adopted_; }

 private:
  static void finish_switch(void* fake_stack);
#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
  // start()'s parts: the stack (from the pool or mapped, with its guard page), then the context
  // that enters entry_ on it.
  Status map_stack(std::size_t stack_bytes);
  void prepare_context();
  static void trampoline(unsigned int high, unsigned int low);
#if defined(READYPORT_SIM_SWITCH_ASM)
  static void asm_entry(void* self);
  void* stack_pointer_ = nullptr;  // while switched away: where its registers were pushed
#endif
  ucontext_t context_{};
  void* map_ = nullptr;  // the mapping: guard page then stack
  std::size_t map_bytes_ = 0;
#elif defined(READYPORT_SIM_FIBERS_WIN32)
  static void __stdcall win32_entry(void* self);
  void* win32_fiber_ = nullptr;   // CreateFiber's or ConvertThreadToFiber's handle
  bool win32_converted_ = false;  // adopt_thread() converted the thread (release_thread undoes)
#endif
  Entry entry_ = nullptr;
  void* argument_ = nullptr;
  void* stack_ = nullptr;  // the usable stack's lowest address (null: none of our own)
  std::size_t stack_bytes_ = 0;
  bool thread_adopted_ = false;
  bool abandoned_ = false;
  // AddressSanitizer: this context's fake stack while switched away, and its stack bounds (for
  // the OS thread's context, learnt at the first switch away from it).
  void* asan_fake_stack_ = nullptr;
  const void* asan_bottom_ = nullptr;
  std::size_t asan_size_ = 0;
  // ThreadSanitizer: this context's fiber (__tsan_get_current_fiber() for the thread's own).
  void* tsan_fiber_ = nullptr;
};

}  // namespace readyport::internal
