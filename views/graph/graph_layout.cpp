#include "views/graph/graph_layout.h"

#include "core/support/dot_escape.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

#include <QList>
#include <QString>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

namespace tessera::views {
namespace {

// cgraph and gvc keep process-wide state (the default discipline, the string dictionary, the
// plugin list), so every use is serialised here.
std::mutex& graphvizMutex()
{
    static std::mutex m;
    return m;
}

// One context for the process: creating it loads and parses the plugin configuration, which
// costs more than laying out a small graph. Intentionally never freed.
GVC_t* graphvizContext()
{
    static GVC_t* ctx = gvContext();
    return ctx;
}

std::string inches(double points)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", points / 72.0);
    return buf;
}

int parseId(const char* name, char prefix)
{
    if (name == nullptr || name[0] != prefix)
        return -1;
    char* end = nullptr;
    const long v = std::strtol(name + 1, &end, 10);
    if (end == name + 1 || *end != '\0')
        return -1;
    return static_cast<int>(v);
}

bool isCancelled(const support::CancelToken* cancel) { return cancel != nullptr && cancel->isCancelled(); }

struct GraphCloser {
    Agraph_t* g = nullptr;
    bool laidOut = false;
    ~GraphCloser()
    {
        if (g == nullptr)
            return;
        if (laidOut)
            gvFreeLayout(graphvizContext(), g);
        agclose(g);
    }
};

}  // namespace


std::string buildDot(const LayoutRequest& request)
{
    const bool large = request.nodes.size() > kLargeGraphNodes;
    std::string dot;
    dot.reserve(64 * (request.nodes.size() + request.edges.size()) + 256);
    dot += "digraph tessera {\n";
    dot += "  graph [rankdir=TB, ranksep=\"" + inches(request.rankSep) + "\", nodesep=\"" + inches(request.nodeSep) + "\"";
    if (large) {
        // dot's cost is dominated by mincross and spline routing on big graphs; bound both.
        dot += ", splines=line, nslimit=2, nslimit1=2, mclimit=0.2, searchsize=30, remincross=false";
    } else {
        dot += ", splines=spline";
    }
    dot += "];\n";
    // Labels are drawn by the view; Graphviz only needs box sizes, so it never measures text.
    dot += "  node [shape=box, fixedsize=true, label=\"\"];\n";
    dot += "  edge [arrowhead=normal, arrowsize=0.7];\n";
    for (const LayoutNodeIn& n : request.nodes) {
        dot += "  n" + std::to_string(n.id) + " [width=\"" + inches(n.size.width()) + "\", height=\"" +
               inches(n.size.height()) + "\"";
        if (!n.label.empty())
            dot += ", tooltip=\"" + support::escapeDotString(n.label) + "\"";
        dot += "];\n";
    }
    for (const LayoutEdgeIn& e : request.edges) {
        dot += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to) + " [key=\"e" + std::to_string(e.id) + "\"";
        if (e.weight != 1)
            dot += ", weight=" + std::to_string(std::max(0, e.weight));
        dot += "];\n";
    }
    dot += "}\n";
    return dot;
}

LayoutResult layoutGraph(const LayoutRequest& request, const support::CancelToken* cancel)
{
    const auto start = std::chrono::steady_clock::now();
    LayoutResult result;
    auto finish = [&](LayoutResult& r) -> LayoutResult {
        r.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return std::move(r);
    };
    auto cancelled = [&]() -> LayoutResult {
        LayoutResult r;
        r.cancelled = true;
        return finish(r);
    };

    if (isCancelled(cancel))
        return cancelled();
    if (request.nodes.empty()) {
        result.ok = true;
        return finish(result);
    }

    std::map<int, std::size_t> nodeIndex;
    for (std::size_t i = 0; i < request.nodes.size(); ++i) {
        if (!nodeIndex.emplace(request.nodes[i].id, i).second) {
            result.error = "duplicate node id " + std::to_string(request.nodes[i].id);
            return finish(result);
        }
    }
    std::map<int, std::size_t> edgeIndex;
    for (std::size_t i = 0; i < request.edges.size(); ++i) {
        const LayoutEdgeIn& e = request.edges[i];
        if (nodeIndex.count(e.from) == 0 || nodeIndex.count(e.to) == 0) {
            result.error = "edge " + std::to_string(e.id) + " refers to an unknown node";
            return finish(result);
        }
        if (!edgeIndex.emplace(e.id, i).second) {
            result.error = "duplicate edge id " + std::to_string(e.id);
            return finish(result);
        }
    }

    const std::string dot = buildDot(request);
    if (isCancelled(cancel))
        return cancelled();

    std::lock_guard<std::mutex> lock(graphvizMutex());
    if (isCancelled(cancel))
        return cancelled();

    GraphCloser graph;
    graph.g = agmemread(dot.c_str());
    if (graph.g == nullptr) {
        result.error = "Graphviz could not read the generated graph";
        return finish(result);
    }
    if (isCancelled(cancel))
        return cancelled();
    if (gvLayout(graphvizContext(), graph.g, "dot") != 0) {
        result.error = "Graphviz dot layout failed";
        return finish(result);
    }
    graph.laidOut = true;
    if (isCancelled(cancel))
        return cancelled();

    const boxf bb = GD_bb(graph.g);
    const double top = bb.UR.y;
    auto flip = [top](pointf p) { return QPointF(p.x, top - p.y); };
    result.bounds = QRectF(QPointF(bb.LL.x, 0), QPointF(bb.UR.x, bb.UR.y - bb.LL.y));
    result.simplifiedSplines = request.nodes.size() > kLargeGraphNodes;

    result.nodes.resize(request.nodes.size());
    result.edges.resize(request.edges.size());
    for (std::size_t i = 0; i < request.edges.size(); ++i) {
        result.edges[i].id = request.edges[i].id;
        result.edges[i].from = request.edges[i].from;
        result.edges[i].to = request.edges[i].to;
    }

    std::size_t visited = 0;
    for (Agnode_t* n = agfstnode(graph.g); n != nullptr; n = agnxtnode(graph.g, n)) {
        if ((++visited & 1023) == 0 && isCancelled(cancel))
            return cancelled();
        const int id = parseId(agnameof(n), 'n');
        const auto it = nodeIndex.find(id);
        if (it == nodeIndex.end())
            continue;
        LayoutNodeOut& out = result.nodes[it->second];
        out.id = id;
        out.center = flip(ND_coord(n));
        out.size = QSizeF(ND_width(n) * 72.0, ND_height(n) * 72.0);

        for (Agedge_t* e = agfstout(graph.g, n); e != nullptr; e = agnxtout(graph.g, e)) {
            const auto eit = edgeIndex.find(parseId(agnameof(e), 'e'));
            if (eit == edgeIndex.end())
                continue;
            LayoutEdgeOut& eo = result.edges[eit->second];
            const splines* spl = ED_spl(e);
            if (spl == nullptr || spl->size == 0)
                continue;
            for (int b = 0; b < spl->size; ++b) {
                const bezier& bz = spl->list[b];
                for (int k = 0; k < bz.size; ++k) {
                    // Consecutive Béziers share their joint point; keep it once.
                    if (b > 0 && k == 0)
                        continue;
                    eo.points.push_back(flip(bz.list[k]));
                }
            }
            const bezier& last = spl->list[spl->size - 1];
            if (last.eflag != 0) {
                eo.hasArrow = true;
                eo.arrowTip = flip(last.ep);
            }
        }
    }

    result.ok = true;
    return finish(result);
}

}  // namespace tessera::views
