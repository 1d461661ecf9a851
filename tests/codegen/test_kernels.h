#pragma once
// Small kernels written by hand with the kernel IR builders, shared by the codegen, counts and
// interpreter tests.
#include <cstdint>
#include <string>
#include <vector>

#include "core/lower/kernel_ir.h"

namespace tessera::test {

using lower::BufferDecl;
using lower::BufferRole;
using lower::DType;
using lower::Expr;
using lower::ForKind;
using lower::Kernel;
using lower::MemoryScope;
using lower::Stmt;

inline int addParam(Kernel& k, const std::string& name, DType t, std::vector<std::int64_t> shape, BufferRole role) {
    BufferDecl b;
    b.name = name;
    b.dtype = t;
    b.shape = std::move(shape);
    b.scope = MemoryScope::Global;
    b.role = role;
    const int id = k.addBuffer(b);
    k.params.push_back(id);
    return id;
}

inline int addTemp(Kernel& k, const std::string& name, DType t, std::vector<std::int64_t> shape,
                   MemoryScope scope = MemoryScope::Local) {
    BufferDecl b;
    b.name = name;
    b.dtype = t;
    b.shape = std::move(shape);
    b.scope = scope;
    b.role = BufferRole::Temp;
    return k.addBuffer(b);
}

/// C[i] = A[i] + B[i], i = t * 125 + v: parallel t in 0..8, vectorized v in 0..125 (n = 1000).
inline Kernel vectorAddKernel() {
    Kernel k;
    k.name = "vector_add";
    k.opType = "Add";
    k.sourceOps = {"Add_0"};
    k.mappings = {"grid = spatial(8) * repeat(125)"};
    const int a = addParam(k, "A", DType::F32, {1000}, BufferRole::Input);
    const int b = addParam(k, "B", DType::F32, {1000}, BufferRole::Input);
    const int c = addParam(k, "C", DType::F32, {1000}, BufferRole::Output);
    auto t = k.newVar("t"), v = k.newVar("v");
    Expr i = lower::varRef(t) * 125 + lower::varRef(v);
    Stmt body = lower::store(c, {i}, lower::load(a, DType::F32, {i}) + lower::load(b, DType::F32, {i}));
    k.body = lower::forLoop(t, lower::intImm(8),
                            lower::forLoop(v, lower::intImm(125), body, ForKind::Vectorize, 0, "repeat(125)"),
                            ForKind::Parallel, 0, "grid spatial(8)");
    return k;
}

/// Y[j, i] = X[i, j] for X f32[5, 7]: two directly nested Parallel loops (collapse(2)).
inline Kernel transposeKernel() {
    Kernel k;
    k.name = "transpose";
    k.opType = "Transpose";
    k.sourceOps = {"Transpose_1"};
    k.mappings = {"grid = spatial(5, 7)"};
    const int x = addParam(k, "X", DType::F32, {5, 7}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {7, 5}, BufferRole::Output);
    auto i = k.newVar("i"), j = k.newVar("j");
    Stmt body = lower::store(y, {lower::varRef(j), lower::varRef(i)}, lower::load(x, DType::F32, {lower::varRef(i), lower::varRef(j)}));
    k.body = lower::forLoop(i, lower::intImm(5), lower::forLoop(j, lower::intImm(7), body, ForKind::Parallel),
                            ForKind::Parallel);
    return k;
}

/// C[i, j] = sum_k A[i, k] * B[k, j] with a Local scalar accumulator and an unrolled k loop.
inline Kernel matmulKernel(std::int64_t m, std::int64_t n, std::int64_t kk) {
    Kernel k;
    k.name = "matmul";
    k.opType = "MatMul";
    k.sourceOps = {"MatMul_2"};
    k.mappings = {"grid = spatial(" + std::to_string(m) + ")", "block = repeat(" + std::to_string(n) + ")"};
    const int a = addParam(k, "A", DType::F32, {m, kk}, BufferRole::Input);
    const int b = addParam(k, "B", DType::F32, {kk, n}, BufferRole::Input);
    const int c = addParam(k, "C", DType::F32, {m, n}, BufferRole::Output);
    const int acc = addTemp(k, "acc", DType::F32, {});
    auto i = k.newVar("i"), j = k.newVar("j"), r = k.newVar("k");
    Expr ei = lower::varRef(i), ej = lower::varRef(j), er = lower::varRef(r);
    Stmt reduce = lower::forLoop(
        r, lower::intImm(kk),
        lower::store(acc, {}, lower::load(acc, DType::F32, {}) + lower::load(a, DType::F32, {ei, er}) * lower::load(b, DType::F32, {er, ej})),
        ForKind::Unroll, 4);
    Stmt inner = lower::allocate(acc, lower::seq({lower::store(acc, {}, lower::floatImm(0.0)), reduce,
                                                  lower::store(c, {ei, ej}, lower::load(acc, DType::F32, {}))}));
    k.body = lower::forLoop(i, lower::intImm(m), lower::forLoop(j, lower::intImm(n), inner), ForKind::Parallel, 0,
                            "grid spatial(" + std::to_string(m) + ")");
    return k;
}

/// 3x3 convolution, stride 1, padding 1, bias: X f32[1, C, H, W], W f32[OC, C, 3, 3], B f32[OC]
/// -> Y f32[1, OC, H, W]. The input taps are guarded by `if (ih >= 0 && ih < H && iw >= 0 && iw < W)`.
inline Kernel paddedConvKernel(std::int64_t c, std::int64_t oc, std::int64_t h, std::int64_t w) {
    Kernel k;
    k.name = "conv3x3";
    k.opType = "Conv";
    k.sourceOps = {"Conv_3"};
    k.mappings = {"grid = spatial(" + std::to_string(oc) + ", " + std::to_string(h) + ")",
                  "block = repeat(1, " + std::to_string(w) + ")"};
    k.notes = {"pads 1 1 1 1, strides 1 1"};
    const int x = addParam(k, "X", DType::F32, {1, c, h, w}, BufferRole::Input);
    const int wt = addParam(k, "W", DType::F32, {oc, c, 3, 3}, BufferRole::Input);
    const int bias = addParam(k, "B", DType::F32, {oc}, BufferRole::Input);
    const int y = addParam(k, "Y", DType::F32, {1, oc, h, w}, BufferRole::Output);
    const int acc = addTemp(k, "acc", DType::F32, {1});
    auto vo = k.newVar("oc"), vh = k.newVar("oh"), vw = k.newVar("ow"), vc = k.newVar("ic"), vkh = k.newVar("kh"),
         vkw = k.newVar("kw"), vih = k.newVar("ih"), viw = k.newVar("iw");
    Expr eo = lower::varRef(vo), eh = lower::varRef(vh), ew = lower::varRef(vw), ec = lower::varRef(vc),
         ekh = lower::varRef(vkh), ekw = lower::varRef(vkw), eih = lower::varRef(vih), eiw = lower::varRef(viw);
    Expr zero = lower::intImm(0);
    Expr guard = (eih >= zero) && (eih < lower::intImm(h)) && (eiw >= zero) && (eiw < lower::intImm(w));
    Stmt tap = lower::ifThen(guard, lower::store(acc, {zero}, lower::load(acc, DType::F32, {zero}) +
                                                             lower::load(x, DType::F32, {zero, ec, eih, eiw}) *
                                                                 lower::load(wt, DType::F32, {eo, ec, ekh, ekw})));
    Stmt taps = lower::forLoop(
        vc, lower::intImm(c),
        lower::forLoop(vkh, lower::intImm(3),
                       lower::let(vih, eh + ekh + (-1),
                                  lower::forLoop(vkw, lower::intImm(3), lower::let(viw, ew + ekw + (-1), tap), ForKind::Unroll)),
                       ForKind::Unroll));
    Stmt point = lower::allocate(acc, lower::seq({lower::store(acc, {zero}, lower::load(bias, DType::F32, {eo})), taps,
                                                  lower::store(y, {zero, eo, eh, ew}, lower::load(acc, DType::F32, {zero}))}));
    k.body = lower::forLoop(vo, lower::intImm(oc),
                            lower::forLoop(vh, lower::intImm(h), lower::forLoop(vw, lower::intImm(w), point), ForKind::Parallel),
                            ForKind::Parallel, 0, "grid spatial(oc, h)");
    return k;
}

/// C[i, j, k] = A[i, j, k] + B[j, 0] for A f32[2, 3, 4], B f32[3, 1] (numpy broadcast).
inline Kernel broadcastAddKernel() {
    Kernel k;
    k.name = "broadcast_add";
    k.opType = "Add";
    k.sourceOps = {"Add_4"};
    const int a = addParam(k, "A", DType::F32, {2, 3, 4}, BufferRole::Input);
    const int b = addParam(k, "B", DType::F32, {3, 1}, BufferRole::Input);
    const int c = addParam(k, "C", DType::F32, {2, 3, 4}, BufferRole::Output);
    auto i = k.newVar("i"), j = k.newVar("j"), l = k.newVar("l");
    Expr ei = lower::varRef(i), ej = lower::varRef(j), el = lower::varRef(l);
    Stmt body = lower::store(c, {ei, ej, el}, lower::load(a, DType::F32, {ei, ej, el}) + lower::load(b, DType::F32, {ej, lower::intImm(0)}));
    k.body = lower::forLoop(i, lower::intImm(2), lower::forLoop(j, lower::intImm(3), lower::forLoop(l, lower::intImm(4), body)),
                            ForKind::Parallel);
    return k;
}

}  // namespace tessera::test
