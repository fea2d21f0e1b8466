//===- TrackingTest.cpp - CRC-32C as TensorBoard frames records -----------===//
//
// Part of Ober-Train. The check values of CRC-32C and of TensorBoard's
// masked form (RUNTIME.md: the masked CRC of the 8 bytes of u64 19).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Tracking.h"

#include "../TestSupport.h"

#include <cstring>

int main() {
  using namespace ober::rt;
  const char *check = "123456789";
  EXPECT(crc32c(check, std::strlen(check)) == 0xE3069283u);
  uint64_t nineteen = 19;
  EXPECT(maskedCrc32c(&nineteen, sizeof(nineteen)) == 0x1b32910cu);
  EXPECT(crc32c("", 0) == 0);
  return testSummary();
}
