// SimFiber: user-space contexts for SimScheduler. See sim_fiber.hpp.
#include "sim_fiber.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "readyport/assert.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(READYPORT_SIM_ASAN)
#define READYPORT_SIM_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(READYPORT_SIM_TSAN)
#define READYPORT_SIM_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(READYPORT_SIM_ASAN)
#define READYPORT_SIM_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(READYPORT_SIM_TSAN)
#define READYPORT_SIM_TSAN 1
#endif

#if defined(READYPORT_SIM_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#endif
#if defined(READYPORT_SIM_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
#include <sys/mman.h>
#include <unistd.h>
#elif defined(READYPORT_SIM_FIBERS_WIN32)
#include <windows.h>
#endif

#if defined(READYPORT_SIM_SWITCH_ASM)
// readyport_sim_switch(from_sp, to_sp): pushes the System V callee-saved registers (rbp, rbx,
// r12-r15), then MXCSR and the x87 control word, on the running stack; stores the stack pointer
// in *from_sp; loads to_sp; pops the same from there and returns into the context that pushed
// them. A new fiber's stack is laid out as if it had switched away into readyport_sim_start
// (SimFiber::start), which calls r12(rbx) on a 16-byte aligned stack.
extern "C" void readyport_sim_switch(void** from_sp, void* to_sp);
extern "C" void readyport_sim_start();
asm(R"(
  .text
  .globl readyport_sim_switch
  .type readyport_sim_switch, @function
readyport_sim_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size readyport_sim_switch, .-readyport_sim_switch

  .globl readyport_sim_start
  .type readyport_sim_start, @function
readyport_sim_start:
  andq $-16, %rsp
  movq %rbx, %rdi
  callq *%r12
  ud2
  .size readyport_sim_start, .-readyport_sim_start
  .section .note.GNU-stack, "", @progbits
  .text
)");
#endif

namespace readyport::internal {

namespace {

#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
// Stacks of finished fibers, kept for the next ones: a run starts a handful of threads, and an
// exploration or a sweep runs millions of runs, each mapping, guarding and unmapping its stacks
// otherwise (a fifth of a small world's time went to those system calls). At most
// kStackPoolMax mappings are kept, of any size; a taker takes one of exactly its size.
struct StackMapping {
  void* map = nullptr;
  std::size_t bytes = 0;
};
constexpr std::size_t kStackPoolMax = 16;
std::mutex g_stack_pool_mutex;
std::vector<StackMapping> g_stack_pool;  // guarded by g_stack_pool_mutex; at most kStackPoolMax

void* stack_pool_take(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(g_stack_pool_mutex);
  for (std::size_t i = 0; i < g_stack_pool.size(); ++i) {
    if (g_stack_pool[i].bytes == bytes) {
      void* map = g_stack_pool[i].map;
      g_stack_pool[i] = g_stack_pool.back();
      g_stack_pool.pop_back();
      return map;
    }
  }
  return nullptr;
}

// True when the pool kept the mapping (guard page and all); false: the caller unmaps it.
bool stack_pool_give(void* map, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(g_stack_pool_mutex);
  if (g_stack_pool.size() >= kStackPoolMax) {
    return false;
  }
  g_stack_pool.push_back(StackMapping{map, bytes});
  return true;
}
#endif

#if defined(READYPORT_SIM_ASAN)
// The context that started the switch in progress on this OS thread: the one that lands learns
// the stack bounds it left (ASan needs them to switch back to the OS thread's own stack).
thread_local SimFiber* t_switch_from = nullptr;

// Registers as LeakSanitizer roots the fake frames (ASan's use-after-return frames, where the
// locals of instrumented functions live when detect_stack_use_after_return is on) that the words
// in [words, words + bytes) point into. LSan scans a switched-out fiber's fake stack nowhere, so
// for an abandoned fiber its locals' heap objects would be reported as leaks; its real stack and
// saved registers hold a pointer to each of its live fake frames (each frame keeps its own). Not
// instrumented: it reads the stack's poisoned redzones as plain words.
__attribute__((no_sanitize("address"))) void register_fake_frames(void* fake_stack,
                                                                  const void* words_raw,
                                                                  std::size_t bytes,
                                                                  std::vector<void*>& seen) {
  const auto* words = static_cast<void* const*>(words_raw);
  for (std::size_t i = 0; i < bytes / sizeof(void*); ++i) {
    void* begin = nullptr;
    void* end = nullptr;
    if (__asan_addr_is_in_fake_stack(fake_stack, words[i], &begin, &end) == nullptr) {
      continue;
    }
    if (std::find(seen.begin(), seen.end(), begin) != seen.end()) {
      continue;
    }
    seen.push_back(begin);
    __lsan_register_root_region(
        begin, static_cast<std::size_t>(static_cast<char*>(end) - static_cast<char*>(begin)));
  }
}
#endif

}  // namespace

bool sim_fibers_available() {
#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
  return true;
#elif defined(READYPORT_SIM_FIBERS_WIN32) && !defined(READYPORT_SIM_ASAN)
  return true;  // no ASan annotations for Win32 fibers: refused under clang-cl's ASan
#else
  return false;
#endif
}

SimFiber::~SimFiber() {
  if (abandoned_) {
    return;  // kept mapped for good (abandon())
  }
#if defined(READYPORT_SIM_TSAN)
  if (tsan_fiber_ != nullptr && !thread_adopted_) {
    __tsan_destroy_fiber(tsan_fiber_);
  }
#endif
#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
  if (map_ != nullptr) {
#if defined(READYPORT_SIM_ASAN)
    // Frames left poisoned shadow; a later mapping at this address must start clean.
    ASAN_UNPOISON_MEMORY_REGION(stack_, stack_bytes_);
#endif
    if (!stack_pool_give(map_, map_bytes_)) {
      const int unmapped = munmap(map_, map_bytes_);
      READYPORT_ASSERT(unmapped == 0);
    }
  }
#elif defined(READYPORT_SIM_FIBERS_WIN32)
  if (win32_fiber_ != nullptr && !thread_adopted_) {
    DeleteFiber(win32_fiber_);
  }
#endif
}

Status SimFiber::adopt_thread() {
  READYPORT_ASSERT(!started());
#if defined(READYPORT_SIM_FIBERS_WIN32)
  // A thread that is a fiber already (ERROR_ALREADY_FIBER) is refused rather than adopted:
  // GetCurrentFiber's inline TEB read trips mingw g++'s -Warray-bounds.
  win32_fiber_ = ConvertThreadToFiber(nullptr);
  if (win32_fiber_ == nullptr) {
    return Status(StatusCode::kFailedPrecondition,
                  "SimScheduler: ConvertThreadToFiber failed (error " +
                      std::to_string(GetLastError()) +
                      "; 1280 means the thread is a fiber already): use SimMechanism::kThreads");
  }
  win32_converted_ = true;
#endif
#if defined(READYPORT_SIM_TSAN)
  tsan_fiber_ = __tsan_get_current_fiber();
#endif
  thread_adopted_ = true;
  return Status();
}

void SimFiber::release_thread() {
  READYPORT_ASSERT(thread_adopted_);
#if defined(READYPORT_SIM_FIBERS_WIN32)
  if (win32_converted_) {
    const BOOL converted = ConvertFiberToThread();
    READYPORT_ASSERT(converted);
    win32_converted_ = false;
  }
  win32_fiber_ = nullptr;
#endif
  tsan_fiber_ = nullptr;  // the thread's own: never destroyed by us
  thread_adopted_ = false;
}

#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
Status SimFiber::map_stack(std::size_t stack_bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  READYPORT_ASSERT(page > 0 && (page & (page - 1)) == 0);
  const std::size_t usable = (stack_bytes + page - 1) & ~(page - 1);
  void* map = stack_pool_take(usable + page);
  if (map == nullptr) {
    map = mmap(nullptr, usable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
      return Status(StatusCode::kResourceExhausted, "SimScheduler: cannot map a fiber stack of " +
                                                        std::to_string(usable) + " bytes");
    }
    // The lowest page is the guard: stacks grow down, so an overflow faults there.
    const int guarded = mprotect(map, page, PROT_NONE);
    READYPORT_ASSERT(guarded == 0);
  }
  map_ = map;
  map_bytes_ = usable + page;
  stack_ = static_cast<char*>(map_) + page;
  stack_bytes_ = usable;
  return Status();
}

void SimFiber::prepare_context() {
#if defined(READYPORT_SIM_SWITCH_ASM)
  // The frame readyport_sim_switch pops, at the top of the stack (which is page aligned): the
  // control words (MXCSR's default, the x87's default), r15, r14, r13, r12 = asm_entry, rbx =
  // this, rbp = 0 (the end of a backtrace), then the return address: readyport_sim_start.
  auto* top = reinterpret_cast<std::uint64_t*>(static_cast<char*>(stack_) + stack_bytes_);
  std::uint64_t* frame = top - 9;
  frame[0] = 0x1F80 | (std::uint64_t{0x037F} << 32);
  frame[1] = 0;                                                       // r15
  frame[2] = 0;                                                       // r14
  frame[3] = 0;                                                       // r13
  frame[4] = reinterpret_cast<std::uintptr_t>(&SimFiber::asm_entry);  // r12
  frame[5] = reinterpret_cast<std::uintptr_t>(this);                  // rbx
  frame[6] = 0;                                                       // rbp
  frame[7] = reinterpret_cast<std::uintptr_t>(&readyport_sim_start);  // the return address
  frame[8] = 0;
  stack_pointer_ = frame;
#else
  const int got = getcontext(&context_);
  READYPORT_ASSERT(got == 0);
  context_.uc_stack.ss_sp = stack_;
  context_.uc_stack.ss_size = stack_bytes_;
  context_.uc_link = nullptr;  // the entry never returns
  const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(this));
  makecontext(&context_, reinterpret_cast<void (*)()>(&SimFiber::trampoline), 2,
              static_cast<unsigned int>(address >> 32), static_cast<unsigned int>(address));
#endif
}
#endif

Status SimFiber::start(std::size_t stack_bytes, Entry entry, void* argument) {
  READYPORT_ASSERT(!started());
  READYPORT_ASSERT(entry != nullptr);
  READYPORT_ASSERT(stack_bytes > 0);
#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
  if (Status mapped = map_stack(stack_bytes); !mapped.ok()) {
    return mapped;
  }
  entry_ = entry;
  argument_ = argument;
  prepare_context();
#elif defined(READYPORT_SIM_FIBERS_WIN32)
  entry_ = entry;
  argument_ = argument;
  win32_fiber_ = CreateFiber(stack_bytes, &SimFiber::win32_entry, this);
  if (win32_fiber_ == nullptr) {
    entry_ = nullptr;
    return Status(StatusCode::kResourceExhausted,
                  "SimScheduler: CreateFiber failed: error " + std::to_string(GetLastError()));
  }
  stack_bytes_ = stack_bytes;
#else
  (void)entry;
  (void)argument;
  return Status(StatusCode::kFailedPrecondition, "SimScheduler: no fibers on this platform");
#endif
  asan_bottom_ = stack_;
  asan_size_ = stack_bytes_;
#if defined(READYPORT_SIM_TSAN)
  tsan_fiber_ = __tsan_create_fiber(0);
#endif
  return Status();
}

// Called by every context as it lands after a switch (fake_stack: its own saved fake stack, null
// for a fresh fiber). Records the bounds of the stack left behind if they were unknown.
void SimFiber::finish_switch([[maybe_unused]] void* fake_stack) {
#if defined(READYPORT_SIM_ASAN)
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(fake_stack, &bottom, &size);
  SimFiber* from = t_switch_from;
  if (from != nullptr && from->asan_bottom_ == nullptr) {
    from->asan_bottom_ = bottom;
    from->asan_size_ = size;
  }
  t_switch_from = nullptr;
#endif
}

void SimFiber::switch_to(SimFiber& from, SimFiber& to) {
  READYPORT_ASSERT(&from != &to);
  READYPORT_ASSERT(to.started() && !to.abandoned_);
#if defined(READYPORT_SIM_ASAN)
  t_switch_from = &from;
  __sanitizer_start_switch_fiber(&from.asan_fake_stack_, to.asan_bottom_, to.asan_size_);
#endif
#if defined(READYPORT_SIM_TSAN)
  __tsan_switch_to_fiber(to.tsan_fiber_, 0);
#endif
#if defined(READYPORT_SIM_SWITCH_ASM)
  readyport_sim_switch(&from.stack_pointer_, to.stack_pointer_);
#elif defined(READYPORT_SIM_FIBERS_UCONTEXT)
  const int swapped = swapcontext(&from.context_, &to.context_);
  READYPORT_ASSERT(swapped == 0);
#elif defined(READYPORT_SIM_FIBERS_WIN32)
  SwitchToFiber(to.win32_fiber_);
#else
  READYPORT_UNREACHABLE();
#endif
  finish_switch(from.asan_fake_stack_);
}

void SimFiber::switch_final([[maybe_unused]] SimFiber& from, SimFiber& to) {
  READYPORT_ASSERT(&from != &to);
  READYPORT_ASSERT(to.started() && !to.abandoned_);
#if defined(READYPORT_SIM_ASAN)
  t_switch_from = &from;
  __sanitizer_start_switch_fiber(nullptr, to.asan_bottom_, to.asan_size_);  // null: never back
#endif
#if defined(READYPORT_SIM_TSAN)
  __tsan_switch_to_fiber(to.tsan_fiber_, 0);
#endif
#if defined(READYPORT_SIM_SWITCH_ASM)
  readyport_sim_switch(&from.stack_pointer_, to.stack_pointer_);  // never returns here
#elif defined(READYPORT_SIM_FIBERS_UCONTEXT)
  setcontext(&to.context_);
#elif defined(READYPORT_SIM_FIBERS_WIN32)
  SwitchToFiber(to.win32_fiber_);
#endif
  READYPORT_UNREACHABLE();  // nothing switches back to a finished context
}

void SimFiber::abandon() {
  READYPORT_ASSERT(!thread_adopted_);
  if (abandoned_ || !started()) {
    return;
  }
  abandoned_ = true;
#if defined(READYPORT_SIM_ASAN)
  __lsan_register_root_region(stack_, stack_bytes_);
  if (asan_fake_stack_ != nullptr) {
    std::vector<void*> seen;
    register_fake_frames(asan_fake_stack_, stack_, stack_bytes_, seen);
#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
    register_fake_frames(asan_fake_stack_, &context_, sizeof(context_), seen);  // saved registers
#endif
  }
#endif
}

#if defined(READYPORT_SIM_SWITCH_ASM)
void SimFiber::asm_entry(void* self_raw) {
  auto* self = static_cast<SimFiber*>(self_raw);
  finish_switch(nullptr);
  self->entry_(self->argument_);
  READYPORT_UNREACHABLE();  // the entry ends with switch_final()
}
#endif

#if defined(READYPORT_SIM_FIBERS_UCONTEXT)
void SimFiber::trampoline(unsigned int high, unsigned int low) {
  const std::uint64_t address = (static_cast<std::uint64_t>(high) << 32) | low;
  auto* self = reinterpret_cast<SimFiber*>(static_cast<std::uintptr_t>(address));
  finish_switch(nullptr);
  self->entry_(self->argument_);
  READYPORT_UNREACHABLE();  // the entry ends with switch_final()
}
#elif defined(READYPORT_SIM_FIBERS_WIN32)
void __stdcall SimFiber::win32_entry(void* self_raw) {
  auto* self = static_cast<SimFiber*>(self_raw);
  finish_switch(nullptr);
  self->entry_(self->argument_);
  READYPORT_UNREACHABLE();
}
#endif

}  // namespace readyport::internal
