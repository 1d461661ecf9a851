#include "core/schedule/task_mapping.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace tessera::schedule {

using support::Diagnostic;
using support::DiagnosticList;
using support::Expected;

namespace {

DiagnosticList oneError(std::string message, std::vector<std::string> notes = {}) {
    DiagnosticList list;
    Diagnostic d;
    d.message = std::move(message);
    d.notes = std::move(notes);
    list.add(std::move(d));
    return list;
}

/// a * b when it stays within [0, limit]; false otherwise (inputs are non-negative).
bool mulWithin(int64_t a, int64_t b, int64_t limit, int64_t& out) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r) || r > limit) return false;
    out = r;
    return true;
}

std::string joinInts(const std::vector<int64_t>& v, const char* sep = ",") {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) s += sep;
        s += std::to_string(v[i]);
    }
    return s;
}

std::string shapeStr(const std::vector<int64_t>& v) { return "[" + joinInts(v) + "]"; }

std::vector<int> identityRanks(size_t n) {
    std::vector<int> r(n);
    std::iota(r.begin(), r.end(), 0);
    return r;
}

std::vector<int> reversedRanks(size_t n) {
    std::vector<int> r = identityRanks(n);
    std::reverse(r.begin(), r.end());
    return r;
}

/// Name of the task coordinate of dimension d in previews and messages: i, j, k, l, then i4, i5, ...
std::string coordName(int d) {
    static const char* kNames[] = {"i", "j", "k", "l"};
    if (d < 4) return kNames[d];
    return "i" + std::to_string(d);
}

/// Checks one factor on its own; empty string = valid.
std::string factorProblem(const Factor& f) {
    const char* kind = f.kind == PrimitiveKind::Spatial ? "spatial" : "repeat";
    if (f.shape.empty()) return std::string(kind) + "() needs at least one extent";
    if (f.rank() > kMaxRank)
        return std::string(kind) + " has rank " + std::to_string(f.rank()) + ", over the limit of " +
               std::to_string(kMaxRank);
    for (size_t d = 0; d < f.shape.size(); ++d)
        if (f.shape[d] <= 0)
            return std::string(kind) + " extent " + std::to_string(f.shape[d]) + " of dim " + std::to_string(d) +
                   " must be positive";
    if (f.ranks.size() != f.shape.size())
        return "ranks [" + [&] {
            std::string s;
            for (size_t i = 0; i < f.ranks.size(); ++i) s += (i ? "," : "") + std::to_string(f.ranks[i]);
            return s;
        }() + "] must have one entry per dimension (" + std::to_string(f.shape.size()) + ")";
    std::vector<bool> seen(f.ranks.size(), false);
    for (int r : f.ranks) {
        if (r < 0 || r >= f.rank() || seen[static_cast<size_t>(r)])
            return "ranks must be a permutation of 0.." + std::to_string(f.rank() - 1);
        seen[static_cast<size_t>(r)] = true;
    }
    int64_t prod = 1;
    for (int64_t e : f.shape)
        if (!mulWithin(prod, e, kMaxTasks, prod))
            return std::string(kind) + "(" + joinInts(f.shape) + ") has more than 2^31 tasks";
    if (f.kind == PrimitiveKind::Spatial && !f.attrs.empty()) return "attrs are only allowed on repeat";
    if (f.kind == PrimitiveKind::Repeat && f.attrs.size() != f.shape.size())
        return "repeat needs one loop attribute per dimension";
    if (!f.projected.empty() && f.projected.size() != f.shape.size()) return "projection mask has the wrong rank";
    return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// LoopAttr

std::string LoopAttr::str() const {
    switch (kind) {
        case Kind::Default: return ".";
        case Kind::Unroll: return factor > 0 ? "u" + std::to_string(factor) : "u";
        case Kind::UnrollExplicit: return "u+";
        case Kind::Parallel: return factor > 0 ? "p" + std::to_string(factor) : "p";
    }
    return ".";
}

LoopAttr LoopAttr::fromExtent(int64_t extent) {
    return extent < 4 ? LoopAttr{Kind::UnrollExplicit, 0} : LoopAttr{};
}

Expected<std::vector<LoopAttr>> parseLoopAttrs(std::string_view attrs, size_t numLoops) {
    std::vector<LoopAttr> out;
    size_t i = 0;
    auto readFactor = [&](int64_t& value) -> bool {
        value = 0;
        bool any = false;
        while (i < attrs.size() && attrs[i] >= '0' && attrs[i] <= '9') {
            any = true;
            value = value * 10 + (attrs[i] - '0');
            if (value > kMaxTasks) return false;
            ++i;
        }
        return !any || value > 0;
    };
    while (i < attrs.size()) {
        const char c = attrs[i];
        const size_t at = i;
        if (c == ' ') {
            ++i;
        } else if (c == '.') {
            out.push_back({});
            ++i;
        } else if (c == 'u' || c == 'p') {
            ++i;
            if (c == 'u' && i < attrs.size() && attrs[i] == '+') {
                out.push_back({LoopAttr::Kind::UnrollExplicit, 0});
                ++i;
                continue;
            }
            int64_t factor = 0;
            if (!readFactor(factor))
                return oneError("invalid attrs \"" + std::string(attrs) + "\": factor at offset " +
                                    std::to_string(at) + " must be between 1 and 2^31",
                                {"attributes are '.', 'u', 'uN', 'u+', 'p' or 'pN' with N >= 1"});
            out.push_back({c == 'u' ? LoopAttr::Kind::Unroll : LoopAttr::Kind::Parallel, factor});
        } else {
            return oneError("invalid attrs \"" + std::string(attrs) + "\": unexpected character at offset " +
                                std::to_string(at),
                            {"attributes are '.', 'u', 'uN', 'u+', 'p' or 'pN' with N >= 1"});
        }
    }
    if (out.empty()) return std::vector<LoopAttr>(numLoops);
    if (out.size() == 1) return std::vector<LoopAttr>(numLoops, out[0]);
    if (out.size() != numLoops)
        return oneError("attrs \"" + std::string(attrs) + "\" has " + std::to_string(out.size()) +
                            " attributes for " + std::to_string(numLoops) + " loops",
                        {"give one attribute per dimension, or a single one for all"});
    return out;
}

std::vector<int64_t> stridesFromRanks(const std::vector<int64_t>& shape, const std::vector<int>& ranks) {
    std::vector<int64_t> strides(shape.size(), 1);
    // Walk ranks from the highest down: the highest-ranked dimension has stride 1.
    std::vector<size_t> dimOfRank(shape.size(), 0);
    for (size_t d = 0; d < ranks.size() && d < shape.size(); ++d)
        if (ranks[d] >= 0 && static_cast<size_t>(ranks[d]) < shape.size()) dimOfRank[static_cast<size_t>(ranks[d])] = d;
    int64_t acc = 1;
    for (size_t r = shape.size(); r-- > 0;) {
        const size_t d = dimOfRank[r];
        strides[d] = acc;
        acc *= shape[d];
    }
    return strides;
}

// ---------------------------------------------------------------------------------------------
// Factor

int64_t Factor::numWorkers() const {
    if (kind == PrimitiveKind::Repeat) return 1;
    int64_t p = 1;
    for (int64_t e : shape) p *= e;
    return p;
}

int64_t Factor::tasksPerWorker() const {
    if (kind == PrimitiveKind::Spatial) return 1;
    int64_t p = 1;
    for (int64_t e : shape) p *= e;
    return p;
}

std::vector<int64_t> Factor::taskShape() const {
    std::vector<int64_t> s = shape;
    for (size_t d = 0; d < s.size() && d < projected.size(); ++d)
        if (projected[d]) s[d] = 1;
    return s;
}

bool Factor::rowMajor() const { return ranks == identityRanks(shape.size()); }
bool Factor::columnMajor() const { return ranks == reversedRanks(shape.size()); }

std::string Factor::str() const {
    std::string s = kind == PrimitiveKind::Spatial ? "spatial(" : "repeat(";
    s += joinInts(shape);
    if (!rowMajor()) {
        s += ", ranks=[";
        for (size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
        s += "]";
    }
    if (kind == PrimitiveKind::Repeat) {
        bool isDefault = attrs.size() == shape.size();
        for (size_t d = 0; isDefault && d < shape.size(); ++d) isDefault = attrs[d] == LoopAttr::fromExtent(shape[d]);
        if (!isDefault) {
            s += ", attrs=\"";
            for (const auto& a : attrs) s += a.str();
            s += "\"";
        }
    }
    return s + ")";
}

// ---------------------------------------------------------------------------------------------
// TaskMapping construction

Expected<TaskMapping> TaskMapping::fromFactors(std::vector<Factor> factors) {
    if (factors.empty()) return oneError("a task mapping needs at least one spatial or repeat level");
    if (factors.size() > static_cast<size_t>(kMaxFactors))
        return oneError("a task mapping may compose at most " + std::to_string(kMaxFactors) + " levels");
    for (auto& f : factors) {
        if (f.projected.empty()) f.projected.assign(f.shape.size(), false);
        if (auto problem = factorProblem(f); !problem.empty()) return oneError(problem);
    }
    const int rank = factors.front().rank();
    for (size_t k = 1; k < factors.size(); ++k)
        if (factors[k].rank() != rank)
            return oneError("cannot compose rank-" + std::to_string(rank) + " " + factors.front().str() +
                            " with rank-" + std::to_string(factors[k].rank()) + " " + factors[k].str());
    TaskMapping m;
    m.m_taskShape.assign(static_cast<size_t>(rank), 1);
    int64_t pairs = 1;
    for (const auto& f : factors) {
        const auto ts = f.taskShape();
        for (int d = 0; d < rank; ++d)
            if (!mulWithin(m.m_taskShape[static_cast<size_t>(d)], ts[static_cast<size_t>(d)], kMaxTasks,
                           m.m_taskShape[static_cast<size_t>(d)]))
                return oneError("task shape exceeds 2^31 in dim " + std::to_string(d));
        for (int64_t e : f.shape)
            if (!mulWithin(pairs, e, kMaxTasks, pairs))
                return oneError("the mapping has more than 2^31 (worker, task) pairs");
        m.m_numWorkers *= f.numWorkers();
        m.m_tasksPerWorker *= f.tasksPerWorker();
    }
    m.m_numTasks = 1;
    for (int64_t e : m.m_taskShape) m.m_numTasks *= e;  // <= pairs, so no overflow
    m.m_factors = std::move(factors);
    return m;
}

Expected<TaskMapping> TaskMapping::spatial(std::vector<int64_t> shape, std::vector<int> ranks) {
    Factor f;
    f.kind = PrimitiveKind::Spatial;
    if (ranks.empty()) ranks = identityRanks(shape.size());
    f.shape = std::move(shape);
    f.ranks = std::move(ranks);
    return fromFactors({std::move(f)});
}

Expected<TaskMapping> TaskMapping::repeat(std::vector<int64_t> shape, std::vector<int> ranks,
                                          std::optional<std::string_view> attrs) {
    Factor f;
    f.kind = PrimitiveKind::Repeat;
    if (ranks.empty()) ranks = identityRanks(shape.size());
    if (attrs) {
        auto parsed = parseLoopAttrs(*attrs, shape.size());
        if (!parsed) return parsed.diagnostics();
        f.attrs = std::move(*parsed);
    } else {
        for (int64_t e : shape) f.attrs.push_back(LoopAttr::fromExtent(e));
    }
    f.shape = std::move(shape);
    f.ranks = std::move(ranks);
    return fromFactors({std::move(f)});
}

Expected<TaskMapping> TaskMapping::rowSpatial(std::vector<int64_t> shape) { return spatial(std::move(shape)); }
Expected<TaskMapping> TaskMapping::colSpatial(std::vector<int64_t> shape) {
    auto r = reversedRanks(shape.size());
    return spatial(std::move(shape), std::move(r));
}
Expected<TaskMapping> TaskMapping::rowRepeat(std::vector<int64_t> shape) { return repeat(std::move(shape)); }
Expected<TaskMapping> TaskMapping::colRepeat(std::vector<int64_t> shape) {
    auto r = reversedRanks(shape.size());
    return repeat(std::move(shape), std::move(r));
}

Expected<TaskMapping> TaskMapping::autoMap(std::vector<int64_t> shape, int64_t workers, std::vector<int> ranks) {
    if (shape.empty()) return oneError("auto_map() needs at least one extent");
    if (ranks.empty()) ranks = identityRanks(shape.size());
    {
        // Validate shape and ranks before the walk uses them as indices.
        Factor probe;
        probe.kind = PrimitiveKind::Spatial;
        probe.shape = shape;
        probe.ranks = ranks;
        if (auto problem = factorProblem(probe); !problem.empty()) {
            if (problem.rfind("spatial", 0) == 0) problem.replace(0, 7, "auto_map");
            return oneError(problem);
        }
    }
    if (workers <= 0) return oneError("auto_map workers=" + std::to_string(workers) + " must be positive");
    int64_t numTasks = 1;
    for (int64_t e : shape) numTasks *= e;  // bounded by factorProblem
    if (numTasks % workers != 0)
        return oneError("auto_map: the number of tasks " + std::to_string(numTasks) + " of task shape " +
                            shapeStr(shape) + " is not a multiple of workers=" + std::to_string(workers),
                        {"auto_map needs workers to divide the task count; pad the shape or use fewer workers"});
    const size_t n = shape.size();
    std::vector<int64_t> spatialShape(n, 0), repeatShape(n, 0);
    std::vector<size_t> dimOfRank(n, 0);
    for (size_t d = 0; d < n; ++d) dimOfRank[static_cast<size_t>(ranks[d])] = d;
    int64_t remain = workers;
    for (size_t r = n; r-- > 0;) {
        const size_t d = dimOfRank[r];
        spatialShape[d] = std::gcd(remain, shape[d]);
        repeatShape[d] = shape[d] / spatialShape[d];
        remain /= spatialShape[d];
    }
    auto rep = repeat(repeatShape, ranks);
    if (!rep) return rep.diagnostics();
    auto sp = spatial(spatialShape, ranks);
    if (!sp) return sp.diagnostics();
    return compose(*rep, *sp);
}

Expected<TaskMapping> TaskMapping::compose(const TaskMapping& outer, const TaskMapping& inner) {
    if (outer.rank() != inner.rank())
        return oneError("cannot compose rank-" + std::to_string(outer.rank()) + " " + outer.str() + " with rank-" +
                        std::to_string(inner.rank()) + " " + inner.str());
    std::vector<Factor> all = outer.m_factors;
    all.insert(all.end(), inner.m_factors.begin(), inner.m_factors.end());
    return fromFactors(std::move(all));
}

Expected<TaskMapping> TaskMapping::projection(const std::vector<int>& dims) const {
    std::vector<Factor> factors = m_factors;
    for (int d : dims) {
        if (d < 0 || d >= rank())
            return oneError("projection dim " + std::to_string(d) + " is out of range for rank " +
                            std::to_string(rank()));
        for (auto& f : factors) f.projected[static_cast<size_t>(d)] = true;
    }
    return fromFactors(std::move(factors));
}

// ---------------------------------------------------------------------------------------------
// Enumeration

Task TaskMapping::taskAt(int64_t w, int64_t step) const {
    if (w < 0 || w >= m_numWorkers || step < 0 || step >= m_tasksPerWorker) return {};
    const size_t n = m_taskShape.size();
    Task task(n, 0);
    // Innermost factor varies fastest both in the worker split (w % inner.numWorkers) and in the
    // list order (outer tasks first), so decode both as mixed-radix numbers from the back.
    std::vector<int64_t> wf(m_factors.size()), kf(m_factors.size());
    for (size_t f = m_factors.size(); f-- > 0;) {
        const int64_t nw = m_factors[f].numWorkers();
        const int64_t nt = m_factors[f].tasksPerWorker();
        wf[f] = w % nw;
        w /= nw;
        kf[f] = step % nt;
        step /= nt;
    }
    for (size_t f = 0; f < m_factors.size(); ++f) {
        const Factor& fac = m_factors[f];
        const auto strides = fac.strides();
        const int64_t linear = fac.kind == PrimitiveKind::Spatial ? wf[f] : kf[f];
        for (size_t d = 0; d < n; ++d) {
            const int64_t extent = fac.projected[d] ? 1 : fac.shape[d];
            const int64_t coord = fac.projected[d] ? 0 : (linear / strides[d]) % fac.shape[d];
            task[d] = task[d] * extent + coord;
        }
    }
    return task;
}

void TaskMapping::forEachTask(int64_t w, const std::function<bool(int64_t, const Task&)>& fn) const {
    if (w < 0 || w >= m_numWorkers) return;
    for (int64_t s = 0; s < m_tasksPerWorker; ++s)
        if (!fn(s, taskAt(w, s))) return;
}

std::vector<Task> TaskMapping::worker2task(int64_t w) const {
    std::vector<Task> out;
    if (w < 0 || w >= m_numWorkers) return out;
    out.reserve(static_cast<size_t>(m_tasksPerWorker));
    forEachTask(w, [&](int64_t, const Task& t) {
        out.push_back(t);
        return true;
    });
    return out;
}

std::string TaskMapping::str() const {
    std::string s;
    for (size_t f = 0; f < m_factors.size(); ++f) {
        const Factor& fac = m_factors[f];
        const bool projected = std::find(fac.projected.begin(), fac.projected.end(), true) != fac.projected.end();
        if (f == 0) {
            s += fac.str();
        } else if (projected) {
            // `.projection` binds tighter than `*`, so this projects this factor alone.
            s += " * " + fac.str();
        } else {
            s += "." + fac.str();
        }
        if (projected) {
            s += ".projection({";
            bool first = true;
            for (size_t d = 0; d < fac.projected.size(); ++d)
                if (fac.projected[d]) {
                    s += (first ? "" : ", ") + std::to_string(d) + ": 0";
                    first = false;
                }
            s += "})";
        }
    }
    return s;
}

Expected<std::vector<CellOwner>> ownerGrid(const TaskMapping& mapping, int64_t maxCells) {
    if (mapping.numTasks() > maxCells || mapping.numWorkers() * mapping.tasksPerWorker() > maxCells)
        return oneError("the task grid " + shapeStr(mapping.taskShape()) + " is too large to enumerate (over " +
                        std::to_string(maxCells) + " cells)");
    std::vector<CellOwner> grid(static_cast<size_t>(mapping.numTasks()));
    const auto& shape = mapping.taskShape();
    for (int64_t w = 0; w < mapping.numWorkers(); ++w) {
        mapping.forEachTask(w, [&](int64_t step, const Task& t) {
            int64_t idx = 0;
            for (size_t d = 0; d < shape.size(); ++d) idx = idx * shape[d] + t[d];
            CellOwner& c = grid[static_cast<size_t>(idx)];
            if (c.count == 0) {
                c.worker = w;
                c.step = step;
            }
            ++c.count;
            return true;
        });
    }
    return grid;
}

// ---------------------------------------------------------------------------------------------
// Validation

DiagnosticList validateMapping(const TaskMapping& mapping, const ValidationOptions& options) {
    DiagnosticList out;
    const auto& ts = mapping.taskShape();
    if (!options.tensorShape.empty()) {
        const auto& xs = options.tensorShape;
        if (xs.size() != ts.size()) {
            out.add(oneError("mapping " + mapping.str() + " has rank " + std::to_string(ts.size()) +
                             " but the tensor " + shapeStr(xs) + " has rank " + std::to_string(xs.size()))
                        .items()[0]);
        } else {
            std::vector<std::string> needs, predicates, idle;
            bool bad = false;
            for (size_t d = 0; d < ts.size(); ++d) {
                if (xs[d] <= 0) {
                    out.add(oneError("tensor extent " + std::to_string(xs[d]) + " of dim " + std::to_string(d) +
                                     " must be positive")
                                .items()[0]);
                    bad = true;
                    continue;
                }
                const std::string v = coordName(static_cast<int>(d));
                if (ts[d] < xs[d]) {
                    const int64_t blocks = (xs[d] + ts[d] - 1) / ts[d];
                    needs.push_back("dim " + std::to_string(d) + " needs " + std::to_string(blocks) + " blocks of " +
                                    std::to_string(ts[d]) + " (ceil(" + std::to_string(xs[d]) + "/" +
                                    std::to_string(ts[d]) + "))");
                    if (blocks * ts[d] != xs[d]) predicates.push_back(v + " < " + std::to_string(xs[d]));
                } else if (ts[d] > xs[d]) {
                    idle.push_back("dim " + std::to_string(d) + ": " + std::to_string(ts[d] - xs[d]) + " of " +
                                   std::to_string(ts[d]));
                    predicates.push_back(v + " < " + std::to_string(xs[d]));
                }
            }
            if (!bad) {
                auto joinStr = [](const std::vector<std::string>& v, const char* sep) {
                    std::string s;
                    for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
                    return s;
                };
                if (!needs.empty()) {
                    std::string msg = "task shape " + shapeStr(ts) + " does not cover " + shapeStr(xs) + ": " +
                                      joinStr(needs, ", ");
                    if (!predicates.empty()) msg += ", and the predicate " + joinStr(predicates, " && ");
                    out.add(oneError(msg, {"compose an outer spatial level (e.g. the grid) over the blocks, "
                                           "or enlarge the mapping"})
                                .items()[0]);
                } else if (!predicates.empty()) {
                    Diagnostic d;
                    d.severity = support::Severity::Warning;
                    d.message = "task shape " + shapeStr(ts) + " exceeds " + shapeStr(xs) + ": needs the predicate " +
                                joinStr(predicates, " && ") + " (idle tasks in " + joinStr(idle, ", ") + ")";
                    out.add(std::move(d));
                }
            }
        }
    }
    if (options.maxWorkers > 0 && mapping.numWorkers() > options.maxWorkers) {
        out.add(oneError("mapping " + mapping.str() + " needs " + std::to_string(mapping.numWorkers()) +
                             " workers, over the block limit of " + std::to_string(options.maxWorkers) + " threads",
                         {"move the outer spatial levels to the grid, or turn a spatial level into repeat"})
                    .items()[0]);
    }
    for (const auto& f : mapping.factors())
        if (std::find(f.projected.begin(), f.projected.end(), true) != f.projected.end()) {
            Diagnostic d;
            d.severity = support::Severity::Warning;
            d.message = "mapping is projected: several workers or steps share a task (broadcast)";
            out.add(std::move(d));
            break;
        }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Lowering preview

namespace {

std::string loopPragma(const LoopAttr& a) {
    switch (a.kind) {
        case LoopAttr::Kind::Default: return {};
        case LoopAttr::Kind::Unroll:
            return a.factor > 0 ? "#pragma unroll " + std::to_string(a.factor) : std::string("#pragma unroll");
        case LoopAttr::Kind::UnrollExplicit: return "// u+: unrolled explicitly by the code generator";
        case LoopAttr::Kind::Parallel:
            return a.factor > 0 ? "#pragma omp parallel for num_threads(" + std::to_string(a.factor) + ")"
                                : std::string("#pragma omp parallel for");
    }
    return {};
}

}  // namespace

std::string loweringPreview(const TaskMapping& mapping, std::string_view workerVarView) {
    const std::string wv(workerVarView.empty() ? "w" : workerVarView);
    const auto& factors = mapping.factors();
    const size_t n = mapping.taskShape().size();
    std::ostringstream os;
    os << "// " << mapping.str() << "\n";
    os << "// " << mapping.numWorkers() << (mapping.numWorkers() == 1 ? " worker" : " workers") << ", task shape " << shapeStr(mapping.taskShape()) << ", "
       << mapping.tasksPerWorker() << (mapping.tasksPerWorker() == 1 ? " task" : " tasks")
       << " per worker; bound check: " << wv << " < " << mapping.numWorkers() << "\n";

    // Worker index of each level: w / (workers of the inner levels) % (workers of this level). The
    // outermost level with workers needs no mod because the bound check guarantees w < numWorkers.
    std::vector<int64_t> innerWorkers(factors.size(), 1);
    for (size_t f = factors.size(); f-- > 1;) innerWorkers[f - 1] = innerWorkers[f] * factors[f].numWorkers();
    bool outermost = true;
    std::vector<std::vector<std::string>> coord(factors.size(), std::vector<std::string>(n, "0"));
    std::string indent;
    std::vector<std::string> closers;
    std::ostringstream body;
    // Spatial levels first (they depend on w only), then the loop nests in level order.
    for (size_t f = 0; f < factors.size(); ++f) {
        const Factor& fac = factors[f];
        if (fac.kind != PrimitiveKind::Spatial) continue;
        const int64_t nw = fac.numWorkers();
        if (nw == 1) continue;
        std::string lw = wv;
        const bool isOuter = outermost;
        outermost = false;
        if (innerWorkers[f] != 1 || !isOuter) {
            lw = wv + std::to_string(f);
            std::string e = wv;
            if (innerWorkers[f] != 1) e += " / " + std::to_string(innerWorkers[f]);
            if (!isOuter) e += " % " + std::to_string(nw);
            os << "const int " << lw << " = " << e << ";  // worker in level " << f << ": " << fac.str() << "\n";
        } else {
            os << "// level " << f << ": " << fac.str() << " on " << wv << "\n";
        }
        const auto strides = fac.strides();
        for (size_t d = 0; d < n; ++d) {
            if (fac.projected[d] || fac.shape[d] == 1) continue;
            std::string e = lw;
            if (strides[d] != 1) e += " / " + std::to_string(strides[d]);
            if (fac.ranks[d] != 0) e += " % " + std::to_string(fac.shape[d]);
            const std::string name = "s" + std::to_string(f) + "_" + coordName(static_cast<int>(d));
            os << "const int " << name << " = " << e << ";\n";
            coord[f][d] = name;
        }
    }
    for (size_t f = 0; f < factors.size(); ++f) {
        const Factor& fac = factors[f];
        if (fac.kind != PrimitiveKind::Repeat) continue;
        os << indent << "// level " << f << ": " << fac.str() << "\n";
        std::vector<size_t> dimOfRank(n, 0);
        for (size_t d = 0; d < n; ++d) dimOfRank[static_cast<size_t>(fac.ranks[d])] = d;
        for (size_t r = 0; r < n; ++r) {
            const size_t d = dimOfRank[r];
            const std::string var = "r" + std::to_string(f) + "_" + coordName(static_cast<int>(d));
            if (auto p = loopPragma(fac.attrs[d]); !p.empty()) os << indent << p << "\n";
            os << indent << "for (int " << var << " = 0; " << var << " < " << fac.shape[d] << "; ++" << var
               << ") {\n";
            indent += "  ";
            closers.push_back(indent.substr(2) + "}\n");
            if (!fac.projected[d] && fac.shape[d] != 1) coord[f][d] = var;
        }
    }
    // Task coordinate d: fold over levels, outer * (inner extent) + inner.
    std::string args;
    for (size_t d = 0; d < n; ++d) {
        std::vector<std::string> terms;
        int64_t scale = 1;
        for (size_t f = factors.size(); f-- > 0;) {
            const int64_t ext = factors[f].taskShape()[d];
            if (coord[f][d] != "0") terms.push_back(scale == 1 ? coord[f][d] : coord[f][d] + " * " + std::to_string(scale));
            scale *= ext;
        }
        std::reverse(terms.begin(), terms.end());
        std::string e;
        for (size_t t = 0; t < terms.size(); ++t) e += (t ? " + " : "") + terms[t];
        if (e.empty()) e = "0";
        const std::string name = coordName(static_cast<int>(d));
        os << indent << "const int " << name << " = " << e << ";\n";
        args += (d ? ", " : "") + name;
    }
    os << indent << "body(" << args << ");\n";
    for (size_t c = closers.size(); c-- > 0;) os << closers[c];
    return os.str();
}

}  // namespace tessera::schedule
