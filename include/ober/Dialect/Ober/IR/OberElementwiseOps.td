//===- OberElementwiseOps.td - elementwise ops -------------*- tablegen -*-===//

#ifndef OBER_DIALECT_OBER_IR_OBERELEMENTWISEOPS_TD
#define OBER_DIALECT_OBER_IR_OBERELEMENTWISEOPS_TD

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

class Ober_UnaryOp<string mnemonic, Type tensorType, string formula,
                   list<Trait> traits = []>
    : Ober_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
        SameOperandsAndResultType, InferTypeOpInterface])> {
  let summary = "elementwise " # mnemonic;
  let description = "Computes `" # formula # "` for every element.";
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Ober_NegOp : Ober_UnaryOp<"neg", Ober_NumericTensor, "-x"> {
  let hasFolder = 1;
}
def Ober_AbsOp : Ober_UnaryOp<"abs", Ober_NumericTensor, "|x|">;
def Ober_ExpOp : Ober_UnaryOp<"exp", Ober_FloatTensor, "e^x">;
def Ober_LogOp : Ober_UnaryOp<"log", Ober_FloatTensor, "ln(x)">;
def Ober_SqrtOp : Ober_UnaryOp<"sqrt", Ober_FloatTensor, "sqrt(x)">;
def Ober_RsqrtOp : Ober_UnaryOp<"rsqrt", Ober_FloatTensor, "1 / sqrt(x)">;
def Ober_TanhOp : Ober_UnaryOp<"tanh", Ober_FloatTensor, "tanh(x)">;
def Ober_SigmoidOp : Ober_UnaryOp<"sigmoid", Ober_FloatTensor, "1 / (1 + e^-x)">;
def Ober_ReluOp : Ober_UnaryOp<"relu", Ober_NumericTensor, "max(x, 0)">;
def Ober_SiluOp : Ober_UnaryOp<"silu", Ober_FloatTensor, "x * sigmoid(x)">;
def Ober_ErfOp : Ober_UnaryOp<"erf", Ober_FloatTensor, "erf(x)">;
def Ober_ReciprocalOp : Ober_UnaryOp<"reciprocal", Ober_FloatTensor, "1 / x">;
def Ober_SinOp : Ober_UnaryOp<"sin", Ober_FloatTensor, "sin(x)">;
def Ober_CosOp : Ober_UnaryOp<"cos", Ober_FloatTensor, "cos(x)">;
def Ober_TanOp : Ober_UnaryOp<"tan", Ober_FloatTensor, "tan(x)">;
def Ober_AsinOp : Ober_UnaryOp<"asin", Ober_FloatTensor, "asin(x)">;
def Ober_AcosOp : Ober_UnaryOp<"acos", Ober_FloatTensor, "acos(x)">;
def Ober_AtanOp : Ober_UnaryOp<"atan", Ober_FloatTensor, "atan(x)">;
def Ober_SinhOp : Ober_UnaryOp<"sinh", Ober_FloatTensor, "sinh(x)">;
def Ober_CoshOp : Ober_UnaryOp<"cosh", Ober_FloatTensor, "cosh(x)">;
def Ober_AsinhOp : Ober_UnaryOp<"asinh", Ober_FloatTensor, "asinh(x)">;
def Ober_AcoshOp : Ober_UnaryOp<"acosh", Ober_FloatTensor, "acosh(x)">;
def Ober_AtanhOp : Ober_UnaryOp<"atanh", Ober_FloatTensor, "atanh(x)">;
def Ober_FloorOp : Ober_UnaryOp<"floor", Ober_FloatTensor, "floor(x)">;
def Ober_CeilOp : Ober_UnaryOp<"ceil", Ober_FloatTensor, "ceil(x)">;
def Ober_RoundOp : Ober_UnaryOp<"round", Ober_FloatTensor,
    "x rounded to the nearest integer, halves to even">;
def Ober_SignOp : Ober_UnaryOp<"sign", Ober_NumericTensor,
    "-1, 0 or 1 by the sign of x (NaN stays NaN)">;
def Ober_NotOp : Ober_UnaryOp<"not", Ober_BoolTensor, "!x">;

def Ober_GeluOp : Ober_Op<"gelu", [Pure, Elementwise, SameOperandsAndResultType,
                                   InferTypeOpInterface]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none` computes `x * 0.5 * (1 + erf(x / sqrt(2)))`;
    `approximate = tanh` computes
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, as
    PyTorch's `gelu(approximate="tanh")` does.
  }];
  let arguments = (ins Ober_FloatTensor:$input,
                       Ober_GeluApproximationAttr:$approximate);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Binary with NumPy broadcasting
//===----------------------------------------------------------------------===//

class Ober_BinaryOp<string mnemonic, Type tensorType, string formula,
                    list<Trait> traits = []>
    : Ober_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let summary = "elementwise " # mnemonic # " with broadcasting";
  let description = "Computes `" # formula # "` elementwise after "
      # "broadcasting both operands to a common shape with NumPy rules. "
      # "Both operands have the same element type.";
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:`
      custom<BroadcastTypes>(type($lhs), type($rhs), type($result))
  }];
}

def Ober_AddOp : Ober_BinaryOp<"add", Ober_NumericTensor, "lhs + rhs",
                               [Commutative]> {
  let hasFolder = 1;
}
def Ober_SubOp : Ober_BinaryOp<"sub", Ober_NumericTensor, "lhs - rhs"> {
  let hasFolder = 1;
}
def Ober_MulOp : Ober_BinaryOp<"mul", Ober_NumericTensor, "lhs * rhs",
                               [Commutative]> {
  let hasFolder = 1;
}
def Ober_DivOp : Ober_BinaryOp<"div", Ober_NumericTensor,
    "lhs / rhs (integers truncate toward zero)"> {
  let hasFolder = 1;
}
def Ober_PowOp : Ober_BinaryOp<"pow", Ober_FloatTensor, "lhs ^ rhs">;
def Ober_MaxOp : Ober_BinaryOp<"max", Ober_NumericTensor, "max(lhs, rhs)",
                               [Commutative]>;
def Ober_MinOp : Ober_BinaryOp<"min", Ober_NumericTensor, "min(lhs, rhs)",
                               [Commutative]>;

def Ober_RemOp : Ober_BinaryOp<"rem", Ober_NumericTensor,
    "the remainder of lhs / rhs truncated toward zero (C fmod; its sign is "
    # "the sign of lhs)">;
def Ober_AndOp : Ober_BinaryOp<"and", Ober_BoolTensor, "lhs && rhs",
                               [Commutative]>;
def Ober_OrOp : Ober_BinaryOp<"or", Ober_BoolTensor, "lhs || rhs",
                              [Commutative]>;
def Ober_XorOp : Ober_BinaryOp<"xor", Ober_BoolTensor, "lhs != rhs",
                               [Commutative]>;

def Ober_CompareOp : Ober_Op<"cmp", [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise comparison with broadcasting";
  let description = [{
    Compares two tensors of the same element type elementwise, after NumPy
    broadcasting, and yields an `i1` tensor. Float comparisons are ordered:
    any comparison with NaN is false except `ne`.

    ```mlir
    %m = ober.cmp lt, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Ober_CompareDirectionAttr:$direction,
                       Ober_Tensor:$lhs, Ober_Tensor:$rhs);
  let results = (outs Ober_BoolTensor:$result);
  let assemblyFormat = [{
    custom<CompareDirection>($direction) `,` $lhs `,` $rhs attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_SelectOp : Ober_Op<"select", [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise choice with broadcasting";
  let description = [{
    `result = condition ? on_true : on_false`, elementwise after broadcasting
    all three operands together with NumPy rules.
  }];
  let arguments = (ins Ober_BoolTensor:$condition, Ober_Tensor:$on_true,
                       Ober_Tensor:$on_false);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:`
      functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Ober_CastOp : Ober_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "element type conversion";
  let description = [{
    Converts each element to the result's element type: floats round to
    nearest even, float to integer truncates toward zero, integer to `i1` is
    `x != 0`, `i1` to a number is 0 or 1.
  }];
  let arguments = (ins Ober_Tensor:$input);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

#endif // OBER_DIALECT_OBER_IR_OBERELEMENTWISEOPS_TD
