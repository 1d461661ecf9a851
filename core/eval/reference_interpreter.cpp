#include "core/eval/reference_interpreter.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <utility>

#include "core/eval/reference_kernels.h"
#include "core/frontend/dsl/tensor_init.h"
#include "core/ir/compute.h"

namespace tessera::eval {

using ir::DType;
using ir::Node;

namespace {

using namespace refimpl;

// ---- linear algebra ------------------------------------------------------------------------

BufPtr matmul(Ctx& c) {
    const Buf& A = c.input(0);
    const Buf& B = c.input(1);
    if (A.dims.empty() || B.dims.empty()) fail("MatMul operands must have rank >= 1");
    Dims a = A.dims, b = B.dims;
    const bool aVec = a.size() == 1, bVec = b.size() == 1;
    if (aVec) a.insert(a.begin(), 1);
    if (bVec) b.push_back(1);
    const std::int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
    if (b[b.size() - 2] != K)
        fail("inner dimensions differ: " + dimsStr(A.dims) + " x " + dimsStr(B.dims));
    Dims ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    Buf ta, tb;
    ta.dims = ab;
    tb.dims = bb;
    Dims batch = broadcastDims({&ta, &tb});
    Dims out = batch;
    if (!aVec) out.push_back(M);
    if (!bVec) out.push_back(N);
    auto r = c.make(out, c.outDType());
    forEachBroadcast(batch, {&ab, &bb}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
        const double* pa = A.v.data() + offs[0] * M * K;
        const double* pb = B.v.data() + offs[1] * K * N;
        double* pr = r->v.data() + flat * M * N;
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
                double acc = 0;
                for (std::int64_t k = 0; k < K; ++k) acc += pa[i * K + k] * pb[k * N + j];
                pr[i * N + j] = acc;
            }
    });
    return r;
}

BufPtr gemm(Ctx& c) {
    const Buf& A = c.input(0);
    const Buf& B = c.input(1);
    if (A.dims.size() != 2 || B.dims.size() != 2)
        fail("Gemm needs 2-D A and B, got " + dimsStr(A.dims) + " and " + dimsStr(B.dims));
    const bool tA = c.n.attrInt("transA", 0) != 0, tB = c.n.attrInt("transB", 0) != 0;
    const double alpha = c.n.attrFloat("alpha", 1.0), beta = c.n.attrFloat("beta", 1.0);
    const std::int64_t M = tA ? A.dims[1] : A.dims[0], K = tA ? A.dims[0] : A.dims[1];
    const std::int64_t K2 = tB ? B.dims[1] : B.dims[0], N = tB ? B.dims[0] : B.dims[1];
    if (K != K2) fail("inner dimensions differ: " + dimsStr(A.dims) + " x " + dimsStr(B.dims));
    auto r = c.make({M, N}, c.outDType());
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (std::int64_t k = 0; k < K; ++k) {
                const double a = tA ? A.v[k * M + i] : A.v[i * K + k];
                const double b = tB ? B.v[j * K + k] : B.v[k * N + j];
                acc += a * b;
            }
            r->v[i * N + j] = alpha * acc;
        }
    if (c.has(2)) {
        const Buf& C = c.input(2);
        Buf target;
        target.dims = {M, N};
        if (broadcastDims({&C, &target}) != target.dims)
            fail("C of shape " + dimsStr(C.dims) + " does not broadcast to " + dimsStr(target.dims));
        Dims out{M, N};
        forEachBroadcast(out, {&C.dims}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
            r->v[flat] += beta * C.v[offs[0]];
        });
    }
    return r;
}

// ---- windows: Conv and pooling -------------------------------------------------------------

BufPtr conv(Ctx& c) {
    const Buf& X = c.input(0);
    const Buf& W = c.input(1);
    if (X.dims.size() < 3 || W.dims.size() != X.dims.size())
        fail("Conv needs X and W of the same rank >= 3, got " + dimsStr(X.dims) + " and " + dimsStr(W.dims));
    const std::size_t r = X.dims.size() - 2;
    const std::int64_t N = X.dims[0], C = X.dims[1], M = W.dims[0], G = c.n.attrInt("group", 1);
    if (G < 1 || C % G != 0 || M % G != 0 || W.dims[1] != C / G)
        fail("group " + std::to_string(G) + " does not fit X " + dimsStr(X.dims) + " and W " + dimsStr(W.dims));
    const Dims in(X.dims.begin() + 2, X.dims.end());
    const Dims kernel(W.dims.begin() + 2, W.dims.end());
    const Dims ks = c.n.attrInts("kernel_shape", kernel);
    if (ks != kernel) fail("kernel_shape " + dimsStr(ks) + " differs from W's " + dimsStr(kernel));
    const Window w = makeWindow(c, in, kernel, false);
    const Buf* B = c.has(2) ? &c.input(2) : nullptr;
    if (B && B->v.size() != static_cast<std::size_t>(M)) fail("bias must have " + std::to_string(M) + " elements");
    Dims out{N, M};
    out.insert(out.end(), w.out.begin(), w.out.end());
    auto res = c.make(out, c.outDType());
    const Dims koffs = kernelOffsets(w);
    const std::int64_t kElems = product(kernel, 0, r), inPlane = product(in, 0, r), outPlane = product(w.out, 0, r);
    const std::int64_t cg = C / G, mg = M / G;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t m = 0; m < M; ++m) {
            c.poll();
            const std::int64_t g = m / mg;
            double* po = res->v.data() + (n * M + m) * outPlane;
            const double bias = B ? B->v[m] : 0.0;
            forEachWindow(w, [&](std::int64_t flat, const Dims& base) {
                double acc = bias;
                for (std::int64_t e = 0; e < kElems; ++e) {
                    const std::int64_t off = windowOffset(base, koffs.data() + e * r, in);
                    if (off < 0) continue;
                    const double* px = X.v.data() + (n * C + g * cg) * inPlane + off;
                    const double* pw = W.v.data() + m * cg * kElems + e;
                    for (std::int64_t ci = 0; ci < cg; ++ci) acc += px[ci * inPlane] * pw[ci * kElems];
                }
                po[flat] = acc;
            });
        }
    return res;
}

std::vector<BufPtr> pool(Ctx& c, bool isMax) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 3) fail("pooling needs an input of rank >= 3, got " + dimsStr(X.dims));
    const bool wantIndices = isMax && c.n.outputs.size() > 1 && c.n.outputs[1] != ir::kNoValue;
    const bool colMajor = c.n.attrInt("storage_order", 0) != 0;
    const std::size_t r = X.dims.size() - 2;
    const Dims in(X.dims.begin() + 2, X.dims.end());
    const Dims kernel = c.n.attrInts("kernel_shape");
    if (kernel.size() != r) fail("kernel_shape must have " + std::to_string(r) + " values");
    const Window w = makeWindow(c, in, kernel, c.n.attrInt("ceil_mode", 0) != 0);
    const bool includePad = c.n.attrInt("count_include_pad", 0) != 0;
    Dims out{X.dims[0], X.dims[1]};
    out.insert(out.end(), w.out.begin(), w.out.end());
    auto res = c.make(out, c.outDType());
    std::shared_ptr<Buf> idx = wantIndices ? c.make(out, DType::I64) : nullptr;
    const Dims koffs = kernelOffsets(w);
    const std::int64_t kElems = product(kernel, 0, r), inPlane = product(in, 0, r), outPlane = product(w.out, 0, r);
    for (std::int64_t p = 0; p < X.dims[0] * X.dims[1]; ++p) {
        c.poll();
        const double* px = X.v.data() + p * inPlane;
        double* po = res->v.data() + p * outPlane;
        forEachWindow(w, [&](std::int64_t flat, const Dims& base) {
            double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
            std::int64_t cnt = 0, best = -1;
            for (std::int64_t e = 0; e < kElems; ++e) {
                const std::int64_t* ko = koffs.data() + e * r;
                const std::int64_t off = windowOffset(base, ko, in);
                if (off < 0) {
                    if (!isMax && includePad) {
                        bool inPadded = true;  // count positions inside the padded extent only
                        for (std::size_t i = 0; i < r; ++i) {
                            const std::int64_t q = base[i] + ko[i];
                            if (q < -w.pb[i] || q >= in[i] + w.pe[i]) inPadded = false;
                        }
                        cnt += inPadded ? 1 : 0;
                    }
                    continue;
                }
                if (isMax) {
                    if (px[off] > acc || best < 0) best = off;
                    acc = std::max(acc, px[off]);
                } else {
                    acc += px[off];
                }
                ++cnt;
            }
            po[flat] = isMax ? acc : (cnt > 0 ? acc / static_cast<double>(cnt) : 0.0);
            if (idx && best >= 0) {
                // Flat index into X (row-major, or column-major over the spatial axes with storage_order 1).
                std::int64_t spatial = best;
                if (colMajor) {
                    std::int64_t rem = best, cm = 0, stride = 1;
                    Dims coord(r);
                    for (std::size_t i = r; i-- > 0;) {
                        coord[i] = rem % in[i];
                        rem /= in[i];
                    }
                    for (std::size_t i = 0; i < r; ++i) {
                        cm += coord[i] * stride;
                        stride *= in[i];
                    }
                    spatial = cm;
                }
                idx->v[static_cast<std::size_t>(p * outPlane + flat)] = static_cast<double>(p * inPlane + spatial);
            }
        });
    }
    if (idx) return {res, idx};
    return {res};
}

BufPtr globalPool(Ctx& c, bool isMax) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 3) fail("global pooling needs an input of rank >= 3, got " + dimsStr(X.dims));
    Dims out(X.dims.size(), 1);
    out[0] = X.dims[0];
    out[1] = X.dims[1];
    auto res = c.make(out, c.outDType());
    const std::int64_t plane = product(X.dims, 2, X.dims.size());
    for (std::int64_t p = 0; p < X.dims[0] * X.dims[1]; ++p) {
        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (std::int64_t i = 0; i < plane; ++i) {
            const double x = X.v[p * plane + i];
            acc = isMax ? std::max(acc, x) : acc + x;
        }
        res->v[p] = isMax ? acc : acc / static_cast<double>(plane);
    }
    return res;
}

BufPtr batchNorm(Ctx& c) {
    const Buf& X = c.input(0);
    if (X.dims.size() < 2) fail("input must have rank >= 2, got " + dimsStr(X.dims));
    const std::int64_t C = X.dims[1];
    for (std::size_t i = 1; i <= 4; ++i)
        if (c.input(i).v.size() != static_cast<std::size_t>(C))
            fail("input " + std::to_string(i) + " must have " + std::to_string(C) + " elements");
    const double eps = c.n.attrFloat("epsilon", 1e-5);
    auto res = c.make(X.dims, c.outDType());
    const std::int64_t inner = product(X.dims, 2, X.dims.size());
    const auto &sc = c.input(1).v, &bi = c.input(2).v, &mu = c.input(3).v, &var = c.input(4).v;
    for (std::int64_t n = 0; n < X.dims[0]; ++n)
        for (std::int64_t ch = 0; ch < C; ++ch) {
            const double a = sc[ch] / std::sqrt(var[ch] + eps);
            for (std::int64_t i = 0; i < inner; ++i) {
                const std::int64_t k = (n * C + ch) * inner + i;
                res->v[k] = a * (X.v[k] - mu[ch]) + bi[ch];
            }
        }
    return res;
}

// ---- reductions ----------------------------------------------------------------------------

BufPtr softmax(Ctx& c, bool logSoftmax) {
    const Buf& X = c.input(0);
    const bool legacy = c.opt.opset > 0 && c.opt.opset < 13;
    const std::int64_t axis = X.dims.empty() ? 0 : normAxis(c.n.attrInt("axis", legacy ? 1 : -1), X.dims.size());
    auto res = c.make(X.dims, c.outDType());
    std::int64_t outer, len, inner;
    if (legacy) {
        outer = product(X.dims, 0, axis);
        len = product(X.dims, axis, X.dims.size());
        inner = 1;
    } else {
        outer = product(X.dims, 0, axis);
        len = X.dims.empty() ? 1 : X.dims[axis];
        inner = product(X.dims, axis + 1, X.dims.size());
    }
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            const std::int64_t base = o * len * inner + i;
            double mx = -std::numeric_limits<double>::infinity();
            for (std::int64_t k = 0; k < len; ++k) mx = std::max(mx, X.v[base + k * inner]);
            double sum = 0;
            for (std::int64_t k = 0; k < len; ++k) sum += std::exp(X.v[base + k * inner] - mx);
            for (std::int64_t k = 0; k < len; ++k) {
                const double z = X.v[base + k * inner] - mx;
                res->v[base + k * inner] = logSoftmax ? z - std::log(sum) : std::exp(z) / sum;
            }
        }
    return res;
}

enum class Red { Sum, Mean, Max, Min, Prod };

BufPtr reduce(Ctx& c, Red kind) {
    const Buf& X = c.input(0);
    std::vector<std::int64_t> axes;
    if (c.has(1)) axes = intsOf(c.input(1));
    else axes = c.n.attrInts("axes");
    const bool keep = c.n.attrInt("keepdims", 1) != 0;
    std::vector<bool> red(X.dims.size(), false);
    if (axes.empty()) {
        if (c.n.attrInt("noop_with_empty_axes", 0) != 0) {
            auto res = c.make(X.dims, c.outDType());
            res->v = X.v;
            return res;
        }
        red.assign(X.dims.size(), true);
    }
    for (auto a : axes) red[static_cast<std::size_t>(normAxis(a, X.dims.size()))] = true;
    Dims keptDims, outDims;
    for (std::size_t i = 0; i < X.dims.size(); ++i) {
        keptDims.push_back(red[i] ? 1 : X.dims[i]);
        if (!red[i] || keep) outDims.push_back(red[i] ? 1 : X.dims[i]);
    }
    auto res = c.make(outDims, c.outDType());
    const double init = kind == Red::Max   ? -std::numeric_limits<double>::infinity()
                        : kind == Red::Min ? std::numeric_limits<double>::infinity()
                        : kind == Red::Prod ? 1.0
                                            : 0.0;
    std::fill(res->v.begin(), res->v.end(), init);
    // Each input element maps to the output element with its reduced coordinates set to 0:
    // iterate the input as the output "broadcast" back to it.
    forEachBroadcast(X.dims, {&keptDims}, [&](std::int64_t flat, const std::vector<std::int64_t>& offs) {
        double& o = res->v[offs[0]];
        const double x = X.v[flat];
        switch (kind) {
        case Red::Sum:
        case Red::Mean: o += x; break;
        case Red::Max: o = std::max(o, x); break;
        case Red::Min: o = std::min(o, x); break;
        case Red::Prod: o *= x; break;
        }
    });
    if (kind == Red::Mean && !res->v.empty()) {
        const double cnt = static_cast<double>(X.v.size()) / static_cast<double>(res->v.size());
        for (auto& o : res->v) o /= cnt;
    }
    return res;
}

// ---- data movement -------------------------------------------------------------------------

BufPtr reshapeTo(Ctx& c, const Buf& x, Dims dims) {
    if (c.count(dims) != static_cast<std::int64_t>(x.v.size()))
        fail("cannot reshape " + dimsStr(x.dims) + " to " + dimsStr(dims));
    auto r = std::make_shared<Buf>();
    r->dtype = c.outDType();
    r->dims = std::move(dims);
    r->v = x.v;
    return r;
}

BufPtr reshape(Ctx& c) {
    const Buf& X = c.input(0);
    Dims shape = intsOf(c.input(1));
    const bool allowZero = c.n.attrInt("allowzero", 0) != 0;
    std::int64_t known = 1;
    int infer = -1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0 && !allowZero) {
            if (i >= X.dims.size()) fail("shape " + dimsStr(shape) + " copies a dimension the input lacks");
            shape[i] = X.dims[i];
        }
        if (shape[i] == -1) {
            if (infer >= 0) fail("shape " + dimsStr(shape) + " has more than one -1");
            infer = static_cast<int>(i);
        } else {
            if (shape[i] < 0) fail("shape " + dimsStr(shape) + " has a negative extent");
            known *= shape[i];
        }
    }
    if (infer >= 0) {
        const auto total = static_cast<std::int64_t>(X.v.size());
        if (known == 0 || total % known != 0) fail("cannot reshape " + dimsStr(X.dims) + " to " + dimsStr(shape));
        shape[static_cast<std::size_t>(infer)] = total / known;
    }
    return reshapeTo(c, X, shape);
}

BufPtr transpose(Ctx& c) {
    const Buf& X = c.input(0);
    const std::size_t r = X.dims.size();
    Dims perm = c.n.attrInts("perm");
    if (perm.empty())
        for (std::size_t i = 0; i < r; ++i) perm.push_back(static_cast<std::int64_t>(r - 1 - i));
    if (perm.size() != r) fail("perm must have " + std::to_string(r) + " entries");
    Dims out(r), inStrideForOut(r);
    const Dims s = stridesOf(X.dims);
    std::vector<bool> seen(r, false);
    for (std::size_t i = 0; i < r; ++i) {
        const auto p = static_cast<std::size_t>(normAxis(perm[i], r));
        if (seen[p]) fail("perm repeats axis " + std::to_string(p));
        seen[p] = true;
        out[i] = X.dims[p];
        inStrideForOut[i] = s[p];
    }
    auto res = c.make(out, c.outDType());
    Dims idx(r, 0);
    std::int64_t off = 0;
    for (std::size_t flat = 0; flat < res->v.size(); ++flat) {
        res->v[flat] = X.v[off];
        for (std::size_t i = r; i-- > 0;) {
            ++idx[i];
            off += inStrideForOut[i];
            if (idx[i] < out[i]) break;
            off -= inStrideForOut[i] * out[i];
            idx[i] = 0;
        }
    }
    return res;
}

BufPtr concat(Ctx& c) {
    if (c.in.empty()) fail("Concat needs at least one input");
    const Buf& first = c.input(0);
    const std::size_t r = first.dims.size();
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 0), r));
    Dims out = first.dims;
    out[axis] = 0;
    for (std::size_t j = 0; j < c.in.size(); ++j) {
        const Buf& b = c.input(j);
        for (std::size_t i = 0; i < r; ++i)
            if (b.dims.size() != r || (i != axis && b.dims[i] != first.dims[i]))
                fail("input " + std::to_string(j) + " of shape " + dimsStr(b.dims) + " does not match " +
                     dimsStr(first.dims) + " outside axis " + std::to_string(axis));
        out[axis] += b.dims[axis];
    }
    auto res = c.make(out, c.outDType());
    const std::int64_t outer = product(out, 0, axis), inner = product(out, axis + 1, r);
    std::int64_t pos = 0;
    for (std::size_t j = 0; j < c.in.size(); ++j) {
        const Buf& b = c.input(j);
        const std::int64_t len = b.dims[axis] * inner;
        for (std::int64_t o = 0; o < outer; ++o)
            std::copy_n(b.v.begin() + o * len, len, res->v.begin() + o * out[axis] * inner + pos);
        pos += len;
    }
    return res;
}

BufPtr gather(Ctx& c) {
    const Buf& D = c.input(0);
    const Buf& I = c.input(1);
    if (D.dims.empty()) fail("Gather needs data of rank >= 1");
    const auto axis = static_cast<std::size_t>(normAxis(c.n.attrInt("axis", 0), D.dims.size()));
    Dims out(D.dims.begin(), D.dims.begin() + static_cast<std::ptrdiff_t>(axis));
    out.insert(out.end(), I.dims.begin(), I.dims.end());
    out.insert(out.end(), D.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, D.dims.end());
    auto res = c.make(out, c.outDType());
    const std::int64_t outer = product(D.dims, 0, axis), inner = product(D.dims, axis + 1, D.dims.size());
    const std::int64_t len = D.dims[axis], ni = static_cast<std::int64_t>(I.v.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t j = 0; j < ni; ++j) {
            auto k = static_cast<std::int64_t>(I.v[j]);
            if (k < -len || k >= len)
                fail("index " + std::to_string(k) + " is out of range for extent " + std::to_string(len));
            if (k < 0) k += len;
            std::copy_n(D.v.begin() + (o * len + k) * inner, inner, res->v.begin() + (o * ni + j) * inner);
        }
    return res;
}

std::vector<std::int64_t> axesArg(Ctx& c) {
    if (c.has(1)) return intsOf(c.input(1));
    return c.n.attrInts("axes");
}

BufPtr squeeze(Ctx& c) {
    const Buf& X = c.input(0);
    const auto axes = axesArg(c);
    std::vector<bool> drop(X.dims.size(), false);
    if (axes.empty())
        for (std::size_t i = 0; i < X.dims.size(); ++i) drop[i] = X.dims[i] == 1;
    for (auto a : axes) {
        const auto i = static_cast<std::size_t>(normAxis(a, X.dims.size()));
        if (X.dims[i] != 1) fail("cannot squeeze axis " + std::to_string(a) + " of extent " + std::to_string(X.dims[i]));
        drop[i] = true;
    }
    Dims out;
    for (std::size_t i = 0; i < X.dims.size(); ++i)
        if (!drop[i]) out.push_back(X.dims[i]);
    return reshapeTo(c, X, out);
}

BufPtr unsqueeze(Ctx& c) {
    const Buf& X = c.input(0);
    const auto axes = axesArg(c);
    const std::size_t r = X.dims.size() + axes.size();
    std::vector<bool> ins(r, false);
    for (auto a : axes) {
        const auto i = static_cast<std::size_t>(normAxis(a, r));
        if (ins[i]) fail("axes repeat " + std::to_string(a));
        ins[i] = true;
    }
    Dims out;
    std::size_t k = 0;
    for (std::size_t i = 0; i < r; ++i) out.push_back(ins[i] ? 1 : X.dims[k++]);
    return reshapeTo(c, X, out);
}

BufPtr flatten(Ctx& c) {
    const Buf& X = c.input(0);
    const auto r = X.dims.size();
    std::int64_t a = c.n.attrInt("axis", 1);
    if (a < 0) a += static_cast<std::int64_t>(r);
    if (a < 0 || a > static_cast<std::int64_t>(r)) fail("axis is out of range for rank " + std::to_string(r));
    const auto ax = static_cast<std::size_t>(a);
    return reshapeTo(c, X, {product(X.dims, 0, ax), product(X.dims, ax, r)});
}

BufPtr shapeOp(Ctx& c) {
    const Buf& X = c.input(0);
    const auto r = static_cast<std::int64_t>(X.dims.size());
    auto clampAxis = [&](std::int64_t a) { return std::clamp<std::int64_t>(a < 0 ? a + r : a, 0, r); };
    const std::int64_t b = clampAxis(c.n.attrInt("start", 0)), e = clampAxis(c.n.attrInt("end", r));
    auto res = c.make({std::max<std::int64_t>(0, e - b)}, DType::I64);
    for (std::int64_t i = b; i < e; ++i) res->v[i - b] = static_cast<double>(X.dims[i]);
    return res;
}


BufPtr constant(Ctx& c) {
    if (const auto* a = c.n.attr("value"); a && a->t) {
        if (!a->t->sizeConsistent() || a->t->dtype == DType::String) fail("constant value is not numeric data");
        return fromTensorData(*a->t);
    }
    auto b = std::make_shared<Buf>();
    if (c.n.hasAttr("value_float")) {
        b->dtype = DType::F32;
        b->v = {c.n.attrFloat("value_float", 0)};
    } else if (c.n.hasAttr("value_int")) {
        b->dtype = DType::I64;
        b->v = {static_cast<double>(c.n.attrInt("value_int", 0))};
    } else if (c.n.hasAttr("value_floats")) {
        b->dtype = DType::F32;
        b->v = c.n.attrFloats("value_floats");
        b->dims = {static_cast<std::int64_t>(b->v.size())};
    } else if (c.n.hasAttr("value_ints")) {
        b->dtype = DType::I64;
        for (auto x : c.n.attrInts("value_ints")) b->v.push_back(static_cast<double>(x));
        b->dims = {static_cast<std::int64_t>(b->v.size())};
    } else {
        fail("Constant needs a value, value_float(s) or value_int(s) attribute");
    }
    return b;
}


BufPtr cast(Ctx& c) {
    DType to = onnxCodeToDType(c.n.attrInt("to", 0));
    if (to == DType::Undefined) to = c.outDType();
    if (to == DType::Undefined || to == DType::String) fail("unsupported target type of Cast");
    const Buf& X = c.input(0);
    auto r = c.make(X.dims, to);
    for (std::size_t i = 0; i < X.v.size(); ++i) r->v[i] = roundTo(to, X.v[i]);
    return r;
}

// ---- Compute nodes -------------------------------------------------------------------------

class ComputeEval {
public:
    ComputeEval(Ctx& c, const ir::ComputeDef& def) : m_c(c), m_def(def) {
        for (std::size_t j = 0; j < c.in.size(); ++j) {
            m_in.push_back(&c.input(j));
            m_strides.push_back(stridesOf(c.input(j).dims));
        }
        m_ext.resize(def.axes.size());
        for (std::size_t a = 0; a < def.axes.size(); ++a) m_ext[a] = extentOf(a);
        m_env.assign(def.axes.size(), 0);
    }

    BufPtr run() {
        Dims out(m_ext.begin(), m_ext.begin() + static_cast<std::ptrdiff_t>(m_def.numOutputAxes));
        DType t = m_c.outDType();
        if (m_def.forcedDType != DType::Undefined) t = m_def.forcedDType;
        auto res = m_c.make(out, t);
        const std::size_t r = out.size();
        for (std::size_t flat = 0; flat < res->v.size(); ++flat) {
            if ((flat & 0xffff) == 0) m_c.poll();
            std::size_t rem = flat;
            for (std::size_t i = r; i-- > 0;) {
                m_env[i] = static_cast<std::int64_t>(rem % static_cast<std::size_t>(out[i]));
                rem /= static_cast<std::size_t>(out[i]);
            }
            res->v[flat] = roundTo(t == DType::F32 ? DType::F64 : t, eval(m_def.body));
        }
        return res;
    }

private:
    std::int64_t extentOf(std::size_t a) const {
        const ir::ComputeAxis& ax = m_def.axes[a];
        if (ax.extent.isKnown()) return ax.extent.value;
        if (ax.extent.isSymbolic()) {
            // A symbol takes the runtime extent of an input dimension declared with that symbol.
            for (std::size_t j = 0; j < m_c.n.inputs.size() && j < m_in.size(); ++j) {
                const ir::Shape& s = m_c.g.value(m_c.n.inputs[j]).type.shape;
                for (std::size_t d = 0; d < s.rank() && d < m_in[j]->dims.size(); ++d)
                    if (s[d].symbol == ax.extent.symbol) return m_in[j]->dims[d];
            }
        }
        if (a < m_def.numOutputAxes && !m_c.n.outputs.empty()) {
            const ir::Shape& s = m_c.g.value(m_c.n.outputs[0]).type.shape;
            if (s.rankKnown() && a < s.rank() && s[a].isKnown()) return s[a].value;
        }
        fail("dynamic shape: the extent of index '" + ax.name + "' (" + ax.extent.str() + ") is not known");
    }

    bool isInt(const ir::ComputeExpr& e) const {
        using K = ir::ComputeKind;
        if (e.dtype != DType::Undefined) return ir::isInteger(e.dtype);
        switch (e.kind) {
        case K::Const: return ir::isInteger(e.constDType);
        case K::Index: return true;
        case K::Access:
            return e.input >= 0 && static_cast<std::size_t>(e.input) < m_in.size() && ir::isInteger(m_in[e.input]->dtype);
        case K::Unary:
            return (e.unary == ir::ComputeUnary::Neg || e.unary == ir::ComputeUnary::Abs) && isInt(e.args[0]);
        case K::Binary:
            switch (e.binary) {
            case ir::ComputeBinary::Add:
            case ir::ComputeBinary::Sub:
            case ir::ComputeBinary::Mul:
            case ir::ComputeBinary::Div:
            case ir::ComputeBinary::Mod:
            case ir::ComputeBinary::Min:
            case ir::ComputeBinary::Max: return isInt(e.args[0]) && isInt(e.args[1]);
            default: return false;
            }
        case K::Select: return isInt(e.args[1]) && isInt(e.args[2]);
        case K::Cast: return ir::isInteger(e.castTo);
        case K::Reduce: return isInt(e.args[0]);
        }
        return false;
    }

    double eval(const ir::ComputeExpr& e) {
        using K = ir::ComputeKind;
        switch (e.kind) {
        case K::Const:
            if (ir::isInteger(e.constDType)) return static_cast<double>(e.intValue);
            return e.value;
        case K::Index: return static_cast<double>(m_env.at(static_cast<std::size_t>(e.axis)));
        case K::Access: {
            const auto slot = static_cast<std::size_t>(e.input);
            if (slot >= m_in.size()) fail("access to missing input slot " + std::to_string(e.input));
            const Buf& b = *m_in[slot];
            if (e.args.size() != b.dims.size())
                fail("input " + std::to_string(slot) + " has rank " + std::to_string(b.dims.size()) + " but is read with " +
                     std::to_string(e.args.size()) + " subscripts");
            std::int64_t off = 0;
            for (std::size_t i = 0; i < e.args.size(); ++i) {
                const auto k = static_cast<std::int64_t>(std::floor(eval(e.args[i])));
                if (k < 0 || k >= b.dims[i]) {
                    std::string at;
                    for (std::size_t a = 0; a < m_def.numOutputAxes; ++a)
                        at += (a ? "," : "") + std::to_string(m_env[a]);
                    fail("read out of range: subscript " + std::to_string(i) + " of input " + std::to_string(slot) +
                         " is " + std::to_string(k) + ", extent " + std::to_string(b.dims[i]) + " (output element [" +
                         at + "])");
                }
                off += k * m_strides[slot][i];
            }
            return b.v[static_cast<std::size_t>(off)];
        }
        case K::Unary: return unaryOp(e.unary, eval(e.args[0]));
        case K::Binary: {
            const double a = eval(e.args[0]);
            const double b = eval(e.args[1]);
            return binaryOp(e, a, b);
        }
        case K::Select: return eval(e.args[0]) != 0.0 ? eval(e.args[1]) : eval(e.args[2]);
        case K::Cast: return roundTo(e.castTo, eval(e.args[0]));
        case K::Reduce: return reduction(e, 0);
        }
        fail("unknown expression kind");
    }

    double reduction(const ir::ComputeExpr& e, std::size_t depth) {
        if (depth == e.reduceAxes.size()) return eval(e.args[0]);
        const auto ax = static_cast<std::size_t>(e.reduceAxes[depth]);
        double acc = e.reduce == ir::ReduceKind::Sum    ? 0.0
                     : e.reduce == ir::ReduceKind::Prod ? 1.0
                     : e.reduce == ir::ReduceKind::Max  ? -std::numeric_limits<double>::infinity()
                                                        : std::numeric_limits<double>::infinity();
        for (std::int64_t k = 0; k < m_ext[ax]; ++k) {
            m_env[ax] = k;
            const double x = reduction(e, depth + 1);
            switch (e.reduce) {
            case ir::ReduceKind::Sum: acc += x; break;
            case ir::ReduceKind::Prod: acc *= x; break;
            case ir::ReduceKind::Max: acc = std::max(acc, x); break;
            case ir::ReduceKind::Min: acc = std::min(acc, x); break;
            }
        }
        return acc;
    }

    static double unaryOp(ir::ComputeUnary op, double x) {
        using U = ir::ComputeUnary;
        switch (op) {
        case U::Neg: return -x;
        case U::Not: return x == 0.0 ? 1.0 : 0.0;
        case U::Exp: return std::exp(x);
        case U::Log: return std::log(x);
        case U::Sqrt: return std::sqrt(x);
        case U::Rsqrt: return 1.0 / std::sqrt(x);
        case U::Sin: return std::sin(x);
        case U::Cos: return std::cos(x);
        case U::Tan: return std::tan(x);
        case U::Tanh: return std::tanh(x);
        case U::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case U::Abs: return std::fabs(x);
        case U::Floor: return std::floor(x);
        case U::Ceil: return std::ceil(x);
        case U::Round: return std::nearbyint(x);
        case U::Erf: return std::erf(x);
        }
        return x;
    }

    double binaryOp(const ir::ComputeExpr& e, double a, double b) const {
        using B = ir::ComputeBinary;
        switch (e.binary) {
        case B::Add: return a + b;
        case B::Sub: return a - b;
        case B::Mul: return a * b;
        case B::Div:
        case B::Mod:
            if (isInt(e)) {
                const auto x = static_cast<std::int64_t>(a), y = static_cast<std::int64_t>(b);
                if (y == 0) fail("integer division by zero");
                std::int64_t q = x / y, m = x % y;
                if (m != 0 && ((m < 0) != (y < 0))) {
                    --q;
                    m += y;
                }
                return static_cast<double>(e.binary == B::Div ? q : m);
            }
            if (e.binary == B::Div) return a / b;
            return a - std::floor(a / b) * b;
        case B::Lt: return a < b ? 1.0 : 0.0;
        case B::Le: return a <= b ? 1.0 : 0.0;
        case B::Gt: return a > b ? 1.0 : 0.0;
        case B::Ge: return a >= b ? 1.0 : 0.0;
        case B::Eq: return a == b ? 1.0 : 0.0;
        case B::Ne: return a != b ? 1.0 : 0.0;
        case B::And: return (a != 0.0 && b != 0.0) ? 1.0 : 0.0;
        case B::Or: return (a != 0.0 || b != 0.0) ? 1.0 : 0.0;
        case B::Min: return std::min(a, b);
        case B::Max: return std::max(a, b);
        case B::Pow: return std::pow(a, b);
        case B::Atan2: return std::atan2(a, b);
        }
        return 0.0;
    }

    Ctx& m_c;
    const ir::ComputeDef& m_def;
    std::vector<const Buf*> m_in;
    std::vector<Dims> m_strides;
    std::vector<std::int64_t> m_ext, m_env;
};

// ---- dispatch ------------------------------------------------------------------------------

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<const Buf*> allInputs(Ctx& c) {
    std::vector<const Buf*> r;
    for (std::size_t i = 0; i < c.in.size(); ++i) r.push_back(&c.input(i));
    return r;
}

/// Evaluates one node; returns its outputs (one per node output), throws EvalError.
std::vector<BufPtr> evalNode(Ctx& c) {
    const std::string& op = c.n.opType;
    const Node& n = c.n;
    if (n.domain == ir::kTesseraDomain && op == ir::kComputeOpType) {
        if (!n.compute) fail("Compute node without a definition");
        return {ComputeEval(c, *n.compute).run()};
    }
    if (!n.domain.empty() && n.domain != "ai.onnx") fail(kNoReferenceImplementation);
    const DType out = c.outDType();
    const bool intOut = ir::isInteger(out);
    auto bin = [&](auto f) -> std::vector<BufPtr> {
        return {elementwise(c, {&c.input(0), &c.input(1)}, out, [f](const double* a) { return f(a[0], a[1]); })};
    };
    auto cmp = [&](auto f) -> std::vector<BufPtr> {
        return {elementwise(c, {&c.input(0), &c.input(1)}, DType::Bool,
                            [f](const double* a) { return f(a[0], a[1]) ? 1.0 : 0.0; })};
    };
    auto un = [&](auto f) -> std::vector<BufPtr> { return {unary(c, f)}; };

    if (op == "Add") return bin([](double a, double b) { return a + b; });
    if (op == "Sub") return bin([](double a, double b) { return a - b; });
    if (op == "Mul") return bin([](double a, double b) { return a * b; });
    if (op == "Div") {
        if (intOut)
            return bin([](double a, double b) {
                if (b == 0) fail("integer division by zero");
                return std::trunc(a / b);
            });
        return bin([](double a, double b) { return a / b; });
    }
    if (op == "Pow") return bin([](double a, double b) { return std::pow(a, b); });
    if (op == "Equal") return cmp([](double a, double b) { return a == b; });
    if (op == "Less") return cmp([](double a, double b) { return a < b; });
    if (op == "Greater") return cmp([](double a, double b) { return a > b; });
    if (op == "LessOrEqual") return cmp([](double a, double b) { return a <= b; });
    if (op == "GreaterOrEqual") return cmp([](double a, double b) { return a >= b; });
    if (op == "Where")
        return {elementwise(c, {&c.input(0), &c.input(1), &c.input(2)}, out,
                            [](const double* a) { return a[0] != 0.0 ? a[1] : a[2]; })};
    if (op == "Min" || op == "Max" || op == "Sum" || op == "Mean") {
        const auto ins = allInputs(c);
        if (ins.empty()) fail(op + " needs at least one input");
        const std::size_t k = ins.size();
        const char o = op == "Min" ? 'n' : op == "Max" ? 'x' : op == "Sum" ? 's' : 'm';
        return {elementwise(c, ins, out, [k, o](const double* a) {
            double r = a[0];
            for (std::size_t j = 1; j < k; ++j) r = o == 'n' ? std::min(r, a[j]) : o == 'x' ? std::max(r, a[j]) : r + a[j];
            return o == 'm' ? r / static_cast<double>(k) : r;
        })};
    }
    if (op == "Relu") return un([](double x) { return x > 0 || std::isnan(x) ? x : 0.0; });  // NaN stays NaN
    if (op == "Sigmoid") return un(sigmoid);
    if (op == "Tanh") return un([](double x) { return std::tanh(x); });
    if (op == "Erf") return un([](double x) { return std::erf(x); });
    if (op == "Exp") return un([](double x) { return std::exp(x); });
    if (op == "Log") return un([](double x) { return std::log(x); });
    if (op == "Sqrt") return un([](double x) { return std::sqrt(x); });
    if (op == "Neg") return un([](double x) { return -x; });
    if (op == "Abs") return un([](double x) { return std::fabs(x); });
    if (op == "Reciprocal") return un([](double x) { return 1.0 / x; });
    if (op == "Floor") return un([](double x) { return std::floor(x); });
    if (op == "Ceil") return un([](double x) { return std::ceil(x); });
    if (op == "Sin") return un([](double x) { return std::sin(x); });
    if (op == "Cos") return un([](double x) { return std::cos(x); });
    // max(x, 0) + log1p(e^-|x|): log(1 + e^x) without overflow (Softplus(1000) = 1000, not inf).
    if (op == "Softplus") return un([](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); });
    if (op == "Gelu") {
        const std::string approx = n.attrString("approximate", "none");
        if (approx == "tanh")
            return un([](double x) {
                const double k = std::sqrt(2.0 / 3.14159265358979323846);
                return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
            });
        if (approx != "none") fail("unknown approximate '" + approx + "'");
        return un([](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); });
    }
    if (op == "HardSwish") return un([](double x) { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); });
    if (op == "HardSigmoid") {
        const double a = n.attrFloat("alpha", 0.2), b = n.attrFloat("beta", 0.5);
        return un([a, b](double x) { return std::clamp(a * x + b, 0.0, 1.0); });
    }
    if (op == "LeakyRelu") {
        const double a = n.attrFloat("alpha", 0.01);
        return un([a](double x) { return x >= 0 ? x : a * x; });
    }
    if (op == "Elu") {
        const double a = n.attrFloat("alpha", 1.0);
        return un([a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1.0); });
    }
    if (op == "Clip") {
        double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
        if (n.hasAttr("min")) lo = n.attrFloat("min", lo);
        if (n.hasAttr("max")) hi = n.attrFloat("max", hi);
        if (c.has(1)) lo = scalarOf(c.input(1), "min");
        if (c.has(2)) hi = scalarOf(c.input(2), "max");
        return un([lo, hi](double x) { return std::min(std::max(x, lo), hi); });
    }
    if (op == "MatMul") return {matmul(c)};
    if (op == "Gemm") return {gemm(c)};
    if (op == "Conv") return {conv(c)};
    if (op == "MaxPool") return pool(c, true);
    if (op == "AveragePool") return pool(c, false);
    if (op == "GlobalAveragePool") return {globalPool(c, false)};
    if (op == "GlobalMaxPool") return {globalPool(c, true)};
    if (op == "BatchNormalization" && n.attrInt("training_mode", 0) == 0) return {batchNorm(c)};
    if (op == "Softmax") return {softmax(c, false)};
    if (op == "LogSoftmax") return {softmax(c, true)};
    if (op == "ReduceMean") return {reduce(c, Red::Mean)};
    if (op == "ReduceSum") return {reduce(c, Red::Sum)};
    if (op == "ReduceMax") return {reduce(c, Red::Max)};
    if (op == "ReduceMin") return {reduce(c, Red::Min)};
    if (op == "ReduceProd") return {reduce(c, Red::Prod)};
    if (op == "Flatten") return {flatten(c)};
    if (op == "Reshape") return {reshape(c)};
    if (op == "Transpose") return {transpose(c)};
    if (op == "Concat") return {concat(c)};
    if (op == "Identity" || op == "Dropout") {
        // Training-mode Dropout draws a random mask (seeded differently in every framework).
        if (op == "Dropout" && c.has(2) && scalarOf(c.input(2), "training_mode") != 0 &&
            (!c.has(1) || scalarOf(c.input(1), "ratio") != 0))
            fail(std::string(kNoReferenceImplementation) + " for Dropout in training mode (random mask)");
        if (op == "Dropout" && n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) {
            auto mask = c.make(c.input(0).dims, DType::Bool);
            std::fill(mask->v.begin(), mask->v.end(), 1.0);
            return {c.in[0], mask};
        }
        return {c.in.at(0)};
    }
    if (op == "Constant") return {constant(c)};
    if (op == "Shape") return {shapeOp(c)};
    if (op == "Squeeze") return {squeeze(c)};
    if (op == "Unsqueeze") return {unsqueeze(c)};
    if (op == "Gather") return {gather(c)};
    if (op == "Cast") return {cast(c)};
    std::vector<BufPtr> more;
    if (evalControlFlow(c, more)) return more;
    if (evalMoreOps(c, more)) return more;
    fail(kNoReferenceImplementation);
}

std::string whereOf(const Node& n) { return "node '" + n.name + "' (" + n.opType + ")"; }

}  // namespace

namespace refimpl {
BufPtr convOp(Ctx& c) { return conv(c); }
BufPtr matmulOp(Ctx& c) { return matmul(c); }
}  // namespace refimpl

support::Expected<std::vector<ir::TensorData>> evaluate(const ir::Graph& g,
                                                        const std::vector<ir::TensorData>& runtimeInputs,
                                                        const support::CancelToken* cancel) {
    return evaluate(g, runtimeInputs, ReferenceOptions{}, cancel);
}

namespace {

/// Converts a buffer to tensor data of dtype `t` (Undefined: the buffer's own), rounding once.
bool toTensorData(const Buf& b, DType t, ir::TensorData& out, std::string& err) {
    if (t == DType::Undefined) t = b.dtype;
    if (t == DType::Undefined || t == DType::String) t = DType::F32;
    auto td = frontend::dsl::makeZeroTensor(t, b.dims, std::numeric_limits<std::int64_t>::max(), err);
    if (!td) return false;
    for (std::size_t i = 0; i < b.v.size(); ++i) frontend::dsl::storeElement(*td, static_cast<std::int64_t>(i), b.v[i]);
    out = std::move(*td);
    return true;
}

/// `b` as the tensor the node hands on: f32/f16/bf16 values rounded to float (as a framework
/// storing the tensor would), so that the next op sees what a kernel would see. Only copies when
/// some value changes.
BufPtr storedAs(BufPtr b, DType declared) {
    const DType t = declared != DType::Undefined ? declared : b->dtype;
    if (t != DType::F32 && t != DType::F16 && t != DType::BF16) return b;
    std::size_t i = 0;
    while (i < b->v.size() && roundTo(t, b->v[i]) == b->v[i]) ++i;
    if (i == b->v.size() || std::isnan(b->v[i])) {
        // NaN never compares equal: check the rest before copying.
        bool changes = false;
        for (std::size_t k = i; k < b->v.size() && !changes; ++k)
            changes = !std::isnan(b->v[k]) && roundTo(t, b->v[k]) != b->v[k];
        if (!changes) return b;
    }
    auto r = std::make_shared<Buf>(*b);
    for (auto& x : r->v) x = roundTo(t, x);
    return r;
}

/// A node of a graph failed (thrown by execNodes; never leaves this file).
struct NodeFailure {
    std::string where, message;
    bool cancelled = false;
};

constexpr int kMaxSubgraphDepth = 64;

bool isFreeValue(const ir::Graph& g, ir::ValueId id) {
    const ir::Value& v = g.value(id);
    return g.producer(id) == ir::kNoNode && !v.isGraphInput && !v.isInitializer;
}

/// Names that `g` or a subgraph nested in it reads without defining them (ONNX outer-scope
/// references). A name a nested graph takes from `g` itself is included too (harmless: callers
/// only use the set to keep values alive and to order nodes).
void collectFreeNames(const ir::Graph& g, std::set<std::string>& out, int depth) {
    if (depth > kMaxSubgraphDepth) return;
    for (std::size_t i = 0; i < g.numValues(); ++i)
        if (isFreeValue(g, static_cast<ir::ValueId>(i))) out.insert(g.value(static_cast<ir::ValueId>(i)).name);
    for (const Node& n : g.nodes())
        for (const auto& [name, a] : n.attributes) {
            if (a.type == ir::AttrType::Graph && a.g) collectFreeNames(*a.g, out, depth + 1);
            if (a.type == ir::AttrType::Graphs)
                for (const auto& sg : a.graphs)
                    if (sg) collectFreeNames(*sg, out, depth + 1);
        }
}

/// Values of `g` that the subgraphs of node `n` read by name.
std::vector<ir::ValueId> implicitInputs(const ir::Graph& g, const Node& n) {
    std::set<std::string> names;
    for (const auto& [name, a] : n.attributes) {
        if (a.type == ir::AttrType::Graph && a.g) collectFreeNames(*a.g, names, 1);
        if (a.type == ir::AttrType::Graphs)
            for (const auto& sg : a.graphs)
                if (sg) collectFreeNames(*sg, names, 1);
    }
    std::vector<ir::ValueId> ids;
    for (const std::string& name : names)
        if (const ir::ValueId id = g.findValue(name); id != ir::kNoValue) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    return ids;
}

/// Topological order counting the implicit inputs of subgraph-holding nodes as edges (ties go to
/// the earlier node, as Graph::topologicalOrder()).
std::optional<std::vector<ir::NodeId>> orderWithImplicit(const ir::Graph& g,
                                                         const std::vector<std::vector<ir::ValueId>>& implicit) {
    const std::size_t n = g.numNodes();
    std::vector<int> indegree(n, 0);
    std::vector<std::vector<ir::NodeId>> succ(n);
    for (std::size_t i = 0; i < n; ++i) {
        auto addDep = [&](ir::ValueId v) {
            if (v == ir::kNoValue) return;
            const ir::NodeId p = g.producer(v);
            if (p == ir::kNoNode || static_cast<std::size_t>(p) == i) return;
            succ[static_cast<std::size_t>(p)].push_back(static_cast<ir::NodeId>(i));
            ++indegree[i];
        };
        for (ir::ValueId v : g.node(static_cast<ir::NodeId>(i)).inputs) addDep(v);
        for (ir::ValueId v : implicit[i]) addDep(v);
    }
    std::priority_queue<ir::NodeId, std::vector<ir::NodeId>, std::greater<>> ready;
    for (std::size_t i = 0; i < n; ++i)
        if (indegree[i] == 0) ready.push(static_cast<ir::NodeId>(i));
    std::vector<ir::NodeId> order;
    while (!ready.empty()) {
        const ir::NodeId id = ready.top();
        ready.pop();
        order.push_back(id);
        for (ir::NodeId s : succ[static_cast<std::size_t>(id)])
            if (--indegree[static_cast<std::size_t>(s)] == 0) ready.push(s);
    }
    if (order.size() != n) return std::nullopt;
    return order;
}

/// Runs the nodes of `g` over `env` (its inputs and initializers already set). Values that `g`
/// does not define are taken by name from `parent`. Throws NodeFailure.
void execNodes(const ir::Graph& g, std::vector<BufPtr>& env, const Scope* parent, const ReferenceOptions& options,
               const support::CancelToken* cancel, bool keepAll) {
    const Scope self{&g, &env, parent};
    if (parent)
        for (std::size_t i = 0; i < g.numValues(); ++i)
            if (!env[i] && isFreeValue(g, static_cast<ir::ValueId>(i))) env[i] = parent->find(g.value(static_cast<ir::ValueId>(i)).name);

    // Uses left per value, so that intermediates are freed after their last consumer. Values a
    // subgraph reads by name are kept for the whole run.
    std::vector<std::int64_t> uses(g.numValues(), 0);
    for (const Node& n : g.nodes())
        for (ir::ValueId v : n.inputs)
            if (v != ir::kNoValue) ++uses[static_cast<std::size_t>(v)];
    for (ir::ValueId v : g.outputs()) uses[static_cast<std::size_t>(v)] += 1 << 20;
    std::vector<std::vector<ir::ValueId>> implicit(g.numNodes());
    bool anyImplicit = false;
    for (std::size_t i = 0; i < g.numNodes(); ++i) {
        implicit[i] = implicitInputs(g, g.node(static_cast<ir::NodeId>(i)));
        for (ir::ValueId v : implicit[i]) uses[static_cast<std::size_t>(v)] += 1 << 20;
        anyImplicit = anyImplicit || !implicit[i].empty();
    }
    const auto order = anyImplicit ? orderWithImplicit(g, implicit) : g.topologicalOrder();
    if (!order) throw NodeFailure{"graph", "the graph has a cycle"};

    for (ir::NodeId id : *order) {
        const Node& n = g.node(id);
        if (cancel && cancel->isCancelled()) throw NodeFailure{whereOf(n), "cancelled", true};
        Ctx c{g, n, {}, options, cancel, &self};
        for (std::size_t i = 0; i < n.inputs.size(); ++i) {
            const ir::ValueId v = n.inputs[i];
            if (v == ir::kNoValue) {
                c.in.push_back(nullptr);
                continue;
            }
            BufPtr b = env[static_cast<std::size_t>(v)];
            if (!b)
                throw NodeFailure{whereOf(n),
                                  "input " + std::to_string(i) + " ('" + g.value(v).name + "') has no value"};
            c.in.push_back(std::move(b));
        }
        std::vector<BufPtr> outs;
        try {
            outs = evalNode(c);
        } catch (const EvalError& e) {
            throw NodeFailure{whereOf(n), e.message};
        } catch (const Cancelled&) {
            throw NodeFailure{whereOf(n), "cancelled", true};
        } catch (const std::bad_alloc&) {
            throw NodeFailure{whereOf(n), "out of memory"};
        }
        for (std::size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k)
            if (n.outputs[k] != ir::kNoValue && outs[k])
                env[static_cast<std::size_t>(n.outputs[k])] = storedAs(outs[k], g.value(n.outputs[k]).type.dtype);
        if (keepAll) continue;
        for (ir::ValueId v : n.inputs)
            if (v != ir::kNoValue && --uses[static_cast<std::size_t>(v)] == 0) env[static_cast<std::size_t>(v)].reset();
    }
}

/// Runs the graph; on success `env` holds the graph outputs (and, with keepAll, every value).
bool runGraph(const ir::Graph& g, const std::vector<ir::TensorData>& runtimeInputs, const ReferenceOptions& options,
              const support::CancelToken* cancel, bool keepAll, std::vector<BufPtr>& env,
              support::DiagnosticList& diags) {
    const std::string& file = options.file;
    env.assign(g.numValues(), nullptr);

    const auto inputs = g.runtimeInputs();
    if (inputs.size() != runtimeInputs.size()) {
        diags.error(file, "graph inputs",
                    "expected " + std::to_string(inputs.size()) + " runtime inputs, got " +
                        std::to_string(runtimeInputs.size()));
        return false;
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const ir::Value& v = g.value(inputs[i]);
        const ir::TensorData& t = runtimeInputs[i];
        const std::string where = "input '" + v.name + "'";
        if (t.dtype == DType::String || !t.sizeConsistent()) {
            diags.error(file, where, "data is not numeric or its size does not match its shape " + dimsStr(t.dims));
            continue;
        }
        const DType want = v.type.dtype;
        if (want != DType::Undefined && want != t.dtype &&
            !(ir::isFloatingPoint(want) && ir::isFloatingPoint(t.dtype))) {
            diags.error(file, where,
                        "expected dtype " + std::string(ir::dtypeName(want)) + ", got " +
                            std::string(ir::dtypeName(t.dtype)));
            continue;
        }
        const ir::Shape& s = v.type.shape;
        bool shapeOk = !s.rankKnown() || s.rank() == t.dims.size();
        for (std::size_t d = 0; shapeOk && s.rankKnown() && d < s.rank(); ++d)
            if (s[d].isKnown() && s[d].value != t.dims[d]) shapeOk = false;
        if (!shapeOk) {
            diags.error(file, where, "expected shape " + s.str() + ", got " + dimsStr(t.dims));
            continue;
        }
        if (t.numElements() > options.maxElements) {
            diags.error(file, where, "tensor of shape " + dimsStr(t.dims) + " exceeds the element limit");
            continue;
        }
        auto b = std::make_shared<Buf>();
        b->dtype = want != DType::Undefined ? want : t.dtype;
        b->dims = t.dims;
        b->v = t.toDoubles();
        env[static_cast<std::size_t>(inputs[i])] = std::move(b);
    }
    if (diags.hasErrors()) return false;
    for (ir::ValueId id : g.initializers()) {
        const ir::Value& v = g.value(id);
        if (!v.data || v.data->dtype == DType::String || !v.data->sizeConsistent()) continue;
        env[static_cast<std::size_t>(id)] = fromTensorData(*v.data);
    }

    try {
        execNodes(g, env, nullptr, options, cancel, keepAll);
    } catch (const NodeFailure& f) {
        diags.error(file, f.where, f.message);
        return false;
    }
    return true;
}

/// The graph outputs of a finished run, converted to their graph dtypes.
bool collectOutputs(const ir::Graph& g, const std::vector<BufPtr>& env, const std::string& file,
                    std::vector<ir::TensorData>& result, support::DiagnosticList& diags) {
    for (ir::ValueId id : g.outputs()) {
        const ir::Value& v = g.value(id);
        const BufPtr& b = env[static_cast<std::size_t>(id)];
        if (!b) {
            diags.error(file, "output '" + v.name + "'", "has no value");
            return false;
        }
        std::string err;
        ir::TensorData td;
        if (!toTensorData(*b, v.type.dtype, td, err)) {
            diags.error(file, "output '" + v.name + "'", err);
            return false;
        }
        result.push_back(std::move(td));
    }
    return true;
}

}  // namespace

support::Expected<std::vector<ir::TensorData>> evaluate(const ir::Graph& g,
                                                        const std::vector<ir::TensorData>& runtimeInputs,
                                                        const ReferenceOptions& options,
                                                        const support::CancelToken* cancel) {
    support::DiagnosticList diags;
    std::vector<BufPtr> env;
    std::vector<ir::TensorData> result;
    if (!runGraph(g, runtimeInputs, options, cancel, false, env, diags) ||
        !collectOutputs(g, env, options.file, result, diags))
        return diags;
    return result;
}

std::vector<ir::ValueId> subgraphInputs(const ir::Graph& g, ir::NodeId id) {
    if (id < 0 || static_cast<std::size_t>(id) >= g.numNodes()) return {};
    return implicitInputs(g, g.node(id));
}

const ir::TensorData* ReferenceValues::value(ir::ValueId id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= values.size() || !values[static_cast<std::size_t>(id)]) return nullptr;
    return &*values[static_cast<std::size_t>(id)];
}

support::Expected<ReferenceValues> evaluateAll(const ir::Graph& g, const std::vector<ir::TensorData>& runtimeInputs,
                                               const ReferenceOptions& options, const support::CancelToken* cancel) {
    support::DiagnosticList diags;
    std::vector<BufPtr> env;
    ReferenceValues r;
    if (!runGraph(g, runtimeInputs, options, cancel, true, env, diags) ||
        !collectOutputs(g, env, options.file, r.outputs, diags))
        return diags;
    std::vector<bool> isInit(g.numValues(), false);
    for (ir::ValueId id : g.initializers()) isInit[static_cast<std::size_t>(id)] = true;
    r.values.resize(g.numValues());
    for (std::size_t id = 0; id < env.size(); ++id) {
        if (!env[id] || isInit[id]) continue;
        const ir::Value& v = g.value(static_cast<ir::ValueId>(id));
        if (v.type.dtype == DType::String) continue;
        std::string err;
        ir::TensorData td;
        if (!toTensorData(*env[id], v.type.dtype, td, err)) {
            diags.error(options.file, "value '" + v.name + "'", err);
            return diags;
        }
        r.values[id] = std::move(td);
    }
    return r;
}

namespace refimpl {

std::vector<BufPtr> runSubgraph(Ctx& c, const ir::Graph& body, const std::string& label,
                                const std::vector<BufPtr>& inputs) {
    std::vector<BufPtr> env(body.numValues());
    const auto rt = body.runtimeInputs();
    if (rt.size() != inputs.size())
        fail("subgraph '" + label + "' has " + std::to_string(rt.size()) + " inputs but is given " +
             std::to_string(inputs.size()));
    for (std::size_t i = 0; i < rt.size(); ++i) {
        BufPtr b = inputs[i];
        if (!b) fail("input " + std::to_string(i) + " of subgraph '" + label + "' has no value");
        const DType declared = body.value(rt[i]).type.dtype;
        if (declared != DType::Undefined && declared != DType::String && declared != b->dtype) {
            auto copy = std::make_shared<Buf>(*b);
            copy->dtype = declared;
            for (auto& x : copy->v) x = roundTo(declared, x);
            b = std::move(copy);
        }
        env[static_cast<std::size_t>(rt[i])] = std::move(b);
    }
    for (ir::ValueId id : body.initializers()) {
        const ir::Value& v = body.value(id);
        if (!v.data || v.data->dtype == DType::String || !v.data->sizeConsistent()) continue;
        env[static_cast<std::size_t>(id)] = fromTensorData(*v.data);
    }
    try {
        execNodes(body, env, c.scope, c.opt, c.cancel, false);
    } catch (const NodeFailure& f) {
        if (f.cancelled) throw Cancelled{};
        const std::string prefix = kNoReferenceImplementation;
        if (f.message.compare(0, prefix.size(), prefix) == 0)
            fail(f.message + " (in subgraph '" + label + "' > " + f.where + ")");
        fail("in subgraph '" + label + "' > " + f.where + ": " + f.message);
    }
    std::vector<BufPtr> outs;
    for (ir::ValueId id : body.outputs()) {
        BufPtr b = env[static_cast<std::size_t>(id)];
        if (!b) fail("output '" + body.value(id).name + "' of subgraph '" + label + "' has no value");
        outs.push_back(std::move(b));
    }
    return outs;
}

}  // namespace refimpl

}  // namespace tessera::eval
