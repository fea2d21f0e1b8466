// RUN: ober-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The plan prints and parses back; schedules that are no keyword ("1f1b")
// print quoted.
// CHECK: ober.plan = #ober.plan<tp = 2, pp = 2, dp = 2, micro_batch = 2, num_micro_batches = 4, global_batch = 16, schedule = "1f1b", chunks = 1, recompute = selective, sequence_parallel = true, zero_stage = 1, precision = bf16, function = "loss_grad">
module attributes {ober.plan = #ober.plan<tp = 2, pp = 2, dp = 2, micro_batch = 2, num_micro_batches = 4, global_batch = 16, schedule = "1f1b", chunks = 1, recompute = selective, sequence_parallel = true, zero_stage = 1, precision = bf16, function = "loss_grad">} {
}

// -----

// CHECK: schedule = "interleaved-1f1b", chunks = 3, recompute = full
module attributes {ober.plan = #ober.plan<tp = 1, pp = 2, dp = 1, micro_batch = 1, num_micro_batches = 4, global_batch = 4, schedule = "interleaved-1f1b", chunks = 3, recompute = full, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+2 {{expected ::mlir::ober::Schedule to be one of: gpipe, 1f1b, interleaved-1f1b, zero-bubble}}
// expected-error@+1 {{failed to parse Ober_PlanAttr parameter 'schedule'}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 2, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "round-robin", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+2 {{expected ::mlir::ober::Precision to be one of: f32, bf16, f16}}
// expected-error@+1 {{failed to parse Ober_PlanAttr parameter 'precision'}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f8, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: tp = 0 must be at least 1}}
module attributes {ober.plan = #ober.plan<tp = 0, pp = 1, dp = 1, micro_batch = 1, num_micro_batches = 1, global_batch = 1, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// A missing field: the struct parser wants every one (but local_steps).
// expected-error@+1 {{struct is missing required parameter: zero_stage}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: global_batch = 12 must be dp x micro_batch x num_micro_batches = 2 x 2 x 2}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 2, num_micro_batches = 2, global_batch = 12, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: zero_stage = 4 must be 0, 1, 2 or 3}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 4, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: sequence_parallel needs tp >= 2}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = true, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: interleaved-1f1b needs pp >= 2 and chunks >= 2, got pp = 2 and chunks = 1}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 2, dp = 1, micro_batch = 1, num_micro_batches = 2, global_batch = 2, schedule = "interleaved-1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: interleaved-1f1b needs num_micro_batches (3) to be a multiple of pp (2)}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 2, dp = 1, micro_batch = 1, num_micro_batches = 3, global_batch = 3, schedule = "interleaved-1f1b", chunks = 2, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: chunks = 2 needs schedule interleaved-1f1b}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 2, dp = 1, micro_batch = 1, num_micro_batches = 2, global_batch = 2, schedule = gpipe, chunks = 2, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
}

// -----

// expected-error@+1 {{#ober.plan: function must name the gradient function the plan is for}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 1, micro_batch = 1, num_micro_batches = 1, global_batch = 1, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "">} {
}

// -----

// expected-error@+1 {{'builtin.module' op 'ober.plan' must be a #ober.plan<...> on a builtin.module}}
module attributes {ober.plan = {tp = 1 : i64}} {
}

// -----

// Local SGD: printed when not 1.
// CHECK: function = "loss_grad", local_steps = 8>
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad", local_steps = 8>} {
}

// -----

// expected-error@+1 {{#ober.plan: local_steps = 8 (local SGD) needs dp >= 2 and zero_stage = 0, got dp = 2 and zero_stage = 1}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 1, precision = f32, function = "loss_grad", local_steps = 8>} {
}

// -----

// expected-error@+1 {{#ober.plan: local_steps = 0 must be at least 1}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 1, global_batch = 2, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad", local_steps = 0>} {
}
