#pragma once
/// @file
/// Graph layout with Graphviz `dot` (libgvc/libcgraph), as a plain function.
///
/// The caller describes the graph as plain data (ids, box sizes, edges); nothing here touches
/// Qt's event loop or widgets, so layoutGraph() may run on a worker thread.
///
/// Coordinates: scene units are typographic points (1/72 inch), the unit Graphviz uses, with
/// y growing downwards (Graphviz's y axis is flipped). Ranks run top to bottom (rankdir=TB).
///
/// Thread rules: layoutGraph may be called from any thread. cgraph keeps global state and is not
/// thread-safe, so calls are serialised by a mutex inside; the app still runs one layout at a time.

#include <cstdint>
#include <string>
#include <vector>

#include <QPointF>
#include <QRectF>
#include <QSizeF>

#include "core/support/cancel.h"

namespace tessera::views {

struct LayoutNodeIn {
    int id = 0;             ///< caller's id (any int, unique)
    QSizeF size;            ///< box size in points (from the caller's text metrics)
    std::string label;      ///< informative only (escaped into the DOT text); may hold any bytes
};

struct LayoutEdgeIn {
    int id = 0;             ///< caller's id (unique)
    int from = 0, to = 0;   ///< node ids
    int weight = 1;         ///< dot edge weight: heavier edges are kept shorter and straighter
};

struct LayoutRequest {
    std::vector<LayoutNodeIn> nodes;
    std::vector<LayoutEdgeIn> edges;
    double rankSep = 36;    ///< points between ranks (room for edge labels)
    double nodeSep = 24;    ///< points between nodes in a rank
};

struct LayoutNodeOut {
    int id = 0;
    QPointF center;
    QSizeF size;
};

struct LayoutEdgeOut {
    int id = 0;
    int from = 0, to = 0;
    /// Cubic Bézier control points: p0, (c1, c2, p)*; at least 4 points when laid out.
    std::vector<QPointF> points;
    bool hasArrow = false;
    QPointF arrowTip;       ///< where the arrowhead points to (when hasArrow); the path ends at its base
};

struct LayoutResult {
    bool ok = false;
    bool cancelled = false;
    std::string error;      ///< one line when !ok && !cancelled
    std::vector<LayoutNodeOut> nodes;  ///< same order as the request's nodes
    std::vector<LayoutEdgeOut> edges;  ///< same order as the request's edges
    QRectF bounds;          ///< bounding box of the drawing
    double milliseconds = 0; ///< wall time spent in this call
    bool simplifiedSplines = false;  ///< large graph: straight-line edges were used for speed
};

/// Above this many nodes the layout trades quality for speed (straight edges, bounded
/// network-simplex and mincross iterations).
constexpr std::size_t kLargeGraphNodes = 800;

/// DOT text for the request (node ids as DOT ids "n<id>", labels escaped). Exposed for tests.
std::string buildDot(const LayoutRequest& request);


/// Lays out the graph with dot. `cancel` (optional) is checked before and after the Graphviz
/// call and while results are read; a cancelled call returns cancelled = true and no geometry.
LayoutResult layoutGraph(const LayoutRequest& request, const support::CancelToken* cancel = nullptr);

}  // namespace tessera::views
