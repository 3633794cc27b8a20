// SPDX-License-Identifier: Apache-2.0
// Backtraces in unit dumps (weft/debug.hpp) give each frame's source file and line where debug
// information covers it (libdw, loaded at run time). tests/CMakeLists.txt compiles this file with
// -g -O0, so the frame of park_on() has a line and is not inlined away.
#include <dlfcn.h>

#include <sstream>
#include <string>
#include <weft/debug.hpp>
#include <weft/mutex.hpp>

#include "test_support.hpp"

namespace {

using namespace weft_test;

class BacktraceTest : public env_test {};

int park_line = 0;  // the line of park_on()'s call that blocks

[[gnu::noinline]] void park_on(weft::mutex& m) {
  park_line = __LINE__ + 1;
  m.lock();
  m.unlock();
}

TEST_F(BacktraceTest, FramesNameTheirSourceFileAndLine) {
#ifndef WEFT_TEST_HAVE_LIBDW
  GTEST_SKIP() << "weft was built without libdw's headers (Debian libdw-dev): backtraces have "
                  "function names only";
#endif
  if (void* dw = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(dw);
  } else {
    GTEST_SKIP() << "libdw.so.1 (Debian libdw1) cannot be loaded: backtraces have function "
                    "names only";
  }
  weft::init(test_config(2));
  weft::mutex m;
  m.lock();
  weft::ult parked = weft::ult::create([&] { park_on(m); });
  ASSERT_TRUE(blocked(parked));
  std::ostringstream out;
  weft::dump_units(out);
  m.unlock();
  parked.join();
  weft::finalize();

  const std::string text = out.str();
  // The frame line of park_on: "#N 0x... (anonymous namespace)::park_on(weft::mutex&)+OFF at
  // /path/tests/backtrace_test.cpp:LINE".
  std::istringstream lines(text);
  std::string frame;
  for (std::string l; std::getline(lines, l);) {
    if (l.find("park_on") != std::string::npos) {
      frame = l;
      break;
    }
  }
  ASSERT_NE(frame, "") << "no frame of park_on in the dump:\n" << text;
  const std::string where = "backtrace_test.cpp:" + std::to_string(park_line);
  ASSERT_GE(frame.size(), where.size());
  EXPECT_EQ(frame.substr(frame.size() - where.size()), where) << text;
  EXPECT_NE(frame.find(" at /"), std::string::npos) << "the file's path: " << frame;
}

}  // namespace
