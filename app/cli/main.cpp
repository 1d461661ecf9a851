// tessera-cli: command-line twin of the IDE. CLI11 lives in this file only (it is slow to compile);
// the commands themselves are in the other files of app/cli.
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli/conformance_cmd.h"
#include "app/cli/dsl_cmd.h"
#include "app/cli/export_dsl_cmd.h"
#include "app/cli/inspect.h"
#include "app/cli/mapping_cmd.h"
#include "app/cli/plan_cmd.h"
#include "app/cli/project_cmd.h"
#include "app/cli/report_cmd.h"
#include "app/cli/roofline_cmd.h"
#include "app/cli/run_cmd.h"
#include "core/pipeline/toolchain.h"

int main(int argc, char** argv) {
    using namespace tessera::cli;
    try {
        CLI::App app{"Tessera command-line tools: inspect tensor programs and ONNX models", "tessera-cli"};
        app.set_version_flag("--version", std::string("tessera-cli ") + TESSERA_VERSION);
        app.require_subcommand(1);

        InspectOptions inspect;
        bool asJson = false, asDot = false, asIr = false;
        auto* cmd = app.add_subcommand("inspect", "Import a model and print inputs, outputs, op histogram, parameters and FLOPs");
        cmd->add_option("MODEL", inspect.modelPath, "ONNX model (.onnx) or DSL program (.tsr)")->required();
        auto* json = cmd->add_flag("--json", asJson, "print one JSON object instead of text");
        auto* dot = cmd->add_flag("--dot", asDot, "print the graph in Graphviz DOT");
        auto* ir = cmd->add_flag("--ir", asIr, "print Tessera's IR text");
        json->excludes(dot)->excludes(ir);
        dot->excludes(ir);
        cmd->add_flag("--no-onnx-inference", inspect.skipOnnxInference, "do not run ONNX's own shape inference");

        MappingOptions mapping;
        auto* mapCmd = app.add_subcommand("mapping", "Show a Hidet task mapping: worker ids on the task grid, JSON, loops or memory");
        mapCmd->footer(
            "Expressions (Hidet's task mappings):\n"
            "  spatial(d0, ...)       one task per worker, d0*d1*... workers (row-major: last dim fastest)\n"
            "  repeat(d0, ...)        one worker runs all tasks in order; attrs=\"u2.\" sets unroll per dim\n"
            "  row_/col_spatial, row_/col_repeat   row- or column-major; ranks=[1,0] gives any order\n"
            "  A * B, A.spatial(...), A.repeat(...)   composition: A is the outer level, B splits each A task\n"
            "  auto_map(8, 32, workers=64)          repeat * spatial chosen for the shape and worker count\n"
            "  M.projection({0: 0})                 collapse dim 0 (broadcast loads)\n"
            "Example: tessera-cli mapping \"spatial(2,5).repeat(3,4)\" --memory --tensor 6,20 --step 0");
        mapCmd->add_option("EXPR", mapping.expression, "mapping expression, e.g. \"spatial(2,5).repeat(3,4)\"")->required();
        auto* mapJson = mapCmd->add_flag("--json", mapping.json, "print {num_workers, task_shape, workers: ordered task lists}");
        auto* mapLoops = mapCmd->add_flag("--loops", mapping.loops, "print the lowered index expressions and loops");
        auto* mapMem = mapCmd->add_flag("--memory", mapping.memory, "per-warp global sectors and shared-memory bank wavefronts");
        mapJson->excludes(mapLoops)->excludes(mapMem);
        mapLoops->excludes(mapMem);
        mapCmd->add_option("--tensor", mapping.tensorShape, "tensor shape, e.g. 32,33 (coverage check; memory layout)");
        mapCmd->add_option("--elem-bytes", mapping.elemBytes, "bytes per element for --memory (default 4)");
        mapCmd->add_option("--step", mapping.step, "which task of each worker's list --memory analyses (default 0)");
        mapCmd->add_flag("--col-major", mapping.columnMajor, "column-major tensor layout for --memory");
        mapCmd->add_option("--max-workers", mapping.maxWorkers, "check the worker count against this thread limit");

        ExportDslOptions exportDsl;
        auto* exportCmd = app.add_subcommand("export-dsl", "Import an ONNX model and print it as a Tessera DSL program (.tsr)");
        exportCmd->add_option("MODEL", exportDsl.modelPath, "ONNX model (.onnx) or DSL program (.tsr)")->required();
        exportCmd->add_option("-o,--output", exportDsl.outputPath, "write the program to FILE (weights are referenced relative to it)");
        exportCmd->add_option("--inline-max", exportDsl.maxInlineElements,
                              "write constants of up to N elements inline (default 16); larger ones as onnx(...) references");

        CheckOptions check;
        auto* checkCmd = app.add_subcommand("check", "Parse and type-check a DSL program; print every diagnostic with a caret");
        checkCmd->add_option("FILE", check.path, "Tessera DSL program (.tsr)")->required();

        // Thread counts follow the machine: every core this process may use (taskset/cpusets honoured).
        const int cores = tessera::pipeline::availableCores();
        const std::string coresText = std::to_string(cores) + " here";
        RunCmdOptions run;
        run.threads = cores;
        auto* runCmd = app.add_subcommand("run", "Compile every kernel, run and time it in tessera-runner, optionally check it against the reference interpreter");
        runCmd->add_option("MODEL", run.modelPath, "ONNX model (.onnx) or DSL program (.tsr)")->required();
        runCmd->add_option("--target", run.target, "cpu (default), cuda or cuda:N (NVRTC + the CUDA driver, in tessera-runner)");
        runCmd->add_option("--arch", run.arch, "cuda: NVRTC architecture (default: the device's own, e.g. sm_90)");
        runCmd->add_option("--device", run.device, "cuda: device ordinal (default 0)")->check(CLI::Range(0, 1024));
        runCmd->add_option("--input", run.inputs, "NAME=FILE.npy (repeatable); missing inputs are filled from a fixed seed");
        runCmd->add_option("--expect", run.expects,
                           "NAME=FILE.npy (repeatable): graph output NAME must match FILE (exit 3 when it does not)");
        runCmd->add_option("--output-dir", run.outputDir, "write each graph output to DIR/<name>.npy");
        runCmd->add_flag("--check", run.check, "compare every kernel's outputs with the reference interpreter (exit 3 when outside tolerance)");
        runCmd->add_option("--tolerance", run.tolerance, "relative tolerance for --check (default per dtype; f32 1e-4)")
            ->check(CLI::NonNegativeNumber);
        runCmd->add_option("--reps", run.reps, "timed repetitions per kernel (default: until 0.1 s, at least 3)")
            ->check(CLI::Range(1, 1000000));
        runCmd->add_flag("--no-timing", run.noTiming, "run once, do not time");
        runCmd->add_flag("--progress", run.progress, "print per-kernel progress on stderr (compiling kernels, running kernels N/M, checking N/M)");
        runCmd->add_flag("--json", run.json, "print one JSON object");
        runCmd->add_option("--threads", run.threads, "OpenMP threads (default: the cores this process may use, " + coresText + ")")->check(CLI::Range(1, 1024));
        runCmd->add_flag("--fallback-reference", run.fallbackReference, "run ops without a code generator in the reference interpreter");
        runCmd->add_option("--cxx", run.cxx, "host C++ compiler (default $TESSERA_CXX or c++)");
        runCmd->add_option("--cxx-flags", run.cxxFlags, "compiler flags, replacing the default \"-O3 -march=native -fopenmp -shared -fPIC\" (keep -shared -fPIC)");
        runCmd->add_option("--plan", run.fusion.plan,
                           "fusion plan: none, hidet, fuseplanner, or a plan file (tessera-cli plan --output); default: the program's fuse groups, else none");
        runCmd->add_option("--hw", run.fusion.hw,
                           "hardware profile for the planner: host (this CPU; the default for --target cpu), h200 (the default for cuda), h100, a100, rtx-a4000, gtx-1660, jetson-orin or a JSON file");
        runCmd->add_option("--schedule", run.fusion.schedules,
                           "NODE=GRID[;BLOCK]: compile NODE with these task mappings (repeatable), e.g. \"Conv_0=spatial(1,8,4,4).repeat(1,4,28,28)\"");
        runCmd->add_option("--timeout", run.timeoutSeconds, "seconds a kernel may run before the runner is killed (default 120)")
            ->check(CLI::Range(0.001, 1e6));

        PlanCmdOptions plan;
        auto* planCmd = app.add_subcommand(
            "plan", "Make a fusion plan (Hidet's prologue/epilogue rules, FusePlanner's DW/PW conv pairs) and print its groups");
        planCmd->add_option("MODEL", plan.modelPath, "ONNX model (.onnx) or DSL program (.tsr)")->required();
        planCmd->add_option("--planner", plan.planner, "none, hidet or fuseplanner (default: a program's own fuse statements if it has any, else fuseplanner)")
            ->check(CLI::IsMember({"none", "hidet", "fuseplanner"}));
        planCmd->add_option("--target", plan.target, "cpu (default) or cuda: picks the default --hw, as in run")
            ->check(CLI::IsMember({"cpu", "cuda"}));
        planCmd->add_option("--hw", plan.hw,
                            "hardware profile: host (this CPU; the default for --target cpu), h200 (the default for cuda), h100, a100, rtx-a4000, gtx-1660, jetson-orin or a JSON file");
        planCmd->add_flag("--json", plan.json, "print one JSON object (groups with kind, ops, predicted_bytes_saved ...)");
        planCmd->add_flag("--why-not", plan.whyNot, "also say, for every edge between two groups, why its ends are not one kernel");
        planCmd->add_option("-o,--output", plan.output, "also write the plan to FILE (for run --plan FILE)");
        planCmd->add_option("--check", plan.check, "check this plan file against the model instead of planning (exit 3 when a rule is broken)");
        planCmd->add_option("--input", plan.inputs, "NAME=FILE.npy: specialise shapes to this input");

        CompileCmdOptions compile;
        compile.threads = cores;
        auto* compileCmd = app.add_subcommand("compile", "Generate the code of every kernel and print it");
        compileCmd->add_option("MODEL", compile.modelPath, "ONNX model (.onnx) or DSL program (.tsr)")->required();
        compileCmd->add_option("--target", compile.target, "cpu (default) or cuda");
        compileCmd->add_option("--emit", compile.emit,
                               "cpu: cpp (generated C++ module, default) or ir (kernel IR); cuda: cuda (CUDA C, default), ptx, cubin, sass or ir");
        compileCmd->add_option("--arch", compile.arch, "cuda: NVRTC architecture, sm_XX (PTX + CUBIN) or compute_XX (PTX); default sm_90");
        compileCmd->add_option("--output-dir", compile.outputDir, "cuda: write one file per kernel into DIR");
        compileCmd->add_option("--input", compile.inputs, "NAME=FILE.npy: specialise shapes to this input");
        compileCmd->add_option("--threads", compile.threads, "workers the default schedules aim for (default: the usable cores, " + coresText + ")")
            ->check(CLI::Range(1, 1024));
        compileCmd->add_flag("--fallback-reference", compile.fallbackReference, "leave ops without a code generator to the reference interpreter");
        compileCmd->add_option("--plan", compile.fusion.plan, "fusion plan: none, hidet, fuseplanner or a plan file");
        compileCmd->add_option("--hw", compile.fusion.hw, "hardware profile for the planner (default: host for cpu, h200 for cuda)");
        compileCmd->add_option("--schedule", compile.fusion.schedules,
                               "NODE=GRID[;BLOCK]: compile NODE with these task mappings (repeatable)");

        ConformanceCmdOptions conf;
        auto* confCmd = app.add_subcommand("conformance", "Run ONNX backend node tests through Tessera's compiler and print passed/failed/skipped per op");
        confCmd->add_option("DIR", conf.dir, "node test root (e.g. /usr/share/libonnx-testdata/data/node) or one test folder")->required();
        confCmd->add_option("--ops", conf.ops, "only these ops (comma separated)");
        confCmd->add_flag("--claimed", conf.claimedOnly, "only ops with a code generator");
        confCmd->add_flag("--strict", conf.strict, "exit 3 when a case of a claimed op fails");
        confCmd->add_flag("--verbose", conf.verbose, "one line per case");
        confCmd->add_flag("--json", conf.json, "print one JSON object");
        confCmd->add_option("--cxx-flags", conf.cxxFlags, "host compiler flags (default \"-O1 -fopenmp -shared -fPIC\")");

        ReportCmdOptions report;
        report.threads = cores;
        auto* reportCmd = app.add_subcommand(
            "report", "Run a model and place every kernel on a roofline: per-kernel table (AI, GFLOP/s, bound, binding roof) and the chart as PNG/SVG/PDF (headless)");
        reportCmd->add_option("MODEL", report.modelPath, "ONNX model (.onnx) or DSL program (.tsr)")->required();
        reportCmd->add_option("--target", report.target, "cpu (default), cuda or cuda:N");
        auto* reportRoofline =
            reportCmd->add_option("--roofline", report.roofline, "write the roofline chart to FILE (.png, .svg or .pdf)");
        reportCmd->add_option("--mode", report.mode,
                              "arithmetic intensity: carm (all bytes issued, default), dram (compulsory bytes) or hierarchical (per memory level)");
        reportCmd->add_option("--profile", report.profile, "machine profile JSON (default: the one saved for this machine by `roofline measure --save`)");
        reportCmd->add_flag("--json", report.json, "print one JSON object");
        reportCmd->add_option("--input", report.inputs, "NAME=FILE.npy (repeatable); missing inputs are filled from a fixed seed");
        reportCmd->add_option("--plan", report.plan, "fusion plan: none, hidet, fuseplanner or a plan file (dots coloured by group)");
        reportCmd->add_option("--hw", report.hw, "hardware profile for the planner (default: host for cpu, h200 for cuda)");
        reportCmd->add_option("--threads", report.threads, "OpenMP threads (default: the usable cores, " + coresText + ")")->check(CLI::Range(1, 1024));
        reportCmd->add_option("--reps", report.reps, "timed repetitions per kernel (default: until 0.1 s, at least 3)")
            ->check(CLI::Range(1, 1000000));
        reportCmd->add_flag("--fallback-reference", report.fallbackReference, "run ops without a code generator in the reference interpreter");
        reportCmd->add_option("--width", report.width, "chart width in pixels (default 1200)")->check(CLI::Range(200, 10000));
        reportCmd->add_option("--height", report.height, "chart height in pixels (default 750)")->check(CLI::Range(150, 10000));

        RooflineMeasureOptions roofline;
        auto* roofCmd = app.add_subcommand("roofline", "Roofline tools: measure this machine's bandwidth and compute roofs");
        roofCmd->require_subcommand(1);
        auto* roofMeasure = roofCmd->add_subcommand(
            "measure", "Run the micro-benchmarks (FMA/add/mul peaks, load/copy/triad bandwidth per cache level) and print the roofs");
        roofMeasure->add_option("--target", roofline.target, "cpu (default) or cuda (NVRTC micro-kernels in the runner)");
        roofMeasure->add_option("--device", roofline.device, "CUDA device ordinal (--target cuda; default 0)")
            ->check(CLI::Range(0, 1024));
        roofMeasure->add_option("--arch", roofline.arch, "NVRTC architecture, e.g. sm_90 (--target cuda; default: the device's)");
        roofMeasure->add_flag("--quick", roofline.quick, "fewer thread counts and shorter measurements (under 30 s)");
        roofMeasure->add_flag("--json", roofline.json, "print one JSON object {\"roofs\": [...], ...}");
        roofMeasure->add_option("--threads", roofline.threads, "measure 1..N threads (default: every CPU)")
            ->check(CLI::Range(1, 1024));
        roofMeasure->add_flag("--sweep", roofline.sweep, "also sweep working sets in powers of two");
        roofMeasure->add_option("--min-seconds", roofline.minSeconds, "seconds per measurement (default 0.15; --quick 0.05)")
            ->check(CLI::Range(0.001, 60.0));
        roofMeasure->add_option("--isa", roofline.isa, "scalar, avx2 or avx512 (default: the widest this CPU has)");
        roofMeasure->add_option("--cxx", roofline.cxx, "host C++ compiler (default $TESSERA_CXX or c++)");
        roofMeasure->add_flag("--save", roofline.save, "also save the profile in the profile folder");
        roofMeasure->add_flag("--force", roofline.force, "with --save: save even when the timings look disturbed");

        // `project new|show|run`: the .tessera project file (app/cli/project_cmd.h).
        ProjectNewCmdOptions projNew;
        ProjectShowCmdOptions projShow;
        ProjectRunCmdOptions projRun;
        auto* projCmd = app.add_subcommand("project", "Projects (.tessera): a model or program with its plan, target, options and measurement history");
        projCmd->require_subcommand(1);
        projCmd->footer("`tessera-cli project FILE.tessera [--json] [--save] [--reps N]` is short for `project run FILE.tessera ...`.");
        auto* projNewCmd = projCmd->add_subcommand("new", "Write a project for a model or program");
        projNewCmd->add_option("MODEL", projNew.modelPath, "ONNX model (.onnx) or DSL program (.tsr)")->required();
        projNewCmd->add_option("-o,--output", projNew.output, "the project file to write (FILE.tessera)")->required();
        projNewCmd->add_option("--plan", projNew.plan, "none, hidet, fuseplanner or a plan file (stored in the project)");
        projNewCmd->add_option("--hw", projNew.hw, "hardware profile: host, h200, h100, a100, rtx-a4000, gtx-1660, jetson-orin or a JSON file (embedded)");
        projNewCmd->add_option("--target", projNew.target, "cpu (default), cuda or cuda:N");
        projNewCmd->add_flag("--force", projNew.force, "replace an existing project file");
        auto* projShowCmd = projCmd->add_subcommand("show", "Print a project: source, plan, target, options and run history");
        projShowCmd->add_option("FILE", projShow.file, "project file (.tessera)")->required();
        projShowCmd->add_flag("--json", projShow.json, "print the project as JSON");
        auto* projRunCmd = projCmd->add_subcommand("run", "Run a project and compare each kernel with its last recorded run");
        projRunCmd->add_option("FILE", projRun.file, "project file (.tessera)")->required();
        projRunCmd->add_flag("--json", projRun.json, "print one JSON object");
        projRunCmd->add_flag("--save", projRun.save, "append this run to the project's history");
        projRunCmd->add_option("--reps", projRun.reps, "timed repetitions per kernel (default: until 0.1 s, at least 3)")
            ->check(CLI::Range(1, 100000));

        try {
            // `project FILE.tessera ...` reproduces the project's measurements: `project run FILE ...`.
            std::vector<std::string> args(argv + 1, argv + argc);
            if (args.size() >= 2 && args[0] == "project" && args[1].size() > 8 &&
                args[1].compare(args[1].size() - 8, 8, ".tessera") == 0)
                args.insert(args.begin() + 1, "run");
            std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
            app.parse(args);
        } catch (const CLI::Success& e) {
            return app.exit(e);
        } catch (const CLI::ParseError& e) {
            app.exit(e);
            return kExitBadInput;
        }
        if (cmd->parsed()) {
            inspect.format = asJson ? InspectFormat::Json : asDot ? InspectFormat::Dot : asIr ? InspectFormat::Ir
                                                                                             : InspectFormat::Text;
            return runInspect(inspect, std::cout, std::cerr);
        }
        if (mapCmd->parsed()) return runMapping(mapping, std::cout, std::cerr);
        if (reportCmd->parsed() && reportRoofline->count() > 0 && report.roofline.empty()) {
            std::cerr << "error: --roofline needs a file name ending in .png, .svg or .pdf\n";
            return kExitBadInput;
        }
        if (exportCmd->parsed()) return runExportDsl(exportDsl, std::cout, std::cerr);
        if (checkCmd->parsed()) return runCheck(check, std::cout, std::cerr);
        if (confCmd->parsed()) return runConformanceCommand(conf, std::cout, std::cerr);
        if (runCmd->parsed()) return runRunCommand(run, std::cout, std::cerr);
        if (planCmd->parsed()) return runPlanCommand(plan, std::cout, std::cerr);
        if (compileCmd->parsed()) return runCompileCommand(compile, std::cout, std::cerr);
        if (reportCmd->parsed()) {
#ifdef TESSERA_CLI_HAVE_REPORT
            return runReportCommand(report, std::cout, std::cerr);
#else
            std::cerr << "tessera-cli report: " << kReportNeedsGui << "\n";
            return kExitBadInput;
#endif
        }
        if (roofMeasure->parsed()) return runRooflineMeasure(roofline, std::cout, std::cerr);
        if (projNewCmd->parsed()) return runProjectNew(projNew, std::cout, std::cerr);
        if (projShowCmd->parsed()) return runProjectShow(projShow, std::cout, std::cerr);
        if (projRunCmd->parsed()) return runProjectRun(projRun, std::cout, std::cerr);
        std::cerr << app.help();
        return kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::cerr << "tessera-cli: error: out of memory (the model's tensors do not fit in this machine's memory)\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        std::cerr << "tessera-cli: internal error: " << e.what() << "\n";
        return kExitInternal;
    } catch (...) {
        std::cerr << "tessera-cli: internal error\n";
        return kExitInternal;
    }
}
