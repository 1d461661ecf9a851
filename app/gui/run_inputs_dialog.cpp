#include "app/gui/run_inputs_dialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include "core/ir/npy.h"
#include "core/pipeline/prepare.h"

namespace tessera::app {

namespace {

QString fromStd(const std::string& s) { return QString::fromStdString(s); }

std::string pathFor(const std::vector<std::pair<std::string, std::string>>& list, const std::string& name) {
    for (const auto& [n, p] : list)
        if (n == name) return p;
    return {};
}

std::string firstMessage(const support::DiagnosticList& d) {
    for (const auto& item : d.items())
        if (item.severity == support::Severity::Error) return item.where.empty() ? item.message : item.where + ": " + item.message;
    return "error";
}

}  // namespace

bool RunInputFiles::empty() const {
    for (const auto& [n, p] : inputs)
        if (!p.empty()) return false;
    for (const auto& [n, p] : expected)
        if (!p.empty()) return false;
    return true;
}

std::pair<RunInputData, std::vector<std::string>> readRunInputs(const ir::Graph& g, const RunInputFiles& files) {
    RunInputData data;
    std::vector<std::string> errors;
    const auto rin = g.runtimeInputs();
    data.inputs.resize(rin.size());
    std::vector<std::pair<std::string, std::int64_t>> bindings;
    for (const auto& [name, path] : files.inputs) {
        if (path.empty()) continue;
        std::size_t idx = rin.size();
        for (std::size_t i = 0; i < rin.size(); ++i)
            if (g.value(rin[i]).name == name) idx = i;
        if (idx == rin.size()) {
            errors.push_back("input '" + name + "': the model has no runtime input of that name");
            continue;
        }
        auto t = ir::readNpy(path);
        if (!t.ok()) {
            errors.push_back("input '" + name + "': " + firstMessage(t.diagnostics()));
            continue;
        }
        auto bad = pipeline::checkFedInput(g, rin[idx], *t, bindings);
        if (bad.hasErrors()) {
            errors.push_back(firstMessage(bad));
            continue;
        }
        data.inputs[idx] = std::move(*t);
    }
    for (const auto& [name, path] : files.expected) {
        if (path.empty()) continue;
        bool isOutput = false;
        for (ir::ValueId o : g.outputs()) isOutput = isOutput || g.value(o).name == name;
        if (!isOutput) {
            errors.push_back("output '" + name + "': the model has no graph output of that name");
            continue;
        }
        auto t = ir::readNpy(path);
        if (!t.ok()) {
            errors.push_back("output '" + name + "': " + firstMessage(t.diagnostics()));
            continue;
        }
        data.expected.emplace_back(name, std::move(*t));
    }
    return {std::move(data), std::move(errors)};
}

RunInputsDialog::RunInputsDialog(const ir::Graph& g, const RunInputFiles& current, QWidget* parent)
    : QDialog(parent), m_graph(g) {
    setWindowTitle(tr("Run Inputs"));
    setObjectName(QStringLiteral("runInputsDialog"));
    auto* top = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Feed inputs from .npy files (empty: filled from a fixed seed) and give the outputs "
                                "the run must match, e.g. what PyTorch computed. The outputs' verdict comes first "
                                "after the run."),
                             this);
    intro->setWordWrap(true);
    top->addWidget(intro);
    auto* body = new QWidget(this);
    auto* form = new QFormLayout(body);
    auto addRow = [&](const std::string& name, const std::string& type, bool isInput, const std::string& path) {
        Row r;
        r.name = name;
        r.isInput = isInput;
        auto* line = new QWidget(body);
        auto* h = new QHBoxLayout(line);
        h->setContentsMargins(0, 0, 0, 0);
        r.path = new QLineEdit(fromStd(path), line);
        r.path->setObjectName(QStringLiteral("%1:%2").arg(isInput ? QStringLiteral("input") : QStringLiteral("expect"),
                                                           fromStd(name)));
        r.path->setPlaceholderText(isInput ? tr("seeded") : tr("not compared"));
        r.path->setClearButtonEnabled(true);
        r.path->setMinimumWidth(320);
        auto* browse = new QPushButton(tr("Browse..."), line);
        QLineEdit* edit = r.path;
        connect(browse, &QPushButton::clicked, this, [this, edit] {
            const QString start = edit->text().isEmpty() ? QString() : QFileInfo(edit->text()).absolutePath();
            const QString f = QFileDialog::getOpenFileName(this, tr("Choose a .npy file"), start, tr("NumPy arrays (*.npy)"));
            if (!f.isEmpty()) edit->setText(f);
        });
        h->addWidget(r.path, 1);
        h->addWidget(browse);
        r.error = new QLabel(body);
        r.error->setStyleSheet(QStringLiteral("color: #b00020"));
        r.error->setWordWrap(true);
        r.error->hide();
        auto* cell = new QWidget(body);
        auto* v = new QVBoxLayout(cell);
        v->setContentsMargins(0, 0, 0, 0);
        v->addWidget(line);
        v->addWidget(r.error);
        form->addRow(tr("%1 '%2' %3").arg(isInput ? tr("input") : tr("expected"), fromStd(name), fromStd(type)), cell);
        m_rows.push_back(r);
    };
    for (ir::ValueId v : g.runtimeInputs())
        addRow(g.value(v).name, g.value(v).type.str(), true, pathFor(current.inputs, g.value(v).name));
    for (ir::ValueId v : g.outputs())
        addRow(g.value(v).name, g.value(v).type.str(), false, pathFor(current.expected, g.value(v).name));
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setWidget(body);
    top->addWidget(scroll, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::Reset, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &RunInputsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &RunInputsDialog::reject);
    connect(buttons->button(QDialogButtonBox::Reset), &QPushButton::clicked, this, [this] {
        for (Row& r : m_rows) r.path->clear();
    });
    buttons->button(QDialogButtonBox::Reset)->setToolTip(tr("Clear every file: seeded inputs, no expected outputs"));
    top->addWidget(buttons);
    resize(720, std::min(160 + 48 * static_cast<int>(m_rows.size()), 600));
}

RunInputFiles RunInputsDialog::files() const {
    RunInputFiles f;
    for (const Row& r : m_rows)
        (r.isInput ? f.inputs : f.expected).emplace_back(r.name, r.path->text().trimmed().toStdString());
    return f;
}

void RunInputsDialog::accept() {
    for (Row& r : m_rows) r.error->hide();
    auto [data, errors] = readRunInputs(m_graph, files());
    if (!errors.empty()) {
        // Each error under the row it is about (errors name "input 'x'" / "output 'y'").
        for (const std::string& e : errors) {
            bool placed = false;
            for (Row& r : m_rows) {
                const std::string key = (r.isInput ? "input '" : "output '") + r.name + "'";
                if (!placed && e.rfind(key, 0) == 0) {
                    r.error->setText(fromStd(e));
                    r.error->show();
                    placed = true;
                }
            }
        }
        return;
    }
    m_data = std::move(data);
    QDialog::accept();
}

}  // namespace tessera::app
