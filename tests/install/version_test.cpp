// SPDX-License-Identifier: Apache-2.0
// weft/version.hpp against the library and the build: the macros, weft::version() (compiled into
// libweft) and CMake's project version (WEFT_CMAKE_VERSION, given by tests/install/CMakeLists.txt)
// are one version.
#include <gtest/gtest.h>
#include <weft/version.hpp>

#include <string>

namespace {

TEST(Version, MacrosFormTheString) {
  const std::string joined = std::to_string(WEFT_VERSION_MAJOR) + "." +
                             std::to_string(WEFT_VERSION_MINOR) + "." +
                             std::to_string(WEFT_VERSION_PATCH);
  EXPECT_EQ(joined, WEFT_VERSION_STRING);
}

TEST(Version, LibraryMatchesHeaders) {
  EXPECT_EQ(weft::version(), WEFT_VERSION_STRING);
}

TEST(Version, HeadersMatchCMakeProject) {
  EXPECT_STREQ(WEFT_VERSION_STRING, WEFT_CMAKE_VERSION);
}

}  // namespace
