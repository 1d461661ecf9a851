// Runs `tessera-cli run samples/dw_pw_block.onnx --check --json --reps 3 --output-dir DIR` and
// checks the JSON contract of issue 4 (kernels with name, ops, flops, bytes, time_s,
// max_rel_error; total_time_s) against hand counts, and the .npy written for the output.
// Usage: tessera_cli_run_json_check TESSERA_CLI SAMPLES_DIR OUT_DIR
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_check_util.h"

namespace {

using nlohmann::json;
using tessera::test::check;
using tessera::test::shellQuote;

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: tessera_cli_run_json_check TESSERA_CLI SAMPLES_DIR OUT_DIR\n";
        return 2;
    }
    const std::string cli = argv[1], samples = argv[2], outDir = argv[3];
    const std::string cmd = shellQuote(cli) + " run " + shellQuote(samples + "/dw_pw_block.onnx") + " --input input=" +
                            shellQuote(samples + "/dw_pw_block_input.npy") + " --check --json --reps 3 --output-dir " +
                            shellQuote(outDir);
    std::string text;
    check(tessera::test::runCapture(cmd, text) == 0, "exit status 0");
    json j;
    try {
        j = json::parse(text);
    } catch (const std::exception& e) {
        std::cerr << "FAIL: output is not one JSON object: " << e.what() << "\n" << text.substr(0, 400) << "\n";
        return 1;
    }
    check(j.at("kernels").size() == 3, "3 kernels");
    for (const auto& k : j["kernels"]) {
        for (const char* key : {"name", "ops", "flops", "bytes", "time_s", "max_rel_error", "passed"})
            check(k.contains(key), std::string("kernel has ") + key);
        check(k["time_s"].get<double>() > 0, "time_s > 0");
        check(k["reps"].get<int>() == 3, "3 reps");
        check(k["passed"].get<bool>(), "kernel passed");
        check(k["max_rel_error"].get<double>() < 1e-5, "error below 1e-5");
        check(k["bytes"].get<double>() >= k["compulsory_bytes"].get<double>(), "issued bytes >= compulsory bytes");
    }
    // dw_pw_block: input f32[1,32,56,56] -> depthwise 3x3 Conv (32 groups, pad 1, bias) -> Clip(0,6)
    // -> 1x1 Conv 32->16 with bias. Hand counts: with pad 1 a row of 56 outputs has 3*56-2 = 166
    // valid taps, so each channel has 166^2 multiply-adds; plus one bias add per output.
    const double hw = 56.0 * 56.0;
    const double dwFlops = 2.0 * 32 * 166 * 166 + 32 * hw;
    const double clipFlops = 2.0 * 32 * hw;  // max and min per element
    const double pwFlops = 2.0 * 16 * hw * 32 + 16 * hw;
    const auto& ks = j["kernels"];
    // The staged depthwise form computes whole 16-lane vectors and discards the padding lanes, so
    // the FLOPs it issues are at least the valid taps' and within 20 % of the op's useful count.
    const double dwUseful = 2.0 * 32 * hw * 9;  // op registry: every tap of the window, no bias
    check(ks[0]["useful_flops"].get<double>() == dwUseful, "depthwise useful FLOPs 2*32*56*56*9");
    check(ks[0]["flops"].get<double>() >= dwFlops && ks[0]["flops"].get<double>() <= 1.2 * dwUseful,
          "depthwise issued FLOPs between the valid taps' " + std::to_string(dwFlops) + " and 1.2x useful (got " +
              std::to_string(ks[0]["flops"].get<double>()) + ")");
    check(ks[2]["useful_flops"].get<double>() == 2.0 * 16 * hw * 32, "pointwise useful FLOPs 2*16*56*56*32");
    check(ks[1]["flops"].get<double>() == clipFlops, "Clip FLOPs " + std::to_string(clipFlops) + " (got " +
                                                         std::to_string(ks[1]["flops"].get<double>()) + ")");
    check(ks[2]["flops"].get<double>() == pwFlops, "pointwise FLOPs " + std::to_string(pwFlops) + " (got " +
                                                       std::to_string(ks[2]["flops"].get<double>()) + ")");
    check(ks[2]["compulsory_bytes"].get<double>() == 4.0 * (32 * hw + 16 * 32 + 16 + 16 * hw),
          "pointwise compulsory bytes: x, W, B, y once (got " + std::to_string(ks[2]["compulsory_bytes"].get<double>()) + ")");
    // Clip's constant bounds are folded into the code, so only x and y are parameters.
    check(ks[1]["compulsory_bytes"].get<double>() == 4.0 * 2 * 32 * hw, "Clip compulsory bytes: x and y once");
    check(ks[1]["bytes"].get<double>() == 4.0 * 2 * 32 * hw, "Clip issues each load and store once");
    check(j["total_time_s"].get<double>() > 0, "total_time_s > 0");
    check(j["all_passed"].get<bool>(), "all_passed");
    check(j["outputs"].size() == 1 && j["outputs"][0]["shape"] == json({1, 16, 56, 56}), "one output f32[1,16,56,56]");
    std::ifstream npy(outDir + "/output.npy", std::ios::binary);
    std::string head(6, '\0');
    npy.read(head.data(), 6);
    check(npy && head == "\x93NUMPY", "output.npy written with the NumPy magic");
    if (tessera::test::checkFailures()) std::cerr << text.substr(0, 2000) << "\n";
    return tessera::test::checkFailures() ? 1 : 0;
}
