#pragma once
/// @file
/// The DSL's abstract syntax tree (docs/dsl.md §3). Every node carries the SourceRange it was
/// parsed from. The parser builds it; sema (sema.h) checks it and converts it to IR. Plain values:
/// an AST may be copied and read from any thread once built.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/frontend/dsl/source_range.h"

namespace tessera::frontend::dsl::ast {

struct Name {
    std::string text;  ///< decoded (backticks removed)
    SourceRange range;
};

struct Dim {
    enum class Kind { Known, Symbol, Unknown } kind = Kind::Unknown;
    std::int64_t value = 0;
    std::string symbol;
    SourceRange range;
};

struct Type {
    Name dtype;                ///< text "?" for an unknown element type
    bool unknownRank = false;  ///< [*]
    std::vector<Dim> dims;     ///< empty = scalar (unless unknownRank)
    SourceRange range;
};

/// number | string | nested list, with its sign folded in.
struct Literal {
    enum class Kind { Int, Float, String, List } kind = Kind::Int;
    std::int64_t i = 0;
    double f = 0.0;
    std::string s;
    std::vector<Literal> items;
    SourceRange range;
};

struct AttrValue;
struct KwArg {
    Name name;
    std::shared_ptr<AttrValue> value;
    SourceRange range;
};

struct Initializer {
    enum class Kind { Random, Zeros, Ones, Fill, Npy, Onnx, Literal } kind = Kind::Zeros;
    std::vector<KwArg> kwargs;  ///< random(seed=, low=, high=)
    Literal literal;            ///< Fill value or Literal
    std::string path, tensorName;
    SourceRange range;
};

struct Statement;
struct GraphLit {
    std::optional<Name> name;
    std::vector<std::pair<Name, Type>> params;
    std::vector<std::pair<Name, std::optional<Type>>> results;
    std::vector<Statement> body;
    SourceRange range;
};

struct AttrValue {
    enum class Kind { Int, Float, String, List, Tensor, Graph } kind = Kind::Int;
    std::int64_t i = 0;
    double f = 0.0;
    std::string s;
    std::string listType;            ///< "ints", "floats", ... for a typed list; empty otherwise
    std::vector<AttrValue> items;    ///< List
    std::optional<Type> tensorType;  ///< Tensor
    std::optional<Initializer> tensorInit;
    std::shared_ptr<GraphLit> graph;  ///< Graph
    SourceRange range;
};

struct Arg {
    enum class Kind { Omitted, Value, Attr } kind = Kind::Value;
    Name name;    ///< Value: the input; Attr: the attribute name
    KwArg kwarg;  ///< Attr
    SourceRange range;
};

struct Target {
    bool omitted = false;
    Name name;
    std::optional<Type> type;
    SourceRange range;
};

struct OpStmt {
    std::vector<Target> targets;
    std::optional<Name> domain;  ///< text as written ("com.microsoft", "ai.onnx")
    Name op;
    std::vector<Arg> args;
    std::optional<Name> nodeName;
    SourceRange callRange;  ///< op name through ')'
    SourceRange range;
};

struct Extent {
    bool symbolic = false;
    std::int64_t value = 0;
    std::string symbol;
    SourceRange range;
};

struct IndexDecl {
    Name name;
    std::optional<Extent> extent;
};

struct Expr {
    enum class Kind {
        Int,
        Float,
        Bool,
        Pi,
        Var,
        Access,
        Call,
        Cast,
        Unary,
        Binary,
        Ternary,
        Reduce
    } kind = Kind::Int;
    std::int64_t i = 0;
    double f = 0.0;
    bool b = false;
    std::string op;          ///< Unary/Binary operator spelling ("+", "&&", "!"), Reduce kind, Call function
    Name name;               ///< Var, Access tensor, Call function, Cast dtype
    std::vector<Expr> args;  ///< operands / subscripts / call args / [cond, a, b] / [body]
    std::vector<IndexDecl> axes;  ///< Reduce
    SourceRange range;
};

struct ComputeStmt {
    Name output;
    std::vector<IndexDecl> indices;
    std::optional<Name> dtype;
    Expr expr;
    std::optional<Name> nodeName;
    SourceRange range;
};

struct InputDecl {
    Name name;
    Type type;
    std::optional<Initializer> init;
    SourceRange range;
};
struct OutputDecl {
    std::vector<std::pair<Name, std::optional<Type>>> items;
    SourceRange range;
};
struct ParamDecl {
    Name name;
    Type type;
    Initializer init;
    SourceRange range;
};
struct ModelStmt {
    std::vector<KwArg> kwargs;
    SourceRange range;
};
struct OpsetStmt {
    std::optional<Name> domain;
    std::int64_t version = 0;
    SourceRange range;
};

struct ScheduleItem {
    enum class Kind { Target, Mapping, Tile, Stage, Unroll, Vectorize, Parallel } kind = Kind::Target;
    Name word;                ///< target name (cuda/cpu) or mapping level (grid/block/warp/thread)
    std::string arch;         ///< target cuda "sm_90"
    std::string mappingText;  ///< Mapping: the expression's source text
    SourceRange mappingRange;
    std::vector<std::pair<Name, std::int64_t>>
        axes;                 ///< Tile (axis, factor); Unroll/Vectorize/Parallel one entry (factor 0 = none)
    std::vector<Name> names;  ///< Stage tensors
    Name memory;              ///< Stage: shared | local | register
    SourceRange range;
};

struct ScheduleStmt {
    Name subject;
    std::vector<ScheduleItem> items;
    SourceRange range;
};

struct FuseStmt {
    Name group;
    std::vector<Name> members;
    std::optional<Name> anchor;
    SourceRange range;
};

struct Statement {
    enum class Kind { Model, Opset, Input, Output, Param, Op, Compute, Schedule, Fuse } kind = Kind::Op;
    ModelStmt model;
    OpsetStmt opset;
    InputDecl input;
    OutputDecl output;
    ParamDecl param;
    OpStmt op;
    ComputeStmt compute;
    ScheduleStmt schedule;
    FuseStmt fuse;
};

struct Program {
    std::optional<std::string> version;
    std::vector<Statement> statements;
    /// Names defined by statements that failed to parse (the error is already reported): sema
    /// treats later uses of them as known-bad and stays silent instead of reporting each use.
    std::vector<Name> poisoned;
};

}  // namespace tessera::frontend::dsl::ast
