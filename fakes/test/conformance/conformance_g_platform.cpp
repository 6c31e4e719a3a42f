// Conformance, rules G1-G3 of docs/rules.md: the platform.
//
// G1 (Windows 10 build 20348 or later) and G2 (look ProcessSocketNotifications up at run time
// with GetProcAddress, fail clearly where it is missing) are about the real backend only: they
// are the Windows engineer's tests in core/test/ (WindowsOs's lookup and its Status when the
// function is missing, as under Wine 8). Neither applies to the fake, which has no loader.
//
// G3 (the struct is 24 bytes on x64, 16 on x86) is checked here for the ABI mirrors every
// backend exchanges: os.hpp also static_asserts the sizes; these tests spell out every offset
// so a 32-bit build (mingw i686, MSVC Win32) reports exactly which field moved.
#include <cstddef>
#include <cstdint>

#include "conformance/backend.hpp"
#include "conformance/scenario_util.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, G3_RegistrationLayoutMatchesTheAbi) {
  SCOPED_TRACE("rule G3");
  constexpr std::size_t kPointer = sizeof(void*);
  ASSERT_TRUE(kPointer == 8 || kPointer == 4) << "rule G3: x64 or x86 only";
  EXPECT_EQ(sizeof(SockNotifyRegistration), kPointer == 8 ? 24u : 16u)
      << "rule G3: SOCK_NOTIFY_REGISTRATION is 24 bytes on x64, 16 on x86";
  EXPECT_EQ(offsetof(SockNotifyRegistration, socket), 0u) << "rule G3: socket at +0";
  EXPECT_EQ(offsetof(SockNotifyRegistration, completion_key), kPointer)
      << "rule G3: completionKey after the SOCKET";
  EXPECT_EQ(offsetof(SockNotifyRegistration, event_filter), 2 * kPointer)
      << "rule G3: eventFilter at +0x10 (x64)";
  EXPECT_EQ(offsetof(SockNotifyRegistration, operation), 2 * kPointer + 2)
      << "rule G3: operation at +0x12 (x64)";
  EXPECT_EQ(offsetof(SockNotifyRegistration, trigger_flags), 2 * kPointer + 3)
      << "rule G3: triggerFlags at +0x13 (x64)";
  EXPECT_EQ(offsetof(SockNotifyRegistration, registration_result), 2 * kPointer + 4)
      << "rule G3: registrationResult at +0x14 (x64)";
  EXPECT_EQ(sizeof(SockNotifyRegistration::event_filter), 2u) << "rule G3: UINT16";
  EXPECT_EQ(sizeof(SockNotifyRegistration::operation), 1u) << "rule G3: UINT8";
  EXPECT_EQ(sizeof(SockNotifyRegistration::trigger_flags), 1u) << "rule G3: UINT8";
  EXPECT_EQ(sizeof(SockNotifyRegistration::registration_result), 4u) << "rule G3: DWORD";
  EXPECT_EQ(sizeof(Socket), kPointer) << "rule G3: SOCKET is UINT_PTR";
}

TEST_P(PsnConformance, G3_OverlappedEntryLayoutMatchesTheAbi) {
  SCOPED_TRACE("rule G3");
  constexpr std::size_t kPointer = sizeof(void*);
  EXPECT_EQ(sizeof(OverlappedEntry), kPointer == 8 ? 32u : 16u)
      << "rule G3: OVERLAPPED_ENTRY is 32 bytes on x64, 16 on x86";
  EXPECT_EQ(offsetof(OverlappedEntry, completion_key), 0u) << "rule G3: lpCompletionKey at +0";
  EXPECT_EQ(offsetof(OverlappedEntry, overlapped), kPointer) << "rule G3: lpOverlapped";
  EXPECT_EQ(offsetof(OverlappedEntry, internal), 2 * kPointer) << "rule G3: Internal";
  EXPECT_EQ(offsetof(OverlappedEntry, bytes_transferred), 3 * kPointer)
      << "rule G3: dwNumberOfBytesTransferred";
  EXPECT_EQ(sizeof(OverlappedEntry::bytes_transferred), 4u) << "rule G3: DWORD";
}

TEST_P(PsnConformance, G3_ConstantsHaveTheirWindowsValues) {
  SCOPED_TRACE("rule G3");
  // The values cross the ABI unchanged; a wrong one would be silently misread by Windows.
  EXPECT_EQ(kSockNotifyRegisterEventsAll, 0x07) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyEventErr, 0x40u) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyEventRemove, 0x80u) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyEventsAll, 0xC7u) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyOpEnable, 1) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyOpDisable, 2) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyOpRemove, 4) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyTriggerOneshot, 0x01) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyTriggerPersistent, 0x02) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyTriggerLevel, 0x04) << "rule G3 (constants)";
  EXPECT_EQ(kSockNotifyTriggerEdge, 0x08) << "rule G3 (constants)";
  EXPECT_EQ(kWaitTimeout, 258u) << "rule G3 (constants)";
  EXPECT_EQ(kErrorAbandonedWait0, 735u) << "rule G3 (constants)";
  EXPECT_EQ(kInfinite, 0xFFFF'FFFFu) << "rule G3 (constants)";
}

}  // namespace
}  // namespace readyport::conformance
