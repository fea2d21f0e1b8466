// RUN: ober-opt --help | FileCheck %s
// RUN: ober-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS

// CHECK: Ober-Train optimizer driver
// CHECK: --ober-decompose-attention

// DIALECTS: Available Dialects:
// DIALECTS-SAME: func
// DIALECTS-SAME: linalg
// DIALECTS-SAME: ober
// DIALECTS-SAME: shard
// DIALECTS-SAME: tensor
