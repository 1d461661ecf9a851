// Host JIT compile units (compileHostModule): a split module computes what one unit computes,
// an edit recompiles one unit, reduced-opt units use the lower optimisation flag, errors point
// into the whole module; compiler children die with a cancel and with a killed parent.

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/host_jit.h"
#include "core/runtime/subprocess.h"
#include "runtime_test_util.h"

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A module laid out as the C++ generator lays one out: a shared prelude (an include and a static
/// inline helper), a module-level function, then `n` kernels `k<i>(x, y)`: y[j] = twice(x[j]) + i
/// over 16 floats. Kernel i is marked reducedOpt when `reduced(i)`.
struct TestModule {
    std::string source;
    ModuleLayout layout;
    std::vector<int> kernelFirstLine;  ///< 1-based line of each kernel's first line
};

std::string kernelText(int i, const std::string& expression) {
    return "// kernel k" + std::to_string(i) + "\n" +
           "extern \"C\" void k" + std::to_string(i) + "(void* const* args) {\n" +
           "    const float* x = static_cast<const float*>(args[0]);\n" +
           "    float* y = static_cast<float*>(args[1]);\n" +
           "    for (int j = 0; j < 16; ++j) y[j] = " + expression + ";\n" +
           "}\n\n";
}

std::string defaultExpression(int i) { return "twice(x[j]) + " + std::to_string(i) + ".0f"; }

TestModule makeModule(int n, const std::function<std::string(int)>& expression = defaultExpression,
                      const std::function<bool(int)>& reduced = [](int) { return false; }) {
    TestModule m;
    m.source = "#include <cstdint>\n[[maybe_unused]] static inline float twice(float v) { return 2.0f * v; }\n\n";
    m.layout.sharedPreludeBytes = m.source.size();
    m.source += "extern \"C\" int module_kernels(void) { return " + std::to_string(n) + "; }\n\n";
    for (int i = 0; i < n; ++i) {
        m.kernelFirstLine.push_back(static_cast<int>(std::count(m.source.begin(), m.source.end(), '\n')) + 1);
        const std::string text = kernelText(i, expression(i));
        m.layout.pieces.push_back({m.source.size(), text.size(), "k" + std::to_string(i), reduced(i)});
        m.source += text;
    }
    return m;
}

HostCompilerOptions quickOptions(const test::TempDir& dir) {
    HostCompilerOptions o;
    o.cacheDir = dir.str();
    o.flags = {"-O1", "-shared", "-fPIC"};
    o.jobs = 2;
    o.unitBytes = 600;  // about 3 kernels of ~200 bytes per unit
    return o;
}

/// Runs kernel `k<i>` of a library on x = 0, 1, ..., 15 and returns y.
std::vector<float> runKernel(void* handle, int i) {
    using Fn = void (*)(void* const*);
    auto fn = reinterpret_cast<Fn>(::dlsym(handle, ("k" + std::to_string(i)).c_str()));
    if (!fn) return {};
    std::vector<float> x(16), y(16, -1.0f);
    for (int j = 0; j < 16; ++j) x[static_cast<std::size_t>(j)] = static_cast<float>(j);
    void* args[] = {x.data(), y.data()};
    fn(args);
    return y;
}

TEST(HostJitUnits, SplitModuleComputesWhatOneUnitComputes) {
    test::TempDir dir;
    const TestModule m = makeModule(12);
    auto split = quickOptions(dir);
    auto whole = split;
    whole.unitBytes = 1 << 20;  // more than the module: one unit, compileHostLibrary's path

    auto one = compileHostModule(m.source, m.layout, whole);
    ASSERT_TRUE(one.ok()) << one.diagnostics().formatAll();
    EXPECT_EQ(one->units, 1);
    EXPECT_FALSE(one->linked);
    auto direct = compileHostLibrary(m.source, whole);
    ASSERT_TRUE(direct.ok());
    EXPECT_TRUE(direct->cacheHit) << "one unit is exactly compileHostLibrary (same key)";
    EXPECT_EQ(direct->key, one->key);

    std::vector<std::pair<int, int>> progress;
    auto many = compileHostModule(m.source, m.layout, split, nullptr,
                                  [&](int done, int total) { progress.emplace_back(done, total); });
    ASSERT_TRUE(many.ok()) << many.diagnostics().formatAll();
    EXPECT_GE(many->units, 3);
    EXPECT_LE(many->units, 8);
    EXPECT_EQ(many->unitsCompiled, many->units);
    EXPECT_EQ(many->unitsCached, 0);
    EXPECT_TRUE(many->linked);
    EXPECT_FALSE(many->cacheHit);
    EXPECT_NE(many->key, one->key);
    EXPECT_TRUE(fs::is_regular_file(many->sourcePath));  // the whole module, for diagnostics
    ASSERT_FALSE(progress.empty());
    EXPECT_EQ(progress.front(), std::make_pair(0, many->units));
    EXPECT_EQ(progress.back(), std::make_pair(many->units, many->units));
    for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GE(progress[i].first, progress[i - 1].first);

    void* a = ::dlopen(one->path.c_str(), RTLD_NOW | RTLD_LOCAL);
    void* b = ::dlopen(many->path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_TRUE(a && b) << ::dlerror();
    for (int i = 0; i < 12; ++i) {
        const std::vector<float> ya = runKernel(a, i), yb = runKernel(b, i);
        ASSERT_EQ(yb.size(), 16u) << "k" << i << " missing from the split library";
        EXPECT_EQ(ya, yb) << "k" << i;
        EXPECT_EQ(yb[5], 2.0f * 5.0f + static_cast<float>(i));
    }
    // The module-level function is in exactly one unit (twice would not link, none would not load).
    using Count = int (*)();
    auto count = reinterpret_cast<Count>(::dlsym(b, "module_kernels"));
    ASSERT_NE(count, nullptr);
    EXPECT_EQ(count(), 12);
    ::dlclose(a);
    ::dlclose(b);

    // Files: per unit a source and an object; the library and the whole module's copy.
    int objects = 0;
    for (const auto& e : fs::directory_iterator(dir.path())) {
        EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
        objects += e.path().extension() == ".o";
    }
    EXPECT_EQ(objects, many->units);
    auto removed = clearKernelCache(dir.str());
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, 2 * many->units + 2 + 2);  // units' .cpp/.o, split .so/.cpp, one-unit .so/.cpp
}

TEST(HostJitUnits, EditingOneKernelRecompilesOneUnit) {
    test::TempDir dir;
    const auto opts = quickOptions(dir);
    const TestModule before = makeModule(12);
    auto first = compileHostModule(before.source, before.layout, opts);
    ASSERT_TRUE(first.ok()) << first.diagnostics().formatAll();
    ASSERT_GE(first->units, 3);
    EXPECT_EQ(first->unitsCompiled, first->units);

    // The same module again: the library itself is a hit, no compiler runs.
    auto again = compileHostModule(before.source, before.layout, opts);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->cacheHit);
    EXPECT_EQ(again->unitsCompiled, 0);
    EXPECT_EQ(again->path, first->path);

    // Kernel 7 adds 9 instead of 7 (same size): one unit compiles, the others come from the cache.
    const TestModule after = makeModule(12, [](int i) { return i == 7 ? std::string("twice(x[j]) + 9.0f") : defaultExpression(i); });
    ASSERT_EQ(after.source.size(), before.source.size());
    auto edited = compileHostModule(after.source, after.layout, opts);
    ASSERT_TRUE(edited.ok()) << edited.diagnostics().formatAll();
    EXPECT_FALSE(edited->cacheHit);
    EXPECT_EQ(edited->units, first->units);
    EXPECT_EQ(edited->unitsCompiled, 1);
    EXPECT_EQ(edited->unitsCached, first->units - 1);
    EXPECT_TRUE(edited->linked);
    EXPECT_NE(edited->key, first->key);

    void* h = ::dlopen(edited->path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << ::dlerror();
    EXPECT_EQ(runKernel(h, 7)[3], 6.0f + 9.0f);
    EXPECT_EQ(runKernel(h, 6)[3], 6.0f + 6.0f);
    EXPECT_EQ(runKernel(h, 8)[3], 6.0f + 8.0f);
    ::dlclose(h);
}

/// Writes an executable shell script.
std::string writeScript(const test::TempDir& dir, const std::string& name, const std::string& body) {
    const std::string path = (dir.path() / name).string();
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return path;
}

std::vector<std::string> readLines(const std::string& path) {
    std::ifstream f(path);
    std::vector<std::string> lines;
    for (std::string l; std::getline(f, l);) lines.push_back(l);
    return lines;
}

TEST(HostJitUnits, ReducedOptUnitsCompileWithTheLowerOptimisationFlag) {
    test::TempDir dir;
    const std::string log = (dir.path() / "commands.log").string();
    auto opts = quickOptions(dir);
    opts.compiler = writeScript(dir, "logging-cc", "echo \"$@\" >> '" + log + "'\nexec " + defaultHostCompiler() + " \"$@\"\n");
    opts.flags = {"-O3", "-shared", "-fPIC"};
    opts.cacheDir = (dir.path() / "cache").string();
    ASSERT_EQ(opts.reducedOptFlag, "-Og");
    // Kernels 0-5 marked reducedOpt, 6-11 not: the two kinds never share a unit.
    const TestModule m = makeModule(12, defaultExpression, [](int i) { return i < 6; });
    auto lib = compileHostModule(m.source, m.layout, opts);
    ASSERT_TRUE(lib.ok()) << lib.diagnostics().formatAll();
    ASSERT_GE(lib->unitsReducedOpt, 1);
    ASSERT_LT(lib->unitsReducedOpt, lib->units);
    int atReduced = 0, atO3 = 0, links = 0;
    for (const std::string& line : readLines(log)) {
        if (line == "--version") continue;
        const bool compile = line.find(" -c ") != std::string::npos;
        if (!compile) {
            ++links;
            EXPECT_EQ(line.rfind("-O3 -shared -fPIC -fdiagnostics-color=never -o ", 0), 0u) << line;
            continue;
        }
        EXPECT_EQ(line.find("-shared"), std::string::npos) << "objects are not libraries: " << line;
        atReduced += line.rfind(opts.reducedOptFlag + " -fPIC ", 0) == 0;
        atO3 += line.rfind("-O3 -fPIC ", 0) == 0;
    }
    EXPECT_EQ(links, 1);
    EXPECT_EQ(atReduced, lib->unitsReducedOpt);
    EXPECT_EQ(atO3, lib->units - lib->unitsReducedOpt);
    void* h = ::dlopen(lib->path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << ::dlerror();
    for (int i = 0; i < 12; ++i) EXPECT_EQ(runKernel(h, i)[1], 2.0f + static_cast<float>(i)) << "k" << i;
    ::dlclose(h);
}

TEST(HostJitUnits, ErrorsPointIntoTheWholeModule) {
    test::TempDir dir;
    auto opts = quickOptions(dir);
    opts.sourceName = "model.cpp";
    const TestModule m = makeModule(12, [](int i) { return i == 9 ? std::string("undeclared_thing") : defaultExpression(i); });
    auto r = compileHostModule(m.source, m.layout, opts);
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_GE(items.size(), 2u);
    EXPECT_EQ(items[0].file, "model.cpp");
    EXPECT_EQ(items[0].begin.line, m.kernelFirstLine[9] + 4);  // the loop line of k9
    EXPECT_NE(items[0].message.find("undeclared_thing"), std::string::npos) << items[0].message;
    ASSERT_EQ(items[0].notes.size(), 1u);
    EXPECT_EQ(items[0].notes[0], "line " + std::to_string(m.kernelFirstLine[9] + 4) +
                                     ":     for (int j = 0; j < 16; ++j) y[j] = undeclared_thing;");
    EXPECT_EQ(items.back().message, "compiling the kernel module failed (" + opts.compiler + " exited with status 1)");
    for (const auto& e : fs::directory_iterator(dir.path())) EXPECT_NE(e.path().extension(), ".so") << e.path();
}

TEST(HostJitUnits, ALayoutThatBreaksItsRulesIsRefused) {
    test::TempDir dir;
    TestModule m = makeModule(4);
    m.layout.pieces[2].offset -= 1;  // overlaps piece 1 and does not start a line
    auto r = compileHostModule(m.source, m.layout, quickOptions(dir));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().items()[0].message.rfind("invalid module layout: piece 2 ('k2')", 0), 0u)
        << r.diagnostics().items()[0].message;
}

// ---- child processes ----

/// The state letter of /proc/<pid>/stat, 0 when the process is gone; its process group in `pgid`.
char processState(pid_t pid, pid_t* pgid = nullptr) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::size_t paren = text.rfind(')');
    if (paren == std::string::npos || paren + 2 >= text.size()) return 0;
    if (pgid) {
        std::istringstream rest(text.substr(paren + 2));
        char state;
        long ppid = 0, group = 0;
        rest >> state >> ppid >> group;
        *pgid = static_cast<pid_t>(group);
    }
    return text[paren + 2];
}

/// Processes of group `pgid` that still run (zombies waiting for init do not count).
std::vector<pid_t> liveMembers(pid_t pgid) {
    std::vector<pid_t> out;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const pid_t pid = static_cast<pid_t>(std::stol(name));
        pid_t group = 0;
        const char state = processState(pid, &group);
        if (state != 0 && state != 'Z' && state != 'X' && group == pgid) out.push_back(pid);
    }
    return out;
}

/// Waits up to `seconds` for every group to have no live member; kills what is left (a failing
/// test must not leave sleepers behind) and returns the survivors it found.
std::vector<pid_t> survivorsAfter(const std::set<pid_t>& groups, double seconds) {
    const auto t0 = Clock::now();
    std::vector<pid_t> left;
    for (;;) {
        left.clear();
        for (pid_t g : groups)
            for (pid_t p : liveMembers(g)) left.push_back(p);
        if (left.empty() || std::chrono::duration<double>(Clock::now() - t0).count() > seconds) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (pid_t g : groups) ::kill(-g, SIGKILL);
    return left;
}

/// A compiler that answers --version, then writes "<its pid> <its child's pid>" to `pids` and
/// waits for a long sleep (its own child, like cc1plus under the c++ driver).
std::string sleepingCompiler(const test::TempDir& dir, const std::string& pids) {
    return writeScript(dir, "sleepy-cc",
                       "if [ \"$1\" = --version ]; then echo 'sleepy-cc 1.0'; exit 0; fi\n"
                       "sleep 30 &\n"
                       "echo \"$$ $!\" >> '" + pids + "'\n"
                       "wait\n");
}

/// Waits until `pids` holds `n` lines; returns the process groups of the processes named there.
std::set<pid_t> groupsOnceStarted(const std::string& pids, std::size_t n, double seconds = 10) {
    std::set<pid_t> groups;
    const auto t0 = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
        const auto lines = readLines(pids);
        if (lines.size() >= n) {
            for (const auto& l : lines) {
                std::istringstream in(l);
                pid_t script = 0, sleeper = 0;
                in >> script >> sleeper;
                for (pid_t p : {script, sleeper}) {
                    pid_t g = 0;
                    if (processState(p, &g) != 0 && g > 1) groups.insert(g);
                }
            }
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return groups;
}

TEST(HostJitUnits, CancelKillsEveryCompilerAndItsChildren) {
    test::TempDir dir;
    const std::string pids = (dir.path() / "pids").string();
    auto opts = quickOptions(dir);
    opts.compiler = sleepingCompiler(dir, pids);
    opts.cacheDir = (dir.path() / "cache").string();
    const TestModule m = makeModule(12);
    support::CancelToken cancel;
    std::set<pid_t> groups;
    std::thread canceller([&groups, &pids, cancel]() mutable {
        groups = groupsOnceStarted(pids, 2);  // both workers' compilers are sleeping
        cancel.cancel();
    });
    const auto t0 = Clock::now();
    auto r = compileHostModule(m.source, m.layout, opts, &cancel);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    canceller.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().items()[0].message, "compilation cancelled");
    EXPECT_LT(seconds, 8.0);
    ASSERT_EQ(groups.size(), 2u) << "one process group per compiler";
    EXPECT_EQ(readLines(pids).size(), 2u) << "no unit starts after the cancel";
    const auto left = survivorsAfter(groups, 2.0);
    EXPECT_TRUE(left.empty()) << left.size() << " processes of the cancelled compilers still run";
}

TEST(HostJitUnits, AKilledParentLeavesNoCompilerRunning) {
    test::TempDir dir;
    const std::string pids = (dir.path() / "pids").string();
    auto opts = quickOptions(dir);
    opts.compiler = sleepingCompiler(dir, pids);
    opts.cacheDir = (dir.path() / "cache").string();
    const TestModule m = makeModule(12);
    const pid_t helper = ::fork();
    ASSERT_GE(helper, 0);
    if (helper == 0) {
        // The helper plays tessera-cli: it compiles until it is killed.
        (void)compileHostModule(m.source, m.layout, opts);
        ::_exit(0);
    }
    const std::set<pid_t> groups = groupsOnceStarted(pids, 2);
    ::kill(helper, SIGKILL);
    ::waitpid(helper, nullptr, 0);
    ASSERT_EQ(groups.size(), 2u) << "the helper's compilers never started";
    const auto left = survivorsAfter(groups, 2.0);
    EXPECT_TRUE(left.empty()) << left.size() << " compiler processes outlived their killed parent";
}

}  // namespace
}  // namespace tessera::runtime
