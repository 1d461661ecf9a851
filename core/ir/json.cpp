// JSON form of the IR. Layout (all keys always present unless marked optional):
//   graph: {"format":"tessera-ir","version":1,"name","doc","values":[value...],"nodes":[node...],
//           "inputs":[name...],"outputs":[name...],"initializers":[name...]}
//   value: {"name","type":type,"onnx_type":type (optional),"graph_input","initializer",
//           "graph_output","data":data (optional)}
//   type:  {"dtype":"f32","shape":[1,"batch",null] | null (unknown rank)}   null dim = unknown
//   data:  {"dtype","dims","bytes":byte count,"base64" (withData, numeric) | "strings" (withData)}
//   node:  {"name","op_type","domain","inputs":[name|null...],"outputs":[name|null...],
//           "attributes":[{"name","type":"ints","value":...}], "compute":compute (optional)}
//   compute: {"axes":[{"name","extent":int|"N"|null,"reduction":bool}],"output_axes":n,
//           "dtype":"f32"|"undefined","body":expr}
//   expr:  {"k":"const","dtype","value"} | {"k":"index","axis"} | {"k":"access","input","args"}
//           | {"k":"unary"|"binary","op","args"} | {"k":"select","args"} | {"k":"cast","to","args"}
//           | {"k":"reduce","op","axes","args"}
//   model: {"format":"tessera-model","version":1,"ir_version","opsets":[{"domain","version"}],
//           "producer_name","producer_version","source_path","graph":graph,
//           "program":{"schedules":[...],"fusions":[...]} (optional: DSL schedules and fusion groups)}
// Strings that are not valid UTF-8 (names from hostile files) are written as {"base64": "..."} so
// that dump() never throws and the round trip stays exact. Non-finite floats are "nan", "inf",
// "-inf".

#include "core/ir/json.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string_view>

#include "core/ir/compute.h"

namespace tessera::ir {

namespace {

using nlohmann::json;

constexpr int kMaxDepth = 64;
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64Encode(const std::uint8_t* p, std::size_t n) {
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    for (std::size_t i = 0; i < n; i += 3) {
        const std::uint32_t b0 = p[i], b1 = i + 1 < n ? p[i + 1] : 0, b2 = i + 2 < n ? p[i + 2] : 0;
        const std::uint32_t w = (b0 << 16) | (b1 << 8) | b2;
        out += kB64[(w >> 18) & 63];
        out += kB64[(w >> 12) & 63];
        out += i + 1 < n ? kB64[(w >> 6) & 63] : '=';
        out += i + 2 < n ? kB64[w & 63] : '=';
    }
    return out;
}

bool base64Decode(std::string_view s, std::vector<std::uint8_t>& out) {
    if (s.size() % 4 != 0) return false;
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    out.clear();
    out.reserve(s.size() / 4 * 3);
    for (std::size_t i = 0; i < s.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s[i + static_cast<std::size_t>(k)];
            if (c == '=' && i + 4 == s.size() && k >= 2) {
                v[k] = 0;
                ++pad;
            } else {
                if (pad) return false;
                v[k] = val(c);
                if (v[k] < 0) return false;
            }
        }
        const std::uint32_t w = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                                (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
        out.push_back(static_cast<std::uint8_t>(w >> 16));
        if (pad < 2) out.push_back(static_cast<std::uint8_t>(w >> 8));
        if (pad < 1) out.push_back(static_cast<std::uint8_t>(w));
    }
    return true;
}

bool validUtf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
        else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
        else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
        else return false;
        if (i + len > s.size()) return false;
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += len;
    }
    return true;
}

json jstr(const std::string& s) {
    if (validUtf8(s)) return s;
    return json{{"base64", base64Encode(reinterpret_cast<const std::uint8_t*>(s.data()), s.size())}};
}

json jfloat(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

json typeJson(const TensorType& t) {
    json j;
    j["dtype"] = std::string(dtypeName(t.dtype));
    if (!t.shape.rankKnown()) {
        j["shape"] = nullptr;
    } else {
        json dims = json::array();
        for (const auto& d : t.shape.dims()) {
            if (d.isKnown()) dims.push_back(d.value);
            else if (d.isSymbolic()) dims.push_back(jstr(d.symbol));
            else dims.push_back(nullptr);
        }
        j["shape"] = std::move(dims);
    }
    return j;
}

json dataJson(const TensorData& t, bool withData) {
    json j;
    j["dtype"] = std::string(dtypeName(t.dtype));
    j["dims"] = t.dims;
    j["bytes"] = t.bytes.size();
    if (withData) {
        if (t.dtype == DType::String) {
            json arr = json::array();
            for (const auto& s : t.strings) arr.push_back(jstr(s));
            j["strings"] = std::move(arr);
        } else {
            j["base64"] = base64Encode(t.bytes.data(), t.bytes.size());
        }
    }
    return j;
}

json graphJson(const Graph& g, bool withData, int depth);

const char* computeKindName(ComputeKind k) {
    switch (k) {
        case ComputeKind::Const: return "const";
        case ComputeKind::Index: return "index";
        case ComputeKind::Access: return "access";
        case ComputeKind::Unary: return "unary";
        case ComputeKind::Binary: return "binary";
        case ComputeKind::Select: return "select";
        case ComputeKind::Cast: return "cast";
        case ComputeKind::Reduce: return "reduce";
    }
    return "const";
}

json computeExprJson(const ComputeExpr& e, int depth) {
    json j;
    j["k"] = computeKindName(e.kind);
    switch (e.kind) {
        case ComputeKind::Const:
            j["dtype"] = std::string(dtypeName(e.constDType));
            if (isInteger(e.constDType) || e.constDType == DType::Bool) j["value"] = e.intValue;
            else j["value"] = jfloat(e.value);
            break;
        case ComputeKind::Index: j["axis"] = e.axis; break;
        case ComputeKind::Access: j["input"] = e.input; break;
        case ComputeKind::Unary: j["op"] = computeUnaryName(e.unary); break;
        case ComputeKind::Binary: j["op"] = computeBinaryName(e.binary); break;
        case ComputeKind::Select: break;
        case ComputeKind::Cast: j["to"] = std::string(dtypeName(e.castTo)); break;
        case ComputeKind::Reduce:
            j["op"] = reduceKindName(e.reduce);
            j["axes"] = e.reduceAxes;
            break;
    }
    json args = json::array();
    if (depth < 512)
        for (const auto& a : e.args) args.push_back(computeExprJson(a, depth + 1));
    j["args"] = std::move(args);
    return j;
}

json computeJson(const ComputeDef& c) {
    json j;
    json axes = json::array();
    for (const auto& a : c.axes) {
        json ja;
        ja["name"] = jstr(a.name);
        if (a.extent.isKnown()) ja["extent"] = a.extent.value;
        else if (a.extent.isSymbolic()) ja["extent"] = jstr(a.extent.symbol);
        else ja["extent"] = nullptr;
        ja["reduction"] = a.reduction;
        axes.push_back(std::move(ja));
    }
    j["axes"] = std::move(axes);
    j["output_axes"] = c.numOutputAxes;
    j["dtype"] = std::string(dtypeName(c.forcedDType));
    j["body"] = computeExprJson(c.body, 0);
    return j;
}

json attrJson(const std::string& name, const Attribute& a, bool withData, int depth) {
    json j;
    j["name"] = jstr(name);
    j["type"] = attrTypeName(a.type);
    json v;
    switch (a.type) {
        case AttrType::Undefined: v = nullptr; break;
        case AttrType::Int: v = a.i; break;
        case AttrType::Float: v = jfloat(a.f); break;
        case AttrType::String: v = jstr(a.s); break;
        case AttrType::Tensor: v = a.t ? dataJson(*a.t, withData) : json(nullptr); break;
        case AttrType::Graph: v = a.g && depth < kMaxDepth ? graphJson(*a.g, withData, depth + 1) : json(nullptr); break;
        case AttrType::Ints: v = a.ints; break;
        case AttrType::Floats:
            v = json::array();
            for (double f : a.floats) v.push_back(jfloat(f));
            break;
        case AttrType::Strings:
            v = json::array();
            for (const auto& s : a.strings) v.push_back(jstr(s));
            break;
        case AttrType::Tensors:
            v = json::array();
            for (const auto& t : a.tensors) v.push_back(t ? dataJson(*t, withData) : json(nullptr));
            break;
        case AttrType::Graphs:
            v = json::array();
            for (const auto& sg : a.graphs) v.push_back(sg && depth < kMaxDepth ? graphJson(*sg, withData, depth + 1) : json(nullptr));
            break;
    }
    j["value"] = std::move(v);
    return j;
}

json graphJson(const Graph& g, bool withData, int depth) {
    auto nameOf = [&](ValueId v) -> json {
        if (v < 0 || static_cast<std::size_t>(v) >= g.numValues()) return nullptr;
        return jstr(g.value(v).name);
    };
    json j;
    j["format"] = "tessera-ir";
    j["version"] = 1;
    j["name"] = jstr(g.name);
    j["doc"] = jstr(g.docString);
    json values = json::array();
    for (const auto& v : g.values()) {
        json jv;
        jv["name"] = jstr(v.name);
        jv["type"] = typeJson(v.type);
        if (v.onnxType) jv["onnx_type"] = typeJson(*v.onnxType);
        jv["graph_input"] = v.isGraphInput;
        jv["initializer"] = v.isInitializer;
        jv["graph_output"] = v.isGraphOutput;
        if (v.data) jv["data"] = dataJson(*v.data, withData);
        values.push_back(std::move(jv));
    }
    j["values"] = std::move(values);
    json nodes = json::array();
    for (const auto& n : g.nodes()) {
        json jn;
        jn["name"] = jstr(n.name);
        jn["op_type"] = jstr(n.opType);
        jn["domain"] = jstr(n.domain);
        json ins = json::array(), outs = json::array(), attrs = json::array();
        for (ValueId v : n.inputs) ins.push_back(nameOf(v));
        for (ValueId v : n.outputs) outs.push_back(nameOf(v));
        for (const auto& [name, a] : n.attributes) attrs.push_back(attrJson(name, a, withData, depth));
        jn["inputs"] = std::move(ins);
        jn["outputs"] = std::move(outs);
        jn["attributes"] = std::move(attrs);
        if (n.compute) jn["compute"] = computeJson(*n.compute);
        nodes.push_back(std::move(jn));
    }
    j["nodes"] = std::move(nodes);
    auto list = [&](const std::vector<ValueId>& ids) {
        json arr = json::array();
        for (ValueId v : ids) arr.push_back(nameOf(v));
        return arr;
    };
    j["inputs"] = list(g.inputs());
    j["outputs"] = list(g.outputs());
    j["initializers"] = list(g.initializers());
    return j;
}

// ------------------------------------------------------------------------------- reading

/// Thrown inside the reader only, caught in graphFromJson: a readable path and message.
struct ReadError {
    std::string where;
    std::string message;
};

std::string readStr(const json& j, const std::string& where) {
    if (j.is_string()) return j.get<std::string>();
    if (j.is_object() && j.contains("base64") && j["base64"].is_string()) {
        std::vector<std::uint8_t> bytes;
        if (!base64Decode(j["base64"].get<std::string>(), bytes)) throw ReadError{where, "invalid base64"};
        return std::string(bytes.begin(), bytes.end());
    }
    throw ReadError{where, "expected a string"};
}

const json& field(const json& j, const char* key, const std::string& where) {
    if (!j.is_object()) throw ReadError{where, "expected an object"};
    auto it = j.find(key);
    if (it == j.end()) throw ReadError{where, std::string("missing key '") + key + "'"};
    return *it;
}

std::string strField(const json& j, const char* key, const std::string& where, bool optional = false) {
    if (optional && (!j.is_object() || !j.contains(key))) return {};
    return readStr(field(j, key, where), where + "." + key);
}

bool boolField(const json& j, const char* key, const std::string& where) {
    if (!j.contains(key)) return false;
    const json& v = j[key];
    if (!v.is_boolean()) throw ReadError{where + "." + key, "expected true or false"};
    return v.get<bool>();
}

std::int64_t readInt(const json& j, const std::string& where) {
    if (j.is_number_integer()) return j.get<std::int64_t>();
    if (j.is_number_unsigned()) {
        const auto u = j.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) throw ReadError{where, "integer out of range"};
        return static_cast<std::int64_t>(u);
    }
    throw ReadError{where, "expected an integer"};
}

double readFloat(const json& j, const std::string& where) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
        const auto s = j.get<std::string>();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    throw ReadError{where, "expected a number"};
}

DType readDType(const json& j, const std::string& where) {
    const std::string s = readStr(j, where);
    if (s == "undefined") return DType::Undefined;
    auto dt = parseDType(s);
    if (!dt) throw ReadError{where, "unknown dtype '" + s + "'"};
    return *dt;
}

TensorType readType(const json& j, const std::string& where) {
    TensorType t;
    t.dtype = readDType(field(j, "dtype", where), where + ".dtype");
    const json& sh = field(j, "shape", where);
    if (sh.is_null()) return t;
    if (!sh.is_array()) throw ReadError{where + ".shape", "expected an array or null"};
    std::vector<Dim> dims;
    for (std::size_t i = 0; i < sh.size(); ++i) {
        const json& d = sh[i];
        const std::string w = where + ".shape[" + std::to_string(i) + "]";
        if (d.is_null()) dims.push_back(Dim::unknown());
        else if (d.is_number()) {
            const std::int64_t v = readInt(d, w);
            if (v < 0) throw ReadError{w, "negative extent " + std::to_string(v)};
            dims.push_back(Dim::known(v));
        } else {
            dims.push_back(Dim::symbolic(readStr(d, w)));
        }
    }
    t.shape = Shape(std::move(dims));
    return t;
}

std::shared_ptr<const TensorData> readData(const json& j, const std::string& where) {
    auto t = std::make_shared<TensorData>();
    t->dtype = readDType(field(j, "dtype", where), where + ".dtype");
    const json& dims = field(j, "dims", where);
    if (!dims.is_array()) throw ReadError{where + ".dims", "expected an array"};
    for (std::size_t i = 0; i < dims.size(); ++i) t->dims.push_back(readInt(dims[i], where + ".dims[" + std::to_string(i) + "]"));
    if (j.contains("base64")) {
        const json& b = j["base64"];
        if (!b.is_string() || !base64Decode(b.get_ref<const std::string&>(), t->bytes))
            throw ReadError{where + ".base64", "invalid base64"};
    }
    if (j.contains("strings")) {
        const json& s = j["strings"];
        if (!s.is_array()) throw ReadError{where + ".strings", "expected an array"};
        for (std::size_t i = 0; i < s.size(); ++i) t->strings.push_back(readStr(s[i], where + ".strings[" + std::to_string(i) + "]"));
    }
    return t;
}

Graph readGraph(const json& j, const std::string& where, int depth);

ComputeExpr readComputeExpr(const json& j, const std::string& where, int depth) {
    if (depth > 512) throw ReadError{where, "compute expression nested too deeply"};
    ComputeExpr e;
    const std::string k = strField(j, "k", where);
    auto intField = [&](const char* key) { return readInt(field(j, key, where), where + "." + key); };
    auto toInt = [&](std::int64_t v, const char* key) {
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
            throw ReadError{where + "." + key, "out of range"};
        return static_cast<int>(v);
    };
    if (k == "const") {
        e.kind = ComputeKind::Const;
        e.constDType = readDType(field(j, "dtype", where), where + ".dtype");
        e.weak = true;
        if (isInteger(e.constDType) || e.constDType == DType::Bool) {
            e.intValue = intField("value");
            e.value = static_cast<double>(e.intValue);
        } else {
            e.value = readFloat(field(j, "value", where), where + ".value");
        }
    } else if (k == "index") {
        e.kind = ComputeKind::Index;
        e.axis = toInt(intField("axis"), "axis");
    } else if (k == "access") {
        e.kind = ComputeKind::Access;
        e.input = toInt(intField("input"), "input");
    } else if (k == "unary") {
        e.kind = ComputeKind::Unary;
        const std::string op = strField(j, "op", where);
        if (op == "neg") e.unary = ComputeUnary::Neg;
        else if (op == "not") e.unary = ComputeUnary::Not;
        else if (auto u = computeUnaryFromName(op)) e.unary = *u;
        else throw ReadError{where + ".op", "unknown unary operator '" + op + "'"};
    } else if (k == "binary") {
        e.kind = ComputeKind::Binary;
        const std::string op = strField(j, "op", where);
        bool found = false;
        for (int i = 0; i <= static_cast<int>(ComputeBinary::Atan2); ++i)
            if (op == computeBinaryName(static_cast<ComputeBinary>(i))) {
                e.binary = static_cast<ComputeBinary>(i);
                found = true;
            }
        if (!found) throw ReadError{where + ".op", "unknown binary operator '" + op + "'"};
    } else if (k == "select") {
        e.kind = ComputeKind::Select;
    } else if (k == "cast") {
        e.kind = ComputeKind::Cast;
        e.castTo = readDType(field(j, "to", where), where + ".to");
    } else if (k == "reduce") {
        e.kind = ComputeKind::Reduce;
        const std::string op = strField(j, "op", where);
        bool found = false;
        for (int i = 0; i <= static_cast<int>(ReduceKind::Min); ++i)
            if (op == reduceKindName(static_cast<ReduceKind>(i))) {
                e.reduce = static_cast<ReduceKind>(i);
                found = true;
            }
        if (!found) throw ReadError{where + ".op", "unknown reduction '" + op + "'"};
        const json& axes = field(j, "axes", where);
        if (!axes.is_array()) throw ReadError{where + ".axes", "expected an array"};
        for (std::size_t i = 0; i < axes.size(); ++i) e.reduceAxes.push_back(toInt(readInt(axes[i], where + ".axes"), "axes"));
    } else {
        throw ReadError{where + ".k", "unknown compute expression kind '" + k + "'"};
    }
    const json& args = field(j, "args", where);
    if (!args.is_array()) throw ReadError{where + ".args", "expected an array"};
    for (std::size_t i = 0; i < args.size(); ++i)
        e.args.push_back(readComputeExpr(args[i], where + ".args[" + std::to_string(i) + "]", depth + 1));
    return e;
}

ComputeDef readCompute(const json& j, const std::string& where) {
    ComputeDef c;
    const json& axes = field(j, "axes", where);
    if (!axes.is_array()) throw ReadError{where + ".axes", "expected an array"};
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const std::string w = where + ".axes[" + std::to_string(i) + "]";
        ComputeAxis a;
        a.name = strField(axes[i], "name", w);
        const json& ext = field(axes[i], "extent", w);
        if (ext.is_null()) a.extent = Dim::unknown();
        else if (ext.is_number()) {
            const std::int64_t v = readInt(ext, w + ".extent");
            if (v < 0) throw ReadError{w + ".extent", "negative extent"};
            a.extent = Dim::known(v);
        } else a.extent = Dim::symbolic(readStr(ext, w + ".extent"));
        a.reduction = boolField(axes[i], "reduction", w);
        c.axes.push_back(std::move(a));
    }
    const std::int64_t n = readInt(field(j, "output_axes", where), where + ".output_axes");
    if (n < 0 || static_cast<std::size_t>(n) > c.axes.size()) throw ReadError{where + ".output_axes", "out of range"};
    c.numOutputAxes = static_cast<std::size_t>(n);
    c.forcedDType = readDType(field(j, "dtype", where), where + ".dtype");
    c.body = readComputeExpr(field(j, "body", where), where + ".body", 0);
    return c;
}

Attribute readAttr(const json& j, const std::string& where, std::string& name, int depth) {
    name = readStr(field(j, "name", where), where + ".name");
    const std::string type = readStr(field(j, "type", where), where + ".type");
    const json& v = field(j, "value", where);
    const std::string vw = where + ".value";
    auto needArray = [&]() {
        if (!v.is_array()) throw ReadError{vw, "expected an array"};
    };
    Attribute a;
    if (type == "int") return Attribute::ofInt(readInt(v, vw));
    if (type == "float") return Attribute::ofFloat(readFloat(v, vw));
    if (type == "string") return Attribute::ofString(readStr(v, vw));
    if (type == "ints") {
        needArray();
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(readInt(v[i], vw + "[" + std::to_string(i) + "]"));
        return Attribute::ofInts(std::move(out));
    }
    if (type == "floats") {
        needArray();
        std::vector<double> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(readFloat(v[i], vw + "[" + std::to_string(i) + "]"));
        return Attribute::ofFloats(std::move(out));
    }
    if (type == "strings") {
        needArray();
        std::vector<std::string> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(readStr(v[i], vw + "[" + std::to_string(i) + "]"));
        return Attribute::ofStrings(std::move(out));
    }
    if (type == "tensor") return Attribute::ofTensor(v.is_null() ? nullptr : readData(v, vw));
    if (type == "tensors") {
        needArray();
        a.type = AttrType::Tensors;
        for (std::size_t i = 0; i < v.size(); ++i)
            a.tensors.push_back(v[i].is_null() ? nullptr : readData(v[i], vw + "[" + std::to_string(i) + "]"));
        return a;
    }
    if (type == "graph" || type == "graphs") {
        if (depth >= kMaxDepth) throw ReadError{vw, "subgraphs nested too deep"};
        if (type == "graph") return Attribute::ofGraph(v.is_null() ? nullptr : std::make_shared<Graph>(readGraph(v, vw, depth + 1)));
        needArray();
        a.type = AttrType::Graphs;
        for (std::size_t i = 0; i < v.size(); ++i)
            a.graphs.push_back(v[i].is_null() ? nullptr
                                              : std::make_shared<Graph>(readGraph(v[i], vw + "[" + std::to_string(i) + "]", depth + 1)));
        return a;
    }
    if (type == "undefined") return a;
    throw ReadError{where + ".type", "unknown attribute type '" + type + "'"};
}

Graph readGraph(const json& j, const std::string& where, int depth) {
    if (!j.is_object()) throw ReadError{where, "expected a graph object"};
    Graph g;
    g.name = strField(j, "name", where, true);
    g.docString = strField(j, "doc", where, true);
    const json& values = field(j, "values", where);
    if (!values.is_array()) throw ReadError{where + ".values", "expected an array"};
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::string w = where + ".values[" + std::to_string(i) + "]";
        const json& jv = values[i];
        Value v;
        v.name = strField(jv, "name", w);
        v.type = readType(field(jv, "type", w), w + ".type");
        if (jv.contains("onnx_type") && !jv["onnx_type"].is_null()) v.onnxType = readType(jv["onnx_type"], w + ".onnx_type");
        v.isGraphInput = boolField(jv, "graph_input", w);
        v.isInitializer = boolField(jv, "initializer", w);
        v.isGraphOutput = boolField(jv, "graph_output", w);
        if (jv.contains("data") && !jv["data"].is_null()) v.data = readData(jv["data"], w + ".data");
        const std::string name = v.name;
        if (g.addValue(std::move(v)) == kNoValue) throw ReadError{w, "duplicate value name '" + name + "'"};
    }
    auto resolve = [&](const json& n, const std::string& w) -> ValueId {
        if (n.is_null()) return kNoValue;
        const std::string name = readStr(n, w);
        const ValueId id = g.findValue(name);
        if (id == kNoValue) throw ReadError{w, "value '" + name + "' is not declared in values"};
        return id;
    };
    const json& nodes = field(j, "nodes", where);
    if (!nodes.is_array()) throw ReadError{where + ".nodes", "expected an array"};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::string w = where + ".nodes[" + std::to_string(i) + "]";
        const json& jn = nodes[i];
        Node n;
        n.name = strField(jn, "name", w);
        n.opType = strField(jn, "op_type", w);
        n.domain = strField(jn, "domain", w, true);
        for (const char* key : {"inputs", "outputs"}) {
            const json& arr = field(jn, key, w);
            if (!arr.is_array()) throw ReadError{w + "." + key, "expected an array"};
            auto& dst = std::string_view(key) == "inputs" ? n.inputs : n.outputs;
            for (std::size_t k = 0; k < arr.size(); ++k) dst.push_back(resolve(arr[k], w + "." + key + "[" + std::to_string(k) + "]"));
        }
        if (jn.contains("attributes")) {
            const json& attrs = jn["attributes"];
            if (!attrs.is_array()) throw ReadError{w + ".attributes", "expected an array"};
            for (std::size_t k = 0; k < attrs.size(); ++k) {
                std::string name;
                Attribute a = readAttr(attrs[k], w + ".attributes[" + std::to_string(k) + "]", name, depth);
                n.attributes.emplace_back(std::move(name), std::move(a));
            }
        }
        if (jn.contains("compute")) n.compute = std::make_shared<const ComputeDef>(readCompute(jn["compute"], w + ".compute"));
        g.addNode(std::move(n));
    }
    auto readList = [&](const char* key, std::vector<ValueId>& dst) {
        if (!j.contains(key)) return;
        const json& arr = j[key];
        if (!arr.is_array()) throw ReadError{where + "." + key, "expected an array"};
        for (std::size_t k = 0; k < arr.size(); ++k) {
            const ValueId id = resolve(arr[k], where + "." + key + "[" + std::to_string(k) + "]");
            if (id == kNoValue) throw ReadError{where + "." + key + "[" + std::to_string(k) + "]", "expected a value name"};
            dst.push_back(id);
        }
    };
    readList("inputs", g.inputs());
    readList("outputs", g.outputs());
    readList("initializers", g.initializers());
    return g;
}

json locJson(const support::SourceLocation& b, const support::SourceLocation& e) {
    return json::array({b.line, b.column, e.line, e.column});
}

/// Schedules and fusion groups of a DSL program (written only; core/schedule reads the Model).
json programJson(const ProgramSchedule& p) {
    json j;
    json fusions = json::array();
    for (const auto& f : p.fusions) {
        json jf;
        jf["name"] = jstr(f.name);
        json members = json::array();
        for (const auto& m : f.members) members.push_back(jstr(m));
        jf["members"] = std::move(members);
        jf["anchor"] = jstr(f.anchor);
        jf["range"] = locJson(f.begin, f.end);
        fusions.push_back(std::move(jf));
    }
    json schedules = json::array();
    auto axes = [](const std::vector<ScheduleAxisDecl>& v) {
        json a = json::array();
        for (const auto& x : v) a.push_back(json{{"axis", jstr(x.axis)}, {"factor", x.factor}, {"range", locJson(x.begin, x.end)}});
        return a;
    };
    for (const auto& s : p.schedules) {
        json js;
        js["subject"] = jstr(s.subject);
        js["target"] = jstr(s.target);
        js["arch"] = jstr(s.arch);
        json maps = json::array();
        for (const auto& m : s.mappings)
            maps.push_back(json{{"level", m.level}, {"text", jstr(m.text)}, {"range", locJson(m.begin, m.end)}});
        js["mappings"] = std::move(maps);
        js["tiles"] = axes(s.tiles);
        js["unrolls"] = axes(s.unrolls);
        js["vectorizes"] = axes(s.vectorizes);
        js["parallels"] = axes(s.parallels);
        json stages = json::array();
        for (const auto& st : s.stages) {
            json t = json::array();
            for (const auto& n : st.tensors) t.push_back(jstr(n));
            stages.push_back(json{{"tensors", std::move(t)}, {"memory", st.memory}, {"range", locJson(st.begin, st.end)}});
        }
        js["stages"] = std::move(stages);
        js["range"] = locJson(s.begin, s.end);
        schedules.push_back(std::move(js));
    }
    j["schedules"] = std::move(schedules);
    j["fusions"] = std::move(fusions);
    return j;
}

}  // namespace

nlohmann::json toJson(const Graph& g, bool withData) { return graphJson(g, withData, 0); }

nlohmann::json toJson(const Model& m, bool withData) {
    json j;
    j["format"] = "tessera-model";
    j["version"] = 1;
    j["ir_version"] = m.irVersion;
    json opsets = json::array();
    for (const auto& [domain, version] : m.opsets) opsets.push_back(json{{"domain", jstr(domain)}, {"version", version}});
    j["opsets"] = std::move(opsets);
    j["producer_name"] = jstr(m.producerName);
    j["producer_version"] = jstr(m.producerVersion);
    j["source_path"] = jstr(m.sourcePath);
    j["graph"] = toJson(m.graph, withData);
    if (!m.program.empty()) j["program"] = programJson(m.program);
    return j;
}

support::Expected<Graph> graphFromJson(const nlohmann::json& j) {
    support::DiagnosticList diags;
    try {
        // A model object is accepted too: its graph is read.
        if (j.is_object() && j.contains("graph") && !j.contains("values")) return readGraph(j["graph"], "graph", 0);
        return readGraph(j, "graph", 0);
    } catch (const ReadError& e) {
        diags.error({}, "json " + e.where, e.message);
    } catch (const nlohmann::json::exception& e) {
        diags.error({}, "json", e.what());
    } catch (const std::exception& e) {
        diags.error({}, "json", std::string("cannot read graph: ") + e.what());
    }
    return diags;
}

}  // namespace tessera::ir
