//===- TestSupport.h - a minimal check macro for ctest executables -*- C++ -*-===//
//
// Part of Ober-Train. The unit tests are plain executables: each EXPECT that
// fails prints where and why, and main returns testFailures() != 0.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_UNITTESTS_TESTSUPPORT_H
#define OBER_UNITTESTS_TESTSUPPORT_H

#include <cstdio>

inline int &testFailures() {
  static int failures = 0;
  return failures;
}

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++testFailures();                                                        \
    }                                                                          \
  } while (0)

/// Prints the summary line and returns main's exit status.
inline int testSummary() {
  std::printf("%s: %d failure(s)\n", testFailures() ? "FAIL" : "PASS",
              testFailures());
  return testFailures() ? 1 : 0;
}

#endif // OBER_UNITTESTS_TESTSUPPORT_H
