#include "views/fusion/fusion_plan_snapshot.h"

#include <array>

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QStringList toList(const std::vector<std::string>& v)
{
    QStringList out;
    out.reserve(static_cast<qsizetype>(v.size()));
    for (const std::string& s : v)
        out << fromStd(s);
    return out;
}

}  // namespace

int FusionPlanSnapshot::fusedGroupCount() const
{
    int n = 0;
    for (const FusionPlanRow& r : rows)
        n += r.fused() ? 1 : 0;
    return n;
}

qint64 FusionPlanSnapshot::totalBytesSaved() const
{
    qint64 sum = 0;
    for (const FusionPlanRow& r : rows)
        sum += r.bytesSaved > 0 ? r.bytesSaved : 0;
    return sum;
}

bool FusionPlanRow::convChain() const
{
    return kind == QLatin1String(schedule::fusionKindName(schedule::FusionKind::DwPw)) ||
           kind == QLatin1String(schedule::fusionKindName(schedule::FusionKind::PwDw)) ||
           kind == QLatin1String(schedule::fusionKindName(schedule::FusionKind::PwPw));
}

qint64 FusionPlanSnapshot::convChainBytesSaved() const
{
    qint64 sum = 0;
    for (const FusionPlanRow& r : rows)
        sum += r.convChain() && r.bytesSaved > 0 ? r.bytesSaved : 0;
    return sum;
}

int FusionPlanSnapshot::rowOf(const QString& group) const
{
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].group == group)
            return static_cast<int>(i);
    }
    return -1;
}

int FusionPlanSnapshot::rowOfNode(const QString& node) const
{
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].ops.contains(node))
            return static_cast<int>(i);
    }
    return -1;
}

QColor fusionGroupColour(int fusedIndex)
{
    // Light hues that stay distinct next to each other and under the graph's op colours.
    static const std::array<QColor, 10> kPalette = {
        QColor(0x8e, 0xc5, 0xff), QColor(0xff, 0xb8, 0x6c), QColor(0x9b, 0xe0, 0x9b), QColor(0xf2, 0x9f, 0xc5),
        QColor(0xc7, 0xb2, 0xff), QColor(0xff, 0xe0, 0x6b), QColor(0x7f, 0xdb, 0xd4), QColor(0xff, 0x9e, 0x9e),
        QColor(0xb8, 0xd8, 0x6f), QColor(0xd0, 0xb4, 0x8c),
    };
    const int n = static_cast<int>(kPalette.size());
    return kPalette[static_cast<std::size_t>(((fusedIndex % n) + n) % n)];
}

FusionPlanSnapshot makeFusionPlanSnapshot(const schedule::FusionPlan& plan,
                                          const std::vector<schedule::FusionViolation>& violations,
                                          const std::map<std::string, std::string>& advice)
{
    FusionPlanSnapshot s;
    s.planner = fromStd(plan.planner);
    s.hardware = fromStd(plan.hardware);
    s.rows.reserve(plan.groups.size());
    int fused = 0;
    for (const schedule::FusionGroup& g : plan.groups) {
        FusionPlanRow r;
        r.group = fromStd(g.name);
        r.kind = QString::fromLatin1(schedule::fusionKindName(g.kind));
        r.ops = toList(g.ops);
        r.anchor = fromStd(g.anchor);
        r.prologue = toList(g.prologue);
        r.epilogue = toList(g.epilogue);
        r.tile = formatTile(g.tile);
        r.bytesSaved = g.predictedBytesSaved;
        r.predictedBytes = g.predictedBytes;
        r.redundantFlops = g.redundantFlops;
        r.reason = fromStd(g.reason);
        if (const auto it = advice.find(g.name); it != advice.end())
            r.advice = fromStd(it->second);
        if (r.fused())
            r.colour = fusionGroupColour(fused++);
        s.rows.push_back(std::move(r));
    }
    for (const schedule::FusionViolation& v : violations) {
        if (v.group < 0 || v.group >= static_cast<int>(s.rows.size()))
            continue;
        FusionPlanRow& r = s.rows[static_cast<std::size_t>(v.group)];
        if (r.rule.isEmpty())
            r.rule = fromStd(v.rule);
        r.status += (r.status.isEmpty() ? QString() : QStringLiteral("; ")) + fromStd(v.message);
    }
    return s;
}

QString formatBytes(qint64 bytes)
{
    if (bytes < 0)
        return QStringLiteral("\u2014");
    if (bytes < 1024)
        return QStringLiteral("%1 B").arg(bytes);
    if (bytes < 1024 * 1024)
        return QStringLiteral("%1 KiB").arg(static_cast<double>(bytes) / 1024.0, 0, 'f', 1);
    if (bytes < 1024LL * 1024 * 1024)
        return QStringLiteral("%1 MiB").arg(static_cast<double>(bytes) / (1024.0 * 1024.0), 0, 'f', 2);
    return QStringLiteral("%1 GiB").arg(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), 0, 'f', 2);
}

QString formatFlops(qint64 flops)
{
    if (flops <= 0)
        return QStringLiteral("0");
    const double f = static_cast<double>(flops);
    if (flops < 1000)
        return QStringLiteral("%1 FLOP").arg(flops);
    if (flops < 1000000)
        return QStringLiteral("%1 kFLOP").arg(f / 1e3, 0, 'f', 1);
    if (flops < 1000000000)
        return QStringLiteral("%1 MFLOP").arg(f / 1e6, 0, 'f', 2);
    return QStringLiteral("%1 GFLOP").arg(f / 1e9, 0, 'f', 2);
}

QString formatTile(const schedule::FusionTile& tile)
{
    if (tile.empty())
        return {};
    QString t = QStringLiteral("%1\u00d7%2\u00d7%3").arg(tile.h).arg(tile.w).arg(tile.depth);
    if (tile.filters > 0)
        t += QStringLiteral(" \u00b7 %1 filters").arg(tile.filters);
    return t;
}

QString compactNodeName(const QString& name)
{
    if (!name.contains(QLatin1Char('/')))
        return name;
    const QStringList parts = name.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    QStringList kept;
    for (qsizetype i = 0; i < parts.size(); ++i) {
        if (i + 1 < parts.size() && parts[i + 1].startsWith(parts[i]))
            continue;
        kept << parts[i];
    }
    return kept.isEmpty() ? name : kept.join(QLatin1Char('/'));
}

}  // namespace tessera::views
