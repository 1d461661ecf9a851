// TaskMapping: Hidet's worked examples as exact lists, auto_map docstring examples, and property tests
// against an independent reference model (a direct transcription of the definitions in
// shared/reference/semantics.md §2.1: a tree of primitives, repeat lists sorted by their rank key).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "core/schedule/mapping_parser.h"
#include "core/schedule/task_mapping.h"

namespace {

using tessera::schedule::Factor;
using tessera::schedule::LoopAttr;
using tessera::schedule::parseMapping;
using tessera::schedule::PrimitiveKind;
using tessera::schedule::Task;
using tessera::schedule::TaskMapping;

TaskMapping parse(const std::string& s) {
    auto m = parseMapping(s);
    EXPECT_TRUE(m.ok()) << s << ": " << (m.ok() ? "" : m.diagnostics().items()[0].format());
    if (!m) return *TaskMapping::spatial({1});
    return *m;
}

// ---- reference model --------------------------------------------------------------------------

struct RefNode {
    enum Kind { Spatial, Repeat, Composed } kind;
    std::vector<int64_t> shape;
    std::vector<int> ranks;
    std::shared_ptr<RefNode> outer, inner;

    int64_t workers() const {
        if (kind == Spatial) {
            int64_t p = 1;
            for (auto e : shape) p *= e;
            return p;
        }
        if (kind == Repeat) return 1;
        return outer->workers() * inner->workers();
    }
    std::vector<int64_t> taskShape() const {
        if (kind != Composed) return shape;
        auto a = outer->taskShape(), b = inner->taskShape();
        for (size_t i = 0; i < a.size(); ++i) a[i] *= b[i];
        return a;
    }
    std::vector<int64_t> strides() const {
        // stride of dim d = product of extents of the dims with a higher rank
        std::vector<int64_t> s(shape.size(), 1);
        for (size_t d = 0; d < shape.size(); ++d)
            for (size_t e = 0; e < shape.size(); ++e)
                if (ranks[e] > ranks[d]) s[d] *= shape[e];
        return s;
    }
    std::vector<Task> tasks(int64_t w) const {
        if (kind == Spatial) {
            auto st = strides();
            Task t;
            for (size_t d = 0; d < shape.size(); ++d) t.push_back((w / st[d]) % shape[d]);
            return {t};
        }
        if (kind == Repeat) {
            std::vector<Task> all{Task{}};
            for (auto e : shape) {
                std::vector<Task> next;
                for (auto& t : all)
                    for (int64_t i = 0; i < e; ++i) {
                        auto u = t;
                        u.push_back(i);
                        next.push_back(u);
                    }
                all = next;
            }
            auto st = strides();
            auto key = [&](const Task& t) {
                int64_t k = 0;
                for (size_t d = 0; d < t.size(); ++d) k += t[d] * st[d];
                return k;
            };
            std::stable_sort(all.begin(), all.end(), [&](const Task& a, const Task& b) { return key(a) < key(b); });
            return all;
        }
        const int64_t nb = inner->workers();
        auto ta = outer->tasks(w / nb), tb = inner->tasks(w % nb);
        auto bs = inner->taskShape();
        std::vector<Task> out;
        for (auto& a : ta)
            for (auto& b : tb) {
                Task t;
                for (size_t i = 0; i < a.size(); ++i) t.push_back(a[i] * bs[i] + b[i]);
                out.push_back(t);
            }
        return out;
    }
};

std::string ranksKw(const std::vector<int>& r) {
    std::string s = ", ranks=[";
    for (size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + std::to_string(r[i]);
    return s + "]";
}

// ---- Hidet's worked examples ------------------------------------------------------------------

TEST(ScheduleTaskMapping, ContiguousBlocksSpatialThenRepeat) {
    auto m = parse("spatial(2,5).repeat(3,4)");
    EXPECT_EQ(m.numWorkers(), 10);
    EXPECT_EQ(m.taskShape(), (std::vector<int64_t>{6, 20}));
    EXPECT_EQ(m.tasksPerWorker(), 12);
    EXPECT_EQ(m.worker2task(0), (std::vector<Task>{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {1, 2}, {1, 3},
                                                   {2, 0}, {2, 1}, {2, 2}, {2, 3}}));
    EXPECT_EQ(m.worker2task(7), (std::vector<Task>{{3, 8}, {3, 9}, {3, 10}, {3, 11}, {4, 8}, {4, 9}, {4, 10}, {4, 11},
                                                   {5, 8}, {5, 9}, {5, 10}, {5, 11}}));
    EXPECT_EQ(m.worker2task(9).front(), (Task{3, 16}));
    EXPECT_EQ(m.worker2task(9).back(), (Task{5, 19}));
    // Every worker: the contiguous 3x4 block at (3*(w/5), 4*(w%5)).
    for (int64_t w = 0; w < 10; ++w) {
        auto list = m.worker2task(w);
        for (int64_t k = 0; k < 12; ++k) EXPECT_EQ(list[k], (Task{3 * (w / 5) + k / 4, 4 * (w % 5) + k % 4}));
    }
}

TEST(ScheduleTaskMapping, StridedSetsRepeatThenSpatial) {
    auto m = parse("repeat(3,4).spatial(2,5)");
    EXPECT_EQ(m.numWorkers(), 10);
    EXPECT_EQ(m.taskShape(), (std::vector<int64_t>{6, 20}));
    EXPECT_EQ(m.worker2task(0), (std::vector<Task>{{0, 0}, {0, 5}, {0, 10}, {0, 15}, {2, 0}, {2, 5}, {2, 10}, {2, 15},
                                                   {4, 0}, {4, 5}, {4, 10}, {4, 15}}));
    EXPECT_EQ(m.worker2task(7), (std::vector<Task>{{1, 2}, {1, 7}, {1, 12}, {1, 17}, {3, 2}, {3, 7}, {3, 12}, {3, 17},
                                                   {5, 2}, {5, 7}, {5, 12}, {5, 17}}));
    for (int64_t w = 0; w < 10; ++w) {
        auto list = m.worker2task(w);
        for (int64_t k = 0; k < 12; ++k) EXPECT_EQ(list[k], (Task{2 * (k / 4) + w / 5, 5 * (k % 4) + w % 5}));
    }
}

TEST(ScheduleTaskMapping, RowVersusColumnSpatial) {
    auto row = parse("row_spatial(2,5)");
    auto col = parse("col_spatial(2,5)");
    EXPECT_EQ(row, parse("spatial(2,5)"));
    EXPECT_EQ(col, parse("spatial(2,5, ranks=[1,0])"));
    for (int64_t w = 0; w < 10; ++w) {
        EXPECT_EQ(row.worker2task(w), (std::vector<Task>{{w / 5, w % 5}}));
        EXPECT_EQ(col.worker2task(w), (std::vector<Task>{{w % 2, (w / 2) % 5}}));
    }
    EXPECT_EQ(col.worker2task(3), (std::vector<Task>{{1, 1}}));
}

TEST(ScheduleTaskMapping, RowVersusColumnRepeatOrder) {
    auto row = parse("row_repeat(2,3)");
    auto col = parse("col_repeat(2,3)");
    EXPECT_EQ(row.numWorkers(), 1);
    EXPECT_EQ(row.worker2task(0), (std::vector<Task>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
    EXPECT_EQ(col.worker2task(0), (std::vector<Task>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}}));
    auto r3 = parse("repeat(2,2,2, ranks=[1,2,0])");  // dim 2 outermost, then dim 0, then dim 1 fastest
    EXPECT_EQ(r3.worker2task(0), (std::vector<Task>{{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 1}, {0, 1, 1},
                                                    {1, 0, 1}, {1, 1, 1}}));
}

TEST(ScheduleTaskMapping, ThreeLevelCompositionAndAssociativity) {
    auto a = parse("spatial(2,1).repeat(2,2).spatial(1,3)");
    auto b = parse("spatial(2,1) * (repeat(2,2) * spatial(1,3))");
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.numWorkers(), 6);
    EXPECT_EQ(a.taskShape(), (std::vector<int64_t>{4, 6}));
    // w=4: outer spatial worker 4/3=1 -> (1,0); inner spatial 4%3=1 -> (0,1).
    EXPECT_EQ(a.worker2task(4), (std::vector<Task>{{2, 1}, {2, 4}, {3, 1}, {3, 4}}));
}

TEST(ScheduleTaskMapping, AutoMapDocstringExamples) {
    struct Case {
        std::vector<int64_t> shape;
        int64_t workers;
        std::vector<int> ranks;
        std::string expect;
    };
    const Case cases[] = {
        {{8, 32}, 64, {}, "repeat(4,1).spatial(2,32)"},
        {{8, 64}, 64, {}, "repeat(8,1).spatial(1,64)"},
        {{8, 96}, 64, {}, "repeat(4,3).spatial(2,32)"},
        {{8, 128}, 64, {}, "repeat(8,2).spatial(1,64)"},
        {{8, 96}, 64, {1, 0}, "repeat(1,12, ranks=[1,0]).spatial(8,8, ranks=[1,0])"},
        {{64, 8}, 64, {1, 0}, "repeat(1,8, ranks=[1,0]).spatial(64,1, ranks=[1,0])"},
        {{8, 16, 24}, 32, {}, "repeat(8,4,3).spatial(1,4,8)"},
    };
    for (const auto& c : cases) {
        auto m = TaskMapping::autoMap(c.shape, c.workers, c.ranks);
        ASSERT_TRUE(m.ok()) << c.expect;
        EXPECT_EQ(m->str(), c.expect);
        EXPECT_EQ(*m, parse(c.expect));
        EXPECT_EQ(m->numWorkers(), c.workers);
        EXPECT_EQ(m->taskShape(), c.shape);
    }
    EXPECT_EQ(parse("auto_map(8,32, workers=64)"), parse("repeat(4,1).spatial(2,32)"));
    EXPECT_EQ(parse("auto_map(8,96, workers=64, ranks=[1,0])"), parse("repeat(1,12, ranks=[1,0]).spatial(8,8, ranks=[1,0])"));
    auto bad = TaskMapping::autoMap({8, 41}, 64);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.diagnostics().items()[0].message.find("not a multiple of workers=64"), std::string::npos);
}

TEST(ScheduleTaskMapping, LoopAttrsDefaultsAndParsing) {
    auto m = parse("repeat(3,4)");
    ASSERT_EQ(m.factors().size(), 1u);
    EXPECT_EQ(m.factors()[0].attrs[0].str(), "u+");
    EXPECT_EQ(m.factors()[0].attrs[1].str(), ".");
    auto e = parse("repeat(3,4,5, attrs=\"u2.p8\")");
    EXPECT_EQ(e.factors()[0].attrs[0], (LoopAttr{LoopAttr::Kind::Unroll, 2}));
    EXPECT_EQ(e.factors()[0].attrs[1], LoopAttr{});
    EXPECT_EQ(e.factors()[0].attrs[2], (LoopAttr{LoopAttr::Kind::Parallel, 8}));
    EXPECT_EQ(e.str(), "repeat(3,4,5, attrs=\"u2.p8\")");
    auto one = parse("repeat(3,4, attrs='u')");
    EXPECT_EQ(one.factors()[0].attrs, (std::vector<LoopAttr>(2, LoopAttr{LoopAttr::Kind::Unroll, 0})));
    auto empty = parse("repeat(2,4, attrs=\"\")");
    EXPECT_EQ(empty.factors()[0].attrs, std::vector<LoopAttr>(2));
    EXPECT_EQ(empty.str(), "repeat(2,4, attrs=\"..\")");
    auto u = parse("repeat(5, attrs=\"u+\")");
    EXPECT_EQ(u.factors()[0].attrs[0].str(), "u+");
    EXPECT_FALSE(tessera::schedule::parseLoopAttrs("u0", 1).ok());
    EXPECT_FALSE(tessera::schedule::parseLoopAttrs("u2.", 3).ok());
    EXPECT_FALSE(tessera::schedule::parseLoopAttrs("x", 1).ok());
    EXPECT_FALSE(tessera::schedule::parseLoopAttrs("u99999999999999999999", 1).ok());
}

TEST(ScheduleTaskMapping, ProjectionKeepsWorkersAndZeroesTheDim) {
    auto m = parse("spatial(2,5).projection({0: 0})");
    EXPECT_EQ(m.numWorkers(), 10);
    EXPECT_EQ(m.taskShape(), (std::vector<int64_t>{1, 5}));
    EXPECT_EQ(m.worker2task(7), (std::vector<Task>{{0, 2}}));
    auto c = parse("spatial(2,5).repeat(3,4).projection({1: 0})");
    EXPECT_EQ(c.taskShape(), (std::vector<int64_t>{6, 1}));
    EXPECT_EQ(c.worker2task(7).size(), 12u);
    EXPECT_EQ(c.worker2task(7)[4], (Task{4, 0}));
    EXPECT_EQ(parse(c.str()), c);
    auto mixed = parse("repeat(2,2) * spatial(2,5).projection({1: 0})");
    EXPECT_EQ(mixed.str(), "repeat(2,2) * spatial(2,5).projection({1: 0})");
    EXPECT_EQ(mixed.taskShape(), (std::vector<int64_t>{4, 2}));
    auto grid = tessera::schedule::ownerGrid(m);
    ASSERT_TRUE(grid.ok());
    EXPECT_EQ((*grid)[2].worker, 2);
    EXPECT_EQ((*grid)[2].count, 2);
}

TEST(ScheduleTaskMapping, ErrorsNotCrashes) {
    auto comp = TaskMapping::compose(*TaskMapping::spatial({2, 5}), *TaskMapping::repeat({4}));
    ASSERT_FALSE(comp.ok());
    EXPECT_EQ(comp.diagnostics().items()[0].message, "cannot compose rank-2 spatial(2,5) with rank-1 repeat(4)");
    EXPECT_FALSE(TaskMapping::spatial({2, 0}).ok());
    EXPECT_FALSE(TaskMapping::spatial({-3}).ok());
    EXPECT_FALSE(TaskMapping::spatial({}).ok());
    EXPECT_FALSE(TaskMapping::spatial({2, 2}, {0, 0}).ok());
    EXPECT_FALSE(TaskMapping::spatial({2, 2}, {0}).ok());
    EXPECT_FALSE(TaskMapping::repeat({65536, 65536}).ok());  // 2^32 tasks
    EXPECT_TRUE(TaskMapping::repeat({65536, 32768}).ok());   // exactly 2^31
    EXPECT_FALSE(TaskMapping::compose(*TaskMapping::spatial({65536}), *TaskMapping::repeat({65536})).ok());
    EXPECT_FALSE(TaskMapping::autoMap({8, 32}, 0).ok());
    EXPECT_FALSE(TaskMapping::autoMap({8, 32}, 64, {0, 0}).ok());
    EXPECT_FALSE(TaskMapping::spatial(std::vector<int64_t>(17, 1)).ok());
    EXPECT_FALSE(TaskMapping::spatial({4}).value().projection({1}).ok());
    auto big = TaskMapping::repeat({65536, 32768});
    EXPECT_EQ(big->taskAt(0, big->tasksPerWorker() - 1), (Task{65535, 32767}));
    EXPECT_TRUE(big->taskAt(1, 0).empty());
    EXPECT_TRUE(big->taskAt(0, -1).empty());
    EXPECT_FALSE(tessera::schedule::ownerGrid(*big).ok());
}

TEST(ScheduleTaskMapping, ValidationReasons) {
    using tessera::schedule::validateMapping;
    using tessera::schedule::ValidationOptions;
    auto m = parse("spatial(8,16)");
    auto d = validateMapping(m, ValidationOptions{{10, 16}, 1024});
    ASSERT_TRUE(d.hasErrors());
    EXPECT_EQ(d.items()[0].message,
              "task shape [8,16] does not cover [10,16]: dim 0 needs 2 blocks of 8 (ceil(10/8)), and the predicate i < 10");
    auto exact = validateMapping(m, ValidationOptions{{16, 16}, 1024});
    EXPECT_EQ(exact.items()[0].message, "task shape [8,16] does not cover [16,16]: dim 0 needs 2 blocks of 8 (ceil(16/8))");
    auto over = validateMapping(parse("spatial(16,16)"), ValidationOptions{{10, 16}, 1024});
    ASSERT_EQ(over.items().size(), 1u);
    EXPECT_EQ(over.items()[0].severity, tessera::support::Severity::Warning);
    EXPECT_EQ(over.items()[0].message,
              "task shape [16,16] exceeds [10,16]: needs the predicate i < 10 (idle tasks in dim 0: 6 of 16)");
    EXPECT_TRUE(validateMapping(m, ValidationOptions{{8, 16}, 1024}).empty());
    auto rank = validateMapping(m, ValidationOptions{{8}, 0});
    EXPECT_EQ(rank.items()[0].message, "mapping spatial(8,16) has rank 2 but the tensor [8] has rank 1");
    auto threads = validateMapping(parse("spatial(32,64)"), ValidationOptions{{}, 1024});
    ASSERT_TRUE(threads.hasErrors());
    EXPECT_EQ(threads.items()[0].message, "mapping spatial(32,64) needs 2048 workers, over the block limit of 1024 threads");
    EXPECT_TRUE(validateMapping(parse("spatial(32,64)"), ValidationOptions{{}, 2048}).empty());
}

TEST(ScheduleTaskMapping, StructureAccessor) {
    auto m = parse("spatial(4,2, ranks=[1,0]).repeat(2,2, attrs=\"u2u\").spatial(4,8)");
    ASSERT_EQ(m.factors().size(), 3u);
    EXPECT_EQ(m.factors()[0].kind, PrimitiveKind::Spatial);
    EXPECT_TRUE(m.factors()[0].columnMajor());
    EXPECT_EQ(m.factors()[1].kind, PrimitiveKind::Repeat);
    EXPECT_EQ(m.factors()[1].tasksPerWorker(), 4);
    EXPECT_EQ(m.factors()[2].numWorkers(), 32);
    EXPECT_EQ(m.numWorkers(), 256);
    EXPECT_EQ(m.taskShape(), (std::vector<int64_t>{32, 32}));
    EXPECT_EQ(tessera::schedule::stridesFromRanks({2, 3, 4}, {0, 1, 2}), (std::vector<int64_t>{12, 4, 1}));
    EXPECT_EQ(tessera::schedule::stridesFromRanks({2, 3, 4}, {2, 1, 0}), (std::vector<int64_t>{1, 2, 6}));
}

// ---- properties over random mappings ----------------------------------------------------------

struct Random {
    std::mt19937_64 rng{12345};
    int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
};

TEST(ScheduleTaskMapping, RandomMappingsCoverGridOnceAndMatchReference) {
    Random r;
    int checked = 0;
    for (int iter = 0; iter < 400; ++iter) {
        const int rank = static_cast<int>(r.uniform(1, 3));
        const int levels = static_cast<int>(r.uniform(1, 3));
        std::string expr;
        std::shared_ptr<RefNode> ref;
        for (int l = 0; l < levels; ++l) {
            auto node = std::make_shared<RefNode>();
            node->kind = r.uniform(0, 1) ? RefNode::Spatial : RefNode::Repeat;
            for (int d = 0; d < rank; ++d) node->shape.push_back(r.uniform(1, 4));
            node->ranks.resize(rank);
            for (int d = 0; d < rank; ++d) node->ranks[d] = d;
            std::shuffle(node->ranks.begin(), node->ranks.end(), r.rng);
            std::string prim = node->kind == RefNode::Spatial ? "spatial(" : "repeat(";
            for (int d = 0; d < rank; ++d) prim += (d ? "," : "") + std::to_string(node->shape[d]);
            prim += ranksKw(node->ranks) + ")";
            if (!ref) {
                expr = prim;
                ref = node;
            } else {
                // Alternate between chain and `*` spellings.
                expr = (l % 2) ? expr + "." + prim : "(" + expr + ") * " + prim;
                auto comp = std::make_shared<RefNode>();
                comp->kind = RefNode::Composed;
                comp->outer = ref;
                comp->inner = node;
                ref = comp;
            }
        }
        auto m = parseMapping(expr);
        ASSERT_TRUE(m.ok()) << expr;
        ASSERT_EQ(m->numWorkers(), ref->workers()) << expr;
        ASSERT_EQ(m->taskShape(), ref->taskShape()) << expr;
        auto grid = tessera::schedule::ownerGrid(*m);
        ASSERT_TRUE(grid.ok());
        for (const auto& cell : *grid) ASSERT_EQ(cell.count, 1) << expr;
        for (int64_t w = 0; w < m->numWorkers(); ++w) ASSERT_EQ(m->worker2task(w), ref->tasks(w)) << expr << " w=" << w;
        // The canonical text parses back to the same mapping.
        auto again = parseMapping(m->str());
        ASSERT_TRUE(again.ok()) << m->str();
        ASSERT_EQ(*again, *m) << expr;
        ++checked;
    }
    EXPECT_EQ(checked, 400);
}

TEST(ScheduleTaskMapping, RandomAutoMapsCoverGridOnce) {
    Random r;
    for (int iter = 0; iter < 200; ++iter) {
        const int rank = static_cast<int>(r.uniform(1, 3));
        std::vector<int64_t> shape;
        int64_t total = 1;
        for (int d = 0; d < rank; ++d) {
            shape.push_back(r.uniform(1, 12));
            total *= shape.back();
        }
        std::vector<int64_t> divisors;
        for (int64_t k = 1; k <= total; ++k)
            if (total % k == 0) divisors.push_back(k);
        const int64_t workers = divisors[static_cast<size_t>(r.uniform(0, static_cast<int64_t>(divisors.size()) - 1))];
        std::vector<int> ranks(rank);
        for (int d = 0; d < rank; ++d) ranks[d] = d;
        std::shuffle(ranks.begin(), ranks.end(), r.rng);
        auto m = TaskMapping::autoMap(shape, workers, ranks);
        ASSERT_TRUE(m.ok());
        EXPECT_EQ(m->numWorkers(), workers);
        EXPECT_EQ(m->taskShape(), shape);
        auto grid = tessera::schedule::ownerGrid(*m);
        ASSERT_TRUE(grid.ok());
        for (const auto& cell : *grid) ASSERT_EQ(cell.count, 1);
    }
}

}  // namespace
