#include "core/frontend/dsl/dsl_printer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <unordered_set>

#include "core/ir/compute.h"
#include "core/ir/op_registry.h"

namespace tessera::frontend::dsl {

namespace {

constexpr int kElementsPerLine = 8;
constexpr int kMaxDepth = 256;  // docs/dsl.md §2: the parser's nesting limit

/// Words that must be backtick-quoted to be names: the reserved words, and the contextual words
/// that some position could read as something else (`_` = omitted, `inf`/`nan` = numbers, the
/// typed-list prefixes, the initializer forms, reduction and literal words of compute bodies).
bool isReservedWord(std::string_view w) {
    static const std::unordered_set<std::string_view> kWords = {
        "tessera", "model", "opset", "input", "output", "param", "schedule", "fuse", "anchor", "as", "graph", "tensor",
    };
    return kWords.count(w) != 0;
}

bool needsQuotingAsWord(std::string_view w) {
    static const std::unordered_set<std::string_view> kWords = {
        "_",     "inf",   "nan",  "ints", "floats", "strings", "tensors", "graphs", "random", "zeros", "ones",
        "fill",  "npy",   "onnx", "sum",  "prod",   "max",     "min",     "cast",   "pi",     "true",  "false",
        "select", "where",
    };
    return isReservedWord(w) || kWords.count(w) != 0;
}

bool isIdentifier(std::string_view s) {
    if (s.empty()) return false;
    const auto c0 = static_cast<unsigned char>(s[0]);
    if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_')) return false;
    for (unsigned char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
}

/// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 when the bytes there are not
/// one (overlong forms, surrogates and code points above U+10FFFF count as invalid).
std::size_t utf8SequenceLength(std::string_view s, std::size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) len = 2, cp = b0 & 0x1Fu;
    else if (b0 >= 0xE0 && b0 <= 0xEF) len = 3, cp = b0 & 0x0Fu;
    else if (b0 >= 0xF0 && b0 <= 0xF4) len = 4, cp = b0 & 0x07u;
    else return 0;
    if (i + len > s.size()) return 0;
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0u) != 0x80u) return 0;
        cp = (cp << 6) | (b & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/// The body of a quoted identifier or string: escapes for the quote, backslash, control bytes
/// and bytes outside valid UTF-8; valid UTF-8 kept as is.
std::string escapeBody(std::string_view s, char quote) {
    std::string out;
    out.reserve(s.size() + 2);
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const std::size_t len = utf8SequenceLength(s, i);
            if (len > 0) {
                out.append(s.substr(i, len));
                i += len;
                continue;
            }
        }
        ++i;
        if (c == static_cast<unsigned char>(quote) || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == 0) {
            out += "\\0";
        } else if (c < 0x20 || c == 0x7F || c >= 0x80) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

/// A domain as docs/dsl.md writes it: dotted identifiers (contextual words are fine there, reserved
/// ones are not), or a string.
std::string domainText(std::string_view d) {
    bool plain = !d.empty();
    std::size_t start = 0;
    while (plain && start <= d.size()) {
        const std::size_t dot = d.find('.', start);
        const std::string_view part = d.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (!isIdentifier(part) || isReservedWord(part)) plain = false;
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return plain ? std::string(d) : dslString(d);
}

/// Makes a number token read as a float: "1" -> "1.0"; "1e+20" and "0.5" stay.
std::string asFloatToken(std::string s) {
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
}

std::string nonFinite(double v) {
    if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
    return v > 0 ? "inf" : "-inf";
}

std::string shortestFloat(float v) {
    if (!std::isfinite(v)) return nonFinite(v);
    std::array<char, 64> buf{};
    auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    std::string s(buf.data(), r.ptr);
    if (v == 0.0f && std::signbit(v)) s = "-0";
    return asFloatToken(s);
}

std::string shortestDouble(double v) {
    if (!std::isfinite(v)) return nonFinite(v);
    std::array<char, 64> buf{};
    auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    std::string s(buf.data(), r.ptr);
    if (v == 0.0 && std::signbit(v)) s = "-0";
    return asFloatToken(s);
}

/// A float attribute: ONNX stores float32, so a value that is exactly a float prints as the
/// shortest float32 decimal.
std::string attrFloat(double v) {
    if (std::isfinite(v) && static_cast<double>(static_cast<float>(v)) == v) return shortestFloat(static_cast<float>(v));
    return shortestDouble(v);
}

template <typename T>
T loadAt(const std::vector<std::uint8_t>& bytes, std::int64_t i) {
    T v;
    std::memcpy(&v, bytes.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return v;
}

/// True when a NaN element is the canonical quiet NaN (either sign) of its dtype; with a clear
/// sign bit that is all a `nan` literal gives back.
bool canonicalNaN(const ir::TensorData& t, std::int64_t i) {
    switch (t.dtype) {
        case ir::DType::F16: return (loadAt<std::uint16_t>(t.bytes, i) & 0x7FFFu) == 0x7E00u;
        case ir::DType::BF16: return (loadAt<std::uint16_t>(t.bytes, i) & 0x7FFFu) == 0x7FC0u;
        case ir::DType::F32: return (loadAt<std::uint32_t>(t.bytes, i) & 0x7FFFFFFFu) == 0x7FC00000u;
        case ir::DType::F64:
            return (loadAt<std::uint64_t>(t.bytes, i) & 0x7FFFFFFFFFFFFFFFull) == 0x7FF8000000000000ull;
        default: return true;
    }
}

/// Element i as a literal token, or nullopt when no literal reads back to the same bytes.
std::optional<std::string> elementText(const ir::TensorData& t, std::int64_t i) {
    using ir::DType;
    switch (t.dtype) {
        case DType::F16:
        case DType::BF16:
        case DType::F32: {
            const double d = t.elementAsDouble(i);
            if (std::isnan(d)) {
                // elementAsDouble drops the sign of a NaN; read it from the top bit. `-nan` reads
                // back as a positive NaN, so a negative one has no literal.
                const bool neg = t.dtype == DType::F32 ? (loadAt<std::uint32_t>(t.bytes, i) >> 31) != 0
                                                       : (loadAt<std::uint16_t>(t.bytes, i) >> 15) != 0;
                if (neg || !canonicalNaN(t, i)) return std::nullopt;
                return std::string("nan");
            }
            return shortestFloat(static_cast<float>(d));
        }
        case DType::F64: {
            const double d = loadAt<double>(t.bytes, i);
            if (std::isnan(d) && (std::signbit(d) || !canonicalNaN(t, i))) return std::nullopt;
            return shortestDouble(d);
        }
        case DType::I8:
        case DType::I16:
        case DType::I32:
        case DType::I64:
        case DType::U8:
        case DType::U16:
        case DType::U32: return std::to_string(t.elementAsInt(i));
        case DType::U64: {
            const auto u = loadAt<std::uint64_t>(t.bytes, i);
            if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
            return std::to_string(u);
        }
        case DType::Bool: {
            const auto b = t.bytes[static_cast<std::size_t>(i)];
            if (b > 1) return std::nullopt;
            return std::string(b ? "1" : "0");
        }
        case DType::String: return dslString(t.strings[static_cast<std::size_t>(i)]);
        default: return std::nullopt;
    }
}

/// The whole tensor as a literal (flat, row-major; a bare element for a scalar), or nullopt when
/// it cannot be written as one. Long lists wrap, continuation lines at `indent` + 2.
std::optional<std::string> literalText(const ir::TensorData& t, const std::string& indent) {
    if (!t.sizeConsistent()) return std::nullopt;
    const std::int64_t n = t.numElements();
    // INT64_MIN has no literal: the lexer reads the digits before applying '-'.
    auto intMinAt = [&](std::int64_t i) {
        return t.dtype == ir::DType::I64 && loadAt<std::int64_t>(t.bytes, i) == std::numeric_limits<std::int64_t>::min();
    };
    if (t.dims.empty()) {
        if (intMinAt(0)) return std::nullopt;
        return elementText(t, 0);
    }
    std::string s = "[";
    const bool wrap = n > kElementsPerLine;
    for (std::int64_t i = 0; i < n; ++i) {
        if (intMinAt(i)) return std::nullopt;
        auto e = elementText(t, i);
        if (!e) return std::nullopt;
        if (wrap && i % kElementsPerLine == 0) s += (i ? ",\n" : "\n") + indent + "  ";
        else if (i) s += ", ";
        s += *e;
    }
    if (wrap) s += "\n" + indent;
    return s + "]";
}

std::string typeText(const ir::TensorType& t) {
    std::string s = t.dtype == ir::DType::Undefined ? std::string("?") : std::string(ir::dtypeName(t.dtype));
    if (!t.shape.rankKnown()) return s + "[*]";
    s += "[";
    for (std::size_t i = 0; i < t.shape.rank(); ++i) {
        if (i) s += ", ";
        const ir::Dim& d = t.shape[i];
        if (d.isKnown()) s += std::to_string(d.value);
        else if (d.isSymbolic()) s += dslName(d.symbol);
        else s += "?";
    }
    return s + "]";
}

class Printer {
public:
    Printer(const ir::Model& m, const PrintOptions& o) : m_model(m), m_options(o) {
        m_onnxRef = o.onnxReference;
        if (m_onnxRef.empty()) {
            const std::string& src = m.sourcePath;
            if (src.size() > 5 && src.compare(src.size() - 5, 5, ".onnx") == 0) {
                const auto slash = src.find_last_of("/\\");
                m_onnxRef = slash == std::string::npos ? src : src.substr(slash + 1);
            }
        }
    }

    std::string run() {
        if (m_options.versionLine) m_out += "tessera 0.1;\n";
        const ir::Graph& g = m_model.graph;
        m_out += "model name=" + dslString(g.name) + ", ir_version=" + std::to_string(m_model.irVersion);
        if (!m_model.producerName.empty()) m_out += ", producer=" + dslString(m_model.producerName);
        if (!m_model.producerVersion.empty()) m_out += ", producer_version=" + dslString(m_model.producerVersion);
        if (!g.docString.empty()) m_out += ", doc=" + dslString(g.docString);
        m_out += ";\n";
        for (const auto& [domain, version] : m_model.opsets) {
            m_out += "opset ";
            if (!domain.empty()) m_out += domainText(domain) + " ";
            m_out += std::to_string(version) + ";\n";
        }
        m_out += "\n";
        printDeclarations(g, "");
        printNodes(g, "", 0);
        for (ir::ValueId v : g.outputs()) {
            if (!valid(g, v)) continue;
            m_out += "output " + dslName(g.value(v).name) + ";\n";
        }
        printProgram(m_model.program);
        return std::move(m_out);
    }

private:
    static bool valid(const ir::Graph& g, ir::ValueId v) {
        return v >= 0 && static_cast<std::size_t>(v) < g.numValues();
    }

    /// Fusion groups, then schedules (a schedule may name a group). Items of one kind keep their
    /// order; ir::KernelScheduleDecl keeps tiles, stages, unrolls ... in separate lists, so they
    /// print grouped by kind.
    void printProgram(const ir::ProgramSchedule& p) {
        if (p.empty()) return;
        m_out += "\n";
        for (const auto& f : p.fusions) {
            m_out += "fuse " + dslName(f.name) + " = [";
            for (std::size_t i = 0; i < f.members.size(); ++i) m_out += (i ? ", " : "") + dslName(f.members[i]);
            m_out += "]";
            if (!f.anchor.empty()) m_out += " anchor " + dslName(f.anchor);
            m_out += ";\n";
        }
        for (const auto& s : p.schedules) {
            m_out += "schedule " + dslName(s.subject) + " {\n";
            if (!s.target.empty()) {
                m_out += "  target " + s.target;
                if (!s.arch.empty()) m_out += " " + dslString(s.arch);
                m_out += ";\n";
            }
            for (const auto& mp : s.mappings) m_out += "  " + mp.level + " = " + mp.text + ";\n";
            for (const auto& t : s.tiles) m_out += "  tile " + t.axis + " by " + std::to_string(t.factor) + ";\n";
            for (const auto& st : s.stages) {
                m_out += "  stage ";
                for (std::size_t i = 0; i < st.tensors.size(); ++i) m_out += (i ? ", " : "") + dslName(st.tensors[i]);
                m_out += " in " + st.memory + ";\n";
            }
            for (const auto& u : s.unrolls)
                m_out += "  unroll " + u.axis + (u.factor > 0 ? " by " + std::to_string(u.factor) : std::string()) + ";\n";
            for (const auto& v : s.vectorizes) m_out += "  vectorize " + v.axis + " by " + std::to_string(v.factor) + ";\n";
            for (const auto& par : s.parallels) m_out += "  parallel " + par.axis + ";\n";
            m_out += "}\n";
        }
    }

    /// `C[i: 4, j: 8] = sum(k: 16) A[i, k] * B[k, j] as "n";` for a Compute node with its definition.
    void printComputeNode(const ir::Graph& g, const ir::Node& n, const std::string& indent) {
        const ir::ValueId out = n.outputs.front();
        const std::string outName = g.value(out).name;
        std::string line = indent + ir::printCompute(*n.compute, dslName(outName), [&](int slot) {
            const bool ok = slot >= 0 && static_cast<std::size_t>(slot) < n.inputs.size() && valid(g, n.inputs[static_cast<std::size_t>(slot)]);
            return ok ? dslName(g.value(n.inputs[static_cast<std::size_t>(slot)]).name) : std::string("`<missing input>`");
        });
        if (n.name != outName) line += " as " + dslString(n.name);
        m_out += line + ";\n";
    }

    /// Initializer text: a literal when small (or when there is no ONNX file to point at),
    /// `onnx(file, refName)` otherwise.
    std::string constantText(const ir::TensorData& t, const std::string& refName, const std::string& indent) const {
        const std::int64_t n = t.sizeConsistent() ? t.numElements() : -1;
        if (n >= 0 && n <= m_options.maxInlineElements)
            if (auto lit = literalText(t, indent)) return *lit;
        if (!m_onnxRef.empty() && !refName.empty() && m_depth == 0) return "onnx(" + dslString(m_onnxRef) + ", " + dslString(refName) + ")";
        if (auto lit = literalText(t, indent)) return *lit;
        // No literal can hold it (complex numbers, NaN payloads, u64 above int64) and there is no
        // file to point at: the loader's error names the tensor.
        return "onnx(\"\", " + dslString(refName) + ")";
    }

    /// Inputs and initializers in one sequence that keeps both Graph::inputs() and
    /// Graph::initializers() in order (an initializer that is also an input is one statement).
    void printDeclarations(const ir::Graph& g, const std::string& indent) {
        const auto& ins = g.inputs();
        const auto& inits = g.initializers();
        std::set<ir::ValueId> done;
        std::size_t i = 0, j = 0;
        auto isInit = [&](ir::ValueId v) { return valid(g, v) && g.value(v).isInitializer; };
        auto isInput = [&](ir::ValueId v) { return valid(g, v) && g.value(v).isGraphInput; };
        while (i < ins.size() || j < inits.size()) {
            if (i < ins.size() && (done.count(ins[i]) || !valid(g, ins[i]))) {
                ++i;
                continue;
            }
            if (j < inits.size() && (done.count(inits[j]) || !valid(g, inits[j]))) {
                ++j;
                continue;
            }
            ir::ValueId v = ir::kNoValue;
            if (i < ins.size() && !isInit(ins[i])) v = ins[i++];
            else if (j < inits.size() && !isInput(inits[j])) v = inits[j++];
            else if (i < ins.size()) v = ins[i++];  // initializer-input: the inputs' order wins a conflict
            else v = inits[j++];
            done.insert(v);
            const ir::Value& val = g.value(v);
            const ir::TensorType& ty = val.isInitializer && val.data && !val.isGraphInput ? val.data->type() : val.type;
            m_out += indent + (val.isGraphInput ? "input " : "param ") + dslName(val.name) + ": " + typeText(ty);
            if (val.isInitializer) {
                m_out += " = ";
                m_out += val.data ? constantText(*val.data, val.name, indent) : std::string("zeros");
            }
            m_out += ";\n";
        }
    }

    void printNodes(const ir::Graph& g, const std::string& indent, int depth) {
        std::vector<ir::NodeId> order;
        if (auto topo = g.topologicalOrder()) {
            order = std::move(*topo);
        } else {
            m_out += indent + "# the graph has a cycle: nodes in stored order\n";
            for (std::size_t i = 0; i < g.numNodes(); ++i) order.push_back(static_cast<ir::NodeId>(i));
        }
        for (ir::NodeId id : order) printNode(g, g.node(id), indent, depth);
    }

    void printNode(const ir::Graph& g, const ir::Node& n, const std::string& indent, int depth) {
        if (n.compute && n.outputs.size() == 1 && valid(g, n.outputs.front())) {
            printComputeNode(g, n, indent);
            return;
        }
        std::string line = indent;
        std::string firstOutput;
        bool anyOutput = false;
        for (std::size_t i = 0; i < n.outputs.size(); ++i) {
            if (i) line += ", ";
            const ir::ValueId o = n.outputs[i];
            if (!valid(g, o)) {
                line += "_";
                continue;
            }
            const ir::Value& val = g.value(o);
            if (!anyOutput) firstOutput = val.name;
            anyOutput = true;
            line += dslName(val.name);
            if (val.type.isDefined()) line += ": " + typeText(val.type);
        }
        if (!n.outputs.empty()) line += " = ";
        const bool known = ir::OpRegistry::instance().find(n.domain, n.opType) != nullptr;
        if (!n.domain.empty()) line += domainText(n.domain) + "::";
        else if (!known) line += "ai.onnx::";
        line += dslName(n.opType) + "(";
        bool firstArg = true;
        const std::string argIndent = indent + "    ";
        for (ir::ValueId in : n.inputs) {
            if (!firstArg) line += ", ";
            firstArg = false;
            line += valid(g, in) ? dslName(g.value(in).name) : std::string("_");
        }
        const bool isConstant = n.opType == "Constant" && n.domain.empty();
        for (const auto& [name, a] : n.attributes) {
            const bool block = a.type == ir::AttrType::Graph || a.type == ir::AttrType::Graphs;
            if (block) line += (firstArg ? "\n" : ",\n") + argIndent;
            else if (!firstArg) line += ", ";
            firstArg = false;
            const std::string ref = isConstant && name == "value" && anyOutput ? firstOutput : std::string();
            line += dslName(name) + "=" + attrText(a, ref, block ? argIndent : indent, depth);
        }
        line += ")";
        if (!anyOutput || n.name != firstOutput) line += " as " + dslString(n.name);
        m_out += line + ";\n";
    }

    std::string attrText(const ir::Attribute& a, const std::string& ref, const std::string& indent, int depth) {
        auto list = [](const auto& v, auto f) {
            std::string s;
            for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
            return s;
        };
        switch (a.type) {
            case ir::AttrType::Int: return std::to_string(a.i);
            case ir::AttrType::Float: return attrFloat(a.f);
            case ir::AttrType::String: return dslString(a.s);
            case ir::AttrType::Ints:
                return (a.ints.empty() ? "ints[" : "[") + list(a.ints, [](std::int64_t v) { return std::to_string(v); }) + "]";
            case ir::AttrType::Floats: return "floats[" + list(a.floats, attrFloat) + "]";
            case ir::AttrType::Strings: return (a.strings.empty() ? "strings[" : "[") + list(a.strings, [](const std::string& s) {
                                                   return dslString(s);
                                               }) + "]";
            case ir::AttrType::Tensor: return tensorText(a.t, ref, indent);
            case ir::AttrType::Tensors:
                return "tensors[" + list(a.tensors, [&](const std::shared_ptr<const ir::TensorData>& t) {
                           return tensorText(t, std::string(), indent);
                       }) + "]";
            case ir::AttrType::Graph: return graphText(a.g.get(), indent, depth);
            case ir::AttrType::Graphs: {
                std::string s = "graphs[";
                for (std::size_t i = 0; i < a.graphs.size(); ++i) s += (i ? ", " : "") + graphText(a.graphs[i].get(), indent, depth);
                return s + "]";
            }
            case ir::AttrType::Undefined: break;
        }
        return "ints[]";
    }

    std::string tensorText(const std::shared_ptr<const ir::TensorData>& t, const std::string& ref, const std::string& indent) {
        if (!t) return "tensor(?[*], zeros)";
        return "tensor(" + typeText(t->type()) + ", " + constantText(*t, ref, indent) + ")";
    }

    /// `graph name(p: T, ...) -> (r, ...) { ... }`, the body two spaces deeper than `indent`.
    std::string graphText(const ir::Graph* sg, const std::string& indent, int depth) {
        if (!sg) return "graph() -> () {}";
        std::string s = "graph ";
        if (!sg->name.empty()) s += dslName(sg->name);
        s += "(";
        bool first = true;
        for (ir::ValueId v : sg->inputs()) {
            if (!valid(*sg, v) || sg->value(v).isInitializer) continue;
            s += (first ? "" : ", ") + dslName(sg->value(v).name) + ": " + typeText(sg->value(v).type);
            first = false;
        }
        s += ") -> (";
        first = true;
        for (ir::ValueId v : sg->outputs()) {
            if (!valid(*sg, v)) continue;
            s += (first ? "" : ", ") + dslName(sg->value(v).name);
            first = false;
        }
        s += ") {\n";
        if (depth + 1 >= kMaxDepth) return s + indent + "}";
        // Statements of the body go to their own buffer: the caller is in the middle of a line.
        std::string saved = std::move(m_out);
        m_out.clear();
        ++m_depth;
        const std::string inner = indent + "  ";
        for (ir::ValueId v : sg->initializers()) {
            if (!valid(*sg, v)) continue;
            const ir::Value& val = sg->value(v);
            m_out += inner + "param " + dslName(val.name) + ": " + typeText(val.data ? val.data->type() : val.type) + " = " +
                     (val.data ? constantText(*val.data, val.name, inner) : std::string("zeros")) + ";\n";
        }
        printNodes(*sg, inner, depth + 1);
        --m_depth;
        std::string body = std::move(m_out);
        m_out = std::move(saved);
        return s + body + indent + "}";
    }

    const ir::Model& m_model;
    const PrintOptions& m_options;
    std::string m_onnxRef;
    std::string m_out;
    int m_depth = 0;  ///< subgraph nesting; onnx(...) finds only main-graph tensors, so subgraphs inline
};

// ---- structural equality ------------------------------------------------------------------

class Comparer {
public:
    Comparer(const EqualityOptions& o, std::string* why) : m_options(o), m_why(why) {}

    bool model(const ir::Model& a, const ir::Model& b) {
        if (m_options.metadata) {
            if (a.irVersion != b.irVersion)
                return fail("ir_version " + std::to_string(a.irVersion) + " vs " + std::to_string(b.irVersion));
            if (a.producerName != b.producerName) return fail("producer " + q(a.producerName) + " vs " + q(b.producerName));
            if (a.producerVersion != b.producerVersion)
                return fail("producer_version " + q(a.producerVersion) + " vs " + q(b.producerVersion));
            if (a.opsets != b.opsets) return fail("opsets differ");
        }
        return graph(a.graph, b.graph, 0) && program(a.program, b.program);
    }

    bool graph(const ir::Graph& a, const ir::Graph& b, int depth) {
        const std::string saved = m_where;
        m_where += (m_where.empty() ? "" : " > ") + std::string("graph ") + q(a.name);
        const bool ok = graphBody(a, b, depth);
        if (ok) m_where = saved;
        return ok;
    }

private:
    static std::string q(const std::string& s) { return dslString(s); }

    /// Schedules and fusion groups, source positions aside.
    bool program(const ir::ProgramSchedule& a, const ir::ProgramSchedule& b) {
        if (a.fusions.size() != b.fusions.size())
            return fail(std::to_string(a.fusions.size()) + " fusion groups vs " + std::to_string(b.fusions.size()));
        for (std::size_t i = 0; i < a.fusions.size(); ++i) {
            const auto& x = a.fusions[i];
            const auto& y = b.fusions[i];
            if (x.name != y.name || x.members != y.members || x.anchor != y.anchor)
                return fail("fusion group " + q(x.name) + " differs from " + q(y.name) + " (members or anchor)");
        }
        if (a.schedules.size() != b.schedules.size())
            return fail(std::to_string(a.schedules.size()) + " schedules vs " + std::to_string(b.schedules.size()));
        auto axesEqual = [](const std::vector<ir::ScheduleAxisDecl>& u, const std::vector<ir::ScheduleAxisDecl>& v) {
            if (u.size() != v.size()) return false;
            for (std::size_t k = 0; k < u.size(); ++k)
                if (u[k].axis != v[k].axis || u[k].factor != v[k].factor) return false;
            return true;
        };
        for (std::size_t i = 0; i < a.schedules.size(); ++i) {
            const auto& x = a.schedules[i];
            const auto& y = b.schedules[i];
            const std::string where = "schedule " + q(x.subject);
            if (x.subject != y.subject) return fail(where + " vs " + q(y.subject));
            if (x.target != y.target || x.arch != y.arch) return fail(where + ": target differs");
            if (x.mappings.size() != y.mappings.size()) return fail(where + ": mapping counts differ");
            for (std::size_t k = 0; k < x.mappings.size(); ++k)
                if (x.mappings[k].level != y.mappings[k].level || x.mappings[k].text != y.mappings[k].text)
                    return fail(where + ": " + x.mappings[k].level + " = " + x.mappings[k].text + " vs " + y.mappings[k].level +
                                " = " + y.mappings[k].text);
            if (!axesEqual(x.tiles, y.tiles)) return fail(where + ": tiles differ");
            if (!axesEqual(x.unrolls, y.unrolls)) return fail(where + ": unrolls differ");
            if (!axesEqual(x.vectorizes, y.vectorizes)) return fail(where + ": vectorizes differ");
            if (!axesEqual(x.parallels, y.parallels)) return fail(where + ": parallels differ");
            if (x.stages.size() != y.stages.size()) return fail(where + ": stage counts differ");
            for (std::size_t k = 0; k < x.stages.size(); ++k)
                if (x.stages[k].tensors != y.stages[k].tensors || x.stages[k].memory != y.stages[k].memory)
                    return fail(where + ": stage " + std::to_string(k) + " differs");
        }
        return true;
    }
    static bool valid(const ir::Graph& g, ir::ValueId v) { return v >= 0 && static_cast<std::size_t>(v) < g.numValues(); }
    static std::string nameOf(const ir::Graph& g, ir::ValueId v) { return valid(g, v) ? g.value(v).name : std::string("_"); }

    bool fail(const std::string& what) {
        if (m_why) *m_why = m_where.empty() ? what : m_where + ": " + what;
        return false;
    }

    bool graphBody(const ir::Graph& a, const ir::Graph& b, int depth) {
        if (depth > kMaxDepth) return fail("subgraphs nested too deep to compare");
        if (m_options.metadata && a.name != b.name) return fail("graph name " + q(a.name) + " vs " + q(b.name));
        if (m_options.metadata && depth == 0 && a.docString != b.docString) return fail("doc strings differ");
        if (!valueList("input", a, a.inputs(), b, b.inputs())) return false;
        if (!valueList("initializer", a, a.initializers(), b, b.initializers())) return false;
        if (!valueList("output", a, a.outputs(), b, b.outputs())) return false;
        if (a.numNodes() != b.numNodes())
            return fail(std::to_string(a.numNodes()) + " nodes vs " + std::to_string(b.numNodes()));
        auto orderOf = [](const ir::Graph& g) {
            if (auto t = g.topologicalOrder()) return std::move(*t);
            std::vector<ir::NodeId> v;
            for (std::size_t i = 0; i < g.numNodes(); ++i) v.push_back(static_cast<ir::NodeId>(i));
            return v;
        };
        const auto oa = orderOf(a), ob = orderOf(b);
        for (std::size_t i = 0; i < oa.size(); ++i)
            if (!node(a, a.node(oa[i]), b, b.node(ob[i]), depth)) return false;
        return true;
    }

    bool valueList(const char* what, const ir::Graph& ga, const std::vector<ir::ValueId>& a, const ir::Graph& gb,
                   const std::vector<ir::ValueId>& b) {
        if (a.size() != b.size())
            return fail(std::to_string(a.size()) + " " + what + "s vs " + std::to_string(b.size()));
        for (std::size_t i = 0; i < a.size(); ++i) {
            const std::string na = nameOf(ga, a[i]), nb = nameOf(gb, b[i]);
            const std::string where = std::string(what) + " " + std::to_string(i);
            if (na != nb) return fail(where + " is " + q(na) + " vs " + q(nb));
            if (!valid(ga, a[i]) || !valid(gb, b[i])) continue;
            const ir::Value& va = ga.value(a[i]);
            const ir::Value& vb = gb.value(b[i]);
            if (va.isInitializer != vb.isInitializer || va.isGraphInput != vb.isGraphInput)
                return fail(where + " " + q(na) + ": initializer/graph-input flags differ");
            if (va.isInitializer) {
                if (!va.data || !vb.data) {
                    if (va.data || vb.data) return fail(where + " " + q(na) + ": data present on one side only");
                } else if (!tensor(*va.data, *vb.data, where + " " + q(na))) {
                    return false;
                }
                // An initializer's type is its data's type; a declared input type may differ.
                if (!va.isGraphInput) continue;
            }
            if (va.type != vb.type) return fail(where + " " + q(na) + ": type " + va.type.str() + " vs " + vb.type.str());
        }
        return true;
    }

    bool tensor(const ir::TensorData& a, const ir::TensorData& b, const std::string& where) {
        if (a.dtype != b.dtype || a.dims != b.dims)
            return fail(where + ": tensor " + a.type().str() + " vs " + b.type().str());
        if (!m_options.constantBytes) return true;
        if (a.strings != b.strings) return fail(where + ": string elements differ");
        if (a.bytes != b.bytes) {
            std::size_t k = 0;
            while (k < a.bytes.size() && k < b.bytes.size() && a.bytes[k] == b.bytes[k]) ++k;
            const std::size_t es = std::max<std::size_t>(1, ir::dtypeSize(a.dtype));
            return fail(where + ": data differ from element " + std::to_string(k / es) + " (" + std::to_string(a.bytes.size()) +
                        " vs " + std::to_string(b.bytes.size()) + " bytes)");
        }
        return true;
    }

    static bool sameFloat(double x, double y) {
        const float fx = static_cast<float>(x), fy = static_cast<float>(y);
        if (std::isnan(fx) || std::isnan(fy)) return std::isnan(fx) && std::isnan(fy);
        return fx == fy && std::signbit(fx) == std::signbit(fy);
    }

    bool node(const ir::Graph& ga, const ir::Node& a, const ir::Graph& gb, const ir::Node& b, int depth) {
        const std::string where = "node " + q(a.name);
        if (a.name != b.name) return fail("node " + q(a.name) + " vs " + q(b.name) + " at the same topological position");
        if (a.opType != b.opType || a.domain != b.domain)
            return fail(where + ": op " + a.domain + "::" + a.opType + " vs " + b.domain + "::" + b.opType);
        if (a.inputs.size() != b.inputs.size())
            return fail(where + ": " + std::to_string(a.inputs.size()) + " inputs vs " + std::to_string(b.inputs.size()));
        for (std::size_t i = 0; i < a.inputs.size(); ++i) {
            const std::string na = nameOf(ga, a.inputs[i]), nb = nameOf(gb, b.inputs[i]);
            if (valid(ga, a.inputs[i]) != valid(gb, b.inputs[i]) || na != nb)
                return fail(where + ": input " + std::to_string(i) + " is " + q(na) + " vs " + q(nb));
        }
        if (a.outputs.size() != b.outputs.size())
            return fail(where + ": " + std::to_string(a.outputs.size()) + " outputs vs " + std::to_string(b.outputs.size()));
        for (std::size_t i = 0; i < a.outputs.size(); ++i) {
            const std::string na = nameOf(ga, a.outputs[i]), nb = nameOf(gb, b.outputs[i]);
            if (valid(ga, a.outputs[i]) != valid(gb, b.outputs[i]) || na != nb)
                return fail(where + ": output " + std::to_string(i) + " is " + q(na) + " vs " + q(nb));
            if (!valid(ga, a.outputs[i])) continue;
            const ir::TensorType& ta = ga.value(a.outputs[i]).type;
            const ir::TensorType& tb = gb.value(b.outputs[i]).type;
            if (ta != tb) return fail(where + ": output " + q(na) + " has type " + ta.str() + " vs " + tb.str());
        }
        if (static_cast<bool>(a.compute) != static_cast<bool>(b.compute))
            return fail(where + ": compute definition on one side only");
        if (a.compute && !ir::computeEqual(*a.compute, *b.compute)) {
            auto slotName = [](const ir::Graph& g, const ir::Node& n) {
                return [&g, &n](int slot) {
                    return slot >= 0 && static_cast<std::size_t>(slot) < n.inputs.size() ? nameOf(g, n.inputs[static_cast<std::size_t>(slot)])
                                                                                         : std::string("?");
                };
            };
            return fail(where + ": compute " + ir::printCompute(*a.compute, "", slotName(ga, a)) + " vs " +
                        ir::printCompute(*b.compute, "", slotName(gb, b)));
        }
        if (a.attributes.size() != b.attributes.size())
            return fail(where + ": " + std::to_string(a.attributes.size()) + " attributes vs " +
                        std::to_string(b.attributes.size()));
        for (std::size_t i = 0; i < a.attributes.size(); ++i) {
            const auto& [nameA, x] = a.attributes[i];
            const auto& [nameB, y] = b.attributes[i];
            if (nameA != nameB) return fail(where + ": attribute " + std::to_string(i) + " is " + q(nameA) + " vs " + q(nameB));
            if (!attribute(x, y, where + ": attribute " + q(nameA), depth)) return false;
        }
        return true;
    }

    bool attribute(const ir::Attribute& x, const ir::Attribute& y, const std::string& where, int depth) {
        if (x.type != y.type)
            return fail(where + " is " + ir::attrTypeName(x.type) + " vs " + ir::attrTypeName(y.type));
        auto floatsEqual = [](const std::vector<double>& u, const std::vector<double>& v) {
            if (u.size() != v.size()) return false;
            for (std::size_t k = 0; k < u.size(); ++k)
                if (!sameFloat(u[k], v[k])) return false;
            return true;
        };
        switch (x.type) {
            case ir::AttrType::Int:
                if (x.i != y.i) return fail(where + ": " + std::to_string(x.i) + " vs " + std::to_string(y.i));
                return true;
            case ir::AttrType::Float:
                if (!sameFloat(x.f, y.f)) return fail(where + ": " + attrFloat(x.f) + " vs " + attrFloat(y.f));
                return true;
            case ir::AttrType::String:
                if (x.s != y.s) return fail(where + ": " + q(x.s) + " vs " + q(y.s));
                return true;
            case ir::AttrType::Ints:
                if (x.ints != y.ints) return fail(where + ": " + x.str() + " vs " + y.str());
                return true;
            case ir::AttrType::Floats:
                if (!floatsEqual(x.floats, y.floats)) return fail(where + ": " + x.str() + " vs " + y.str());
                return true;
            case ir::AttrType::Strings:
                if (x.strings != y.strings) return fail(where + ": string lists differ");
                return true;
            case ir::AttrType::Tensor:
                if (!x.t || !y.t) return (!x.t && !y.t) || fail(where + ": tensor missing on one side");
                return tensor(*x.t, *y.t, where);
            case ir::AttrType::Tensors:
                if (x.tensors.size() != y.tensors.size()) return fail(where + ": tensor counts differ");
                for (std::size_t k = 0; k < x.tensors.size(); ++k) {
                    if (!x.tensors[k] || !y.tensors[k]) {
                        if (x.tensors[k] || y.tensors[k]) return fail(where + ": tensor missing on one side");
                        continue;
                    }
                    if (!tensor(*x.tensors[k], *y.tensors[k], where + "[" + std::to_string(k) + "]")) return false;
                }
                return true;
            case ir::AttrType::Graph: return subgraph(x.g.get(), y.g.get(), where, depth);
            case ir::AttrType::Graphs:
                if (x.graphs.size() != y.graphs.size()) return fail(where + ": graph counts differ");
                for (std::size_t k = 0; k < x.graphs.size(); ++k)
                    if (!subgraph(x.graphs[k].get(), y.graphs[k].get(), where, depth)) return false;
                return true;
            case ir::AttrType::Undefined: return true;
        }
        return true;
    }

    bool subgraph(const ir::Graph* x, const ir::Graph* y, const std::string& where, int depth) {
        if (!x || !y) return (!x && !y) || fail(where + ": graph missing on one side");
        const std::string saved = m_where;
        m_where += (m_where.empty() ? "" : " > ") + where;
        const bool ok = graph(*x, *y, depth + 1);
        if (ok) m_where = saved;
        return ok;
    }

    const EqualityOptions& m_options;
    std::string* m_why;
    std::string m_where;
};

}  // namespace

std::string dslName(std::string_view name) {
    if (isIdentifier(name) && !needsQuotingAsWord(name)) return std::string(name);
    return "`" + escapeBody(name, '`') + "`";
}

std::string dslString(std::string_view s) { return "\"" + escapeBody(s, '"') + "\""; }

std::string printDsl(const ir::Model& model, const PrintOptions& options) { return Printer(model, options).run(); }

bool structurallyEqual(const ir::Model& a, const ir::Model& b, std::string* why, const EqualityOptions& options) {
    return Comparer(options, why).model(a, b);
}

bool structurallyEqual(const ir::Graph& a, const ir::Graph& b, std::string* why, const EqualityOptions& options) {
    return Comparer(options, why).graph(a, b, 0);
}

}  // namespace tessera::frontend::dsl
