// tessera: the desktop IDE. `tessera [FILE] [--screenshot PNG] [--geometry WxH] [--find TEXT] [--run] [--planner none|hidet|fuseplanner]
// [--target cpu|cuda|cuda:N|cuda-compile] [--input NAME=FILE.npy]... [--expect NAME=FILE.npy]...
// [--screenshot-dock NAME] [--runs N] [--pin]
// [--mapping EXPR [--mapping-block EXPR] [--mapping-level L] [--mapping-step S] [--mapping-worker W]
// [--mapping-tensor DIMS]]`.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QIcon>
#include <QLineEdit>
#include <QPixmap>
#include <QTimer>

#include "app/gui/document.h"
#include "app/gui/fusion_controller.h"
#include "app/gui/main_window.h"
#include "app/gui/roofline_controller.h"
#include "app/gui/run_controller.h"
#include "app/gui/project_controller.h"
#include "app/gui/screenshot_options.h"
#include "app/gui/plan_session.h"
#include "app/gui/session.h"
#include "app/gui/workspace_controller.h"
#include "views/graph/graph_view.h"
#include "views/mapping/mapping_panel.h"
#include "views/mapping/memory_view.h"

namespace {

constexpr int kScreenshotTimeoutMs = 120000;
// With --run the screenshot waits for the compile, the JIT and the timed, checked run as well.
constexpr int kScreenshotRunTimeoutMs = 900000;
// Lets the window settle (docks laid out, first paint) before grabbing.
constexpr int kScreenshotSettleMs = 500;

bool parseGeometry(const QString& text, QSize* out)
{
    const QStringList parts = text.toLower().split(QLatin1Char('x'));
    if (parts.size() != 2)
        return false;
    bool okW = false, okH = false;
    const int w = parts[0].toInt(&okW);
    const int h = parts[1].toInt(&okH);
    if (!okW || !okH || w < 200 || h < 150 || w > 16384 || h > 16384)
        return false;
    *out = QSize(w, h);
    return true;
}

bool envSet(const char* name)
{
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
}

/// Without a display Qt's xcb plugin aborts the process; say what to do instead. --help and
/// --version need no display, so they run on the offscreen platform.
bool checkDisplay(int argc, char** argv)
{
    if (envSet("QT_QPA_PLATFORM") || envSet("DISPLAY") || envSet("WAYLAND_DISPLAY"))
        return true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h" || a == "--help-all" || a == "--version" || a == "-v") {
            setenv("QT_QPA_PLATFORM", "offscreen", 1);
            return true;
        }
    }
    std::fprintf(stderr,
                 "tessera: no display found (DISPLAY and WAYLAND_DISPLAY are unset).\n"
                 "Run it in a desktop session or under `xvfb-run -a`, or use `tessera-cli inspect MODEL` "
                 "for a text summary.\n");
    return false;
}

}  // namespace

int main(int argc, char** argv)
{
    if (!checkDisplay(argc, argv))
        return 2;
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Tessera"));
    QApplication::setOrganizationName(QStringLiteral("Tessera"));
    QApplication::setApplicationVersion(QStringLiteral("0.1.0"));
    // The icon (resources/icons/, compiled in) and, for Wayland, the desktop entry that names it.
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/io.tessera.Tessera.svg")));
    QApplication::setDesktopFileName(QStringLiteral("io.tessera.Tessera"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Tessera: an IDE for tensor programs."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("ONNX model (.onnx) or Tessera program (.tsr) to open."), QStringLiteral("[FILE]"));
    const QCommandLineOption screenshotOpt(
        QStringLiteral("screenshot"),
        QStringLiteral("Open FILE, save a PNG of the window once the graph is drawn, and quit "
                       "(exit 0 on success, 2 if the model cannot be loaded, 1 if the PNG cannot be written, "
                       "3 on timeout). Unless --find selects a node, the first operator with weights is selected to "
                       "fill the properties panel."),
        QStringLiteral("PNG"));
    const QCommandLineOption geometryOpt(QStringLiteral("geometry"), QStringLiteral("Window size, e.g. 1600x1000."),
                                         QStringLiteral("WxH"));
    const QCommandLineOption inputOpt(QStringLiteral("input"),
                                      QStringLiteral("Feed a runtime input from a .npy file in every run (as Run > Inputs... "
                                                     "does); repeatable."),
                                      QStringLiteral("NAME=FILE.npy"));
    const QCommandLineOption expectOpt(QStringLiteral("expect"),
                                       QStringLiteral("Compare a graph output with a .npy file after every run (as Run > "
                                                      "Inputs... does); repeatable."),
                                       QStringLiteral("NAME=FILE.npy"));
    const QCommandLineOption findOpt(QStringLiteral("find"),
                                     QStringLiteral("After loading, select and centre the first node whose name or op "
                                                    "type contains TEXT."),
                                     QStringLiteral("TEXT"));
    const QCommandLineOption mappingOpt(QStringLiteral("mapping"),
                                        QStringLiteral("Open the Task Mapping dock on EXPR (a Hidet task mapping, e.g. "
                                                       "\"spatial(2,5).repeat(3,4)\"; the grid level when "
                                                       "--mapping-block is given)."),
                                        QStringLiteral("EXPR"));
    const QCommandLineOption mappingBlockOpt(QStringLiteral("mapping-block"),
                                             QStringLiteral("Block (threads) mapping composed under --mapping."),
                                             QStringLiteral("EXPR"));
    const QCommandLineOption mappingStepOpt(QStringLiteral("mapping-step"),
                                            QStringLiteral("Highlight step S of the mapping (0-based)."),
                                            QStringLiteral("S"));
    const QCommandLineOption mappingWorkerOpt(QStringLiteral("mapping-worker"),
                                              QStringLiteral("Follow worker W (with a block mapping: the global "
                                                             "worker block * threads + thread)."),
                                              QStringLiteral("W"));
    const QCommandLineOption runOpt(QStringLiteral("run"),
                                    QStringLiteral("After loading, compile and run the model on the chosen target (--target; "
                                                   "CUDA compile only: NVRTC to PTX, no run) and check it "
                                                   "against the reference interpreter (Run > Run). With "
                                                   "--screenshot the PNG is taken once the run has finished (exit 4 "
                                                   "if the run failed)."));
    const QCommandLineOption targetOpt(
        QStringLiteral("target"),
        QStringLiteral("Run target, as Run > Target: 'cpu', 'cuda' (the first CUDA device, or compile only to PTX "
                       "when there is none), 'cuda:N' (device N) or 'cuda-compile'. CUDA targets are chosen once "
                       "the start-up device probe has answered; --run waits for it. Not stored as the default."),
        QStringLiteral("TARGET"));
    const QCommandLineOption plannerOpt(
        QStringLiteral("planner"),
        QStringLiteral("After loading, plan the model's fusion with PLANNER ('none', 'hidet' or 'fuseplanner', ignoring a "
                       "plan saved for it) and show the Fusion Plan dock; with --screenshot the PNG is taken once the "
                       "plan is drawn."),
        QStringLiteral("PLANNER"));
    parser.addOption(plannerOpt);
    parser.addOption(findOpt);
    parser.addOption(runOpt);
    parser.addOption(targetOpt);
    parser.addOption(mappingOpt);
    parser.addOption(mappingBlockOpt);
    parser.addOption(mappingStepOpt);
    const QCommandLineOption mappingLevelOpt(QStringLiteral("mapping-level"),
                                             QStringLiteral("With --mapping-block, colour cells by 'blocks' "
                                                            "(default), 'threads' or 'workers'."),
                                             QStringLiteral("LEVEL"));
    const QCommandLineOption mappingTensorOpt(QStringLiteral("mapping-tensor"),
                                              QStringLiteral("Tensor shape for the memory analysis, e.g. 32,32 "
                                                             "(default: the task shape)."),
                                              QStringLiteral("DIMS"));
    parser.addOption(mappingWorkerOpt);
    parser.addOption(mappingLevelOpt);
    parser.addOption(mappingTensorOpt);
    parser.addOption(screenshotOpt);
    parser.addOption(geometryOpt);
    parser.addOption(inputOpt);
    parser.addOption(expectOpt);
    tessera::app::addScreenshotOptions(parser);
    parser.process(app);
    QString extrasError;
    const tessera::app::ScreenshotExtras extras = tessera::app::screenshotExtras(parser, &extrasError);
    if (!extrasError.isEmpty()) {
        std::fprintf(stderr, "tessera: %s\n", qPrintable(extrasError));
        return 2;
    }

    const QStringList args = parser.positionalArguments();
    if (args.size() > 1) {
        std::fprintf(stderr, "tessera: expected at most one FILE\n");
        return 2;
    }
    QSize size(1400, 900);
    if (parser.isSet(geometryOpt) && !parseGeometry(parser.value(geometryOpt), &size)) {
        std::fprintf(stderr, "tessera: bad --geometry '%s' (expected WxH, e.g. 1600x1000)\n",
                     qPrintable(parser.value(geometryOpt)));
        return 2;
    }

    tessera::app::MainWindow window;
    window.resize(size);
    const QString file = args.isEmpty() ? QString() : args.first();
    const QString shot = parser.value(screenshotOpt);
    if (shot.isEmpty()) {
        // The last session's arrangement; a screenshot keeps the default one (reproducible).
        window.workspace()->restoreLayout();
        if (parser.isSet(geometryOpt))
            window.resize(size);
    }
    // An autosave left by an instance that did not exit cleanly is offered first (not while
    // taking a screenshot); recovered, it takes the place of the file named on the command line
    // and of the first run's sample.
    const bool recovered = shot.isEmpty() && window.projectController()->checkForRecovery();
    // The first run shows the Welcome panel (without a file, beside the MobileNetV2 sample it opens).
    // A screenshot of a named file keeps the plain window (reproducible pictures).
    const bool firstRunSample =
        !recovered && (shot.isEmpty() || file.isEmpty()) && window.workspace()->startFirstRun(file.isEmpty());
    const QString findText = parser.value(findOpt);
    const bool run = parser.isSet(runOpt);
    const QString target = parser.value(targetOpt);
    const QString planner = parser.value(plannerOpt);
    if (!planner.isEmpty() && planner != QLatin1String("none") && planner != QLatin1String("hidet") &&
        planner != QLatin1String("fuseplanner")) {
        std::fprintf(stderr, "tessera: bad --planner '%s' (expected none, hidet or fuseplanner)\n", qPrintable(planner));
        return 2;
    }
    if (!planner.isEmpty()) {
        QObject::connect(&window, &tessera::app::MainWindow::modelShown, &window, [&window, planner] {
            window.fusion()->showPlan();
            window.document()->plans()->choosePlanner(planner);
        });
    }
    if (!target.isEmpty() && !window.document()->selectTarget(target)) {
        std::fprintf(stderr, "tessera: bad --target '%s' (expected cpu, cuda, cuda:N or cuda-compile)\n",
                     qPrintable(target));
        return 2;
    }
    // --input / --expect: read once the model is shown, before the run the command line asks for.
    tessera::app::RunInputFiles runFiles;
    for (const auto& [opt, list] : {std::pair{&inputOpt, &runFiles.inputs}, std::pair{&expectOpt, &runFiles.expected}}) {
        for (const QString& spec : parser.values(*opt)) {
            const qsizetype eq = spec.indexOf(QLatin1Char('='));
            if (eq <= 0 || eq + 1 >= spec.size()) {
                std::fprintf(stderr, "tessera: bad --%s '%s' (expected NAME=FILE.npy)\n", qPrintable(opt->names().first()),
                             qPrintable(spec));
                return 2;
            }
            list->emplace_back(spec.left(eq).toStdString(), spec.mid(eq + 1).toStdString());
        }
    }
    if (!runFiles.empty()) {
        QObject::connect(
            &window, &tessera::app::MainWindow::modelShown, &window,
            [&window, runFiles] {
                const std::vector<std::string> errors = window.document()->setRunInputFiles(runFiles);
                for (const std::string& e : errors)
                    std::fprintf(stderr, "tessera: %s\n", e.c_str());
                if (!errors.empty())
                    QApplication::exit(2);
            },
            Qt::SingleShotConnection);
    }
    if (!findText.isEmpty()) {
        QObject::connect(&window, &tessera::app::MainWindow::modelShown, &window,
                         [&window, findText] { window.graphView()->findNext(findText); });
    }

    if (!shot.isEmpty()) {
        window.setErrorReporter([](const QString& title, const QStringList& lines) {
            std::fprintf(stderr, "tessera: %s\n", qPrintable(title));
            for (const QString& l : lines)
                std::fprintf(stderr, "  %s\n", qPrintable(l));
        });
        auto grab = [&window, shot, extras] {
            QString why;
            const QPixmap pm = tessera::app::grabScreenshot(window, extras, &why);
            if (pm.isNull() || !pm.save(shot, "PNG")) {
                std::fprintf(stderr, "tessera: could not write %s%s%s\n", qPrintable(shot),
                             why.isEmpty() ? "" : ": ", qPrintable(why));
                QApplication::exit(1);
                return;
            }
            std::fprintf(stderr, "tessera: saved %s\n", qPrintable(shot));
            QApplication::exit(0);
        };
        QObject::connect(&window, &tessera::app::MainWindow::modelShown, &window, [&window, grab, run, planner] {
            tessera::views::GraphView* view = window.graphView();
            const auto model = window.model();
            if (model && view->selectedNodeId() < 0) {
                const tessera::ir::Graph& g = model->graph;
                for (std::size_t n = 0; n < g.numNodes(); ++n) {
                    bool weighted = false;
                    for (const auto v : g.node(static_cast<int>(n)).inputs)
                        weighted = weighted || (v != tessera::ir::kNoValue && g.value(v).isInitializer);
                    if (weighted) {
                        view->selectNode(static_cast<int>(n), false);
                        break;
                    }
                }
            }
            if (!run && planner.isEmpty())
                QTimer::singleShot(kScreenshotSettleMs, &window, grab);
        });
        if (!run && !planner.isEmpty()) {
            // The grab waits for the plan (specialising and planning run on a worker).
            tessera::app::PlanSession* plans = window.document()->plans();
            QObject::connect(plans, &tessera::app::PlanSession::planChanged, &window, [&window, plans, planner, grab] {
                if (!plans->ready() || plans->isBusy() || plans->planner() != planner)
                    return;
                QObject::disconnect(plans, &tessera::app::PlanSession::planChanged, &window, nullptr);
                QTimer::singleShot(kScreenshotSettleMs, &window, grab);
            });
        }
        if (run) {
            // The grab waits for the run; a failed run is still photographed (its error is in
            // the status bar and the Problems dock), then reported by the exit status.
            QObject::connect(&window, &tessera::app::MainWindow::runFinished, &window, [&window, grab, extras](bool ok) {
                if (ok && tessera::app::startNextScreenshotRun(window, extras))
                    return;
                if (!ok) {
                    std::fprintf(stderr, "tessera: the run failed: %s\n", qPrintable(window.run()->runStatusText()));
                    QTimer::singleShot(kScreenshotSettleMs, &window, [grab] {
                        grab();
                        QApplication::exit(4);
                    });
                    return;
                }
                QTimer::singleShot(kScreenshotSettleMs, &window, grab);
            });
        }
        // A file that does not load is still photographed (its errors are on screen), then exit 2.
        QObject::connect(&window, &tessera::app::MainWindow::loadFailed, &window, [&window, grab] {
            QTimer::singleShot(kScreenshotSettleMs, &window, [grab] {
                grab();
                QApplication::exit(2);
            });
        });
        QTimer::singleShot(run ? kScreenshotRunTimeoutMs : kScreenshotTimeoutMs, &window, [run] {
            std::fprintf(stderr, "tessera: timed out waiting for the %s\n", run ? "run" : "graph");
            QApplication::exit(3);
        });
        if (file.isEmpty() && !firstRunSample)
            QTimer::singleShot(kScreenshotSettleMs, &window, grab);
    }
    if (run) {
        // Connected after --find and the screenshot's selection, so the run starts with the
        // node already selected and its code is highlighted as soon as it is compiled.
        // Only for the model named on the command line, not for files opened later.
        // A CUDA target is only known once the device probe has answered: wait for it too.
        const bool waitProbe = target.startsWith(QLatin1String("cuda"));
        QObject::connect(
            &window, &tessera::app::MainWindow::modelShown, &window,
            [&window, waitProbe] {
                if (!waitProbe || window.document()->targetsProbed()) {
                    window.run()->startRun();
                    return;
                }
                QObject::connect(
                    &window, &tessera::app::MainWindow::targetChanged, &window,
                    [&window] {
                        if (window.document()->targetsProbed())
                            window.run()->startRun();
                    },
                    Qt::SingleShotConnection);
            },
            Qt::SingleShotConnection);
    }

    window.show();
    if (parser.isSet(mappingOpt)) {
        window.showMapping(parser.value(mappingOpt), parser.value(mappingBlockOpt));
        tessera::views::MappingPanel* panel = window.mappingPanel();
        if (!panel->errorText().isEmpty())
            std::fprintf(stderr, "tessera: %s\n", qPrintable(panel->errorText()));
        const QString level = parser.value(mappingLevelOpt);
        if (level == QLatin1String("threads"))
            panel->setColorBy(tessera::views::MappingCanvas::ColorBy::Thread);
        else if (level == QLatin1String("workers"))
            panel->setColorBy(tessera::views::MappingCanvas::ColorBy::Worker);
        if (parser.isSet(mappingWorkerOpt))
            panel->setFocusWorker(parser.value(mappingWorkerOpt).toLongLong());
        if (parser.isSet(mappingStepOpt))
            panel->setStep(parser.value(mappingStepOpt).toLongLong());
        if (parser.isSet(mappingTensorOpt))
            panel->memoryView()->shapeEdit()->setText(parser.value(mappingTensorOpt));
    }
    if (!file.isEmpty() && !recovered)
        window.openFile(QFileInfo(file).absoluteFilePath());
    return QApplication::exec();
}
