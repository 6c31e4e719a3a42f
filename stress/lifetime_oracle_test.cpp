// The oracle must catch each broken promise (canaries: planted bad sequences) and stay quiet on
// the sequences the engine legitimately produces.
#include "lifetime_oracle.hpp"

#include <gtest/gtest.h>

namespace readyport {
namespace {

constexpr ConnId kId{3, 1};
constexpr Socket kSock = 0x104;

// The normal life: acquire, two handler calls, REMOVE, close, free.
void normal_life(LifetimeOracle& oracle, ConnId id, Socket socket) {
  oracle.on_slot_acquired(id, socket);
  oracle.on_handler_enter(id, kSockNotifyEventIn);
  oracle.on_handler_leave(id, kInterestIn);
  oracle.on_handler_enter(id, kSockNotifyEventIn | kSockNotifyEventOut);
  oracle.on_handler_leave(id, kInterestClose);
  oracle.on_remove_seen(id);
  oracle.on_socket_closed(id, socket);
  oracle.on_slot_freed(id);
}

void expect_violation(LifetimeOracle& oracle, const char* words) {
  oracle.finish();
  const Status status = oracle.status();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
}

TEST(LifetimeOracleTest, NormalLivesPass) {
  LifetimeOracle oracle;
  normal_life(oracle, kId, kSock);
  normal_life(oracle, ConnId{3, 2}, kSock);  // the slot and the socket value reused afterwards
  oracle.on_packet_stale(0x301, kSockNotifyEventIn);
  oracle.finish();
  EXPECT_TRUE(oracle.status().ok()) << oracle.status().to_string();
  EXPECT_EQ(oracle.counts().acquired, 2u);
  EXPECT_EQ(oracle.counts().freed, 2u);
  EXPECT_EQ(oracle.counts().stale_packets, 1u);
}

TEST(LifetimeOracleTest, ClosedSocketValueReusedBeforeDisposal) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_remove_seen(kId);
  oracle.on_socket_closed(kId, kSock);
  oracle.on_slot_acquired(ConnId{4, 1}, kSock);  // spec E5: the value is reused at once
  oracle.on_slot_freed(kId);
  oracle.on_remove_seen(ConnId{4, 1});
  oracle.on_socket_closed(ConnId{4, 1}, kSock);
  oracle.on_slot_freed(ConnId{4, 1});
  oracle.finish();
  EXPECT_TRUE(oracle.status().ok()) << oracle.status().to_string();
}

TEST(LifetimeOracleTest, FailedAddFreesWithoutClosing) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_slot_freed(kId);
  oracle.finish();
  EXPECT_TRUE(oracle.status().ok()) << oracle.status().to_string();
}

TEST(LifetimeOracleTest, QuarantinedSlotMayCloseWithoutRemove) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_quarantined(kId);
  oracle.on_socket_closed(kId, kSock);
  oracle.on_slot_freed(kId);
  oracle.finish();
  EXPECT_TRUE(oracle.status().ok()) << oracle.status().to_string();
}

TEST(LifetimeOracleTest, CanaryCloseBeforeRemove) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_socket_closed(kId, kSock);
  expect_violation(oracle, "before its REMOVE");
}

TEST(LifetimeOracleTest, CanaryFreedWhileHandlerRuns) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_handler_enter(kId, kSockNotifyEventIn);
  oracle.on_remove_seen(kId);
  oracle.on_slot_freed(kId);
  expect_violation(oracle, "handler runs");
}

TEST(LifetimeOracleTest, CanaryTwoHandlersAtOnce) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_handler_enter(kId, kSockNotifyEventIn);
  oracle.on_handler_enter(kId, kSockNotifyEventOut);
  expect_violation(oracle, "two handlers");
}

TEST(LifetimeOracleTest, CanaryHandlerAfterClose) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_remove_seen(kId);
  oracle.on_socket_closed(kId, kSock);
  oracle.on_handler_enter(kId, kSockNotifyEventIn);
  expect_violation(oracle, "after the socket was closed");
}

TEST(LifetimeOracleTest, CanaryRemoveTwice) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_remove_seen(kId);
  oracle.on_remove_seen(kId);
  expect_violation(oracle, "REMOVE seen twice");
}

TEST(LifetimeOracleTest, CanaryStaleGenerationEvent) {
  LifetimeOracle oracle;
  normal_life(oracle, kId, kSock);
  oracle.on_handler_enter(kId, kSockNotifyEventIn);  // generation 1 is gone
  expect_violation(oracle, "not live");
}

TEST(LifetimeOracleTest, CanaryLeakedSlot) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  expect_violation(oracle, "never freed");
}

TEST(LifetimeOracleTest, CanarySocketInTwoConnections) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_slot_acquired(ConnId{4, 1}, kSock);
  expect_violation(oracle, "two connections");
}

TEST(LifetimeOracleTest, CanaryHandlerGivenRemove) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_handler_enter(kId, kSockNotifyEventIn | kSockNotifyEventRemove);
  expect_violation(oracle, "given REMOVE");
}

TEST(LifetimeOracleTest, FirstViolationIsKept) {
  LifetimeOracle oracle;
  oracle.on_slot_acquired(kId, kSock);
  oracle.on_socket_closed(kId, kSock);   // first: closed before REMOVE
  oracle.on_remove_seen(ConnId{9, 9});   // second: not live
  expect_violation(oracle, "before its REMOVE");
}

}  // namespace
}  // namespace readyport
