//===- OberBase.td - ober dialect base definitions ---------*- tablegen -*-===//
//
// The ober dialect: value-semantic tensor ops for training graphs.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERBASE_TD
#define OBER_DIALECT_OBER_IR_OBERBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Ober_Dialect : Dialect {
  let name = "ober";
  let cppNamespace = "::mlir::ober";
  let summary = "Value-semantic tensor graph ops for distributed training.";
  let description = [{
    The `ober` dialect holds the single-device model and its training step as
    a graph of value-semantic ops on builtin ranked tensors. Importers produce
    it, autodiff and the optimizer builder extend it, the planner annotates it
    and the partitioner splits it into per-device programs.

    Conventions:

    * Element types are `f16`, `bf16`, `f32`, `f64`, `i1`, `i8`, `i32` and
      `i64` (integers are signless).
    * Binary ops broadcast their operands with NumPy rules.
    * Axis attributes are non-negative (importers normalise negative axes).
    * Model parameters are function arguments carrying the argument attribute
      `ober.param = "<name>"`; their values live in the external weights file
      named by the module attribute `ober.weights = "<relative path>"`, never
      as large inline constants.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Argument attribute naming a model parameter.
    static constexpr ::llvm::StringLiteral kParamAttrName = "ober.param";
    /// Module attribute naming the external weights file.
    static constexpr ::llvm::StringLiteral kWeightsAttrName = "ober.weights";
    /// Training-step argument attributes: optimizer state ("<param>.<slot>"
    /// or "step"), batch inputs (their name: samples along the leading
    /// dimension, split over data-parallel devices), other inputs read each
    /// step (their name: a dropout seed; whole on every device and the same
    /// for every micro-batch) and the learning rate (unit).
    static constexpr ::llvm::StringLiteral kStateAttrName = "ober.state";
    static constexpr ::llvm::StringLiteral kBatchAttrName = "ober.batch";
    static constexpr ::llvm::StringLiteral kInputAttrName = "ober.input";
    static constexpr ::llvm::StringLiteral kLearningRateAttrName = "ober.lr";
    /// Loss- and gradient-function argument attribute: the index of the
    /// micro-batch's first sample in the step's batch (a 0-D i64), which
    /// dropouts draw by (the step passes it; it is no step input).
    static constexpr ::llvm::StringLiteral kSampleOffsetAttrName =
        "ober.sample_offset";
    /// Parameter argument attribute (a string): what the model's exporter
    /// did to the parameter that changes what training trains (identical
    /// initializers merged, a value folded from parameters). Building a
    /// training step warns with it.
    static constexpr ::llvm::StringLiteral kExportNoteAttrName =
        "ober.export_note";
    /// Function attribute: the options a train_step was built with.
    static constexpr ::llvm::StringLiteral kTrainStepAttrName =
        "ober.train_step";
  }];
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Ober_StringType : TypeDef<Ober_Dialect, "String"> {
  let mnemonic = "string";
  let summary = "a UTF-8 string";
  let description = [{
    Element type of string tensors, which ONNX models use for text
    preprocessing (`StringNormalizer`). Only string ops and function
    boundaries take them.
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Ober_Float : AnyTypeOf<[F16, BF16, F32, F64], "floating-point (f16, bf16, f32, f64)">;
def Ober_Int : AnyTypeOf<[I8, I32, I64], "integer (i8, i32, i64)">;
def Ober_Index : AnyTypeOf<[I32, I64], "index integer (i32, i64)">;
def Ober_Numeric : AnyTypeOf<[Ober_Float, Ober_Int], "numeric">;
def Ober_Element : AnyTypeOf<[Ober_Numeric, I1], "ober element type">;

def Ober_Tensor : RankedTensorOf<[Ober_Element]>;
def Ober_FloatTensor : RankedTensorOf<[Ober_Float]>;
def Ober_NumericTensor : RankedTensorOf<[Ober_Numeric]>;
def Ober_IndexTensor : RankedTensorOf<[Ober_Index]>;
def Ober_BoolTensor : RankedTensorOf<[I1]>;
def Ober_SeedTensor : 0DTensorOf<[I64]>;
def Ober_StringTensor : RankedTensorOf<[Ober_StringType]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Ober_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "approximation used by gelu", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::ober";
  let genSpecializedAttr = 0;
}
def Ober_GeluApproximationAttr : EnumAttr<Ober_Dialect, Ober_GeluApproximation,
                                          "gelu_approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Ober_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison predicate", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::ober";
  let genSpecializedAttr = 0;
}
def Ober_CompareDirectionAttr : EnumAttr<Ober_Dialect, Ober_CompareDirection,
                                         "compare_direction"> {
  let assemblyFormat = "$value";
}

def Ober_LossReduction : I32EnumAttr<"LossReduction",
    "how a loss reduces over samples", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"sum", 2>]> {
  let cppNamespace = "::mlir::ober";
  let genSpecializedAttr = 0;
}
def Ober_LossReductionAttr : EnumAttr<Ober_Dialect, Ober_LossReduction,
                                      "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

def Ober_PadMode : I32EnumAttr<"PadMode", "padding mode", [
      I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
      I32EnumAttrCase<"edge", 2>]> {
  let cppNamespace = "::mlir::ober";
  let genSpecializedAttr = 0;
}
def Ober_PadModeAttr : EnumAttr<Ober_Dialect, Ober_PadMode, "pad_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

def Ober_ScatterCombine : I32EnumAttr<"ScatterCombine",
    "how ober.scatter combines an update with the element it lands on", [
      I32EnumAttrCase<"replace", 0>, I32EnumAttrCase<"mul", 1>,
      I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]> {
  let cppNamespace = "::mlir::ober";
  let genSpecializedAttr = 0;
}
def Ober_ScatterCombineAttr : EnumAttr<Ober_Dialect, Ober_ScatterCombine,
                                       "scatter_combine"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

class Ober_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ober_Dialect, mnemonic, traits>;

#endif // OBER_DIALECT_OBER_IR_OBERBASE_TD
