// Semantic checks and conversion of the DSL AST to IR (docs/dsl.md §4). One Sema object per
// parse; graphs are built statement by statement so every diagnostic can point at the statement
// that caused it, and per-node shape inference runs as each node is added.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/frontend/dsl/dsl.h"
#include "core/frontend/dsl/lexer.h"
#include "core/frontend/dsl/parser.h"
#include "core/frontend/dsl/suggest.h"
#include "core/frontend/dsl/tensor_init.h"
#include "core/ir/compute.h"
#include "core/ir/npy.h"
#include "core/ir/op_registry.h"
#include "core/ir/verifier.h"
#include "core/schedule/mapping_parser.h"
#include "core/schedule/task_mapping.h"

namespace tessera::frontend::dsl {

namespace {

using support::Diagnostic;
using support::Severity;

// ---- op names --------------------------------------------------------------------------------

const std::map<std::string, std::string>& extraAliases() {
    static const std::map<std::string, std::string> m{
        {"conv1d", "Conv"},
        {"conv2d", "Conv"},
        {"conv3d", "Conv"},
        {"conv_transpose", "ConvTranspose"},
        {"conv_transpose2d", "ConvTranspose"},
        {"max_pool", "MaxPool"},
        {"max_pool2d", "MaxPool"},
        {"avg_pool", "AveragePool"},
        {"avg_pool2d", "AveragePool"},
        {"avgpool", "AveragePool"},
        {"global_avg_pool", "GlobalAveragePool"},
        {"global_average_pool", "GlobalAveragePool"},
        {"global_max_pool", "GlobalMaxPool"},
        {"batchnorm", "BatchNormalization"},
        {"batch_norm", "BatchNormalization"},
        {"layernorm", "LayerNormalization"},
        {"layer_norm", "LayerNormalization"},
        {"leaky_relu", "LeakyRelu"},
        {"hard_sigmoid", "HardSigmoid"},
        {"hard_swish", "HardSwish"},
        {"hardswish", "HardSwish"},
        {"log_softmax", "LogSoftmax"},
        {"reduce_mean", "ReduceMean"},
        {"reduce_sum", "ReduceSum"},
        {"reduce_max", "ReduceMax"},
        {"reduce_min", "ReduceMin"},
        {"reduce_prod", "ReduceProd"},
        {"reduce_l2", "ReduceL2"},
        {"arg_max", "ArgMax"},
        {"arg_min", "ArgMin"},
        {"cast_like", "CastLike"},
        {"constant_of_shape", "ConstantOfShape"},
        {"greater_equal", "GreaterOrEqual"},
        {"less_equal", "LessOrEqual"},
        {"linear", "Gemm"},
    };
    return m;
}

std::string lowerStr(std::string_view s) {
    std::string r(s);
    for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::vector<std::string> opCandidates() {
    std::vector<std::string> c;
    for (const auto* s : ir::OpRegistry::instance().all())
        if (s->domain.empty()) c.push_back(s->opType);
    for (const auto& [alias, op] : extraAliases()) c.push_back(alias);
    return c;
}

const std::vector<std::string> kFunctions{"exp",  "log",     "sqrt", "rsqrt", "sin",    "cos",   "tan",
                                          "tanh", "sigmoid", "abs",  "floor", "ceil",   "round", "erf",
                                          "min",  "max",     "pow",  "atan2", "select", "where", "cast"};

std::vector<std::string> dtypeCandidates() {
    return {"f16",   "bf16",  "f32",     "f64",     "i8",      "i16",   "i32",      "i64",    "u8",   "u16",
            "u32",   "u64",   "bool",    "string",  "c64",     "c128",  "float",    "double", "half", "int",
            "int32", "int64", "float32", "float16", "float64", "uint8", "bfloat16", "boolean"};
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string locText(const SourceRange& r) {
    return std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
}

// ---- the converter ---------------------------------------------------------------------------

struct GraphCtx {
    ir::Graph* g = nullptr;
    GraphCtx* parent = nullptr;
    std::unordered_map<std::string, SourceRange> definedAt;  ///< value name -> where it was defined here
    int depth = 0;
};

class Sema {
public:
    Sema(const std::string& file, const ParseOptions& opt, support::DiagnosticList& diags)
        : m_file(file), m_opt(opt), m_diags(diags) {
        if (!m_opt.baseDir.empty())
            m_baseDir = m_opt.baseDir;
        else
            m_baseDir = std::filesystem::path(file).parent_path().string();
    }

    ir::Model run(const ast::Program& prog) {
        ir::Model m;
        m.irVersion = 8;
        m.graph.name = "main";
        GraphCtx ctx;
        ctx.g = &m.graph;
        std::vector<std::pair<ast::Name, std::optional<ast::Type>>> outputs;
        std::vector<const ast::ScheduleStmt*> schedules;
        std::vector<const ast::FuseStmt*> fusions;
        for (const auto& n : prog.poisoned) m_poisoned.insert(n.text);
        for (const auto& s : prog.statements) {
            switch (s.kind) {
                case ast::Statement::Kind::Model:
                    modelStmt(s.model, m);
                    break;
                case ast::Statement::Kind::Opset:
                    opsetStmt(s.opset, m);
                    break;
                case ast::Statement::Kind::Input:
                    inputDecl(s.input, ctx);
                    break;
                case ast::Statement::Kind::Output:
                    for (const auto& it : s.output.items) outputs.push_back(it);
                    break;
                case ast::Statement::Kind::Param:
                    paramDecl(s.param, ctx);
                    break;
                case ast::Statement::Kind::Op:
                    opStmt(s.op, ctx);
                    break;
                case ast::Statement::Kind::Compute:
                    computeStmt(s.compute, ctx);
                    break;
                case ast::Statement::Kind::Schedule:
                    schedules.push_back(&s.schedule);
                    break;
                case ast::Statement::Kind::Fuse:
                    fusions.push_back(&s.fuse);
                    break;
            }
            poisonFailedDefinitions(s, ctx);
        }
        if (!m.opsets.count("")) m.opsets[""] = 17;
        std::set<std::string> seenOutputs;
        for (const auto& [name, type] : outputs) {
            if (!seenOutputs.insert(name.text).second) {
                error(name.range, "output " + quote(name.text) + " is declared twice");
                continue;
            }
            const ir::ValueId id = m.graph.findValue(name.text);
            if (id == ir::kNoValue) {
                undefinedName(name, ctx, "output");
                continue;
            }
            ir::Value& v = m.graph.value(id);
            v.isGraphOutput = true;
            m.graph.outputs().push_back(id);
            if (type) {
                if (auto t = convertType(*type)) applyDeclaredType(v, *t, type->range);
            }
        }
        for (const auto* f : fusions) fuseStmt(*f, m);
        for (const auto* s : schedules) scheduleStmt(*s, m);
        return m;
    }

private:
    const std::string& m_file;
    const ParseOptions& m_opt;
    support::DiagnosticList& m_diags;
    std::string m_baseDir;
    std::int64_t m_totalBytes = 0;
    std::map<std::string, std::shared_ptr<const ir::Model>> m_onnxCache;
    std::set<std::string> m_onnxFailed;
    /// Names whose defining statement failed with an error already reported: uses of them fail
    /// quietly, so that one mistake gives one error, not one per later use.
    std::set<std::string> m_poisoned;

    // ---- diagnostics ---------------------------------------------------------------------------
    void report(Severity sev, const SourceRange& r, std::string msg, std::vector<std::string> notes = {}) {
        m_diags.add(makeDiagnostic(sev, m_file, r, std::move(msg), std::move(notes)));
    }
    void error(const SourceRange& r, std::string msg, std::vector<std::string> notes = {}) {
        report(Severity::Error, r, std::move(msg), std::move(notes));
    }
    void warning(const SourceRange& r, std::string msg, std::vector<std::string> notes = {}) {
        report(Severity::Warning, r, std::move(msg), std::move(notes));
    }
    static std::vector<std::string> didYouMean(const std::string& word,
                                               const std::vector<std::string>& candidates) {
        if (auto m = closestMatch(word, candidates)) return {"hint: did you mean " + quote(*m) + "?"};
        return {};
    }

    std::vector<std::string> visibleNames(const GraphCtx& ctx) const {
        std::vector<std::string> names;
        for (const GraphCtx* c = &ctx; c; c = c->parent)
            for (const auto& v : c->g->values())
                if (names.size() < 100000) names.push_back(v.name);
        return names;
    }

    /// A value of that name in ctx or an enclosing graph (unlike lookup, adds nothing).
    static bool visible(const GraphCtx& ctx, const std::string& name) {
        for (const GraphCtx* c = &ctx; c; c = c->parent)
            if (c->g->findValue(name) != ir::kNoValue) return true;
        return false;
    }

    /// True when `name` is undefined because of an error reported already.
    bool poisoned(const std::string& name) const {
        return m_poisoned.count(name) != 0 && errorCount() > 0;
    }

    /// After a statement: the names it should have defined but did not (it failed) are poisoned.
    /// Only once an error was reported, so that a quiet failure can never hide a name.
    void poisonFailedDefinitions(const ast::Statement& s, const GraphCtx& ctx) {
        if (errorCount() == 0) return;
        auto check = [&](const ast::Name& n) {
            if (!n.text.empty() && ctx.g->findValue(n.text) == ir::kNoValue) m_poisoned.insert(n.text);
        };
        switch (s.kind) {
            case ast::Statement::Kind::Input:
                check(s.input.name);
                break;
            case ast::Statement::Kind::Param:
                check(s.param.name);
                break;
            case ast::Statement::Kind::Op:
                for (const auto& t : s.op.targets)
                    if (!t.omitted) check(t.name);
                if (s.op.nodeName && ctx.g->findNode(s.op.nodeName->text) == ir::kNoNode)
                    m_poisoned.insert(s.op.nodeName->text);
                break;
            case ast::Statement::Kind::Compute:
                check(s.compute.output);
                if (s.compute.nodeName && ctx.g->findNode(s.compute.nodeName->text) == ir::kNoNode)
                    m_poisoned.insert(s.compute.nodeName->text);
                break;
            default:
                break;
        }
    }

    void undefinedName(const ast::Name& n, const GraphCtx& ctx, const std::string& what) {
        if (poisoned(n.text)) return;
        auto notes = didYouMean(n.text, visibleNames(ctx));
        error(n.range, what + " " + quote(n.text) + " is not defined", notes);
    }

    // ---- types and data ------------------------------------------------------------------------
    std::optional<ir::DType> convertDType(const ast::Name& n, bool allowUnknown) {
        if (n.text == "?") {
            if (allowUnknown) return ir::DType::Undefined;
            error(n.range, "an element type is required here");
            return std::nullopt;
        }
        if (auto dt = ir::parseDType(n.text)) return dt;
        auto notes = didYouMean(n.text, dtypeCandidates());
        if (notes.empty())
            notes.push_back(
                "hint: element types are f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool string c64 "
                "c128");
        error(n.range, "unknown element type " + quote(n.text), notes);
        return std::nullopt;
    }

    std::optional<ir::TensorType> convertType(const ast::Type& t) {
        auto dt = convertDType(t.dtype, true);
        if (!dt) return std::nullopt;
        ir::TensorType out;
        out.dtype = *dt;
        if (t.unknownRank) {
            out.shape = ir::Shape::unknownRank();
            return out;
        }
        std::vector<ir::Dim> dims;
        for (const auto& d : t.dims) {
            if (d.kind == ast::Dim::Kind::Known)
                dims.push_back(ir::Dim::known(d.value));
            else if (d.kind == ast::Dim::Kind::Symbol)
                dims.push_back(ir::Dim::symbolic(d.symbol));
            else
                dims.push_back(ir::Dim::unknown());
        }
        out.shape = ir::Shape(std::move(dims));
        return out;
    }

    static bool compatible(const ir::TensorType& a, const ir::TensorType& b) {
        if (a.dtype != ir::DType::Undefined && b.dtype != ir::DType::Undefined && a.dtype != b.dtype)
            return false;
        if (!a.shape.rankKnown() || !b.shape.rankKnown()) return true;
        if (a.shape.rank() != b.shape.rank()) return false;
        for (std::size_t i = 0; i < a.shape.rank(); ++i)
            if (a.shape[i].isKnown() && b.shape[i].isKnown() && a.shape[i].value != b.shape[i].value)
                return false;
        return true;
    }

    /// `y: T` on an op output or an output declaration.
    void applyDeclaredType(ir::Value& v, const ir::TensorType& declared, const SourceRange& where) {
        v.onnxType = declared;
        if (!v.type.isDefined()) {
            v.type = declared;
            return;
        }
        if (!compatible(v.type, declared))
            error(where,
                  "declared type " + declared.str() + " of " + quote(v.name) +
                      " does not match the inferred " + v.type.str(),
                  {"note: Tessera infers " + v.type.str() + " for " + quote(v.name)});
    }

    std::optional<std::vector<std::int64_t>> staticDims(const ir::TensorType& t, const std::string& what,
                                                        const SourceRange& r) {
        if (!t.shape.rankKnown() || !t.shape.isStatic()) {
            error(r, what + " needs a static shape, got " + t.str(),
                  {"hint: constants need known extents, e.g. f32[32, 3, 3, 3]"});
            return std::nullopt;
        }
        return t.shape.knownDims();
    }

    void flattenLiteral(const ast::Literal& l, std::vector<const ast::Literal*>& out, int depth) {
        if (depth > kMaxNestingDepth) return;
        if (l.kind == ast::Literal::Kind::List) {
            for (const auto& it : l.items) flattenLiteral(it, out, depth + 1);
        } else {
            out.push_back(&l);
        }
    }

    /// Nested literal lists must match the shape exactly; returns an error or empty.
    std::string checkNesting(const ast::Literal& l, const std::vector<std::int64_t>& dims, std::size_t d) {
        if (l.kind != ast::Literal::Kind::List)
            return d == dims.size() ? "" : "nesting does not match the shape";
        if (d >= dims.size())
            return "the literal is nested deeper than the shape's rank " + std::to_string(dims.size());
        if (static_cast<std::int64_t>(l.items.size()) != dims[d])
            return "dimension " + std::to_string(d) + " has " + std::to_string(l.items.size()) +
                   " elements in the literal but " + std::to_string(dims[d]) + " in the type";
        for (const auto& it : l.items)
            if (auto e = checkNesting(it, dims, d + 1); !e.empty()) return e;
        return {};
    }

    std::shared_ptr<const ir::TensorData> makeData(const ir::TensorType& type, const ast::Initializer& init,
                                                   const std::string& what) {
        if (type.dtype == ir::DType::Undefined) {
            error(init.range, what + " needs an element type");
            return nullptr;
        }
        if (type.dtype == ir::DType::Complex64 || type.dtype == ir::DType::Complex128) {
            error(init.range, what + ": complex constants are not supported",
                  {"hint: keep real and imaginary parts as two tensors"});
            return nullptr;
        }
        auto dims = staticDims(type, what, init.range);
        if (!dims) return nullptr;
        const std::int64_t budget = std::min(m_opt.maxTensorBytes, m_opt.maxTotalBytes - m_totalBytes);
        using K = ast::Initializer::Kind;
        if (init.kind == K::Npy || init.kind == K::Onnx) return loadExternal(type, *dims, init, what);
        std::string err;
        auto t = makeZeroTensor(type.dtype, *dims, budget, err);
        if (!t) {
            error(init.range, what + ": " + err);
            return nullptr;
        }
        const std::int64_t n = t->numElements();
        switch (init.kind) {
            case K::Zeros:
                break;
            case K::Ones:
            case K::Fill: {
                if (type.dtype == ir::DType::String) {
                    error(init.range, what + ": string tensors need a literal of strings");
                    return nullptr;
                }
                const ast::Literal& l = init.literal;
                for (std::int64_t i = 0; i < n; ++i) {
                    if (init.kind == K::Ones)
                        storeElement(*t, i, 1.0);
                    else if (l.kind == ast::Literal::Kind::Int)
                        storeIntElement(*t, i, l.i);
                    else
                        storeElement(*t, i, l.f);
                }
                break;
            }
            case K::Random: {
                if (type.dtype == ir::DType::String) {
                    error(init.range, what + ": random() cannot fill a string tensor");
                    return nullptr;
                }
                std::uint64_t seed = 0;
                double low = -1.0, high = 1.0;
                for (const auto& kw : init.kwargs) {
                    const ast::AttrValue& v = *kw.value;
                    const bool isNum =
                        v.kind == ast::AttrValue::Kind::Int || v.kind == ast::AttrValue::Kind::Float;
                    if (kw.name.text == "seed") {
                        if (v.kind != ast::AttrValue::Kind::Int || v.i < 0)
                            error(kw.range, "seed must be a non-negative integer");
                        else
                            seed = static_cast<std::uint64_t>(v.i);
                    } else if (kw.name.text == "low" || kw.name.text == "high") {
                        if (!isNum || !std::isfinite(v.f))
                            error(kw.range, kw.name.text + " must be a finite number");
                        else
                            (kw.name.text == "low" ? low : high) = v.f;
                    } else {
                        error(kw.name.range, "random() has no argument " + quote(kw.name.text),
                              didYouMean(kw.name.text, {"seed", "low", "high"}));
                    }
                }
                if (!(low < high)) {
                    error(init.range, "random(): low must be less than high");
                    return nullptr;
                }
                fillRandom(*t, seed, low, high);
                break;
            }
            case K::Literal: {
                const ast::Literal& l = init.literal;
                if (l.kind == ast::Literal::Kind::List && !l.items.empty() &&
                    l.items[0].kind == ast::Literal::Kind::List) {
                    if (auto e = checkNesting(l, *dims, 0); !e.empty()) {
                        error(l.range, what + ": " + e);
                        return nullptr;
                    }
                }
                std::vector<const ast::Literal*> flat;
                flattenLiteral(l, flat, 0);
                if (static_cast<std::int64_t>(flat.size()) != n) {
                    error(l.range, what + ": the literal has " + std::to_string(flat.size()) + " element" +
                                       (flat.size() == 1 ? "" : "s") + " but " + type.str() + " needs " +
                                       std::to_string(n));
                    return nullptr;
                }
                for (std::int64_t i = 0; i < n; ++i) {
                    const ast::Literal& e = *flat[static_cast<std::size_t>(i)];
                    if (type.dtype == ir::DType::String) {
                        if (e.kind != ast::Literal::Kind::String) {
                            error(e.range, what + ": a string tensor needs string elements");
                            return nullptr;
                        }
                        t->strings[static_cast<std::size_t>(i)] = e.s;
                        continue;
                    }
                    if (e.kind == ast::Literal::Kind::String) {
                        error(e.range, what + ": a " + std::string(ir::dtypeName(type.dtype)) +
                                           " tensor cannot hold a string");
                        return nullptr;
                    }
                    if (e.kind == ast::Literal::Kind::Int)
                        storeIntElement(*t, i, e.i);
                    else
                        storeElement(*t, i, e.f);
                }
                break;
            }
            default:
                break;
        }
        m_totalBytes += static_cast<std::int64_t>(t->bytes.size());
        return std::make_shared<const ir::TensorData>(std::move(*t));
    }

    /// Resolves a path of an npy/onnx initializer: relative, inside the base folder.
    std::optional<std::string> resolvePath(const std::string& p, const SourceRange& r) {
        if (!m_opt.allowFileAccess) {
            error(r, "file access is disabled here; " + quote(p) + " cannot be read");
            return std::nullopt;
        }
        const std::filesystem::path path(p);
        if (p.empty() || path.is_absolute() || p.find('\0') != std::string::npos) {
            error(r, "file paths must be relative to the program's folder, got " + quote(p));
            return std::nullopt;
        }
        for (const auto& part : path)
            if (part == "..") {
                error(r, "file path " + quote(p) + " leaves the program's folder ('..')");
                return std::nullopt;
            }
        return (std::filesystem::path(m_baseDir.empty() ? "." : m_baseDir) / path).string();
    }

    std::shared_ptr<const ir::TensorData> loadExternal(const ir::TensorType& type,
                                                       const std::vector<std::int64_t>& dims,
                                                       const ast::Initializer& init,
                                                       const std::string& what) {
        auto full = resolvePath(init.path, init.range);
        if (!full) return nullptr;
        ir::TensorData data;
        if (init.kind == ast::Initializer::Kind::Npy) {
            std::error_code ec;
            const auto size = std::filesystem::file_size(*full, ec);
            if (ec) {
                error(init.range, "cannot read " + quote(init.path) + ": " + ec.message());
                return nullptr;
            }
            if (static_cast<std::int64_t>(size) >
                std::min(m_opt.maxTensorBytes, m_opt.maxTotalBytes - m_totalBytes) + (1 << 20)) {
                error(init.range, quote(init.path) + " is larger than the constant size limit");
                return nullptr;
            }
            std::ifstream in(*full, std::ios::binary);
            std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            auto t = ir::parseNpy(bytes, init.path);
            if (!t) {
                const auto* e = t.diagnostics().firstError();
                error(init.range, quote(init.path) + ": " + (e ? e->message : "cannot read the .npy file"));
                return nullptr;
            }
            data = std::move(t.value());
        } else {
            if (!m_opt.onnxLoader) {
                error(init.range,
                      "onnx(...) initializers need the ONNX frontend, which this tool does not provide");
                return nullptr;
            }
            if (m_onnxFailed.count(*full)) return nullptr;
            auto it = m_onnxCache.find(*full);
            if (it == m_onnxCache.end()) {
                auto loaded = m_opt.onnxLoader(*full);
                if (!loaded.ok() || !loaded.value()) {
                    std::vector<std::string> notes;
                    if (const auto* e = loaded.diagnostics().firstError())
                        notes.push_back("note: " + e->format());
                    error(init.range, "cannot load ONNX model " + quote(init.path), notes);
                    m_onnxFailed.insert(*full);
                    return nullptr;
                }
                it = m_onnxCache.emplace(*full, loaded.value()).first;
            }
            const ir::Graph& g = it->second->graph;
            std::shared_ptr<const ir::TensorData> found;
            const ir::ValueId id = g.findValue(init.tensorName);
            if (id != ir::kNoValue && g.value(id).data) found = g.value(id).data;
            if (!found && id != ir::kNoValue) {
                const ir::NodeId p = g.producer(id);
                if (p != ir::kNoNode && g.node(p).opType == "Constant") {
                    const ir::Attribute* a = g.node(p).attr("value");
                    if (a && a->type == ir::AttrType::Tensor) found = a->t;
                }
            }
            if (!found) {
                std::vector<std::string> names;
                for (const auto& v : g.values())
                    if (v.data) names.push_back(v.name);
                error(init.range,
                      quote(init.path) + " has no initializer or Constant named " + quote(init.tensorName),
                      didYouMean(init.tensorName, names));
                return nullptr;
            }
            data = *found;
        }
        if (data.dtype != type.dtype || data.dims != dims) {
            ir::TensorType got = data.type();
            error(init.range,
                  what + " is declared " + type.str() + " but " + quote(init.path) + " holds " + got.str());
            return nullptr;
        }
        if (!data.sizeConsistent()) {
            error(init.range, quote(init.path) + ": data size does not match its shape");
            return nullptr;
        }
        m_totalBytes += static_cast<std::int64_t>(data.bytes.size());
        return std::make_shared<const ir::TensorData>(std::move(data));
    }

    // ---- values --------------------------------------------------------------------------------
    /// Defines a new value in ctx; reports a redefinition.
    ir::ValueId define(GraphCtx& ctx, const ast::Name& n, ir::Value v) {
        if (n.text.empty()) {
            error(n.range, "empty names are not allowed");
            return ir::kNoValue;
        }
        if (ctx.g->findValue(n.text) != ir::kNoValue) {
            auto it = ctx.definedAt.find(n.text);
            std::vector<std::string> notes;
            if (it != ctx.definedAt.end())
                notes.push_back("note: first defined at " + locText(it->second));
            else
                notes.push_back("note: it is a value of an enclosing graph already used here");
            error(n.range, quote(n.text) + " is already defined", notes);
            return ir::kNoValue;
        }
        v.name = n.text;
        const ir::ValueId id = ctx.g->addValue(std::move(v));
        ctx.definedAt[n.text] = n.range;
        return id;
    }

    /// A value visible in ctx (own graph or an enclosing one; outer values get a producer-less
    /// copy here, as the ONNX importer does).
    ir::ValueId lookup(GraphCtx& ctx, const std::string& name) {
        const ir::ValueId id = ctx.g->findValue(name);
        if (id != ir::kNoValue) return id;
        for (GraphCtx* c = ctx.parent; c; c = c->parent) {
            const ir::ValueId oid = c->g->findValue(name);
            if (oid == ir::kNoValue) continue;
            ir::Value v;
            v.name = name;
            v.type = c->g->value(oid).type;
            v.onnxType = c->g->value(oid).onnxType;
            return ctx.g->addValue(std::move(v));
        }
        return ir::kNoValue;
    }

    // ---- statements ----------------------------------------------------------------------------
    void modelStmt(const ast::ModelStmt& s, ir::Model& m) {
        for (const auto& kw : s.kwargs) {
            const ast::AttrValue& v = *kw.value;
            const std::string& k = kw.name.text;
            if (k == "ir_version") {
                if (v.kind != ast::AttrValue::Kind::Int || v.i < 0)
                    error(kw.range, "ir_version must be a non-negative integer");
                else
                    m.irVersion = v.i;
                continue;
            }
            if (k == "name" || k == "producer" || k == "producer_version" || k == "doc") {
                if (v.kind != ast::AttrValue::Kind::String) {
                    error(kw.range, quote(k) + " must be a string");
                    continue;
                }
                if (k == "name")
                    m.graph.name = v.s;
                else if (k == "producer")
                    m.producerName = v.s;
                else if (k == "producer_version")
                    m.producerVersion = v.s;
                else
                    m.graph.docString = v.s;
                continue;
            }
            error(kw.name.range, "unknown model field " + quote(k),
                  didYouMean(k, {"name", "ir_version", "producer", "producer_version", "doc"}));
        }
    }

    void opsetStmt(const ast::OpsetStmt& s, ir::Model& m) {
        std::string domain = s.domain ? s.domain->text : "";
        if (domain == "ai.onnx") domain.clear();
        if (s.version < 1 || s.version > 100000) {
            error(s.range, "opset version " + std::to_string(s.version) + " is out of range");
            return;
        }
        if (m.opsets.count(domain)) {
            error(s.range,
                  "opset for domain " + quote(domain.empty() ? "ai.onnx" : domain) + " is given twice");
            return;
        }
        m.opsets[domain] = s.version;
    }

    void inputDecl(const ast::InputDecl& s, GraphCtx& ctx) {
        auto t = convertType(s.type);
        if (!t) return;
        ir::Value v;
        v.type = *t;
        v.onnxType = *t;
        v.isGraphInput = true;
        if (s.init) {
            v.data = makeData(*t, *s.init, "input " + quote(s.name.text));
            if (!v.data) return;
            v.isInitializer = true;
        }
        const ir::ValueId id = define(ctx, s.name, std::move(v));
        if (id == ir::kNoValue) return;
        ctx.g->inputs().push_back(id);
        if (s.init) ctx.g->initializers().push_back(id);
    }

    void paramDecl(const ast::ParamDecl& s, GraphCtx& ctx) {
        auto t = convertType(s.type);
        if (!t) return;
        ir::Value v;
        v.type = *t;
        v.isInitializer = true;
        v.data = makeData(*t, s.init, "param " + quote(s.name.text));
        if (!v.data) return;
        const ir::ValueId id = define(ctx, s.name, std::move(v));
        if (id != ir::kNoValue) ctx.g->initializers().push_back(id);
    }

    std::string uniqueNodeName(const ir::Graph& g, const std::string& base) {
        if (g.findNode(base) == ir::kNoNode) return base;
        for (int k = 1;; ++k) {
            std::string n = base + "_" + std::to_string(k);
            if (g.findNode(n) == ir::kNoNode) return n;
        }
    }

    /// Converts an attribute value; `want` is the schema's type (Undefined when unknown).
    std::optional<ir::Attribute> convertAttr(const ast::AttrValue& v, ir::AttrType want,
                                             const std::string& attrName, const std::string& opName,
                                             GraphCtx& ctx) {
        using AK = ast::AttrValue::Kind;
        using AT = ir::AttrType;
        auto mismatch = [&](const char* got) {
            error(v.range, opName + ": attribute " + quote(attrName) + " must be " + ir::attrTypeName(want) +
                               ", got " + got);
            return std::nullopt;
        };
        switch (v.kind) {
            case AK::Int:
                if (want == AT::Float) return ir::Attribute::ofFloat(static_cast<double>(v.i));
                if (want == AT::Ints) return ir::Attribute::ofInts({v.i});
                if (want == AT::Floats) return ir::Attribute::ofFloats({static_cast<double>(v.i)});
                if (want != AT::Undefined && want != AT::Int) return mismatch("an int");
                return ir::Attribute::ofInt(v.i);
            case AK::Float:
                if (want == AT::Floats) return ir::Attribute::ofFloats({v.f});
                if (want != AT::Undefined && want != AT::Float) return mismatch("a float");
                return ir::Attribute::ofFloat(v.f);
            case AK::String:
                if (want == AT::Strings) return ir::Attribute::ofStrings({v.s});
                if (want != AT::Undefined && want != AT::String) return mismatch("a string");
                return ir::Attribute::ofString(v.s);
            case AK::Tensor: {
                if (want != AT::Undefined && want != AT::Tensor) return mismatch("a tensor");
                auto t = convertType(*v.tensorType);
                if (!t) return std::nullopt;
                auto data = makeData(*t, *v.tensorInit, "attribute " + quote(attrName));
                if (!data) return std::nullopt;
                return ir::Attribute::ofTensor(std::move(data));
            }
            case AK::Graph: {
                if (want != AT::Undefined && want != AT::Graph) return mismatch("a graph");
                auto g = convertGraph(*v.graph, attrName, ctx);
                if (!g) return std::nullopt;
                return ir::Attribute::ofGraph(std::move(g));
            }
            case AK::List:
                break;
        }
        // Lists: the element kinds decide unless a prefix or the schema says otherwise.
        std::string kind = v.listType;
        if (kind.empty()) {
            bool allInt = true, allNum = true, allStr = true, allTensor = true, allGraph = true;
            for (const auto& it : v.items) {
                allInt = allInt && it.kind == AK::Int;
                allNum = allNum && (it.kind == AK::Int || it.kind == AK::Float);
                allStr = allStr && it.kind == AK::String;
                allTensor = allTensor && it.kind == AK::Tensor;
                allGraph = allGraph && it.kind == AK::Graph;
            }
            if (v.items.empty()) {
                kind = want == AT::Floats    ? "floats"
                       : want == AT::Strings ? "strings"
                       : want == AT::Tensors ? "tensors"
                       : want == AT::Graphs  ? "graphs"
                                             : "ints";
            } else if (allInt)
                kind = want == AT::Floats ? "floats" : "ints";
            else if (allNum)
                kind = "floats";
            else if (allStr)
                kind = "strings";
            else if (allTensor)
                kind = "tensors";
            else if (allGraph)
                kind = "graphs";
            else {
                error(v.range,
                      opName + ": attribute " + quote(attrName) + " mixes element kinds in one list");
                return std::nullopt;
            }
        }
        ir::Attribute a;
        if (kind == "ints") {
            a.type = AT::Ints;
            for (const auto& it : v.items) {
                if (it.kind != AK::Int) {
                    error(it.range, opName + ": attribute " + quote(attrName) +
                                        " is a list of ints; this element is not an int");
                    return std::nullopt;
                }
                a.ints.push_back(it.i);
            }
        } else if (kind == "floats") {
            a.type = AT::Floats;
            for (const auto& it : v.items) {
                if (it.kind != AK::Int && it.kind != AK::Float) {
                    error(it.range, opName + ": attribute " + quote(attrName) +
                                        " is a list of floats; this element is not a number");
                    return std::nullopt;
                }
                a.floats.push_back(it.kind == AK::Int ? static_cast<double>(it.i) : it.f);
            }
        } else if (kind == "strings") {
            a.type = AT::Strings;
            for (const auto& it : v.items) {
                if (it.kind != AK::String) {
                    error(it.range, opName + ": attribute " + quote(attrName) +
                                        " is a list of strings; this element is not a string");
                    return std::nullopt;
                }
                a.strings.push_back(it.s);
            }
        } else if (kind == "tensors") {
            a.type = AT::Tensors;
            for (const auto& it : v.items) {
                auto e =
                    it.kind == AK::Tensor ? convertAttr(it, AT::Tensor, attrName, opName, ctx) : std::nullopt;
                if (!e) {
                    if (it.kind != AK::Tensor) error(it.range, "expected tensor(...) in a list of tensors");
                    return std::nullopt;
                }
                a.tensors.push_back(e->t);
            }
        } else {
            a.type = AT::Graphs;
            for (const auto& it : v.items) {
                auto e =
                    it.kind == AK::Graph ? convertAttr(it, AT::Graph, attrName, opName, ctx) : std::nullopt;
                if (!e) {
                    if (it.kind != AK::Graph) error(it.range, "expected graph ... in a list of graphs");
                    return std::nullopt;
                }
                a.graphs.push_back(e->g);
            }
        }
        if (want != AT::Undefined && a.type != want) {
            const char* got = ir::attrTypeName(a.type);
            error(v.range, opName + ": attribute " + quote(attrName) + " must be " + ir::attrTypeName(want) +
                               ", got " + got);
            return std::nullopt;
        }
        return a;
    }

    std::shared_ptr<ir::Graph> convertGraph(const ast::GraphLit& gl, const std::string& attrName,
                                            GraphCtx& outer) {
        if (outer.depth + 1 > 64) {
            error(gl.range, "subgraphs nested more than 64 deep");
            return nullptr;
        }
        auto g = std::make_shared<ir::Graph>();
        g->name = gl.name ? gl.name->text : attrName;
        GraphCtx ctx;
        ctx.g = g.get();
        ctx.parent = &outer;
        ctx.depth = outer.depth + 1;
        const std::size_t errorsBefore = errorCount();
        for (const auto& [n, t] : gl.params) {
            auto tt = convertType(t);
            if (!tt) continue;
            ir::Value v;
            v.type = *tt;
            v.onnxType = *tt;
            v.isGraphInput = true;
            const ir::ValueId id = define(ctx, n, std::move(v));
            if (id != ir::kNoValue) g->inputs().push_back(id);
        }
        for (const auto& s : gl.body) {
            switch (s.kind) {
                case ast::Statement::Kind::Op:
                    opStmt(s.op, ctx);
                    break;
                case ast::Statement::Kind::Compute:
                    computeStmt(s.compute, ctx);
                    break;
                case ast::Statement::Kind::Param:
                    paramDecl(s.param, ctx);
                    break;
                default:
                    error(gl.range,
                          "only op calls, compute definitions and params may appear in a graph body");
                    break;
            }
            poisonFailedDefinitions(s, ctx);
        }
        const bool bodyFailed = errorCount() > errorsBefore;
        for (const auto& [n, t] : gl.results) {
            const ir::ValueId id = lookup(ctx, n.text);
            if (id == ir::kNoValue) {
                if (!bodyFailed) undefinedName(n, ctx, "graph output");
                continue;
            }
            ir::Value& v = g->value(id);
            v.isGraphOutput = true;
            g->outputs().push_back(id);
            if (t)
                if (auto tt = convertType(*t)) applyDeclaredType(v, *tt, t->range);
        }
        if (errorCount() > errorsBefore) return nullptr;
        return g;
    }

    std::size_t errorCount() const {
        std::size_t n = 0;
        for (const auto& d : m_diags.items()) n += d.severity == Severity::Error ? 1 : 0;
        return n;
    }

    struct ResolvedOp {
        std::string domain, opType;
        const ir::OpSchema* schema = nullptr;
    };

    std::optional<ResolvedOp> resolveOp(const ast::OpStmt& s) {
        const ir::OpRegistry& reg = ir::OpRegistry::instance();
        ResolvedOp r;
        if (s.domain) {
            r.domain = s.domain->text == "ai.onnx" ? "" : s.domain->text;
            r.opType = s.op.text;
            r.schema = reg.find(r.domain, r.opType);
            if (r.opType.empty()) {
                error(s.op.range, "empty op name");
                return std::nullopt;
            }
            return r;
        }
        if (const auto* sc = reg.find("", s.op.text)) {
            r.opType = s.op.text;
            r.schema = sc;
            return r;
        }
        const std::string canon = resolveOpAlias(s.op.text);
        if (!canon.empty()) {
            r.opType = canon;
            r.schema = reg.find("", canon);
            return r;
        }
        std::vector<std::string> notes = didYouMean(s.op.text, opCandidates());
        if (notes.empty()) {
            // Case-insensitive exact match against registry names (e.g. "CONV").
            for (const auto* sc : reg.all())
                if (sc->domain.empty() && lowerStr(sc->opType) == lowerStr(s.op.text))
                    notes.push_back("hint: did you mean " + quote(sc->opType) + "?");
        }
        notes.push_back("hint: ops Tessera does not know are written with their domain, e.g. ai.onnx::" +
                        s.op.text + "(...)");
        error(s.op.range, "unknown op " + quote(s.op.text), notes);
        return std::nullopt;
    }

    /// Rewrites a registry broadcast error so that it names both operands with their types.
    std::string explainError(const ir::Node& n, const ir::Graph& g, const std::string& err) {
        if (err.rfind("cannot broadcast", 0) == 0) {
            std::vector<std::pair<std::string, ir::TensorType>> ins;
            for (ir::ValueId v : n.inputs)
                if (v != ir::kNoValue) ins.emplace_back(g.value(v).name, g.value(v).type);
            for (std::size_t a = 0; a < ins.size(); ++a)
                for (std::size_t b = a + 1; b < ins.size(); ++b) {
                    const ir::Shape& sa = ins[a].second.shape;
                    const ir::Shape& sb = ins[b].second.shape;
                    if (!sa.rankKnown() || !sb.rankKnown()) continue;
                    const std::size_t r = std::max(sa.rank(), sb.rank());
                    for (std::size_t k = 0; k < r; ++k) {
                        const ir::Dim da = k < r - sa.rank() ? ir::Dim::known(1) : sa[k - (r - sa.rank())];
                        const ir::Dim db = k < r - sb.rank() ? ir::Dim::known(1) : sb[k - (r - sb.rank())];
                        if (da.isKnown() && db.isKnown() && da.value != db.value && da.value != 1 &&
                            db.value != 1)
                            return "cannot broadcast " + ins[a].second.str() + " (" + ins[a].first +
                                   ") and " + ins[b].second.str() + " (" + ins[b].first + ")";
                    }
                }
        }
        return err;
    }

    void opStmt(const ast::OpStmt& s, GraphCtx& ctx) {
        auto op = resolveOp(s);
        // Inputs and attributes are checked even when the op is unknown, so that their errors show too.
        ir::Node node;
        bool ok = op.has_value();
        std::vector<std::pair<std::string, const ast::KwArg*>> kwargs;
        std::set<std::string> attrNames;
        const std::string opName = op ? op->opType : s.op.text;
        for (const auto& a : s.args) {
            if (a.kind == ast::Arg::Kind::Omitted) {
                node.inputs.push_back(ir::kNoValue);
            } else if (a.kind == ast::Arg::Kind::Value) {
                if (!kwargs.empty())
                    warning(a.range, "input " + quote(a.name.text) +
                                         " follows attributes; inputs are numbered in written order");
                const ir::ValueId id = lookup(ctx, a.name.text);
                if (id == ir::kNoValue) {
                    undefinedName(a.name, ctx, "input");
                    ok = false;
                } else {
                    node.inputs.push_back(id);
                }
            } else {
                if (!attrNames.insert(a.kwarg.name.text).second) {
                    error(a.kwarg.name.range, "attribute " + quote(a.kwarg.name.text) + " is given twice");
                    ok = false;
                    continue;
                }
                kwargs.emplace_back(a.kwarg.name.text, &a.kwarg);
            }
        }
        for (const auto& [name, kw] : kwargs) {
            ir::AttrType want = ir::AttrType::Undefined;
            if (op && op->schema) {
                if (const auto* as = op->schema->findAttr(name))
                    want = as->type;
                else {
                    std::vector<std::string> cands;
                    for (const auto& sa : op->schema->attributes) cands.push_back(sa.name);
                    auto notes = didYouMean(name, cands);
                    if (notes.empty() && !cands.empty()) {
                        std::string all;
                        for (const auto& c : cands) all += (all.empty() ? "" : ", ") + c;
                        notes.push_back("note: " + opName + " has attributes " + all);
                    }
                    warning(kw->name.range,
                            opName + " has no attribute " + quote(name) + " (kept, but ignored by Tessera)",
                            notes);
                }
            }
            auto attr = convertAttr(*kw->value, want, name, opName, ctx);
            if (!attr) {
                ok = false;
                continue;
            }
            node.attributes.emplace_back(name, std::move(*attr));
        }
        // Trailing omitted inputs are dropped (ONNX allows either form; this keeps arity checks simple).
        if (!ok) return;
        node.opType = op->opType;
        node.domain = op->domain;
        // Outputs.
        for (const auto& t : s.targets) {
            if (t.omitted) {
                node.outputs.push_back(ir::kNoValue);
                continue;
            }
            ir::Value v;
            const ir::ValueId id = define(ctx, t.name, std::move(v));
            if (id == ir::kNoValue) return;
            node.outputs.push_back(id);
        }
        if (s.nodeName) {
            if (s.nodeName->text.empty()) {
                error(s.nodeName->range, "empty node names are not allowed");
                return;
            }
            if (ctx.g->findNode(s.nodeName->text) != ir::kNoNode) {
                error(s.nodeName->range, "node name " + quote(s.nodeName->text) + " is already used");
                return;
            }
            node.name = s.nodeName->text;
        } else {
            std::string base;
            for (ir::ValueId o : node.outputs)
                if (o != ir::kNoValue) {
                    base = ctx.g->value(o).name;
                    break;
                }
            if (base.empty()) base = node.opType + "_" + std::to_string(ctx.g->numNodes());
            node.name = uniqueNodeName(*ctx.g, base);
        }
        const ir::NodeId id = ctx.g->addNode(std::move(node));
        checkAndInfer(id, s, ctx);
        for (std::size_t i = 0; i < s.targets.size(); ++i) {
            const auto& t = s.targets[i];
            if (t.omitted || !t.type) continue;
            const ir::ValueId vid = ctx.g->node(id).outputs[i];
            if (auto tt = convertType(*t.type)) applyDeclaredType(ctx.g->value(vid), *tt, t.type->range);
        }
    }

    void checkAndInfer(ir::NodeId id, const ast::OpStmt& s, GraphCtx& ctx) {
        ir::Graph& g = *ctx.g;
        const ir::Node& n = g.node(id);
        support::DiagnosticList schemaDiags;
        const bool schemaOk = ir::checkNodeAgainstSchema(g, id, m_file, schemaDiags);
        for (auto d : schemaDiags.items()) {
            if (d.severity != Severity::Error)
                continue;  // unknown-attribute warnings were reported with a hint
            SourceRange where = s.callRange;
            const auto p = d.message.find("attribute '");
            if (p != std::string::npos) {
                const auto q = d.message.find('\'', p + 11);
                const std::string an = d.message.substr(p + 11, q == std::string::npos ? 0 : q - p - 11);
                for (const auto& a : s.args)
                    if (a.kind == ast::Arg::Kind::Attr && a.kwarg.name.text == an) where = a.kwarg.range;
            }
            error(where, n.opType + ": " + d.message);
        }
        if (!schemaOk) return;
        const ir::OpSchema* schema = ir::OpRegistry::instance().find(n.domain, n.opType);
        if (!schema || !schema->inferShapes) return;
        ir::InferContext ictx{g, n, {}};
        bool unknownInput = false;
        for (ir::ValueId v : n.inputs) {
            ictx.inputTypes.push_back(v == ir::kNoValue ? ir::TensorType{} : g.value(v).type);
            if (v != ir::kNoValue && !g.value(v).type.isDefined()) unknownInput = true;
        }
        ir::InferResult r;
        try {
            r = schema->inferShapes(ictx);
        } catch (const std::exception& e) {
            r.error = std::string("internal error in shape inference: ") + e.what();
        }
        if (!r.ok()) {
            std::vector<std::string> notes;
            for (std::size_t i = 0; i < n.inputs.size(); ++i) {
                if (n.inputs[i] == ir::kNoValue) continue;
                const ir::Value& v = g.value(n.inputs[i]);
                notes.push_back("note: input " + std::to_string(i) + " is " + quote(v.name) + ": " +
                                v.type.str());
            }
            (void)unknownInput;
            error(s.callRange, n.opType + ": " + explainError(n, g, r.error), notes);
            return;
        }
        for (std::size_t i = 0; i < n.outputs.size() && i < r.outputs.size(); ++i)
            if (n.outputs[i] != ir::kNoValue) g.value(n.outputs[i]).type = r.outputs[i];
    }

    // ---- compute definitions -------------------------------------------------------------------
    struct ComputeBuild {
        ir::ComputeDef def;
        std::vector<ir::ValueId> inputs;
        std::vector<std::pair<std::string, int>>
            scope;  ///< visible index names -> axis number (innermost last)
        bool ok = true;
    };

    void locate(ir::ComputeExpr& e, const SourceRange& r) {
        e.begin = r.begin;
        e.end = r.end;
    }

    std::optional<ir::Dim> convertExtent(const ast::Extent& e) {
        if (e.symbolic) return ir::Dim::symbolic(e.symbol);
        return ir::Dim::known(e.value);
    }

    int findIndex(const ComputeBuild& b, const std::string& name) const {
        for (auto it = b.scope.rbegin(); it != b.scope.rend(); ++it)
            if (it->first == name) return it->second;
        return -1;
    }

    std::vector<std::string> indexNames(const ComputeBuild& b) const {
        std::vector<std::string> n;
        for (const auto& [name, axis] : b.scope) n.push_back(name);
        return n;
    }

    ir::ComputeExpr convertExpr(const ast::Expr& x, ComputeBuild& b, GraphCtx& ctx, int depth) {
        using EK = ast::Expr::Kind;
        ir::ComputeExpr e;
        if (depth > 4 * kMaxNestingDepth) {
            error(x.range, "expression nested too deeply (more than " + std::to_string(4 * kMaxNestingDepth) +
                               " levels)",
                  {"hint: every operator of a long chain such as a + b + c + ... adds a level: split it into "
                   "partial results"});
            b.ok = false;
            return e;
        }
        switch (x.kind) {
            case EK::Int:
                e = ir::ComputeExpr::integer(x.i);
                break;
            case EK::Float:
                e = ir::ComputeExpr::constant(x.f, ir::DType::F32);
                break;
            case EK::Bool:
                e = ir::ComputeExpr::constant(x.b ? 1.0 : 0.0, ir::DType::Bool);
                e.intValue = x.b ? 1 : 0;
                break;
            case EK::Pi:
                e = ir::ComputeExpr::constant(3.14159265358979323846, ir::DType::F32);
                break;
            case EK::Var: {
                const int axis = findIndex(b, x.name.text);
                if (axis >= 0) {
                    e = ir::ComputeExpr::index(axis);
                    break;
                }
                b.ok = false;
                if (poisoned(x.name.text)) break;
                if (lookup(ctx, x.name.text) != ir::kNoValue) {
                    error(x.range,
                          quote(x.name.text) + " is a tensor; read an element with " + x.name.text + "[...]");
                } else {
                    auto notes = didYouMean(x.name.text, indexNames(b));
                    if (notes.empty()) notes = didYouMean(x.name.text, visibleNames(ctx));
                    error(x.range, "unknown index variable " + quote(x.name.text), notes);
                }
                break;
            }
            case EK::Access: {
                const ir::ValueId id = lookup(ctx, x.name.text);
                std::vector<ir::ComputeExpr> subs;
                for (const auto& s : x.args) subs.push_back(convertExpr(s, b, ctx, depth + 1));
                if (id == ir::kNoValue) {
                    b.ok = false;
                    if (findIndex(b, x.name.text) >= 0)
                        error(x.name.range, quote(x.name.text) + " is an index variable, not a tensor");
                    else
                        undefinedName(x.name, ctx, "tensor");
                    break;
                }
                int slot = -1;
                for (std::size_t i = 0; i < b.inputs.size(); ++i)
                    if (b.inputs[i] == id) slot = static_cast<int>(i);
                if (slot < 0) {
                    slot = static_cast<int>(b.inputs.size());
                    b.inputs.push_back(id);
                }
                e = ir::ComputeExpr::access(slot, std::move(subs));
                break;
            }
            case EK::Unary: {
                ir::ComputeExpr a = convertExpr(x.args.at(0), b, ctx, depth + 1);
                e = ir::ComputeExpr::unaryOp(x.op == "!" ? ir::ComputeUnary::Not : ir::ComputeUnary::Neg,
                                             std::move(a));
                break;
            }
            case EK::Binary: {
                static const std::map<std::string, ir::ComputeBinary> ops{
                    {"+", ir::ComputeBinary::Add}, {"-", ir::ComputeBinary::Sub},
                    {"*", ir::ComputeBinary::Mul}, {"/", ir::ComputeBinary::Div},
                    {"%", ir::ComputeBinary::Mod}, {"<", ir::ComputeBinary::Lt},
                    {"<=", ir::ComputeBinary::Le}, {">", ir::ComputeBinary::Gt},
                    {">=", ir::ComputeBinary::Ge}, {"==", ir::ComputeBinary::Eq},
                    {"!=", ir::ComputeBinary::Ne}, {"&&", ir::ComputeBinary::And},
                    {"||", ir::ComputeBinary::Or}};
                ir::ComputeExpr l = convertExpr(x.args.at(0), b, ctx, depth + 1);
                ir::ComputeExpr r = convertExpr(x.args.at(1), b, ctx, depth + 1);
                auto it = ops.find(x.op);
                e = ir::ComputeExpr::binaryOp(it == ops.end() ? ir::ComputeBinary::Add : it->second,
                                              std::move(l), std::move(r));
                break;
            }
            case EK::Ternary: {
                ir::ComputeExpr c = convertExpr(x.args.at(0), b, ctx, depth + 1);
                ir::ComputeExpr t = convertExpr(x.args.at(1), b, ctx, depth + 1);
                ir::ComputeExpr f = convertExpr(x.args.at(2), b, ctx, depth + 1);
                e = ir::ComputeExpr::select(std::move(c), std::move(t), std::move(f));
                break;
            }
            case EK::Cast: {
                ir::ComputeExpr a = convertExpr(x.args.at(0), b, ctx, depth + 1);
                auto dt = convertDType(x.name, false);
                if (!dt) {
                    b.ok = false;
                    break;
                }
                e = ir::ComputeExpr::cast(std::move(a), *dt);
                break;
            }
            case EK::Call: {
                const std::string& fn = x.op;
                // sun(k) - x[k]: the "arguments" of a misspelled reducer are its axes; reporting
                // them as unknown index variables would only repeat the one mistake.
                const bool known = fn == "select" || fn == "where" || ir::computeUnaryFromName(fn) ||
                                   ir::computeBinaryFromName(fn);
                bool reducerTypo = false;
                if (!known && !visible(ctx, fn)) {
                    std::vector<std::string> cands{"sum", "prod"};  // first: they win ties ('sun' vs 'sin')
                    cands.insert(cands.end(), kFunctions.begin(), kFunctions.end());
                    const auto m = closestMatch(fn, cands);
                    reducerTypo = m && (*m == "sum" || *m == "prod");
                }
                std::vector<ir::ComputeExpr> args;
                if (!reducerTypo)
                    for (const auto& a : x.args) args.push_back(convertExpr(a, b, ctx, depth + 1));
                else
                    // The axes the user meant to reduce over stay known for the rest of the
                    // statement (which fails anyway), so `- x[i, k]` after it says nothing more.
                    for (const auto& a : x.args)
                        if (a.kind == EK::Var && findIndex(b, a.name.text) < 0) {
                            ir::ComputeAxis ax;
                            ax.name = a.name.text;
                            ax.reduction = true;
                            b.scope.emplace_back(ax.name, static_cast<int>(b.def.axes.size()));
                            b.def.axes.push_back(std::move(ax));
                        }
                auto arity = [&](std::size_t n) {
                    if (args.size() == n) return true;
                    std::vector<std::string> notes;
                    if ((fn == "max" || fn == "min") && args.size() == 1)
                        notes.push_back("hint: for a reduction write " + fn +
                                        "(k) x[k]; a negated body needs parentheses: " + fn + "(k) (-x[k])");
                    error(x.range,
                          quote(fn) + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") +
                              ", got " + std::to_string(args.size()),
                          notes);
                    b.ok = false;
                    return false;
                };
                if (fn == "select" || fn == "where") {
                    if (arity(3))
                        e = ir::ComputeExpr::select(std::move(args[0]), std::move(args[1]),
                                                    std::move(args[2]));
                } else if (auto u = ir::computeUnaryFromName(fn)) {
                    if (arity(1)) e = ir::ComputeExpr::unaryOp(*u, std::move(args[0]));
                } else if (auto bi = ir::computeBinaryFromName(fn)) {
                    if (arity(2)) e = ir::ComputeExpr::binaryOp(*bi, std::move(args[0]), std::move(args[1]));
                } else {
                    b.ok = false;
                    // y[i] = m(i): a tensor read with the wrong brackets is the likeliest intent.
                    std::vector<std::string> notes;
                    if (visible(ctx, fn))
                        notes.push_back("hint: " + quote(fn) + " is a tensor; read an element with " + fn + "[...]");
                    // sun(x[i, k]): a reducer misspelled and written like a function. Reducers come
                    // first so that they win ties ('sun' is as close to 'sin').
                    std::vector<std::string> cands{"sum", "prod"};
                    cands.insert(cands.end(), kFunctions.begin(), kFunctions.end());
                    if (notes.empty()) {
                        if (auto r = closestMatch(fn, cands); r && (*r == "sum" || *r == "prod"))
                            notes.push_back("hint: did you mean " + quote(*r) + "? A reduction names its axes: " +
                                            *r + "(k) x[i, k]");
                        else if (r)
                            notes.push_back("hint: did you mean " + quote(*r) + "?");
                    }
                    if (notes.empty())
                        notes.push_back(
                            "hint: functions are exp log sqrt rsqrt sin cos tan tanh sigmoid abs floor ceil "
                            "round erf min max pow atan2 select where cast");
                    const std::string canon = resolveOpAlias(fn);
                    if (!canon.empty() || ir::OpRegistry::instance().find("", fn))
                        notes.push_back("note: ops such as " + (canon.empty() ? fn : canon) +
                                        " are called in their own statement: y = " +
                                        (canon.empty() ? fn : canon) + "(x);");
                    error(x.name.range, "unknown function " + quote(fn), notes);
                }
                break;
            }
            case EK::Reduce: {
                static const std::map<std::string, ir::ReduceKind> kinds{{"sum", ir::ReduceKind::Sum},
                                                                         {"prod", ir::ReduceKind::Prod},
                                                                         {"max", ir::ReduceKind::Max},
                                                                         {"min", ir::ReduceKind::Min}};
                std::vector<int> axes;
                const std::size_t scopeBefore = b.scope.size();
                for (const auto& ad : x.axes) {
                    if (findIndex(b, ad.name.text) >= 0) {
                        error(ad.name.range, "reduction axis " + quote(ad.name.text) +
                                                 " shadows an index variable of the same name");
                        b.ok = false;
                    }
                    for (int a : axes)
                        if (b.def.axes[static_cast<std::size_t>(a)].name == ad.name.text) {
                            error(ad.name.range,
                                  "reduction axis " + quote(ad.name.text) + " is listed twice");
                            b.ok = false;
                        }
                    ir::ComputeAxis ax;
                    ax.name = ad.name.text;
                    ax.reduction = true;
                    if (ad.extent) ax.extent = *convertExtent(*ad.extent);
                    axes.push_back(static_cast<int>(b.def.axes.size()));
                    b.def.axes.push_back(std::move(ax));
                }
                for (std::size_t i = 0; i < axes.size(); ++i)
                    b.scope.emplace_back(x.axes[i].name.text, axes[i]);
                ir::ComputeExpr body = convertExpr(x.args.at(0), b, ctx, depth + 1);
                b.scope.resize(scopeBefore);
                auto it = kinds.find(x.op);
                e = ir::ComputeExpr::reduction(it == kinds.end() ? ir::ReduceKind::Sum : it->second,
                                               std::move(axes), std::move(body));
                break;
            }
        }
        locate(e, x.range);
        return e;
    }

    void computeStmt(const ast::ComputeStmt& s, GraphCtx& ctx) {
        ComputeBuild b;
        std::set<std::string> seen;
        for (const auto& d : s.indices) {
            if (!seen.insert(d.name.text).second) {
                error(d.name.range, "index " + quote(d.name.text) + " appears twice on the left-hand side");
                b.ok = false;
            }
            ir::ComputeAxis ax;
            ax.name = d.name.text;
            if (d.extent) ax.extent = *convertExtent(*d.extent);
            b.scope.emplace_back(ax.name, static_cast<int>(b.def.axes.size()));
            b.def.axes.push_back(std::move(ax));
        }
        b.def.numOutputAxes = b.def.axes.size();
        if (s.dtype) {
            auto dt = convertDType(*s.dtype, false);
            if (!dt)
                b.ok = false;
            else
                b.def.forcedDType = *dt;
        }
        // Reduction axes are appended while converting; keep them after the output axes.
        b.def.body = convertExpr(s.expr, b, ctx, 0);
        if (!b.ok) return;
        std::vector<ir::TensorType> types;
        std::vector<std::string> names;
        for (ir::ValueId v : b.inputs) {
            types.push_back(ctx.g->value(v).type);
            names.push_back(ctx.g->value(v).name);
        }
        const std::size_t before = errorCount();
        ir::TensorType out = ir::checkCompute(b.def, types, names, m_file, m_diags);
        // Errors without a location (should not happen) point at the statement.
        for (auto& d : m_diags.items())
            if (d.begin.line == 0 && d.file == m_file) {
                d.begin = s.range.begin;
                d.end = s.range.end;
            }
        if (errorCount() > before) return;
        ir::Value v;
        v.type = out;
        const ir::ValueId oid = define(ctx, s.output, std::move(v));
        if (oid == ir::kNoValue) return;
        ir::Node n;
        n.opType = ir::kComputeOpType;
        n.domain = ir::kTesseraDomain;
        n.inputs = b.inputs;
        n.outputs = {oid};
        n.compute = std::make_shared<const ir::ComputeDef>(std::move(b.def));
        if (s.nodeName) {
            if (ctx.g->findNode(s.nodeName->text) != ir::kNoNode || s.nodeName->text.empty()) {
                error(s.nodeName->range, "node name " + quote(s.nodeName->text) + " is already used");
                return;
            }
            n.name = s.nodeName->text;
        } else {
            n.name = uniqueNodeName(*ctx.g, s.output.text);
        }
        ctx.g->addNode(std::move(n));
    }

    // ---- fusion and schedules ------------------------------------------------------------------
    std::vector<std::string> nodeNames(const ir::Graph& g) const {
        std::vector<std::string> n;
        for (const auto& node : g.nodes()) n.push_back(node.name);
        return n;
    }

    /// A node by name, or the producer of a value of that name.
    ir::NodeId findNodeOrProducer(const ir::Graph& g, const std::string& name) const {
        ir::NodeId id = g.findNode(name);
        if (id != ir::kNoNode) return id;
        const ir::ValueId v = g.findValue(name);
        if (v != ir::kNoValue) return g.producer(v);
        return ir::kNoNode;
    }

    void fuseStmt(const ast::FuseStmt& s, ir::Model& m) {
        const ir::Graph& g = m.graph;
        if (m.program.fusion(s.group.text)) {
            error(s.group.range, "fusion group " + quote(s.group.text) + " is defined twice");
            return;
        }
        ir::FusionGroupDecl f;
        f.name = s.group.text;
        f.begin = s.range.begin;
        f.end = s.range.end;
        bool ok = true;
        std::set<ir::NodeId> members;
        std::vector<ir::NodeId> order;
        for (const auto& mem : s.members) {
            const ir::NodeId id = findNodeOrProducer(g, mem.text);
            if (id == ir::kNoNode) {
                if (!poisoned(mem.text))
                    error(mem.range, "fusion member " + quote(mem.text) + " is not a node",
                          didYouMean(mem.text, nodeNames(g)));
                ok = false;
                continue;
            }
            if (!members.insert(id).second) {
                error(mem.range, quote(mem.text) + " is listed twice in fusion group " + quote(f.name));
                ok = false;
                continue;
            }
            for (const auto& other : m.program.fusions)
                for (const auto& om : other.members)
                    if (om == g.node(id).name) {
                        error(mem.range,
                              "node " + quote(om) + " is already in fusion group " + quote(other.name));
                        ok = false;
                    }
            order.push_back(id);
            f.members.push_back(g.node(id).name);
        }
        if (s.anchor) {
            const ir::NodeId a = findNodeOrProducer(g, s.anchor->text);
            if (a == ir::kNoNode && poisoned(s.anchor->text)) {
                ok = false;
            } else if (a == ir::kNoNode || !members.count(a)) {
                error(s.anchor->range,
                      "anchor " + quote(s.anchor->text) + " is not a member of fusion group " + quote(f.name),
                      didYouMean(s.anchor->text, f.members));
                ok = false;
            } else {
                f.anchor = g.node(a).name;
            }
        } else if (!f.members.empty()) {
            f.anchor = f.members.front();
        }
        if (ok && order.size() > 1) {
            // Connectivity over producer -> consumer edges between members (undirected).
            std::set<ir::NodeId> reached{order.front()};
            std::vector<ir::NodeId> stack{order.front()};
            while (!stack.empty()) {
                const ir::NodeId cur = stack.back();
                stack.pop_back();
                for (ir::NodeId other : order) {
                    if (reached.count(other)) continue;
                    bool edge = false;
                    for (ir::ValueId o : g.node(cur).outputs)
                        for (ir::ValueId i : g.node(other).inputs)
                            edge = edge || (o != ir::kNoValue && o == i);
                    for (ir::ValueId o : g.node(other).outputs)
                        for (ir::ValueId i : g.node(cur).inputs) edge = edge || (o != ir::kNoValue && o == i);
                    if (edge) {
                        reached.insert(other);
                        stack.push_back(other);
                    }
                }
            }
            for (std::size_t i = 0; i < order.size(); ++i)
                if (!reached.count(order[i])) {
                    error(s.members[i].range, "fusion group " + quote(f.name) +
                                                  " is not connected: " + quote(f.members[i]) +
                                                  " neither reads nor feeds the other members");
                    ok = false;
                    break;
                }
        }
        if (ok)
            m.program.fusions.push_back(std::move(f));
        else
            m_poisoned.insert(s.group.text);  // its schedule would only repeat the member's error
    }

    void scheduleStmt(const ast::ScheduleStmt& s, ir::Model& m) {
        const ir::Graph& g = m.graph;
        ir::KernelScheduleDecl k;
        k.subject = s.subject.text;
        k.begin = s.range.begin;
        k.end = s.range.end;
        // The kernel's nodes: a fusion group's members, or one node.
        std::vector<ir::NodeId> nodes;
        if (const auto* f = m.program.fusion(s.subject.text)) {
            for (const auto& mem : f->members) nodes.push_back(g.findNode(mem));
        } else {
            const ir::NodeId id = findNodeOrProducer(g, s.subject.text);
            if (id == ir::kNoNode) {
                if (poisoned(s.subject.text)) return;
                std::vector<std::string> cands = nodeNames(g);
                for (const auto& f2 : m.program.fusions) cands.push_back(f2.name);
                error(s.subject.range,
                      "schedule for " + quote(s.subject.text) + ": no node or fusion group of that name",
                      didYouMean(s.subject.text, cands));
                return;
            }
            k.subject = g.node(id).name;
            nodes.push_back(id);
        }
        if (m.program.scheduleFor(k.subject)) {
            error(s.subject.range, quote(k.subject) + " is scheduled twice");
            return;
        }
        // Axis names (for compute nodes) and readable tensors.
        std::vector<std::string> axes;
        bool anyOpaque = false;
        std::set<std::string> readable;
        for (ir::NodeId id : nodes) {
            if (id == ir::kNoNode) continue;
            const ir::Node& n = g.node(id);
            if (n.compute) {
                for (const auto& a : n.compute->axes) axes.push_back(a.name);
            } else {
                anyOpaque = true;
            }
            for (ir::ValueId v : n.inputs)
                if (v != ir::kNoValue) readable.insert(g.value(v).name);
        }
        auto checkAxis = [&](const ast::Name& a) {
            if (anyOpaque || std::find(axes.begin(), axes.end(), a.text) != axes.end()) return true;
            error(a.range, "kernel " + quote(k.subject) + " has no axis " + quote(a.text),
                  didYouMean(a.text, axes));
            return false;
        };
        std::set<std::string> levels;
        bool haveTarget = false;
        for (const auto& it : s.items) {
            using IK = ast::ScheduleItem::Kind;
            switch (it.kind) {
                case IK::Target:
                    if (haveTarget) error(it.range, "target is given twice");
                    haveTarget = true;
                    if (it.word.text != "cuda" && it.word.text != "cpu") {
                        error(it.word.range, "unknown target " + quote(it.word.text),
                              didYouMean(it.word.text, {"cuda", "cpu"}));
                        break;
                    }
                    k.target = it.word.text;
                    k.arch = it.arch;
                    break;
                case IK::Mapping: {
                    if (!levels.insert(it.word.text).second) {
                        error(it.word.range, quote(it.word.text) + " mapping is given twice");
                        break;
                    }
                    if (checkMapping(it))
                        k.mappings.push_back(
                            {it.word.text, it.mappingText, it.mappingRange.begin, it.mappingRange.end});
                    break;
                }
                case IK::Tile:
                case IK::Unroll:
                case IK::Vectorize:
                case IK::Parallel:
                    for (const auto& [axis, factor] : it.axes) {
                        if (!checkAxis(axis)) continue;
                        if ((it.kind == IK::Tile || it.kind == IK::Vectorize) && factor <= 0) {
                            error(it.range, "factor must be positive");
                            continue;
                        }
                        if (it.kind == IK::Unroll && factor < 0) continue;
                        ir::ScheduleAxisDecl d{axis.text, factor, it.range.begin, it.range.end};
                        (it.kind == IK::Tile        ? k.tiles
                         : it.kind == IK::Unroll    ? k.unrolls
                         : it.kind == IK::Vectorize ? k.vectorizes
                                                    : k.parallels)
                            .push_back(std::move(d));
                    }
                    break;
                case IK::Stage: {
                    ir::ScheduleStageDecl st;
                    st.begin = it.range.begin;
                    st.end = it.range.end;
                    bool okStage = true;
                    if (it.memory.text != "shared" && it.memory.text != "local" &&
                        it.memory.text != "register") {
                        error(it.memory.range, "unknown memory " + quote(it.memory.text),
                              didYouMean(it.memory.text, {"shared", "local", "register"}));
                        okStage = false;
                    }
                    for (const auto& n : it.names) {
                        if (!readable.count(n.text)) {
                            error(n.range, "kernel " + quote(k.subject) + " does not read " + quote(n.text),
                                  didYouMean(n.text,
                                             std::vector<std::string>(readable.begin(), readable.end())));
                            okStage = false;
                            continue;
                        }
                        st.tensors.push_back(n.text);
                    }
                    st.memory = it.memory.text;
                    if (okStage) k.stages.push_back(std::move(st));
                    break;
                }
            }
        }
        checkKernelMappings(k, nodes, g);
        m.program.schedules.push_back(std::move(k));
    }

    /// A compute kernel's grid and block (or thread) mappings compose as grid * block (Hidet's
    /// composition: the grid is the outer level, each block subdivides a grid task), and the
    /// composed task shape must have the output's rank and cover it (validateMapping).
    void checkKernelMappings(const ir::KernelScheduleDecl& k, const std::vector<ir::NodeId>& nodes,
                             const ir::Graph& g) {
        if (!m_opt.checkMappings || nodes.size() != 1 || nodes[0] == ir::kNoNode) return;
        const ir::Node& n = g.node(nodes[0]);
        if (!n.compute || n.outputs.empty() || n.outputs[0] == ir::kNoValue) return;
        const ir::Value& out = g.value(n.outputs[0]);
        // The definition's output axes carry the extents checkCompute inferred (value types are
        // completed by whole-graph inference only later).
        const ir::Shape outShape = out.type.shape.isStatic() ? out.type.shape : n.compute->outputShape();
        const auto dims = outShape.knownDims();
        if (!dims) return;
        const ir::ScheduleMappingDecl* grid = k.mapping("grid");
        const ir::ScheduleMappingDecl* block = k.mapping("block");
        if (!block) block = k.mapping("thread");
        if (!grid && !block) return;
        const ir::ScheduleMappingDecl* at = block ? block : grid;
        SourceRange range;
        range.begin = at->begin;
        range.end = at->end;
        auto gridMap = grid ? schedule::parseMapping(grid->text, m_file) : support::Expected<schedule::TaskMapping>(support::DiagnosticList{});
        auto blockMap = block ? schedule::parseMapping(block->text, m_file) : support::Expected<schedule::TaskMapping>(support::DiagnosticList{});
        if ((grid && !gridMap.ok()) || (block && !blockMap.ok())) return;  // reported by checkMapping
        const std::string what = grid && block ? "grid * block" : grid ? "grid" : "block";
        support::Expected<schedule::TaskMapping> composed =
            grid && block ? schedule::TaskMapping::compose(*gridMap, *blockMap) : grid ? gridMap : blockMap;
        if (!composed.ok()) {
            const auto* e = composed.diagnostics().firstError();
            error(range, what + " mapping of " + quote(k.subject) + ": " + (e ? e->message : "cannot compose"),
                  {"hint: the grid and block mappings compose (grid * block), so both need the rank of " +
                   quote(out.name) + " " + outShape.str()});
            return;
        }
        schedule::ValidationOptions vo;
        vo.tensorShape = *dims;
        vo.maxWorkers = 0;  // the block's thread limit is checked on the block mapping alone
        const support::DiagnosticList problems = schedule::validateMapping(*composed, vo);
        for (const auto& d : problems.items()) {
            const std::string msg = what + " mapping of " + quote(k.subject) + " " + outShape.str() + ": " + d.message;
            std::vector<std::string> notes;
            for (const auto& note : d.notes)
                notes.push_back(note.rfind("hint:", 0) == 0 || note.rfind("note:", 0) == 0 ? note : "hint: " + note);
            if (d.severity == support::Severity::Error)
                error(range, msg, notes);
            else if (d.severity == support::Severity::Warning)
                warning(range, msg, notes);
        }
    }

    bool checkMapping(const ast::ScheduleItem& it) {
        if (!m_opt.checkMappings) return true;
        auto parsed = schedule::parseMapping(it.mappingText, m_file);
        if (parsed.ok()) {
            const std::int64_t workers = parsed->numWorkers();
            if (it.word.text == "block" && workers > 1024)
                error(it.mappingRange, "block mapping has " + std::to_string(workers) +
                                           " workers; a CUDA block holds at most 1024 threads");
            return true;
        }
        for (auto d : parsed.diagnostics().items()) {
            // Map the expression's own line:column onto the .tsr file.
            auto shift = [&](support::SourceLocation& loc) {
                if (loc.line <= 1) {
                    loc.column = loc.column > 0 ? it.mappingRange.begin.column + loc.column - 1
                                                : it.mappingRange.begin.column;
                    loc.line = it.mappingRange.begin.line;
                } else {
                    loc.line = it.mappingRange.begin.line + loc.line - 1;
                }
            };
            if (d.begin.line == 0 && d.begin.column == 0) {
                d.begin = it.mappingRange.begin;
                d.end = it.mappingRange.end;
            } else {
                if (d.end.line == 0 && d.end.column == 0) d.end = d.begin;
                shift(d.begin);
                shift(d.end);
            }
            d.file = m_file;
            d.message = it.word.text + " mapping: " + d.message;
            for (auto& n : d.notes)
                if (n.rfind("hint:", 0) != 0 && n.rfind("note:", 0) != 0) n = "hint: " + n;
            m_diags.add(std::move(d));
        }
        return false;
    }
};

}  // namespace

std::string resolveOpAlias(std::string_view name) {
    const ir::OpRegistry& reg = ir::OpRegistry::instance();
    if (reg.find("", name)) return std::string(name);
    const std::string lower = lowerStr(name);
    if (lower != name) return {};  // aliases are lowercase; other spellings must match exactly
    auto it = extraAliases().find(lower);
    if (it != extraAliases().end()) return it->second;
    for (const auto* s : reg.all())
        if (s->domain.empty() && lowerStr(s->opType) == lower) return s->opType;
    return {};
}

support::Expected<ir::Model> parseProgram(std::string_view text, const std::string& file,
                                          const ParseOptions& options) {
    support::DiagnosticList diags;
    try {
        ast::Program prog = parseSource(text, file, diags);
        Sema sema(file, options, diags);
        ir::Model m = sema.run(prog);
        if (!diags.hasErrors()) {
            // The graph was checked as it was built; the verifier is a last line of defence.
            support::DiagnosticList v = ir::verify(m.graph, file);
            for (const auto& d : v.items())
                if (d.severity == Severity::Error) diags.add(d);
        }
        // Syntax errors are found before semantic ones; report in source order.
        std::stable_sort(diags.items().begin(), diags.items().end(),
                         [](const Diagnostic& a, const Diagnostic& b) {
                             const int la = a.begin.line > 0 ? a.begin.line : std::numeric_limits<int>::max();
                             const int lb = b.begin.line > 0 ? b.begin.line : std::numeric_limits<int>::max();
                             return la != lb ? la < lb : a.begin.column < b.begin.column;
                         });
        // A binary or badly broken file can give thousands of errors; the first ones are the useful ones.
        if (diags.items().size() > kMaxReportedDiagnostics) {
            const std::size_t more = diags.items().size() - kMaxReportedDiagnostics;
            diags.items().resize(kMaxReportedDiagnostics);
            Diagnostic d;
            d.severity = diags.hasErrors() ? Severity::Error : Severity::Warning;
            d.file = file;
            d.message = "stopped after " + std::to_string(kMaxReportedDiagnostics) + " problems (" +
                        std::to_string(more) + " more not shown); fix these first";
            diags.add(std::move(d));
        }
        if (diags.hasErrors()) return diags;
        return support::Expected<ir::Model>(std::move(m), std::move(diags));
    } catch (const std::exception& e) {
        Diagnostic d;
        d.file = file;
        d.message = std::string("internal error: ") + e.what();
        diags.add(std::move(d));
        return diags;
    }
}

support::Expected<ir::Model> parseProgramFile(const std::string& path, const ParseOptions& options) {
    support::DiagnosticList diags;
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) {
        diags.error(path, {}, "cannot read file: " + ec.message());
        return diags;
    }
    if (size > kMaxSourceBytes) {
        diags.error(path, {},
                    "file is larger than " + std::to_string(kMaxSourceBytes / (1024 * 1024)) + " MiB");
        return diags;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        diags.error(path, {}, "cannot open file");
        return diags;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    auto r = parseProgram(ss.str(), path, options);
    if (r.ok()) r->sourcePath = path;
    return r;
}

}  // namespace tessera::frontend::dsl
