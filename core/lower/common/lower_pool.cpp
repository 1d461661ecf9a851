// MaxPool and AveragePool (N-D, pads, strides, dilations, auto_pad, ceil_mode, count_include_pad).
// GlobalAveragePool / GlobalMaxPool are reductions (core/lower/common/lower_reduce.cpp).
//
// Loop structure: mapped over the output [N, C, O_1..O_r]; default tile (1, 1, .., th, tw) with tw
// the whole last output extent (<= 256) and th the rows fitting ~1024 accumulators. Per tile a
// Local accumulator is initialised (-inf or 0), then `for rows: for kernel rows (guard): for kw
// (copied per tap): for ow in the tap's valid range (vectorised): acc = max(acc, X) / acc + X`, and
// stored; the average divides by the closed-form count of taps inside the input (or inside the
// padded input with count_include_pad), computed per output coordinate in the store loop.

#include <algorithm>
#include <limits>
#include <string>

#include "core/lower/detail/lower_heavy.h"

namespace tessera::lower::detail {

namespace {

std::string dimsText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

Expr floorDivE(const Expr& a, std::int64_t b) { return b == 1 ? a : binary(BinaryOp::FloorDiv, a, intImm(b)); }
Expr ceilDivE(const Expr& a, std::int64_t b) {
    return b == 1 ? a : unary(UnaryOp::Neg, binary(BinaryOp::FloorDiv, unary(UnaryOp::Neg, a), intImm(b)));
}

std::int64_t divisorAtMost(std::int64_t n, std::int64_t cap) {
    for (std::int64_t c = std::min(n, std::max<std::int64_t>(cap, 1)); c >= 1; --c)
        if (n % c == 0) return c;
    return 1;
}

/// Number of window taps of dim i at output coordinate o that fall inside the input (or, with
/// includePad, inside the padded input).
Expr tapCount(const WindowGeom& w, std::size_t i, const Expr& o, bool includePad) {
    const Expr start = o * intImm(w.s[i]);  // padded coordinate of tap 0
    if (includePad) {
        // taps k with start + k*d < in + pb + pe
        const Expr c = ceilDivE(intImm(w.in[i] + w.pb[i] + w.pe[i]) - start, w.d[i]);
        return maxOf(intImm(0), minOf(intImm(w.k[i]), c));
    }
    const Expr lo = maxOf(intImm(0), ceilDivE(intImm(w.pb[i]) - start, w.d[i]));
    const Expr hi = minOf(intImm(w.k[i] - 1), floorDivE(intImm(w.in[i] - 1 + w.pb[i]) - start, w.d[i]));
    return maxOf(intImm(0), hi - lo + intImm(1));
}

support::Expected<LoweredKernel> lowerPool(const LowerContext& ctx, bool isMax) {
    const ir::Node& node = ctx.node;
    if (node.inputs.size() != 1 || node.outputs.empty() || node.outputs[0] == ir::kNoValue)
        return lowerError(ctx, "pooling needs one input and one output");
    // MaxPool's optional Indices output: the flat index of each maximum in the input (ONNX:
    // row-major over N, C and the spatial dims; storage_order 1 takes the spatial dims column-major).
    const bool withIndices = isMax && node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue;
    const bool columnMajor = node.attrInt("storage_order", 0) != 0;
    auto xs = shapeOf(ctx, node.inputs[0]);
    if (!xs) return xs.diagnostics();
    auto ys = shapeOf(ctx, node.outputs[0]);
    if (!ys) return ys.diagnostics();
    if (xs->size() < 3) return lowerError(ctx, "pooling needs an input of rank >= 3, got " + dimsText(*xs));
    const std::size_t r = xs->size() - 2;
    const std::vector<std::int64_t> in(xs->begin() + 2, xs->end());
    const std::vector<std::int64_t> kernel = node.attrInts("kernel_shape");
    if (kernel.size() != r) return lowerError(ctx, "kernel_shape must have " + std::to_string(r) + " values");
    auto geom = windowGeometry(ctx, in, kernel, node.attrInt("ceil_mode", 0) != 0);
    if (!geom) return geom.diagnostics();
    const WindowGeom& w = *geom;
    const bool includePad = node.attrInt("count_include_pad", 0) != 0;
    std::vector<std::int64_t> outShape{(*xs)[0], (*xs)[1]};
    outShape.insert(outShape.end(), w.out.begin(), w.out.end());
    if (*ys != outShape) return lowerError(ctx, "output shape " + dimsText(*ys) + " differs from " + dimsText(outShape));
    const DType outT = dtypeOf(ctx.g, node.outputs[0]);
    const bool integral = !ir::isFloatingPoint(outT);
    if (integral && (!isMax || !ir::isInteger(outT) || outT == DType::U64))
        return unsupportedForm(ctx, "average pooling of non-float tensors (and max pooling of " +
                                        std::string(ir::dtypeName(outT)) + ") is not supported");
    // Integers are compared as i64 (exact for every integer type but u64), starting from the
    // type's lowest value; floats in their accumulator type, starting from -inf.
    const DType accT = integral ? DType::I64 : accumulatorType(outT);

    LoweredKernel lk = beginKernel(ctx);
    const int X = addInput(ctx, lk, node.inputs[0]);
    const int Y = addOutput(ctx, lk, node.outputs[0]);
    const int I = withIndices ? addOutput(ctx, lk, node.outputs[1]) : -1;
    Kernel& k = lk.kernel;
    const DType xT = k.buffers[static_cast<std::size_t>(X)].dtype;

    const std::int64_t tw = std::min<std::int64_t>(w.out[r - 1], 256);
    std::vector<std::int64_t> tile(r + 2, 1), maxTile(r + 2, 1);
    tile[r + 1] = tw;
    maxTile[r + 1] = 256;
    if (r >= 2) {
        tile[r] = divisorAtMost(w.out[r - 2], 1024 / tw);
        maxTile[r] = 16;
    }
    auto plan = resolveMappings(ctx, outShape, tiledMapping(outShape, tile));
    if (!plan) return plan.diagnostics();
    auto lowestOf = [](DType t) -> std::int64_t {
        switch (t) {
        case DType::I8: return std::numeric_limits<std::int8_t>::lowest();
        case DType::I16: return std::numeric_limits<std::int16_t>::lowest();
        case DType::I32: return std::numeric_limits<std::int32_t>::lowest();
        case DType::I64: return std::numeric_limits<std::int64_t>::lowest();
        default: return 0;  // unsigned types
        }
    };
    const Expr initV = integral ? intImm(lowestOf(outT))
                       : isMax  ? constant(-std::numeric_limits<double>::infinity(), accT)
                                : constant(0.0, accT);

    k.body = emitTiledLoops(k, *plan, outShape, maxTile, [&](const TileView& tv) {
        const Expr n = tv.origin[0];
        BufferDecl ab;
        ab.name = "acc";
        ab.dtype = accT;
        ab.scope = MemoryScope::Local;
        ab.shape.assign(tv.size.begin() + 2, tv.size.end());
        const int acc = k.addBuffer(ab);
        int arg = -1;
        if (withIndices) {
            BufferDecl ib = ab;
            ib.name = "arg";
            ib.dtype = DType::I64;
            arg = k.addBuffer(ib);
        }
        const std::vector<Expr> sOrigin(tv.origin.begin() + 2, tv.origin.end()), sExt(tv.extent.begin() + 2, tv.extent.end());
        // One channel-loop over the tile's channel extent (1 by default).
        return loopOver(k, "c", tv.extent[1], ForKind::Serial, [&](const Expr& cIdx) {
        const Expr c = tv.origin[1] + cIdx;
        auto loops = [&](const std::string& hint, const std::function<Stmt(const std::vector<Expr>&)>& f) {
            std::vector<Expr> idx;
            std::function<Stmt(std::size_t)> rec = [&](std::size_t d) -> Stmt {
                if (d == r) return f(idx);
                return loopOver(k, hint + std::to_string(d), sExt[d], d + 1 == r ? ForKind::Vectorize : ForKind::Serial,
                                [&](const Expr& i) {
                                    idx.push_back(i);
                                    Stmt s = rec(d + 1);
                                    idx.pop_back();
                                    return s;
                                });
            };
            return rec(0);
        };
        Stmt init = loops("z", [&](const std::vector<Expr>& i) {
            if (arg < 0) return store(acc, i, initV);
            return seq({store(acc, i, initV), store(arg, i, intImm(0))});
        });
        Stmt nest = emitWindowNest(k, w, sOrigin, sExt, [&](const std::vector<Expr>&, const std::vector<Expr>& localOuter,
                                                            const std::vector<Expr>& inOuter, const RowBuilder& row) {
            return row([&](const Expr& ol, const Expr& il) {
                std::vector<Expr> aidx = localOuter;
                aidx.push_back(ol);
                std::vector<Expr> xidx{n, c};
                xidx.insert(xidx.end(), inOuter.begin(), inOuter.end());
                xidx.push_back(il);
                const Expr x = cast(load(X, xT, xidx), accT);
                const Expr a = load(acc, accT, aidx);
                if (arg < 0) return store(acc, aidx, isMax ? maxOf(a, x) : a + x);
                // Flat input index of this tap; the first maximum wins (strict >), as numpy's argmax.
                Expr flat = n * intImm((*xs)[1]) + c;
                if (!columnMajor) {
                    for (std::size_t d = 0; d < r; ++d) flat = flat * intImm(in[d]) + xidx[d + 2];
                } else {
                    Expr sp = xidx[r + 1];
                    for (std::size_t d = r - 1; d-- > 0;) sp = sp * intImm(in[d]) + xidx[d + 2];
                    std::int64_t plane = 1;
                    for (std::int64_t e : in) plane *= e;
                    flat = flat * intImm(plane) + sp;
                }
                const Expr better = x > a;
                return seq({store(arg, aidx, select(better, flat, load(arg, DType::I64, aidx))),
                            store(acc, aidx, maxOf(a, x))});
            });
        });
        Stmt out = loops("y", [&](const std::vector<Expr>& i) {
            std::vector<Expr> yidx{n, c};
            Expr count;
            for (std::size_t d = 0; d < r; ++d) {
                const Expr o = sOrigin[d] + i[d];
                yidx.push_back(o);
                if (!isMax) {
                    const Expr cd = tapCount(w, d, o, includePad);
                    count = count ? count * cd : cd;
                }
            }
            Expr v = load(acc, accT, i);
            if (!isMax) v = v / cast(count, accT);
            if (arg < 0) return store(Y, yidx, cast(v, outT));
            return seq({store(Y, yidx, cast(v, outT)), store(I, yidx, load(arg, DType::I64, i))});
        });
        if (arg >= 0) return allocate(acc, allocate(arg, seq({init, nest, out})));
        return allocate(acc, seq({init, nest, out}));
        });
    });
    k.notes.push_back(isMax ? "max pool: taps unrolled, ow vectorised over each tap's valid range"
                            : std::string("average pool (count ") + (includePad ? "includes" : "excludes") +
                                  " padding): taps unrolled, ow vectorised");
    return lk;
}

}  // namespace

support::Expected<LoweredKernel> lowerMaxPool(const LowerContext& ctx) { return lowerPool(ctx, true); }
support::Expected<LoweredKernel> lowerAveragePool(const LowerContext& ctx) { return lowerPool(ctx, false); }

}  // namespace tessera::lower::detail
