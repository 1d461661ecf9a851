#pragma once
/// @file
/// ErrorHeatmapView: the Check dock's content. For a kernel whose check failed it draws the
/// error of one output against the reference interpreter (error_heatmap.h) as a 2-D colour map
/// (QCustomPlot QCPColorMap with a colour scale), one slice at a time.
///
/// Layout, top to bottom
/// - a title ("Kernel 'Conv_3' (Conv) · output 'y' · 1 of 1 outputs outside tolerance");
/// - a bar: Output (which output tensor), Error (Absolute |got − want| or Relative, toggled by a
///   check box "Relative"), and "Re-run in Reference Interpreter";
/// - for rank ≥ 2 a slice bar: Rows and Columns (which two axes form the image; choosing the
///   axis the other box holds swaps them) and a spin box per other axis (its index);
/// - an info line: the first bad index (row-major first element outside tolerance) with its got
///   and want values, max and mean error, and how many elements are beyond tolerance;
/// - the heatmap (row 0 at the top; NaN errors in magenta; the first bad element, when in the
///   slice, framed) and, once a re-run answered, beside it the re-run's output over the same slice
///   with a line comparing it with want.
/// Hovering a cell shows its coordinates, got, want, error and the re-run's value (cellToolTip).
///
/// setSnapshot() shows the slice through the first bad element of the first output (the
/// snapshot lists failing outputs first). The view never starts the re-run: it emits
/// rerunRequested(kernel) and the app answers with setRerunBusy() and then setRerunResult() or
/// setRerunError(). A new snapshot drops the re-run result.
///
/// Thread rules: UI thread only.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <QString>
#include <QWidget>

#include "views/debug/error_heatmap.h"

class QCheckBox;
class QComboBox;
class QCPColorMap;
class QCPColorScale;
class QCPItemRect;
class QCustomPlot;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QSpinBox;
class QSplitter;

namespace tessera::views {

class ErrorHeatmapView : public QWidget {
    Q_OBJECT
public:
    explicit ErrorHeatmapView(QWidget* parent = nullptr);

    void setSnapshot(ErrorHeatmapSnapshot snapshot);
    const ErrorHeatmapSnapshot& snapshot() const { return m_snapshot; }
    /// Empties the view and shows `message` as its title.
    void clear(const QString& message);
    bool hasData() const;

    /// The output shown (index into snapshot().outputs); resets the slice to defaultSlice().
    void setOutput(int index);
    int output() const { return m_output; }
    void setMode(ErrorMode mode);
    ErrorMode mode() const { return m_mode; }
    /// Shows slice `s` if it fits the output (else nothing changes); returns whether it did.
    bool setSlice(const SliceSpec& s);
    const SliceSpec& slice() const { return m_slice; }

    /// The cells drawn now (errors of the current output, slice and mode).
    const ErrorSlice& currentSlice() const { return m_cells; }
    /// Statistics of the current output in the current mode.
    ErrorStats stats() const;
    QString titleText() const;
    QString infoText() const;
    /// Tooltip of cell (row, col) of the current slice; empty outside it.
    QString cellToolTip(std::int64_t row, std::int64_t col) const;

    void setRerunBusy();
    /// The re-run's outputs by value name (pipeline::rerunInReference).
    void setRerunResult(const std::vector<std::pair<std::string, ir::TensorData>>& outputs);
    void setRerunError(const QString& message);
    /// The line above the re-run plot ("" before any re-run).
    QString rerunText() const;
    bool rerunShown() const;
    /// The re-run's values in the current slice (empty without a result for this output).
    const ErrorSlice& rerunSlice() const { return m_rerunCells; }

    QCustomPlot* plot() const { return m_plot; }
    QCPColorMap* colorMap() const { return m_map; }
    QCustomPlot* rerunPlot() const { return m_rerunPlot; }
    QPushButton* rerunButton() const { return m_rerunButton; }
    QComboBox* outputBox() const { return m_outputBox; }
    QCheckBox* relativeBox() const { return m_relativeBox; }
    QComboBox* rowAxisBox() const { return m_rowBox; }
    QComboBox* colAxisBox() const { return m_colBox; }
    /// The index spin boxes, one per axis that is not an image axis, in axis order.
    std::vector<QSpinBox*> indexBoxes() const { return m_indexBoxes; }

signals:
    /// The user asked to re-run `kernel` in the reference interpreter.
    void rerunRequested(const QString& kernel);

private:
    const ErrorTensor* current() const;
    void rebuildSliceBar();
    void redraw();
    void redrawRerun();
    void onAxisChanged(bool rowBox);
    void onHover(QMouseEvent* event);

    ErrorHeatmapSnapshot m_snapshot;
    int m_output = -1;
    ErrorMode m_mode = ErrorMode::Absolute;
    SliceSpec m_slice;
    ErrorSlice m_cells;
    ErrorSlice m_rerunCells;
    std::vector<std::pair<std::string, std::shared_ptr<const ir::TensorData>>> m_rerun;
    QString m_rerunText;
    bool m_updating = false;

    QLabel* m_title;
    QComboBox* m_outputBox;
    QCheckBox* m_relativeBox;
    QPushButton* m_rerunButton;
    QWidget* m_sliceBar;
    QComboBox* m_rowBox;
    QComboBox* m_colBox;
    QHBoxLayout* m_indexLayout;
    std::vector<QSpinBox*> m_indexBoxes;
    std::vector<QWidget*> m_indexWidgets;
    QLabel* m_info;
    QSplitter* m_splitter;
    QCustomPlot* m_plot;
    QCPColorMap* m_map;
    QCPColorScale* m_scale;
    QCPItemRect* m_badFrame;
    QWidget* m_rerunPane;
    QLabel* m_rerunLabel;
    QCustomPlot* m_rerunPlot;
    QCPColorMap* m_rerunMap;
    QCPColorScale* m_rerunScale;
};

}  // namespace tessera::views
