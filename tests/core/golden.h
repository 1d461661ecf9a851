#pragma once
// Golden-file comparison for printer and code-generator tests.
// A golden file holds the exact expected text under tests/golden/<relative path>.
// To regenerate after an intended change: TESSERA_UPDATE_GOLDEN=1 ./tests/tessera_core_tests,
// then review the diff (git diff tests/golden) before committing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace tessera::test {

/// The first line where two texts differ, with both versions (cut at 300 characters).
inline std::string firstDifferingLine(const std::string& expected, const std::string& actual) {
    std::istringstream a(expected), b(actual);
    std::string la, lb;
    for (int line = 1;; ++line) {
        const bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
        if (ea && eb) return "texts are equal";
        if (ea != eb || la != lb)
            return "first difference at line " + std::to_string(line) + ":\n  golden: " +
                   (ea ? "<end>" : la.substr(0, 300)) + "\n  actual: " + (eb ? "<end>" : lb.substr(0, 300));
    }
}

/// Compares `actual` with tests/golden/<relative>, or rewrites that file when
/// TESSERA_UPDATE_GOLDEN=1.
inline void checkGolden(const std::string& relative, const std::string& actual) {
    const std::string path = std::string(TESSERA_GOLDEN) + "/" + relative;
    const char* update = std::getenv("TESSERA_UPDATE_GOLDEN");
    if (update && std::string(update) == "1") {
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        std::ofstream out(path, std::ios::binary);
        out << actual;
        ASSERT_TRUE(out.good()) << "cannot write " << path;
        std::cout << "updated golden file " << path << "\n";
        return;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with TESSERA_UPDATE_GOLDEN=1 to create it)";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_TRUE(ss.str() == actual) << "golden file " << path << " differs (TESSERA_UPDATE_GOLDEN=1 rewrites it); "
                                    << firstDifferingLine(ss.str(), actual);
}

}  // namespace tessera::test
