#pragma once
/// @file
/// The ONNX backend node tests as conformance cases: discovery, loading, and a run through the
/// reference interpreter.
///
/// Layout read (as in onnx/backend/test/data/node, Debian's libonnx-testdata installs it under
/// /usr/share/libonnx-testdata/data/node): one folder per test, named `test_<what>`, holding
/// `model.onnx` and one or more `test_data_set_<k>/` folders with `input_<i>.pb` and
/// `output_<j>.pb` (serialized onnx::TensorProto; some tests hold sequence/optional protos).
///
/// Thread rules: reentrant; the functions only read files.

#include <cstdint>
#include <string>
#include <vector>

#include "core/eval/compare.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "core/support/cancel.h"
#include "core/support/expected.h"

namespace tessera::pipeline {

/// One `test_data_set_<k>` folder: its input and output files, each sorted by their number
/// (input_2.pb before input_10.pb).
struct ConformanceDataSet {
    std::string dir;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
};

struct ConformanceCase {
    std::string name;    ///< folder name, e.g. "test_relu"
    std::string dir;     ///< the folder (holds model.onnx)
    /// Op type of the graph's only node when model.onnx has exactly one top-level node in the
    /// default domain, else "" (several nodes, a function-expanded test, a custom domain, or a
    /// model that could not be read).
    std::string opType;
    std::int64_t opset = 0;      ///< default-domain opset of model.onnx (0 when unreadable)
    bool nonTensorData = false;  ///< the graph takes or gives sequences/optionals/maps
    std::vector<ConformanceDataSet> dataSets;  ///< sorted by their number
};

/// Finds the cases under `dir`: either a node-test root (its `test_*` subfolders that hold a
/// model.onnx, sorted by name) or one test folder (holding model.onnx itself). model.onnx is
/// only summarised (no import), so an unimportable model still gives a case.
/// Errors: `dir` missing or not a folder, no case found.
support::Expected<std::vector<ConformanceCase>> discoverConformanceCases(const std::string& dir);

/// A case's imported model and one data set's tensors.
struct ConformanceData {
    ir::Model model;
    std::vector<ir::TensorData> inputs;    ///< in model.graph.runtimeInputs() order
    std::vector<ir::TensorData> expected;  ///< in model.graph.outputs() order
};

/// Imports model.onnx and reads data set `dataSet` (index into c.dataSets). Errors: the
/// importer's diagnostics; a data file that is not a tensor ("unsupported test data kind");
/// input/output file counts that differ from the graph's runtime inputs/outputs; a bad index.
support::Expected<ConformanceData> loadConformanceData(const ConformanceCase& c, int dataSet);

/// Outcome of one data set of one case.
enum class ConformanceStatus {
    Passed,   ///< every output within tolerance
    Failed,   ///< evaluated, but some output is beyond tolerance (or has the wrong shape/dtype)
    Skipped,  ///< not evaluable here: import failed, non-tensor data, or an op with no implementation
    Error,    ///< the evaluation reported an error other than a missing implementation
};
const char* conformanceStatusName(ConformanceStatus s);  ///< "passed", "failed", "skipped", "error"

struct ConformanceResult {
    ConformanceStatus status = ConformanceStatus::Skipped;
    std::string message;  ///< why it was skipped/failed/errored (first diagnostic or comparison summary)
    std::vector<eval::TensorComparison> outputs;  ///< one per graph output when evaluated
};

/// Why a case of the ONNX 1.12 node tests cannot pass against its own data (expected values or
/// input shapes that contradict the operator spec or the model), or "" for every other case. The
/// `_expanded` variant of a listed case is listed too.
std::string knownTestDataIssue(const std::string& caseName);

/// Cases with a knownTestDataIssue() are Skipped with that reason. Otherwise loads data set
/// `dataSet` of `c`, evaluates it with the reference interpreter
/// (ReferenceOptions::opset = the model's opset) and compares every output with
/// eval::compareTensors(actual, expected) using the default tolerances of the expected dtype.
ConformanceResult runConformanceWithReference(const ConformanceCase& c, int dataSet,
                                              const support::CancelToken* cancel = nullptr);

}  // namespace tessera::pipeline
