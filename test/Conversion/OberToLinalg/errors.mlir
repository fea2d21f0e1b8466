// RUN: ober-opt %s --convert-ober-to-linalg --verify-diagnostics

// An op without a lowering is named.
func.func @strings(%s: tensor<1x6x!ober.string>) -> tensor<1x4x!ober.string> {
  // expected-error @+1 {{convert-ober-to-linalg: no lowering for 'ober.string_normalize' (lowered: every op but string_normalize)}}
  %0 = ober.string_normalize %s {case_change = "UPPER", case_sensitive = false, stopwords = ["monday"]} : tensor<1x6x!ober.string> -> tensor<1x4x!ober.string>
  return %0 : tensor<1x4x!ober.string>
}

// An unknown attention lowering is named with the ones there are.
// RUN: not ober-opt %s --convert-ober-to-linalg="attention=flashy" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: convert-ober-to-linalg: attention='flashy' is not one of blocked, decomposed, fused, flash
