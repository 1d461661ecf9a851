#include "app/cli/conformance_cmd.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/inspect.h"
#include "app/cli/run_cmd.h"
#include "core/pipeline/conformance_run.h"
#include "core/pipeline/engine.h"

namespace tessera::cli {

namespace {
struct Counts {
    int passed = 0, failed = 0, error = 0, skipped = 0;
};

bool claimed(const std::string& op) { return !op.empty() && pipeline::hasCodeGenerator(op); }
}  // namespace

int runConformanceCommand(const ConformanceCmdOptions& options, std::ostream& out, std::ostream& err) {
    auto cases = pipeline::discoverConformanceCases(options.dir);
    if (!cases.ok()) {
        for (const auto& d : cases.diagnostics().items()) err << d.format() << "\n";
        return kExitBadInput;
    }
    std::set<std::string> filter;
    {
        std::stringstream ss(options.ops);
        for (std::string op; std::getline(ss, op, ',');)
            if (!op.empty()) filter.insert(op);
    }
    for (const auto& op : filter) {
        const bool known = std::any_of(cases->begin(), cases->end(), [&](const auto& c) { return c.opType == op; });
        if (!known) {
            err << options.dir << ": error: --ops: no node test of op '" << op
                << "' here (op names are case-sensitive, e.g. Conv)\n";
            return kExitBadInput;
        }
    }
    pipeline::RunOptions ropts;
    ropts.timeoutSeconds = 30;
    ropts.compiler.flags.clear();
    {
        std::istringstream fs(options.cxxFlags);
        for (std::string f; fs >> f;) ropts.compiler.flags.push_back(f);
    }
    const std::shared_ptr<pipeline::Runner> runner = pipeline::makeRunner(1);

    std::map<std::string, Counts> perOp;
    nlohmann::json jcases = nlohmann::json::array();
    std::vector<std::string> problems;
    for (const auto& c : *cases) {
        const std::string op = c.opType.empty() ? std::string("(multi-node)") : c.opType;
        if (!filter.empty() && !filter.count(op)) continue;
        if (options.claimedOnly && !claimed(c.opType)) continue;
        pipeline::ConformanceResult r;
        if (c.dataSets.empty()) {
            r.status = pipeline::ConformanceStatus::Skipped;
            r.message = "no test data set";
        } else {
            // Every data set must pass; the first that does not decides.
            for (int ds = 0; ds < static_cast<int>(c.dataSets.size()); ++ds) {
                r = pipeline::runConformanceCompiled(c, ds, *runner, ropts);
                if (r.status != pipeline::ConformanceStatus::Passed) break;
            }
        }
        Counts& k = perOp[op];
        switch (r.status) {
        case pipeline::ConformanceStatus::Passed: ++k.passed; break;
        case pipeline::ConformanceStatus::Failed: ++k.failed; break;
        case pipeline::ConformanceStatus::Error: ++k.error; break;
        case pipeline::ConformanceStatus::Skipped: ++k.skipped; break;
        }
        const char* status = pipeline::conformanceStatusName(r.status);
        if (options.verbose && !options.json)
            out << c.name << ": " << status << (r.message.empty() ? "" : " (" + r.message + ")") << "\n";
        if ((r.status == pipeline::ConformanceStatus::Failed || r.status == pipeline::ConformanceStatus::Error) &&
            claimed(c.opType))
            problems.push_back(c.name + ": " + status + ": " + r.message);
        jcases.push_back({{"name", c.name}, {"op", op}, {"status", status}, {"message", r.message}});
    }
    Counts total, claimedTotal;
    int claimedOps = 0, claimedOpsGreen = 0;
    for (const auto& [op, k] : perOp) {
        total.passed += k.passed;
        total.failed += k.failed;
        total.error += k.error;
        total.skipped += k.skipped;
        if (claimed(op)) {
            ++claimedOps;
            claimedOpsGreen += (k.failed == 0 && k.error == 0);
            claimedTotal.passed += k.passed;
            claimedTotal.failed += k.failed;
            claimedTotal.error += k.error;
            claimedTotal.skipped += k.skipped;
        }
    }
    if (options.json) {
        nlohmann::json j;
        j["ops"] = nlohmann::json::object();
        for (const auto& [op, k] : perOp)
            j["ops"][op] = {{"passed", k.passed}, {"failed", k.failed}, {"error", k.error}, {"skipped", k.skipped},
                            {"claimed", claimed(op)}};
        j["cases"] = jcases;
        j["totals"] = {{"passed", total.passed}, {"failed", total.failed}, {"error", total.error},
                       {"skipped", total.skipped}, {"claimed_ops", claimedOps}, {"claimed_ops_green", claimedOpsGreen}};
        out << j.dump(2) << "\n";
    } else {
        out << std::left << std::setw(28) << "op" << std::right << std::setw(8) << "passed" << std::setw(8) << "failed"
            << std::setw(8) << "error" << std::setw(9) << "skipped" << "  claimed\n";
        for (const auto& [op, k] : perOp)
            out << std::left << std::setw(28) << op << std::right << std::setw(8) << k.passed << std::setw(8) << k.failed
                << std::setw(8) << k.error << std::setw(9) << k.skipped << "  " << (claimed(op) ? "yes" : "") << "\n";
        out << "total: " << total.passed << " passed, " << total.failed << " failed, " << total.error << " error, "
            << total.skipped << " skipped\n";
        out << "claimed ops: " << claimedOps << " (" << claimedOpsGreen << " with every case passing or skipped); their cases: "
            << claimedTotal.passed << " passed, " << claimedTotal.failed << " failed, " << claimedTotal.error
            << " error, " << claimedTotal.skipped << " skipped\n";
        for (const auto& p : problems) out << "  " << p << "\n";
    }
    if (options.strict && !problems.empty()) return kExitCheckFailed;
    return kExitOk;
}

}  // namespace tessera::cli
