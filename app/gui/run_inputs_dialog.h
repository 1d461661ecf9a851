#pragma once
/// @file
/// Run > Inputs...: the GUI twin of `tessera-cli run --input NAME=FILE.npy --expect NAME=FILE.npy`.
/// One row per runtime input of the model (a .npy to feed instead of the seeded tensor; empty =
/// seeded, as before) and one per graph output (a .npy the output must match, e.g. what torch
/// computed; empty = none). Accepting reads every file given: a file that cannot be read, or an
/// input whose dtype/rank/extents contradict the model's declared type, keeps the dialog open
/// with the error under its row (nothing is lost); on success the tensors are ready for the run
/// (RunSettings::givenInputs, RunOptions::expectedOutputs).
///
/// Thread rules: UI thread only. Reading the files happens on accept, on the UI thread (they are
/// tensors a user picks by hand).

#include <string>
#include <utility>
#include <vector>

#include <QDialog>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"

class QLabel;
class QLineEdit;

namespace tessera::app {

/// The files chosen, by input/output name (empty path = none).
struct RunInputFiles {
    std::vector<std::pair<std::string, std::string>> inputs;    ///< runtime input name -> .npy
    std::vector<std::pair<std::string, std::string>> expected;  ///< graph output name -> .npy
    bool empty() const;
};

/// The tensors read from RunInputFiles for one model.
struct RunInputData {
    /// One per runtime input of the graph, in graph order; an Undefined dtype = seeded.
    std::vector<ir::TensorData> inputs;
    std::vector<std::pair<std::string, ir::TensorData>> expected;
};

/// Reads `files` for graph `g`: every named input must be a runtime input and match its
/// declared type (symbolic extents bind), every expected name a graph output. Errors name the
/// row ("input 'x': expected f32[1,3,224,224], got f32[1,3,32,32]"), one per problem.
std::pair<RunInputData, std::vector<std::string>> readRunInputs(const ir::Graph& g, const RunInputFiles& files);

class RunInputsDialog : public QDialog {
    Q_OBJECT
public:
    RunInputsDialog(const ir::Graph& g, const RunInputFiles& current, QWidget* parent = nullptr);

    RunInputFiles files() const;
    /// Valid after accept(): the tensors read.
    const RunInputData& data() const { return m_data; }

    void accept() override;

private:
    struct Row {
        std::string name;
        bool isInput = true;
        QLineEdit* path = nullptr;
        QLabel* error = nullptr;
    };
    const ir::Graph& m_graph;
    std::vector<Row> m_rows;
    RunInputData m_data;
};

}  // namespace tessera::app
