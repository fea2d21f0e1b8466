// RUN: ober-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'func.func' op unknown ober argument attribute 'ober.parameter' (supported: 'ober.param', 'ober.state', 'ober.batch', 'ober.input', 'ober.lr', 'ober.sample_offset', 'ober.export_note', 'ober.loss_seed', and the planner's and partitioner's annotations)}}
func.func @unknown_arg_attr(%w: tensor<4xf32> {ober.parameter = "w"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ober.param' must be a non-empty string, got 3 : i64}}
func.func @param_not_string(%w: tensor<4xf32> {ober.param = 3}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ober.param' must be a non-empty string, got ""}}
func.func @param_empty(%w: tensor<4xf32> {ober.param = ""}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op parameter name 'fc.weight' is used by arguments #0 and #2}}
func.func @param_twice(%a: tensor<4xf32> {ober.param = "fc.weight"}, %b: tensor<4xf32> {ober.param = "fc.bias"}, %c: tensor<4xf32> {ober.param = "fc.weight"}) {
  return
}

// -----

// expected-error @+1 {{'builtin.module' op unknown ober attribute 'ober.weight' (supported: 'ober.weights' on a module)}}
module attributes {ober.weight = "w.bin"} {
}

// -----

module {
  // expected-error @+1 {{'func.func' op 'ober.weights' is only allowed on a builtin.module}}
  func.func @weights_on_func() attributes {ober.weights = "w.bin"} {
    return
  }
}

// -----

// expected-error @+1 {{'builtin.module' op 'ober.weights' must be a non-empty string path}}
module attributes {ober.weights = 1 : i64} {
}

// -----

// expected-error @+1 {{'builtin.module' op 'ober.weights' path '/etc/passwd' must be relative to the module's folder}}
module attributes {ober.weights = "/etc/passwd"} {
}

// -----

// expected-error @+1 {{'builtin.module' op 'ober.weights' path 'data/../../w.bin' must not leave the module's folder ('..')}}
module attributes {ober.weights = "data/../../w.bin"} {
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ober.export_note' must be a non-empty string}}
func.func @empty_export_note(%w: tensor<4xf32> {ober.param = "w", ober.export_note = ""}) {
  return
}
