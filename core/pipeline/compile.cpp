#include "core/pipeline/compile.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstring>
#include <map>
#include <set>
#include <random>

#include "core/codegen/cpp/cpp_codegen.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/eval/reference_interpreter.h"
#include "core/ir/shape_inference.h"
#include "core/pipeline/engine.h"
#include "core/pipeline/host_profile.h"
#include "core/pipeline/prepare.h"
#include "core/pipeline/user_schedule.h"
#include "core/runtime/host_jit.h"
#include "core/schedule/fusion_rules.h"
#include "core/schedule/planners.h"

namespace tessera::pipeline {

int CompiledModel::kernelCount() const {
    int n = 0;
    for (const auto& s : steps) n += s.kind == StepKind::Kernel;
    return n;
}

std::vector<ir::TensorData> CompiledModel::runtimeInputsOf(const std::vector<ir::TensorData>& callerInputs) const {
    std::vector<ir::TensorData> r;
    for (auto i : inputSlots)
        if (i < callerInputs.size()) r.push_back(callerInputs[i]);
    return r;
}

int CompiledModel::stepOfNode(const std::string& name) const {
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (steps[i].name == name) return static_cast<int>(i);
    const ir::NodeId id = model.graph.findNode(name);
    if (id == ir::kNoNode) return -1;
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (std::find(steps[i].members.begin(), steps[i].members.end(), id) != steps[i].members.end())
            return static_cast<int>(i);
    return -1;
}

std::vector<ir::TensorData> defaultInputs(const ir::Graph& g, std::uint64_t seed,
                                          const std::vector<ir::TensorData>& given) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    std::vector<ir::TensorData> out;
    const auto rin = g.runtimeInputs();
    for (std::size_t i = 0; i < rin.size(); ++i) {
        if (i < given.size() && given[i].dtype != ir::DType::Undefined) {
            out.push_back(given[i]);
            continue;
        }
        const ir::TensorType& t = g.value(rin[i]).type;
        ir::TensorData d;
        d.dtype = t.dtype == ir::DType::Undefined ? ir::DType::F32 : t.dtype;
        if (t.shape.rankKnown())
            for (const auto& dim : t.shape.dims()) d.dims.push_back(dim.isKnown() ? dim.value : 1);
        const std::int64_t n = d.numElements();
        const std::size_t es = ir::dtypeSize(d.dtype);
        d.bytes.resize(static_cast<std::size_t>(n) * es);
        for (std::int64_t e = 0; e < n; ++e) {
            std::uint8_t* p = d.bytes.data() + static_cast<std::size_t>(e) * es;
            switch (d.dtype) {
            case ir::DType::F32: {
                const float v = static_cast<float>(uni(rng));
                std::memcpy(p, &v, 4);
                break;
            }
            case ir::DType::F64: {
                const double v = uni(rng);
                std::memcpy(p, &v, 8);
                break;
            }
            case ir::DType::Bool: *p = static_cast<std::uint8_t>(e % 2); break;
            default:
                if (ir::isInteger(d.dtype)) {
                    const std::int64_t v = static_cast<std::int64_t>(rng() % 4);
                    std::memcpy(p, &v, es);  // little-endian: the low bytes hold the value
                } else {
                    // f16/bf16 and others: zeros are valid in every encoding.
                    std::memset(p, 0, es);
                }
            }
        }
        out.push_back(std::move(d));
    }
    return out;
}

namespace {

/// A step that runs node `id` in the reference interpreter: its inputs, plus the values its
/// If/Loop/Scan bodies read by name (they need arena slots too), and its outputs.
CompiledStep referenceStep(const ir::Graph& g, ir::NodeId id, CompiledStep step) {
    const ir::Node& n = g.node(id);
    step.kind = StepKind::Reference;
    for (auto v : n.inputs)
        if (v != ir::kNoValue) step.inputs.push_back(v);
    for (auto v : eval::subgraphInputs(g, id))
        if (std::find(step.inputs.begin(), step.inputs.end(), v) == step.inputs.end()) step.inputs.push_back(v);
    for (auto v : n.outputs)
        if (v != ir::kNoValue) step.outputs.push_back(v);
    return step;
}

/// A program's `fuse` group as a plan group: a conv chain when it holds exactly two convolutions
/// of the kinds FusePlanner pairs (the ops between them and after the second inlined), else an
/// anchor with prologue (members before the anchor) and epilogue (members after it).
schedule::FusionGroup groupOfDecl(const ir::Graph& g, const std::vector<ir::NodeId>& order,
                                  const ir::FusionGroupDecl& decl) {
    schedule::FusionGroup grp;
    grp.name = decl.name;
    grp.reason = "the program's fuse statement";
    for (ir::NodeId id : order)
        if (std::find(decl.members.begin(), decl.members.end(), g.node(id).name) != decl.members.end())
            grp.ops.push_back(g.node(id).name);
    grp.anchor = decl.anchor.empty() && !grp.ops.empty() ? grp.ops.front() : decl.anchor;
    std::vector<std::pair<std::string, schedule::ConvLayerKind>> convs;
    for (const auto& name : grp.ops) {
        const ir::NodeId id = g.findNode(name);
        if (g.node(id).opType != "Conv") continue;
        auto layer = schedule::convLayerOf(g, id);
        convs.emplace_back(name, layer.ok() ? layer->kind : schedule::ConvLayerKind::Standard);
    }
    using K = schedule::ConvLayerKind;
    if (convs.size() == 2 && convs[0].second != K::Standard && convs[1].second != K::Standard &&
        !(convs[0].second == K::Depthwise && convs[1].second == K::Depthwise)) {
        grp.kind = convs[0].second == K::Depthwise   ? schedule::FusionKind::DwPw
                   : convs[1].second == K::Depthwise ? schedule::FusionKind::PwDw
                                                     : schedule::FusionKind::PwPw;
        grp.anchor = convs[0].first;
        bool afterSecond = false;
        for (const auto& name : grp.ops) {
            if (name == convs[1].first) {
                afterSecond = true;
                continue;
            }
            if (afterSecond) grp.epilogue.push_back(name);
        }
        return grp;
    }
    grp.kind = grp.ops.size() == 1 ? schedule::FusionKind::Single : schedule::FusionKind::PrologueEpilogue;
    bool afterAnchor = false;
    for (const auto& name : grp.ops) {
        if (name == grp.anchor) {
            afterAnchor = true;
            continue;
        }
        (afterAnchor ? grp.epilogue : grp.prologue).push_back(name);
    }
    return grp;
}

std::string joinNames(const std::vector<std::string>& names, std::size_t limit = 6) {
    std::string r;
    for (std::size_t i = 0; i < names.size() && i < limit; ++i) r += (i ? ", " : "") + names[i];
    if (names.size() > limit) r += ", ... (" + std::to_string(names.size()) + " in all)";
    return r;
}

/// The plan to compile with (see compile.h), resolved onto the specialised graph: names that are
/// not in it dropped, nodes it does not mention added as single groups, groups that break a rule
/// split into singles (each with a warning giving the rule), groups in a topological order.
support::Expected<schedule::FusionPlan> choosePlan(const ir::Model& m, const CompileOptions& options,
                                                   const std::string& file, support::DiagnosticList& warnings) {
    const ir::Graph& g = m.graph;
    target::GpuProfile hw = options.hardware;
    if (hw.name.empty()) {
        // The target's own hardware: this CPU, or the H200 profile for CUDA (the lent device).
        if (options.target == lower::Target::Cpu) {
            hw = hostProfile();
        } else {
            auto h = target::findGpuProfile("h200");
            if (h.ok()) hw = *h;
        }
    }
    schedule::FusionPlan plan;
    bool explicitPlan = false;  // a plan file or the program's fuse statements, not a planner's plan
    if (options.plan) {
        plan = *options.plan;
        explicitPlan = true;
    } else if (!options.planner.empty()) {
        auto p = schedule::makePlan(g, options.planner, hw);
        if (!p.ok()) return p.diagnostics();
        plan = std::move(*p);
    } else if (!m.program.fusions.empty()) {
        plan = programFusionPlan(m);
        explicitPlan = true;
    } else {
        return schedule::planNone(g);
    }

    // Resolve names onto g.
    std::map<std::string, std::string> seen;  // node -> the group that keeps it (the first)
    std::vector<std::string> missing, duplicated;
    std::vector<schedule::FusionGroup> groups;
    // Per group (by index in `groups`): the members it lost to an earlier group, said when the
    // group then breaks a rule ("c2 is already in group g1"), as that is usually why.
    std::map<std::size_t, std::string> takenNote;
    for (schedule::FusionGroup grp : plan.groups) {
        std::vector<std::string> ops;
        std::map<std::string, std::vector<std::string>> takenBy;  // earlier group -> its nodes this one lists
        for (const auto& name : grp.ops) {
            const ir::NodeId id = g.findNode(name);
            if (id == ir::kNoNode) {
                missing.push_back(name);
                continue;
            }
            if (g.node(id).opType == "Constant" && g.node(id).domain.empty()) continue;
            if (const auto [it, fresh] = seen.emplace(name, grp.name); !fresh) {
                duplicated.push_back(name);
                if (it->second != grp.name) takenBy[it->second].push_back(name);
                continue;
            }
            ops.push_back(name);
        }
        if (ops.empty()) continue;
        std::string note;
        for (const auto& [other, names] : takenBy)
            note += (note.empty() ? "" : "; ") + joinNames(names) + (names.size() == 1 ? " is" : " are") +
                    " already in group " + other;
        if (!note.empty()) takenNote[groups.size()] = note;
        grp.ops = std::move(ops);
        auto keep = [&](std::vector<std::string>& v) {
            std::erase_if(v, [&](const std::string& n) {
                return std::find(grp.ops.begin(), grp.ops.end(), n) == grp.ops.end();
            });
        };
        keep(grp.prologue);
        keep(grp.epilogue);
        if (std::find(grp.ops.begin(), grp.ops.end(), grp.anchor) == grp.ops.end()) grp.anchor = grp.ops.front();
        if (grp.ops.size() == 1) grp.kind = schedule::FusionKind::Single;
        groups.push_back(std::move(grp));
    }
    std::vector<std::string> unplanned;
    for (std::size_t i = 0; i < g.numNodes(); ++i) {
        const ir::Node& n = g.node(static_cast<ir::NodeId>(i));
        if ((n.opType == "Constant" && n.domain.empty()) || seen.count(n.name)) continue;
        schedule::FusionGroup single;
        single.name = n.name;
        single.ops = {n.name};
        single.anchor = n.name;
        single.reason = "not in the plan";
        groups.push_back(std::move(single));
        unplanned.push_back(n.name);
    }
    if (explicitPlan && !missing.empty())
        warnings.warning(file, "fusion plan",
                         std::to_string(missing.size()) + " planned node(s) are not in the compiled graph (folded as "
                         "constants, or unknown): " + joinNames(missing));
    if (!duplicated.empty())
        warnings.warning(file, "fusion plan",
                         "node(s) in more than one group (kept in the first): " + joinNames(duplicated));
    // Only a plan file is meant to cover the graph: a program's fuse statements name just the
    // groups it wants, every other node is its own kernel by design.
    if (options.plan && !unplanned.empty())
        warnings.warning(file, "fusion plan", "node(s) the plan does not mention run alone: " + joinNames(unplanned));
    plan.groups = std::move(groups);

    // Split the groups that break a rule.
    const auto violations = schedule::checkPlan(g, plan, &hw);
    std::map<int, std::string> broken;
    for (const auto& v : violations) {
        if (v.group < 0) {
            warnings.warning(file, "fusion plan", v.message + "; compiling one kernel per node");
            return schedule::planNone(g);
        }
        if (!broken.count(v.group)) {
            const auto note = takenNote.find(static_cast<std::size_t>(v.group));
            broken[v.group] = note == takenNote.end() ? v.message : note->second + "; " + v.message;
        }
    }
    if (!broken.empty()) {
        std::vector<schedule::FusionGroup> kept;
        for (std::size_t i = 0; i < plan.groups.size(); ++i) {
            auto it = broken.find(static_cast<int>(i));
            if (it == broken.end()) {
                kept.push_back(plan.groups[i]);
                continue;
            }
            const schedule::FusionGroup& grp = plan.groups[i];
            warnings.warning(file, "group '" + grp.name + "'",
                             "not fused (" + it->second + "): its ops run as separate kernels");
            for (std::size_t k = 0; k < grp.ops.size(); ++k) {
                schedule::FusionGroup single;
                single.name = grp.ops.size() == 1 ? grp.name : grp.name + "." + std::to_string(k);
                single.ops = {grp.ops[k]};
                single.anchor = grp.ops[k];
                single.reason = "split: " + it->second;
                kept.push_back(std::move(single));
            }
        }
        plan.groups = std::move(kept);
    }
    auto ordered = schedule::normalizePlan(g, std::move(plan));
    if (!ordered.ok()) {
        std::string why = ordered.diagnostics().items().empty() ? "the groups form a cycle"
                                                                : ordered.diagnostics().items().front().message;
        warnings.warning(file, "fusion plan", why + "; compiling one kernel per node");
        return schedule::planNone(g);
    }
    return std::move(*ordered);
}

}  // namespace

support::Expected<schedule::FusionPlan> resolvePlan(const ir::Model& specialised, const CompileOptions& options,
                                                    support::DiagnosticList& warnings) {
    return choosePlan(specialised, options, specialised.sourcePath, warnings);
}

schedule::FusionPlan programFusionPlan(const ir::Model& model) {
    schedule::FusionPlan plan;
    plan.planner = "program";
    const auto order = model.graph.topologicalOrder();
    if (!order) return plan;
    for (const auto& decl : model.program.fusions) plan.groups.push_back(groupOfDecl(model.graph, *order, decl));
    return plan;
}

namespace {

/// compileModel once the model is specialised: `cm` holds the specialised model, its input slots
/// and the count of folded nodes.
support::Expected<CompiledModel> compileSpecialised(CompiledModel cm, const CompileOptions& options,
                                                    const support::CancelToken* cancel,
                                                    const support::ProgressSink& progress) {
    support::DiagnosticList diags;
    const std::string file = cm.model.sourcePath;
    cm.target = options.target;
    for (const auto& user : options.schedules)
        if (cm.model.graph.findNode(user.subject) == ir::kNoNode)
            cm.warnings.warning(file, "schedule of '" + user.subject + "'",
                                "not used: no operator of that name in the compiled graph");
    applyUserSchedules(cm.model.program, options.schedules);
    const ir::Graph& g = cm.model.graph;
    const auto order = g.topologicalOrder();
    if (!order) {
        diags.error(file, "graph", "the graph has a cycle");
        return diags;
    }
    lower::LowerOptions lopts;
    lopts.target = options.target;
    lopts.cpuThreads = options.cpuThreads;
    lopts.gpuGemmMinBlocks = options.gpuGemmMinBlocks;
    lopts.gpuGemmFillBlocks = options.gpuGemmFillBlocks;
    lopts.opset = cm.model.defaultOpset();

    auto noteCudaGaps = [&](const lower::Kernel& k, const std::string& where) {
        if (options.target != lower::Target::Cuda) return;
        for (const std::string& note : k.notes)
            if (note.find("not implemented") != std::string::npos)
                cm.warnings.warning(file, where, "CUDA target: " + note);
    };
    auto planOr = choosePlan(cm.model, options, file, cm.warnings);
    if (!planOr.ok()) return planOr.diagnostics();
    schedule::FusionPlan plan = std::move(*planOr);
    // A user schedule of a member that is not its group's anchor would be ignored without a word.
    for (const auto& user : options.schedules) {
        const int gi = plan.groupOf(user.subject);
        if (gi < 0) continue;
        const schedule::FusionGroup& grp = plan.groups[static_cast<std::size_t>(gi)];
        if (grp.ops.size() > 1 && grp.anchor != user.subject)
            cm.warnings.warning(file, "schedule of '" + user.subject + "'",
                                "not used: '" + user.subject + "' is fused into group '" + grp.name +
                                    "', whose kernel is scheduled by its anchor '" + grp.anchor + "'");
    }

    // Steps whose static counts are still to be computed (after lowering, in parallel).
    std::vector<std::size_t> countsPending;
    // Lower one node alone (a single group, or a member of a group that could not be fused).
    auto lowerSingle = [&](ir::NodeId id, const std::string& groupName) {
        const ir::Node& n = g.node(id);
        CompiledStep step;
        step.node = id;
        step.name = n.name;
        step.group = groupName;
        step.members = {id};
        step.opType = n.opType;
        if (auto f = ir::nodeFlops(g, id)) step.nodeFlops = *f;
        if (!lower::hasGenerator(n)) {
            if (!options.fallbackReference) {
                diags.error(file, "node '" + n.name + "' (" + n.opType + ")",
                            "no code generator for op '" + n.opType +
                                "'; run with --fallback-reference to run this node in the reference interpreter",
                            support::DiagnosticCode::NoCodeGenerator);
                return;
            }
            cm.steps.push_back(referenceStep(g, id, std::move(step)));
            return;
        }
        lopts.kernelName = n.name;
        auto lk = lower::lowerNode(g, id, cm.model.program.scheduleFor(n.name), lopts);
        if (!lk.ok() && options.fallbackReference && lower::isUnsupportedForm(lk.diagnostics())) {
            cm.steps.push_back(referenceStep(g, id, std::move(step)));
            return;
        }
        if (!lk.ok()) {
            diags.append(lk.diagnostics());
            if (lower::isUnsupportedForm(lk.diagnostics()))
                diags.items().back().notes.push_back(
                    "run with --fallback-reference to run this node in the reference interpreter");
            return;
        }
        noteCudaGaps(lk->kernel, "node '" + n.name + "' (" + n.opType + ")");
        step.kernel = std::move(lk->kernel);
        step.inputs = std::move(lk->inputs);
        step.outputs = std::move(lk->outputs);
        countsPending.push_back(cm.steps.size());
        cm.steps.push_back(std::move(step));
    };

    schedule::FusionPlan applied;
    applied.planner = plan.planner;
    applied.hardware = plan.hardware;
    std::size_t done = 0;
    const int groupCount = std::max(1, static_cast<int>(plan.groups.size()));
    int groupsLowered = 0;
    if (options.kernelProgress) options.kernelProgress(0, groupCount, kPhaseLowering);
    for (const schedule::FusionGroup& group : plan.groups) {
        if (cancel && cancel->isCancelled()) {
            diags.error(file, "compile", "cancelled");
            return diags;
        }
        // Reported before each group (after the previous one), so a `continue` below cannot skip it.
        if (options.kernelProgress && groupsLowered > 0)
            options.kernelProgress(groupsLowered, groupCount, kPhaseLowering);
        ++groupsLowered;
        if (progress)
            progress(0.8 * static_cast<double>(done) / static_cast<double>(std::max<std::size_t>(1, g.numNodes())),
                     "lowering");
        done += group.ops.size();
        std::vector<ir::NodeId> members;
        for (const auto& name : group.ops) members.push_back(g.findNode(name));
        auto splitGroup = [&](const std::string& why) {
            if (!why.empty())
                cm.warnings.warning(file, "group '" + group.name + "'",
                                    "not fused (" + why + "): its " + std::to_string(members.size()) +
                                        " ops run as separate kernels");
            for (std::size_t m = 0; m < members.size(); ++m) {
                schedule::FusionGroup single;
                single.name = members.size() == 1 ? group.name : group.name + "." + std::to_string(m);
                single.kind = schedule::FusionKind::Single;
                single.ops = {group.ops[m]};
                single.anchor = group.ops[m];
                single.reason = why.empty() ? group.reason : "split: " + why;
                applied.groups.push_back(std::move(single));
                lowerSingle(members[m], applied.groups.back().name);
            }
        };
        if (group.kind == schedule::FusionKind::Single || members.size() == 1) {
            splitGroup({});
            continue;
        }
        const ir::KernelScheduleDecl* sched = cm.model.program.scheduleFor(group.name);
        if (!sched) sched = cm.model.program.scheduleFor(group.anchor);
        if (sched && schedule::isConvChain(group.kind))
            cm.warnings.warning(file, "group '" + group.name + "'",
                                std::string("the schedule of a ") + schedule::fusionKindName(group.kind) +
                                    " group is not used: fused convolution kernels take their tile from the plan");
        if (sched && group.kind == schedule::FusionKind::Attention)
            cm.warnings.warning(file, "group '" + group.name + "'",
                                "the schedule of an attention group is not used: the fused attention kernel chooses its "
                                "query-row and key-block tiles itself");
        lopts.kernelName = group.anchor;
        auto lk = lower::lowerGroup(g, group, sched, lopts);
        if (!lk.ok()) {
            std::string why;
            for (const auto& d : lk.diagnostics().items())
                if (d.severity == support::Severity::Error) {
                    why = d.message;
                    break;
                }
            splitGroup(why.empty() ? "the lowering refused it" : why);
            continue;
        }
        const ir::NodeId anchor = g.findNode(group.anchor);
        CompiledStep step;
        step.node = anchor != ir::kNoNode ? anchor : members.front();
        step.name = g.node(step.node).name;
        step.group = group.name;
        step.members = members;
        step.opType = g.node(step.node).opType;
        std::int64_t flops = 0;
        for (ir::NodeId m : members) {
            const auto f = ir::nodeFlops(g, m);
            if (!f) {
                flops = -1;
                break;
            }
            flops += *f;
        }
        step.nodeFlops = flops;
        noteCudaGaps(lk->kernel, "group '" + group.name + "'");
        step.kernel = std::move(lk->kernel);
        step.inputs = std::move(lk->inputs);
        step.outputs = std::move(lk->outputs);
        countsPending.push_back(cm.steps.size());
        cm.steps.push_back(std::move(step));
        applied.groups.push_back(group);
    }
    cm.plan = std::move(applied);
    if (diags.hasErrors()) return diags;
    // Static counts (lower::countKernel: a pure function of each kernel) on every usable core;
    // each worker takes the next pending step.
    {
        std::atomic<std::size_t> next{0};
        auto worker = [&] {
            for (std::size_t i; (i = next.fetch_add(1)) < countsPending.size();) {
                CompiledStep& st = cm.steps[countsPending[i]];
                st.counts = lower::countKernel(st.kernel);
            }
        };
        const std::size_t workers =
            std::min<std::size_t>(static_cast<std::size_t>(runtime::availableCores()), countsPending.size());
        std::vector<std::thread> pool;
        for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(worker);
        worker();
        for (auto& t : pool) t.join();
    }
    if (options.kernelProgress) options.kernelProgress(groupCount, groupCount, kPhaseLowering);

    if (progress) progress(0.85, "generating code");
    if (options.kernelProgress) options.kernelProgress(0, 1, kPhaseGenerating);
    std::vector<const lower::Kernel*> kernels;
    std::vector<std::size_t> kernelStep;
    for (std::size_t i = 0; i < cm.steps.size(); ++i)
        if (cm.steps[i].kind == StepKind::Kernel) {
            kernels.push_back(&cm.steps[i].kernel);
            kernelStep.push_back(i);
        }
    if (options.target == lower::Target::Cuda) {
        auto mod = codegen::generateCuda(kernels);
        if (!mod) return mod.diagnostics();
        cm.code = std::move(mod->source);
        for (std::size_t k = 0; k < kernels.size() && k < mod->launches.size(); ++k)
            cm.steps[kernelStep[k]].launch = mod->launches[k];
    } else {
        codegen::CppOptions copts;
        cm.code = codegen::generateCpp(kernels, copts);
    }
    for (std::size_t k = 0; k < kernels.size(); ++k) {
        CompiledStep& s = cm.steps[kernelStep[k]];
        s.entry = k < cm.code.entryPoints.size() ? cm.code.entryPoints[k] : std::string();
        s.elementwise = !s.members.empty() && std::all_of(s.members.begin(), s.members.end(), [&](ir::NodeId m) {
            return schedule::detail::isElementwiseNode(g, m);  // the fusion rules' own test
        });
    }
    for (const auto& e : cm.code.sourceMap) {
        if (e.kernel < 0 || static_cast<std::size_t>(e.kernel) >= kernelStep.size()) continue;
        CompiledStep& s = cm.steps[kernelStep[static_cast<std::size_t>(e.kernel)]];
        if (s.firstLine == 0 || e.firstLine < s.firstLine) s.firstLine = e.firstLine;
        s.lastLine = std::max(s.lastLine, e.lastLine);
    }
    if (options.kernelProgress) options.kernelProgress(1, 1, kPhaseGenerating);
    if (progress) progress(1.0, "compiled");
    return cm;
}

}  // namespace

support::Expected<CompiledModel> compileModel(const ir::Model& model, const std::vector<ir::TensorData>& inputs,
                                              const CompileOptions& options, const support::CancelToken* cancel,
                                              const support::ProgressSink& progress) {
    if (progress) progress(0.0, "specialising shapes");
    SpecialiseStats stats;
    CompiledModel cm;
    auto spec = specialiseModel(model, inputs, &stats, cancel, &cm.inputSlots);
    if (!spec.ok()) return spec.diagnostics();
    cm.model = std::move(*spec);
    cm.foldedNodes = stats.foldedNodes;
    return compileSpecialised(std::move(cm), options, cancel, progress);
}

support::Expected<CompiledModel> compileModel(const PreparedModel& prepared, const CompileOptions& options,
                                              const support::CancelToken* cancel,
                                              const support::ProgressSink& progress) {
    CompiledModel cm;
    cm.inputSlots = prepared.inputSlots;
    cm.model = prepared.model;
    cm.foldedNodes = prepared.stats.foldedNodes;
    return compileSpecialised(std::move(cm), options, cancel, progress);
}

bool hasCodeGenerator(const std::string& opType) {
    ir::Node node;
    node.opType = opType;
    return lower::hasGenerator(node);
}

}  // namespace tessera::pipeline
