// Host JIT: compile, cache hit, diagnostics mapped to the generated source, missing compiler,
// cancellation, cache clearing.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/runtime/host_jit.h"
#include "runtime_test_util.h"

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;

const char* const kSmallKernel = R"(#include <cstdint>
extern "C" void scale(void* const* args) {
    float* x = static_cast<float*>(args[0]);
    for (int i = 0; i < 16; ++i) x[i] *= 2.0f;
}
)";

HostCompilerOptions optionsIn(const test::TempDir& dir) {
    HostCompilerOptions o;
    o.cacheDir = dir.str();
    o.flags = {"-O1", "-shared", "-fPIC"};  // quick to compile; the defaults are covered in test_runner
    return o;
}

TEST(HostJit, CompilesThenHitsTheCache) {
    test::TempDir dir;
    const auto opts = optionsIn(dir);
    auto first = compileHostLibrary(kSmallKernel, opts);
    ASSERT_TRUE(first.ok()) << first.diagnostics().items().front().format();
    EXPECT_FALSE(first->cacheHit);
    EXPECT_GT(first->compileSeconds, 0.0);
    EXPECT_EQ(first->key.size(), 32u);
    EXPECT_EQ(first->path, (dir.path() / (first->key + ".so")).string());
    EXPECT_TRUE(fs::is_regular_file(first->path));
    EXPECT_TRUE(fs::is_regular_file(first->sourcePath));
    EXPECT_FALSE(first->compilerVersion.empty());

    const auto t0 = std::chrono::steady_clock::now();
    auto second = compileHostLibrary(kSmallKernel, opts);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(second.ok());
    EXPECT_TRUE(second->cacheHit);
    EXPECT_EQ(second->path, first->path);
    EXPECT_EQ(second->compileSeconds, 0.0);
    EXPECT_LT(seconds, 0.005) << "a cache hit is a stat, not a compile";

    // Flags are part of the key; no stray temporary files are left behind.
    auto o2 = opts;
    o2.flags.push_back("-DVARIANT=1");
    auto third = compileHostLibrary(kSmallKernel, o2);
    ASSERT_TRUE(third.ok());
    EXPECT_FALSE(third->cacheHit);
    EXPECT_NE(third->key, first->key);
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir.path())) {
        EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
        ++files;
    }
    EXPECT_EQ(files, 4);  // two .so and two .cpp

    // clearKernelCache removes exactly the cache's files.
    std::ofstream(dir.path() / "notes.txt") << "keep me";
    auto removed = clearKernelCache(dir.str());
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, 4);
    EXPECT_TRUE(fs::exists(dir.path() / "notes.txt"));
    EXPECT_FALSE(fs::exists(first->path));
    auto none = clearKernelCache((dir.path() / "absent").string());
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(*none, 0);
}

TEST(HostJit, CompileErrorsPointIntoTheGeneratedSource) {
    test::TempDir dir;
    auto opts = optionsIn(dir);
    opts.sourceName = "model.cpp";
    const std::string source =
        "extern \"C\" void k(void* const* args) {\n"   // 1
        "    float* x = static_cast<float*>(args[0]);\n"  // 2
        "    x[0] = 1.0f;\n"                            // 3
        "    x[1] = undeclared_thing;\n"                // 4
        "    x[2] = 3.0f\n"                             // 5: missing ';'
        "}\n";                                          // 6
    auto r = compileHostLibrary(source, opts);
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_GE(items.size(), 2u);
    EXPECT_EQ(items[0].severity, support::Severity::Error);
    EXPECT_EQ(items[0].file, "model.cpp");
    EXPECT_EQ(items[0].begin.line, 4);
    EXPECT_EQ(items[0].begin.column, 12);
    EXPECT_NE(items[0].message.find("undeclared_thing"), std::string::npos) << items[0].message;
    ASSERT_EQ(items[0].notes.size(), 1u);
    EXPECT_EQ(items[0].notes[0], "line 4:     x[1] = undeclared_thing;");
    // The missing ';' is reported at the end of line 5 (GCC) or the start of line 6 (Clang).
    EXPECT_TRUE(items[1].begin.line == 5 || items[1].begin.line == 6) << items[1].format();
    EXPECT_NE(items[1].message.find("';'"), std::string::npos) << items[1].message;
    for (const auto& e : fs::directory_iterator(dir.path()))
        EXPECT_NE(e.path().extension(), ".so") << "no library is cached for a failed compile";
    // After the positioned errors: the summary with the command, without the raw output.
    const auto& summary = items.back();
    EXPECT_EQ(summary.message, "compiling the kernel module failed (" + opts.compiler + " exited with status 1)");
    ASSERT_EQ(summary.notes.size(), 1u);
    EXPECT_EQ(summary.notes[0].rfind("command: " + opts.compiler + " -O1 -shared -fPIC -fdiagnostics-color=never -o ", 0), 0u)
        << summary.notes[0];
}

/// The library name in a "command: ..." note is a temporary one; this checks the rest exactly.
void expectCommandNote(const std::string& note, const std::string& compilerAndFlags, const test::TempDir& dir) {
    const std::string head = "command: " + compilerAndFlags + " -fdiagnostics-color=never -o " + dir.str() + "/";
    ASSERT_EQ(note.rfind(head, 0), 0u) << note;
    const std::string rest = note.substr(head.size());  // <key>.so.tmp-<pid>-<n> <dir>/<key>.cpp
    const std::string key = rest.substr(0, 32);
    EXPECT_EQ(rest.substr(32, 8), ".so.tmp-") << note;
    const std::string tail = " " + dir.str() + "/" + key + ".cpp";
    ASSERT_GE(rest.size(), tail.size());
    EXPECT_EQ(rest.substr(rest.size() - tail.size()), tail) << note;
}

bool isGcc(const std::string& compiler) {
    auto v = hostCompilerVersion(compiler);
    return v.ok() && v->find("clang") == std::string::npos;
}

TEST(HostJit, FailedLinkShowsTheCommandAndTheLinkerOutput) {
    test::TempDir dir;
    auto opts = optionsIn(dir);
    opts.flags = {"-O0"};  // no -shared: the linker wants a main()
    auto r = compileHostLibrary(kSmallKernel, opts);
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_GE(items.size(), 2u);
    EXPECT_EQ(items[0].severity, support::Severity::Error);
    EXPECT_EQ(items[0].message, "compiling the kernel module failed (" + opts.compiler + " exited with status 1)");
    ASSERT_GE(items[0].notes.size(), 2u);
    expectCommandNote(items[0].notes[0], opts.compiler + " -O0", dir);
    bool undefinedMain = false;
    for (std::size_t i = 1; i < items[0].notes.size(); ++i) {
        EXPECT_EQ(items[0].notes[i].rfind("compiler output: ", 0), 0u) << items[0].notes[i];
        if (items[0].notes[i].find("undefined reference to `main'") != std::string::npos) undefinedMain = true;
    }
    EXPECT_TRUE(undefinedMain) << "the linker's own message is quoted";
    if (isGcc(opts.compiler)) {
        ASSERT_EQ(items.size(), 2u);
        EXPECT_EQ(items[1].file, "collect2");
        EXPECT_EQ(items[1].message, "ld returned 1 exit status");
        for (const auto& n : items[0].notes) EXPECT_EQ(n.find("collect2"), std::string::npos) << "not quoted twice: " << n;
    }
    for (const auto& e : fs::directory_iterator(dir.path()))
        EXPECT_EQ(e.path().filename().string().find(".so"), std::string::npos) << e.path();
}

TEST(HostJit, UnknownWarningFlagIsReportedWithTheCommand) {
    test::TempDir dir;
    auto opts = optionsIn(dir);
    if (!isGcc(opts.compiler)) GTEST_SKIP() << "Clang only warns about unknown -W options";
    opts.flags.push_back("-Werror=bogus-flag");
    auto r = compileHostLibrary(kSmallKernel, opts);
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].message, "compiling the kernel module failed (" + opts.compiler + " exited with status 1)");
    ASSERT_EQ(items[0].notes.size(), 1u) << "the one output line is already the error below";
    expectCommandNote(items[0].notes[0], opts.compiler + " -O1 -shared -fPIC -Werror=bogus-flag", dir);
    EXPECT_EQ(items[1].severity, support::Severity::Error);
    EXPECT_EQ(items[1].file, "cc1plus");
    EXPECT_EQ(items[1].begin.line, 0);
    EXPECT_EQ(items[1].message, "'-Werror=bogus-flag': no option '-Wbogus-flag'");
}

TEST(HostJit, ErrorLinesAreCappedAtTwenty) {
    test::TempDir dir;
    auto opts = optionsIn(dir);
    opts.sourceName = "many.cpp";
    std::string source = "extern \"C\" void k(void* const* args) {\n    float* x = static_cast<float*>(args[0]);\n";
    for (int i = 0; i < 30; ++i) source += "    x[" + std::to_string(i) + "] = missing_" + std::to_string(i) + ";\n";
    source += "}\n";
    auto r = compileHostLibrary(source, opts);
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_EQ(items.size(), 21u);
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(items[static_cast<std::size_t>(i)].file, "many.cpp");
        EXPECT_EQ(items[static_cast<std::size_t>(i)].begin.line, i + 3);
        EXPECT_NE(items[static_cast<std::size_t>(i)].message.find("missing_" + std::to_string(i)), std::string::npos)
            << items[static_cast<std::size_t>(i)].message;
    }
    const auto& summary = items[20];
    EXPECT_EQ(summary.message, "compiling the kernel module failed (" + opts.compiler + " exited with status 1)");
    ASSERT_EQ(summary.notes.size(), 2u);
    EXPECT_EQ(summary.notes[1], "10 more error lines not shown");
}

TEST(HostJit, ACompilerThatWritesNothingIsNotOne) {
    test::TempDir dir;
    auto opts = optionsIn(dir);
    opts.compiler = "/bin/true";  // answers --version (GNU coreutils), exits 0, writes nothing
    if (!hostCompilerVersion(opts.compiler).ok()) GTEST_SKIP() << "/bin/true does not answer --version here";
    auto r = compileHostLibrary(kSmallKernel, opts);
    ASSERT_FALSE(r.ok());
    const auto& items = r.diagnostics().items();
    ASSERT_EQ(items.size(), 1u);
    EXPECT_EQ(items[0].message, "the compiler '/bin/true' exited 0 but wrote no library (is it a C++ compiler?)");
    ASSERT_EQ(items[0].notes.size(), 1u);
    expectCommandNote(items[0].notes[0], "/bin/true -O1 -shared -fPIC", dir);
    EXPECT_EQ(r.diagnostics().formatAll().find("Success"), std::string::npos);
    for (const auto& e : fs::directory_iterator(dir.path()))
        EXPECT_EQ(e.path().filename().string().find(".so"), std::string::npos) << e.path();
}

TEST(HostJit, MissingCompiler) {
    test::TempDir dir;
    auto opts = optionsIn(dir);
    opts.compiler = "definitely-not-a-compiler";
    auto r = compileHostLibrary(kSmallKernel, opts);
    ASSERT_FALSE(r.ok());
    ASSERT_EQ(r.diagnostics().items().size(), 1u);
    EXPECT_EQ(r.diagnostics().items()[0].message,
              "host compiler 'definitely-not-a-compiler' not found: install g++ or set TESSERA_CXX / --cxx");
}

TEST(HostJit, CancellationKillsTheCompiler) {
    test::TempDir dir;
    const auto opts = optionsIn(dir);
    ASSERT_TRUE(hostCompilerVersion(opts.compiler).ok());  // known before the clock starts
    // Constant evaluation that keeps the compiler busy for far longer than the test waits.
    const std::string slow =
        "constexpr unsigned long long spin() { unsigned long long s = 0;\n"
        "  for (unsigned long long i = 0; i < 4000000000ull; ++i) s += i ^ (s >> 3); return s; }\n"
        "constexpr unsigned long long kValue = spin();\n"
        "extern \"C\" unsigned long long value() { return kValue; }\n";
    support::CancelToken cancel;
    std::thread canceller([cancel]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        cancel.cancel();
    });
    auto o = opts;
    if (hostCompilerVersion(opts.compiler)->find("clang") != std::string::npos) {
        o.flags.push_back("-fconstexpr-steps=2147483647");
    } else {
        o.flags.push_back("-fconstexpr-ops-limit=100000000000");
        o.flags.push_back("-fconstexpr-loop-limit=2000000000");
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto r = compileHostLibrary(slow, o, &cancel);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    canceller.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.diagnostics().items()[0].message, "compilation cancelled");
    EXPECT_LT(seconds, 3.0);
    for (const auto& e : fs::directory_iterator(dir.path())) EXPECT_NE(e.path().extension(), ".so");
}

TEST(HostJit, DefaultCacheDirFollowsXdg) {
    const char* old = std::getenv("XDG_CACHE_HOME");
    const std::string saved = old ? old : "";
    ::setenv("XDG_CACHE_HOME", "/some/cache", 1);
    EXPECT_EQ(defaultKernelCacheDir(), "/some/cache/tessera/kernels");
    if (old)
        ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
    else
        ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace tessera::runtime
