#pragma once
/// @file
/// IR -> Tessera DSL text (docs/dsl.md), the inverse of parseProgram, and the structural equality
/// the round trip is checked with.
///
/// Round trip: for any model the ONNX importer accepts, `parseProgram(printDsl(m))` gives a model
/// that is structurallyEqual to `m`, and printing that model again gives byte-identical text.
///
/// What is printed, in this order (docs/dsl.md §3-4):
/// - `tessera 0.1;`, then `model name=..., ir_version=..., producer=..., producer_version=...,
///   doc=...;` (empty strings left out) and one `opset [domain] N;` per Model::opsets entry.
/// - Graph inputs and initializers, merged so that both Graph::inputs() and
///   Graph::initializers() keep their order: `input x: T;`, `input w: T = init;` (an initializer
///   that is also a graph input) and `param w: T = init;`.
/// - Nodes in Graph::topologicalOrder() (ties keep node order): `a: T, _ = Op(x, _, k=v) as "n";`.
///   Every defined output type is annotated (Value::type, so the parser's check of the annotation
///   against its own inference agrees). `as` is left out when the node's name is the one the
///   parser would give it (its first output's name). Ops the registry does not know are written
///   with their domain (`ai.onnx::If` for the default domain) as docs/dsl.md §4.3 requires.
///   Attributes keep import order; floats always carry a `.` or exponent so they stay floats;
///   empty lists take a type prefix (`ints[]`); subgraphs print as `graph name(params) -> (results)
///   { ... }` literals, indented.
/// - Compute nodes (op `Compute`, domain `tessera`, with Node::compute) print in index notation
///   through ir::printCompute: `C[i: 4, j: 8] = sum(k: 16) A[i, k] * B[k, j];`.
/// - `output y;` per graph output, in order.
/// - Model::program: `fuse g = [a, b] anchor a;` per fusion group, then one `schedule S { ... }`
///   per kernel schedule (target, mappings as written, then tile, stage, unroll, vectorize and
///   parallel items grouped by kind: the IR keeps them in separate lists).
///
/// Names: a name that is a plain identifier and neither reserved nor one of the DSL's contextual
/// words is printed as is; any other name is backtick-quoted with `` \` `` `\\` `\n` `\t` `\r` `\0`
/// and `\xHH` escapes for control bytes and for bytes that are not part of valid UTF-8 (valid
/// UTF-8 is kept verbatim). Strings use the same escapes plus `\"`.
///
/// Constants: a tensor of at most PrintOptions::maxInlineElements elements is written as a flat
/// literal list in row-major order (shortest decimal that reads back to the same value of its
/// dtype; `nan`, `inf`, `-inf`; bools as 0/1). Elements no literal reads back exactly (negative
/// or payload NaNs, u64 above INT64_MAX, INT64_MIN, complex numbers) make the whole constant go by
/// reference, and without an ONNX source to point at the program cannot hold it (the parser then
/// reports `onnx("", NAME)`). A larger initializer, or the `value` of a Constant
/// node, is written as `onnx("FILE", "NAME")` when the model came from an ONNX file (the loader
/// finds it by its initializer name, or by the Constant node's output name); otherwise it is
/// inlined in full, wrapped over several lines. Constants inside subgraphs are always inlined:
/// the loader looks names up in the main graph only.
///
/// Limits (what docs/dsl.md version 0.1 cannot say; such a model prints, but does not round-trip):
/// - an int attribute equal to INT64_MIN (the lexer reads the digits before the sign);
/// - a negative NaN or a NaN payload, an u64 above INT64_MAX, INT64_MIN or a complex element in a
///   constant, when there is no ONNX file to reference;
/// - an initializer order that contradicts the order of the same values among the graph inputs
///   (`input w: T = init;` appends to both lists; the inputs' order wins);
/// - a model without a default-domain opset (the parser adds `opset 17`);
/// - an initializer that is also an input of a subgraph (graph literals have no `input` form; it
///   prints as a `param` inside the body), and large constants inside subgraphs go inline;
/// - Value::onnxType (declared types) apart from the annotation checks: only Value::type is kept.
///
/// Thread rules: pure functions of their arguments; safe from any thread.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir/graph.h"

namespace tessera::frontend::dsl {

struct PrintOptions {
    /// Path written into `onnx("...", name)` references, relative to the folder the DSL text will
    /// be saved in. Empty: the file name of Model::sourcePath when that ends in `.onnx`; when there
    /// is no ONNX source every constant is inlined.
    std::string onnxReference;
    /// Constants with at most this many elements are written inline; larger ones by reference.
    std::int64_t maxInlineElements = 16;
    /// Print the `tessera 0.1;` version line.
    bool versionLine = true;
};

/// The DSL text of `model`. Stable: the same model gives byte-identical text.
std::string printDsl(const ir::Model& model, const PrintOptions& options = {});

/// `name` as the DSL writes it: unchanged when it is a plain identifier that is safe everywhere a
/// name may stand, else backtick-quoted with escapes.
std::string dslName(std::string_view name);
/// `s` as a DSL string literal in double quotes, with escapes.
std::string dslString(std::string_view s);

struct EqualityOptions {
    /// Compare Model metadata (graph name, doc, ir_version, producer, opsets).
    bool metadata = true;
    /// Compare the bytes of initializers and tensor attributes (dtype and dims are always compared).
    bool constantBytes = true;
};

/// Structural equality of two models as the round trip defines it: metadata; per graph (and,
/// recursively, per subgraph attribute) the graph inputs, initializers and outputs (names, in
/// order, with Value::type; initializers with dtype, dims and bytes); the nodes in topological
/// order with op type, domain, node name, input and output value names (omitted = `_`), the
/// Value::type of every output, and the attributes in order (ints and strings exactly; floats at
/// float32 precision, which is what ONNX stores; tensors by dtype, dims and bytes; graphs
/// recursively). Value::onnxType is not compared: the DSL's annotations are checked against
/// inference rather than stored beside it. Graph-local value ids, the values no node or graph
/// list refers to, and stored node order (as opposed to topological order) are not compared.
///
/// On inequality, `why` (when given) receives the first difference, e.g.
/// `graph "main" > node "relu": input 0 is 'a' vs 'b'`.
bool structurallyEqual(const ir::Model& a, const ir::Model& b, std::string* why = nullptr,
                       const EqualityOptions& options = {});
bool structurallyEqual(const ir::Graph& a, const ir::Graph& b, std::string* why = nullptr,
                       const EqualityOptions& options = {});

}  // namespace tessera::frontend::dsl
