#include "core/frontend/onnx/tensor_proto.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <new>
#include <system_error>

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include "core/frontend/onnx/onnx_tensor.h"

namespace tessera::frontend::onnx {

namespace fs = std::filesystem;
using support::DiagnosticList;

namespace {

/// Reads a whole regular file of at most kMaxTestDataFileBytes; false with a diagnostic otherwise.
bool readWholeFile(const std::string& path, std::string& bytes, DiagnosticList& diags) {
    std::error_code ec;
    const fs::path p(path);
    const auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
        diags.error(path, "", "file not found");
        return false;
    }
    if (!fs::is_regular_file(st)) {
        diags.error(path, "", "not a regular file");
        return false;
    }
    const auto size = fs::file_size(p, ec);
    if (ec) {
        diags.error(path, "", "cannot read the file size");
        return false;
    }
    if (size == 0) {
        diags.error(path, "", "empty file");
        return false;
    }
    if (size > static_cast<std::uintmax_t>(kMaxTestDataFileBytes)) {
        diags.error(path, "", "file is " + std::to_string(size) + " bytes, above the limit of " +
                                  std::to_string(kMaxTestDataFileBytes));
        return false;
    }
    std::ifstream in(p, std::ios::binary);
    if (!in) {
        diags.error(path, "", "cannot open file");
        return false;
    }
    bytes.assign(static_cast<std::size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    if (in.gcount() != static_cast<std::streamsize>(size)) {
        diags.error(path, "", "short read (file changed while reading?)");
        return false;
    }
    return true;
}

/// True when `bytes` parse cleanly (no unknown fields: a TensorProto's raw_data, name or typed
/// fields would be unknown there) as a SequenceProto, OptionalProto or MapProto that declares its
/// element type (0 = an empty sequence/optional). Only asked after the TensorProto reading failed.
bool looksLikeNonTensorProto(const std::string& bytes) {
    const int size = static_cast<int>(bytes.size());
    ::onnx::SequenceProto seq;
    if (seq.ParseFromArray(bytes.data(), size) && seq.unknown_fields().empty() && seq.has_elem_type() &&
        seq.elem_type() >= 0 && seq.elem_type() <= 5)
        return true;
    ::onnx::OptionalProto opt;
    if (opt.ParseFromArray(bytes.data(), size) && opt.unknown_fields().empty() && opt.has_elem_type() &&
        opt.elem_type() >= 0 && opt.elem_type() <= 5)
        return true;
    ::onnx::MapProto map;
    return map.ParseFromArray(bytes.data(), size) && map.unknown_fields().empty() && map.key_type() != 0 &&
           map.has_values();
}

bool isTensorType(const ::onnx::TypeProto& t) {
    return t.value_case() == ::onnx::TypeProto::kTensorType || t.value_case() == ::onnx::TypeProto::VALUE_NOT_SET;
}

}  // namespace

support::Expected<ir::TensorData> parseTensorProto(const std::string& bytes, const std::string& displayName) {
    DiagnosticList diags;
    try {
        if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
            diags.error(displayName, "", "file is too large for a TensorProto");
            return diags;
        }
        ::onnx::TensorProto proto;
        const bool parsed = proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
        std::string err;
        std::shared_ptr<ir::TensorData> t;
        if (parsed && !proto.has_segment()) {
            ImportOptions limits;
            limits.maxTensorBytes = kMaxTestDataFileBytes * 8;  // typed fields may expand (bool, f16 in int32_data)
            detail::TensorContext ctx;
            ctx.options = &limits;
            t = detail::convertTensor(proto, ctx, err);
        }
        if (t) return std::move(*t);
        // A SequenceProto/OptionalProto often parses as a TensorProto too (the field numbers overlap),
        // so decide by whether the tensor reading made sense before naming the other kinds.
        if (looksLikeNonTensorProto(bytes)) {
            diags.error(displayName, "",
                        "unsupported test data kind: the file holds a SequenceProto, OptionalProto or MapProto, "
                        "not a TensorProto");
            return diags;
        }
        if (!parsed) {
            diags.error(displayName, "", "not a valid TensorProto (protobuf parse failed)");
            return diags;
        }
        diags.error(displayName, "", err.empty() ? "segmented tensors are not supported" : err);
    } catch (const std::bad_alloc&) {
        diags.error(displayName, "", "out of memory while reading the tensor");
    } catch (const std::exception& e) {
        diags.error(displayName, "", std::string("internal error while reading the tensor: ") + e.what());
    }
    return diags;
}

support::Expected<ir::TensorData> readTensorProtoFile(const std::string& path) {
    DiagnosticList diags;
    std::string bytes;
    try {
        if (!readWholeFile(path, bytes, diags)) return diags;
    } catch (const std::exception& e) {
        diags.error(path, "", std::string("cannot read the file: ") + e.what());
        return diags;
    }
    return parseTensorProto(bytes, path);
}

support::Expected<OnnxModelSummary> readModelSummary(const std::string& path) {
    DiagnosticList diags;
    try {
        std::string bytes;
        if (!readWholeFile(path, bytes, diags)) return diags;
        ::onnx::ModelProto proto;
        if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !proto.has_graph()) {
            diags.error(path, "", "not a valid ONNX model (protobuf parse failed or no graph)");
            return diags;
        }
        OnnxModelSummary s;
        for (const auto& op : proto.opset_import())
            if (op.domain().empty() || op.domain() == "ai.onnx") s.defaultOpset = op.version();
        const auto& g = proto.graph();
        for (const auto& n : g.node()) {
            s.nodeOpTypes.push_back(n.op_type());
            s.nodeDomains.push_back(n.domain() == "ai.onnx" ? std::string() : n.domain());
        }
        std::vector<std::string> inits;
        for (const auto& t : g.initializer()) inits.push_back(t.name());
        for (const auto& in : g.input()) {
            if (std::find(inits.begin(), inits.end(), in.name()) != inits.end()) continue;
            s.inputNames.push_back(in.name());
            if (in.has_type() && !isTensorType(in.type())) s.nonTensorIO = true;
        }
        for (const auto& out : g.output()) {
            s.outputNames.push_back(out.name());
            if (out.has_type() && !isTensorType(out.type())) s.nonTensorIO = true;
        }
        return s;
    } catch (const std::bad_alloc&) {
        diags.error(path, "", "out of memory while reading the model");
    } catch (const std::exception& e) {
        diags.error(path, "", std::string("internal error while reading the model: ") + e.what());
    }
    return diags;
}

}  // namespace tessera::frontend::onnx
