// The one file of readyport_test_pch (cmake/test_pch.cmake): the target that compiles the test
// targets' precompiled GoogleTest headers. It defines nothing.
#include <gtest/gtest.h>
