// Runs `tessera-cli inspect SAMPLE --json` and compares its one JSON object with
// samples/expected.json (the onnx Python package's numbers).
// Usage: tessera_cli_json_check TESSERA_CLI SAMPLES_DIR SAMPLE_REL
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iostream>
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
        std::cerr << "usage: tessera_cli_json_check TESSERA_CLI SAMPLES_DIR SAMPLE_REL\n";
        return 2;
    }
    const std::string cli = argv[1], samples = argv[2], rel = argv[3];
    std::ifstream ein(samples + "/expected.json");
    if (!ein) {
        std::cerr << "cannot read " << samples << "/expected.json\n";
        return 1;
    }
    const json all = json::parse(ein);
    const json& e = all.at("models").at(rel);

    const std::string cmd = shellQuote(cli) + " inspect " + shellQuote(samples + "/" + rel) + " --json";
    std::string text;
    const int rc = tessera::test::runCapture(cmd, text);
    if (rc != 0) {
        std::cerr << cmd << " failed with status " << rc << "\n" << text << "\n";
        return 1;
    }
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        std::cerr << "stdout is not one JSON object:\n" << text << "\n";
        return 1;
    }
    for (const char* key : {"inputs", "outputs", "nodes", "op_histogram", "parameters", "parameter_bytes", "flops",
                            "per_node", "diagnostics", "ir_version", "opsets"})
        check(j.contains(key), std::string("key '") + key + "' present");
    if (tessera::test::checkFailures()) return 1;

    check(j["nodes"] == e["nodes"], "nodes " + j["nodes"].dump() + " == " + e["nodes"].dump());
    check(j["op_histogram"] == e["op_histogram"],
          "op_histogram " + j["op_histogram"].dump() + " == " + e["op_histogram"].dump());
    check(j["parameters"] == e["parameters"], "parameters " + j["parameters"].dump() + " == " + e["parameters"].dump());
    check(j["parameter_bytes"] == e["parameter_bytes"],
          "parameter_bytes " + j["parameter_bytes"].dump() + " == " + e["parameter_bytes"].dump());
    check(j["ir_version"] == e["ir_version"], "ir_version");
    check(j["opsets"].value("ai.onnx", -1) == e["default_opset"].get<int>(), "default opset");
    for (const char* side : {"inputs", "outputs"}) {
        const json& got = j[side];
        const json& want = e[side];
        check(got.size() == want.size(), std::string(side) + " count");
        for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
            check(got[i]["name"] == want[i]["name"], std::string(side) + " name " + got[i]["name"].dump());
            check(got[i]["dtype"] == want[i]["dtype"], std::string(side) + " dtype " + got[i]["dtype"].dump());
            check(got[i]["shape"] == want[i]["shape"],
                  std::string(side) + " shape " + got[i]["shape"].dump() + " == " + want[i]["shape"].dump());
        }
    }
    check(j["flops"].is_number_integer() && j["flops"].get<std::int64_t>() >= 0, "flops is a non-negative integer");
    check(j["per_node"].is_array() && j["per_node"].size() == j["nodes"].get<std::size_t>(), "per_node has one entry per node");
    std::int64_t sum = 0;
    int unknown = 0;
    for (const auto& pn : j["per_node"]) {
        check(pn.contains("name") && pn.contains("op") && pn.contains("flops") && pn.contains("outputs"),
              "per_node entry keys");
        if (pn["flops"].is_number_integer()) sum += pn["flops"].get<std::int64_t>();
        if (pn["flops"].is_null()) ++unknown;
    }
    check(j.value("flops_unknown_nodes", -1) == unknown, "flops_unknown_nodes counts the null per_node entries");
    check(j.value("flops_complete", unknown != 0) == (unknown == 0), "flops_complete iff every node is counted");
    if (rel == "symbolic_batch.onnx") {
        // Gemm and Softmax on a symbolic batch: no count is known, so the total is partial.
        check(unknown == 2 && !j.value("flops_complete", true), "symbolic_batch FLOPs are reported as incomplete");
    }
    check(sum == j["flops"].get<std::int64_t>(), "flops total " + j["flops"].dump() + " == sum of per_node " +
                                                     std::to_string(sum));
    if (rel == "mobilenet_v2.onnx") {
        // A 224x224 MobileNetV2 is about 0.3 GMACs: 0.6 GFLOPs at 2 FLOPs per multiply-add.
        const auto flops = j["flops"].get<std::int64_t>();
        check(flops > 500'000'000 && flops < 700'000'000, "mobilenet_v2 FLOPs in (0.5e9, 0.7e9): " + std::to_string(flops));
        check(j.value("flops_complete", false), "mobilenet_v2 FLOPs are complete");
        check(j["outputs"][0]["shape"] == json::array({1, 1000}), "mobilenet_v2 output [1,1000]");
    }
    if (tessera::test::checkFailures()) {
        std::cerr << tessera::test::checkFailures() << " check(s) failed for " << rel << "\n";
        return 1;
    }
    std::cout << rel << ": all checks passed\n";
    return 0;
}
