// tests/consumer/version_test.cpp: the headers the consumer compiled against are the library's.
#include <gtest/gtest.h>

#include <cstring>

#include "readyport/version.hpp"

TEST(Version, TheHeadersAreTheLibrarys) {
  EXPECT_STREQ(readyport::version_string(), READYPORT_VERSION_STRING);
  EXPECT_GT(std::strlen(readyport::version_commit()), 0u);
}
