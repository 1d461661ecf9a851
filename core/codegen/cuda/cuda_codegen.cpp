#include "core/codegen/cuda/cuda_codegen.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace tessera::codegen {

using lower::BufferDecl;
using lower::Expr;
using lower::ExprKind;
using lower::ForKind;
using lower::Kernel;
using lower::MemoryScope;
using lower::Stmt;
using lower::StmtKind;
using lower::StmtNode;

namespace {

bool exprUses(const Expr& e, int buffer) {
    if (!e) return false;
    if (e->kind == ExprKind::Load && e->buffer == buffer) return true;
    for (const auto& a : e->args)
        if (exprUses(a, buffer)) return true;
    return false;
}

/// True when s reads or writes `buffer` (the base emitter declares an Allocate'd buffer only then).
bool stmtUsesBuffer(const Stmt& s, int buffer) {
    if (!s) return false;
    if ((s->kind == StmtKind::Store || s->kind == StmtKind::Mma) && s->buffer == buffer) return true;
    if (exprUses(s->extent, buffer) || exprUses(s->value, buffer)) return true;
    if (s->mma && (s->mma->a.buffer == buffer || s->mma->b.buffer == buffer)) return true;
    for (const auto& i : s->indices)
        if (exprUses(i, buffer)) return true;
    for (const auto& b : s->body)
        if (stmtUsesBuffer(b, buffer)) return true;
    return stmtUsesBuffer(s->elseBody, buffer);
}

bool exprUsesShared(const Expr& e, const Kernel& k) {
    if (!e) return false;
    if (e->kind == ExprKind::Load && e->buffer >= 0 && e->buffer < static_cast<int>(k.buffers.size()) &&
        k.buffers[static_cast<std::size_t>(e->buffer)].scope == MemoryScope::Shared)
        return true;
    for (const auto& a : e->args)
        if (exprUsesShared(a, k)) return true;
    return false;
}

/// True when s contains a Barrier or touches a Shared buffer: a grid-stride (Blocks) loop around
/// it must synchronise the block before its next iteration reuses the shared memory.
bool usesBlockSync(const Stmt& s, const Kernel& k) {
    if (!s) return false;
    if (s->kind == StmtKind::Barrier) return true;
    if ((s->kind == StmtKind::Store || s->kind == StmtKind::Allocate) && s->buffer >= 0 &&
        s->buffer < static_cast<int>(k.buffers.size()) &&
        k.buffers[static_cast<std::size_t>(s->buffer)].scope == MemoryScope::Shared)
        return true;
    if (exprUsesShared(s->extent, k) || exprUsesShared(s->value, k)) return true;
    if (s->mma)
        for (int b : {s->mma->a.buffer, s->mma->b.buffer})
            if (b >= 0 && b < static_cast<int>(k.buffers.size()) && k.buffers[static_cast<std::size_t>(b)].scope == MemoryScope::Shared)
                return true;
    for (const auto& i : s->indices)
        if (exprUsesShared(i, k)) return true;
    for (const auto& b : s->body)
        if (usesBlockSync(b, k)) return true;
    return usesBlockSync(s->elseBody, k);
}

std::string shapeText(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Device definitions of the helpers whose text differs by target (CEmitter::emitHelpers): the
// conversions through PTX cvt and bit casts, floordiv/floormod specialised for float types.
const char* const kCudaConversions[] = {
    "@ float tsr_f16_to_f32(uint16_t h) {",
    "    float f;",
    "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));",
    "    return f;",
    "}",
    "@ uint16_t tsr_f32_to_f16(float f) {  // round to nearest even",
    "    uint16_t h;",
    "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));",
    "    return h;",
    "}",
    "@ float tsr_bf16_to_f32(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }",
    "@ uint16_t tsr_f32_to_bf16(float f) {  // round to nearest even",
    "    uint32_t x = __float_as_uint(f);",
    "    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN",
    "    x += 0x7fffu + ((x >> 16) & 1u);",
    "    return static_cast<uint16_t>(x >> 16);",
    "}",
};
const char* const kCudaFloorOps[] = {
    "template <typename T> @ T tsr_floordiv(T a, T b) {",
    "    T q = static_cast<T>(a / b);",
    "    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;",
    "    return q;",
    "}",
    "template <> @ float tsr_floordiv<float>(float a, float b) { return floorf(a / b); }",
    "template <> @ double tsr_floordiv<double>(double a, double b) { return floor(a / b); }",
    "template <typename T> @ T tsr_floormod(T a, T b) {",
    "    T r = static_cast<T>(a % b);",
    "    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);",
    "    return r;",
    "}",
    "template <> @ float tsr_floormod<float>(float a, float b) { return a - floorf(a / b) * b; }",
    "template <> @ double tsr_floormod<double>(double a, double b) { return a - floor(a / b) * b; }",
};

/// Walks a kernel body: worker-loop extents, shared bytes, and the structural errors.
class KernelAnalysis {
public:
    KernelAnalysis(const Kernel& k, const CudaOptions& o) : m_k(k), m_options(o) {}

    void run() {
        for (std::size_t i = 0; i < m_k.params.size(); ++i) {
            const int p = m_k.params[i];
            if (p < 0 || p >= static_cast<int>(m_k.buffers.size()))
                error("parameter " + std::to_string(i) + " of kernel " + quoted(m_k.name) + " refers to buffer " +
                      std::to_string(p) + ", which the kernel does not have");
        }
        walk(m_k.body);
        if (m_sharedBytes > kCudaMaxStaticSharedBytes)
            error("shared buffers of kernel " + quoted(m_k.name) + " need " + std::to_string(m_sharedBytes) +
                  " bytes; static shared memory is limited to " + std::to_string(kCudaMaxStaticSharedBytes) + " bytes");
    }

    bool hasBlocks = false;
    bool hasThreads = false;
    std::int64_t maxBlocks = 0;
    std::int64_t maxThreads = 0;
    support::DiagnosticList diags;

    std::int64_t sharedBytes() const { return m_sharedBytes; }

private:
    void error(std::string message) { diags.error({}, {}, std::move(message)); }  // the message names the kernel

    std::string varText(const lower::Var& v) const { return quoted(v.name.empty() ? "v" : v.name); }

    void walk(const Stmt& s) {
        if (!s) return;
        const StmtNode& n = *s;
        switch (n.kind) {
        case StmtKind::For: {
            const bool blocks = n.forKind == ForKind::Blocks, threads = n.forKind == ForKind::Threads;
            if (blocks || threads) {
                const char* kind = blocks ? "Blocks" : "Threads";
                std::int64_t extent = 0;
                if (!n.extent.isIntImm(&extent)) {
                    error(std::string(kind) + " loop " + varText(n.var) + " of kernel " + quoted(m_k.name) +
                          " has an extent that is not a constant (the launch needs it)");
                } else if (blocks) {
                    hasBlocks = true;
                    maxBlocks = std::max(maxBlocks, extent);
                } else {
                    hasThreads = true;
                    maxThreads = std::max(maxThreads, extent);
                }
                if (blocks && m_threads) {
                    error("Blocks loop " + varText(n.var) + " of kernel " + quoted(m_k.name) + " is inside Threads loop " +
                          varText(*m_threads) + "; grid workers cannot be nested in block workers");
                } else if (blocks && m_blocks) {
                    error("Blocks loop " + varText(n.var) + " of kernel " + quoted(m_k.name) + " is inside Blocks loop " +
                          varText(*m_blocks) + "; a kernel has one level of grid workers");
                } else if (threads && m_threads) {
                    error("Threads loop " + varText(n.var) + " of kernel " + quoted(m_k.name) +
                          " is inside Threads loop " + varText(*m_threads) + "; a block has one level of threads");
                }
            }
            checkExpr(n.extent);
            const lower::Var* savedBlocks = m_blocks;
            const lower::Var* savedThreads = m_threads;
            const Expr savedExtent = m_threadsExtent;
            if (blocks && !m_blocks) m_blocks = &n.var;
            if (threads && !m_threads) {
                m_threads = &n.var;
                m_threadsExtent = n.extent;
            }
            for (const auto& b : n.body) walk(b);
            m_blocks = savedBlocks;
            m_threads = savedThreads;
            m_threadsExtent = savedExtent;
            return;
        }
        case StmtKind::Barrier:
            if (m_threads)
                error("a Barrier of kernel " + quoted(m_k.name) + " is inside Threads loop " + varText(*m_threads) +
                      "; every thread of the block must reach a barrier (put it between Threads loops)");
            return;
        case StmtKind::Allocate: {
            if (n.buffer < 0 || n.buffer >= static_cast<int>(m_k.buffers.size())) {
                error("kernel " + quoted(m_k.name) + " allocates buffer " + std::to_string(n.buffer) +
                      ", which it does not have");
            } else {
                const BufferDecl& b = m_k.buffers[static_cast<std::size_t>(n.buffer)];
                const bool used = !n.body.empty() && stmtUsesBuffer(n.body[0], n.buffer);
                if (b.scope == MemoryScope::Global) {
                    error("kernel " + quoted(m_k.name) + " allocates buffer " + quoted(b.name) +
                          " in global memory; the CUDA target allocates only shared and local buffers");
                } else if (b.perThread && (b.scope != MemoryScope::Local || b.shape.empty())) {
                    error("per-thread buffer " + quoted(b.name) + " of kernel " + quoted(m_k.name) +
                          " must be a local buffer with a leading thread dimension");
                } else if (b.scope == MemoryScope::Local && threadBytes(b) > kCudaMaxLocalBytes) {
                    error("local buffer " + quoted(b.name) + " of kernel " + quoted(m_k.name) + " needs " +
                          std::to_string(threadBytes(b)) +
                          " bytes; the CUDA target keeps local buffers in registers/stack (max " +
                          std::to_string(kCudaMaxLocalBytes) + ")");
                } else if (b.scope == MemoryScope::Shared && used && m_sharedCounted.insert(n.buffer).second) {
                    m_sharedBytes += b.bytes();
                }
            }
            break;
        }
        case StmtKind::Store: checkAccess(n.buffer, n.indices); break;
        case StmtKind::Let:
            // Inside a Threads loop: whether the variable is the same across a warp's lanes.
            if (m_threads && n.value) m_varKind[n.var.id] = warpUniform(n.value) ? 0 : laneAligned(n.value) ? 1 : 2;
            break;
        case StmtKind::If:
            if (m_threads && n.value && !warpUniform(n.value)) {
                // Lanes of a warp may take different branches: no warp MMA below.
                checkExpr(n.value);
                ++m_divergent;
                for (const auto& b : n.body) walk(b);
                walk(n.elseBody);
                --m_divergent;
                return;
            }
            break;
        case StmtKind::Mma: {
            if (m_divergent > 0)
                error("an mma statement of kernel " + quoted(m_k.name) + " is under a condition that may differ between "
                      "the lanes of a warp; every lane must execute a warp MMA (guard whole warps: t < a multiple of 32)");
            if (!n.mma) {
                error("kernel " + quoted(m_k.name) + " has an mma statement without operands");
                break;
            }
            if (!m_threads) error("an mma statement of kernel " + quoted(m_k.name) + " is outside a Threads loop");
            std::int64_t extent = 0;
            if (m_threads && m_threadsExtent.isIntImm(&extent) && extent % 32 != 0)
                error("an mma statement of kernel " + quoted(m_k.name) + " is in Threads loop " + varText(*m_threads) + " of " +
                      std::to_string(extent) + " iterations; a warp MMA needs whole warps (a multiple of 32)");
            if (n.buffer < 0 || n.buffer >= static_cast<int>(m_k.buffers.size()) ||
                !m_k.buffers[static_cast<std::size_t>(n.buffer)].perThread ||
                m_k.buffers[static_cast<std::size_t>(n.buffer)].dtype != DType::F32)
                error("the accumulator of an mma statement of kernel " + quoted(m_k.name) + " is not a f32 per-thread buffer");
            for (int b : {n.mma->a.buffer, n.mma->b.buffer})
                if (b < 0 || b >= static_cast<int>(m_k.buffers.size()) || m_k.buffers[static_cast<std::size_t>(b)].dtype != DType::F32)
                    error("an operand of an mma statement of kernel " + quoted(m_k.name) + " is not a f32 buffer");
            checkAccess(n.buffer, n.indices);
            lower::forEachMmaExpr(*n.mma, [&](const Expr& e) { checkExpr(e); });
            break;
        }
        default: break;
        }
        checkExpr(n.extent);
        checkExpr(n.value);
        for (const auto& i : n.indices) checkExpr(i);
        for (const auto& b : n.body) walk(b);
        walk(n.elseBody);
    }

    /// Thread index of a lane up to a multiple of 32 (the Threads variable, or such a value % 32k):
    /// compared with or divided by a multiple of 32 it gives the same result on every lane of a warp.
    bool laneAligned(const Expr& e) const {
        if (!e) return false;
        if (e->kind == ExprKind::VarRef)
            return (m_threads && e->var.id == m_threads->id) || (m_varKind.count(e->var.id) && m_varKind.at(e->var.id) == 1);
        std::int64_t c = 0;
        if (e->kind == ExprKind::Binary && (e->binary == lower::BinaryOp::Mod || e->binary == lower::BinaryOp::FloorMod) &&
            e->args.size() == 2 && e->args[1].isIntImm(&c) && c > 0 && c % 32 == 0)
            return laneAligned(e->args[0]);
        return false;
    }
    /// True when `e` has the same value on every lane of a warp (conservative).
    bool warpUniform(const Expr& e) const {
        if (!e) return true;
        if (e->kind == ExprKind::VarRef) {
            if (m_threads && e->var.id == m_threads->id) return false;
            auto it = m_varKind.find(e->var.id);
            return it == m_varKind.end() || it->second == 0;
        }
        std::int64_t c = 0;
        if (e->kind == ExprKind::Binary && e->args.size() == 2 && e->args[1].isIntImm(&c) && c > 0 && c % 32 == 0 &&
            laneAligned(e->args[0])) {
            using lower::BinaryOp;
            if (e->binary == BinaryOp::Lt || e->binary == BinaryOp::Ge || e->binary == BinaryOp::Div ||
                e->binary == BinaryOp::FloorDiv)
                return true;
        }
        for (const auto& a : e->args)
            if (!warpUniform(a)) return false;
        return true;
    }

    /// Bytes one thread holds of a Local buffer (a per-thread buffer: one row).
    static std::int64_t threadBytes(const BufferDecl& b) {
        if (b.perThread && !b.shape.empty() && b.shape[0] > 0) return b.bytes() / b.shape[0];
        return b.bytes();
    }

    void checkExpr(const Expr& e) {
        if (!e) return;
        if (e->kind == ExprKind::Load) checkAccess(e->buffer, e->args);
        for (const auto& a : e->args) checkExpr(a);
    }

    /// A per-thread buffer is addressed by the enclosing Threads loop's variable first, inside a
    /// Threads loop of the buffer's leading extent that runs at most once per thread.
    void checkAccess(int buffer, const std::vector<Expr>& indices) {
        if (buffer < 0 || buffer >= static_cast<int>(m_k.buffers.size())) return;
        const BufferDecl& b = m_k.buffers[static_cast<std::size_t>(buffer)];
        if (!b.perThread || b.shape.empty() || m_perThreadReported.count(buffer)) return;
        const std::size_t before = diags.items().size();
        checkPerThreadAccess(b, indices);
        if (diags.items().size() != before) m_perThreadReported.insert(buffer);  // its first problem only
    }

    void checkPerThreadAccess(const BufferDecl& b, const std::vector<Expr>& indices) {
        const std::string what = "per-thread buffer " + quoted(b.name) + " of kernel " + quoted(m_k.name);
        if (!m_threads) {
            error(what + " is accessed outside a Threads loop");
            return;
        }
        if (indices.size() != b.shape.size() || !indices[0] || indices[0]->kind != ExprKind::VarRef ||
            indices[0]->var.id != m_threads->id) {
            error(what + " is not indexed by the enclosing Threads loop variable " + varText(*m_threads) + " first");
            return;
        }
        std::int64_t extent = 0;
        if (!m_threadsExtent.isIntImm(&extent)) return;  // reported with the loop
        if (extent != b.shape[0]) {
            error(what + " has " + std::to_string(b.shape[0]) + " rows but Threads loop " + varText(*m_threads) +
                  " has " + std::to_string(extent) + " iterations");
        } else if (extent > m_options.maxThreadsPerBlock) {
            error(what + " is used in Threads loop " + varText(*m_threads) + " of " + std::to_string(extent) +
                  " iterations, more than the " + std::to_string(m_options.maxThreadsPerBlock) +
                  " threads of a block (each thread keeps one row: it must run at most one iteration)");
        }
    }

    const Kernel& m_k;
    const CudaOptions& m_options;
    const lower::Var* m_blocks = nullptr;
    const lower::Var* m_threads = nullptr;
    Expr m_threadsExtent;
    std::map<int, int> m_varKind;  ///< Let variables in Threads loops: 0 warp-uniform, 1 lane-aligned index, 2 other
    int m_divergent = 0;           ///< enclosing Ifs whose condition may differ within a warp
    std::int64_t m_sharedBytes = 0;
    std::set<int> m_sharedCounted;
    std::set<int> m_perThreadReported;
};

class CudaEmitter final : public CEmitter {
public:
    CudaEmitter(const CudaOptions& o, std::unordered_map<const Kernel*, CudaLaunch> launches,
                std::unordered_map<const Kernel*, std::int64_t> threadsNeeded)
        : CEmitter(Style{o.fullParens ? Parens::Full : Parens::Minimal, 4}),
          m_launches(std::move(launches)),
          m_threadsNeeded(std::move(threadsNeeded)) {}

protected:
    std::string kernelQualifiers() const override { return "extern \"C\" __global__"; }
    std::string helperQualifiers() const override { return "__device__ __forceinline__"; }

    void emitPrelude() override {
        CodeWriter& w = writer();
        static const char* const head[] = {
            "// Generated by Tessera: CUDA C++ for NVRTC. Do not edit; regenerate from the model.",
            "// Compile: NVRTC (C++17), e.g. --gpu-architecture=sm_90. No include directives: the module defines",
            "// what it uses. Launch each entry with the grid and block of its '// launch:' line (x only,",
            "// no dynamic shared memory); one device pointer per parameter (inputs, then outputs; dense",
            "// row-major buffers; f16/bf16 as uint16_t bit patterns, bool as uint8_t; no aliasing).",
            "typedef signed char int8_t;",
            "typedef short int16_t;",
            "typedef int int32_t;",
            "typedef long long int64_t;",
            "typedef unsigned char uint8_t;",
            "typedef unsigned short uint16_t;",
            "typedef unsigned int uint32_t;",
            "typedef unsigned long long uint64_t;",
            "#define INT64_MIN (-9223372036854775807LL - 1)",
            "",
        };
        for (const char* l : head) w.rawLine(l);
        emitHelpers(kCudaConversions, kCudaFloorOps, {});
        w.blank();
    }

    void emitKernelSignature(const Kernel& k, const std::string& entry) override {
        CodeWriter& w = writer();
        CudaLaunch launch;
        if (auto it = m_launches.find(&k); it != m_launches.end()) launch = it->second;
        std::string l = "// launch: grid " + std::to_string(launch.gridX) + " x block " + std::to_string(launch.blockX);
        if (launch.sharedBytes > 0) l += ", static shared " + std::to_string(launch.sharedBytes) + " bytes";
        w.rawLine(l);
        std::int64_t needed = 0;
        if (auto it = m_threadsNeeded.find(&k); it != m_threadsNeeded.end()) needed = it->second;
        if (needed > 0 && launch.blockX > needed) {
            w.rawLine("//   (the Threads loops have " + std::to_string(needed) +
                      " iterations at most; the block is rounded up to whole warps and the loop bounds idle the rest)");
        } else if (needed > launch.blockX) {
            w.rawLine("//   (a Threads loop has " + std::to_string(needed) +
                      " iterations; each thread runs several, strided by the block size)");
        }
        std::string head = kernelQualifiers() + " void __launch_bounds__(" + std::to_string(launch.blockX) + ") " + entry + "(";
        if (k.params.empty()) {
            w.line(head + ") {");
        } else {
            w.line(head);
            w.indent();
            for (std::size_t i = 0; i < k.params.size(); ++i) {
                const int p = k.params[i];
                const bool last = i + 1 == k.params.size();
                std::string decl = "tsr_invalid_parameter " + paramName(i);
                if (p >= 0 && p < static_cast<int>(k.buffers.size())) {
                    const BufferDecl& b = k.buffers[static_cast<std::size_t>(p)];
                    const std::string cq = b.role == lower::BufferRole::Input ? "const " : "";
                    decl = cq + storageType(b.dtype) + "* " + restrictQualifier() + " " + paramName(i);
                }
                w.line(decl + (last ? ") {" : ","));
            }
            w.dedent();
        }
        w.indent();
    }

    void emitFor(const StmtNode& s) override {
        CodeWriter& w = writer();
        switch (s.forKind) {
        case ForKind::Blocks:
        case ForKind::Threads: {
            const bool blocks = s.forKind == ForKind::Blocks;
            const ExprText extent = expr(s.extent);
            const std::string v = bindVar(s.var);
            std::string header = "for (int64_t " + v + " = " + (blocks ? "blockIdx.x" : "threadIdx.x") + "; " + v +
                                 " < " + operand(extent, kPrecRel + 1) + "; " + v + " += " +
                                 (blocks ? "gridDim.x" : "blockDim.x") + ") {";
            header += std::string("  // ") + (blocks ? "blocks" : "threads");
            if (!s.text.empty()) header += ": " + escapeCommentText(s.text);
            w.line(header);
            w.indent();
            if (!s.body.empty()) emitStmt(s.body[0]);
            if (blocks && !s.body.empty() && usesBlockSync(s.body[0], kernel()))
                w.line("__syncthreads();  // end of the iteration: the next one reuses shared memory and barriers");
            endLoop(s);
            return;
        }
        case ForKind::Parallel:
            w.line("// parallel loop (a CPU kind): serial on the CUDA target, in each thread");
            emitLoop(s, {});
            return;
        default: CEmitter::emitFor(s); return;
        }
    }

    void emitBarrier() override { writer().line("__syncthreads();"); }

    /// A warp MMA (kernel_ir.h, MmaInfo): each lane loads its fragment elements (PTX ISA's
    /// m16n8k8 .tf32 layout: a0..a3 at (g, q), (g+8, q), (g, q+4), (g+8, q+4); b0, b1 at (q, g),
    /// (q+4, g); c0..c3 at (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1)), converts them to TF32
    /// (3xTF32: big and small parts) and issues mma.sync; below sm_80 (no TF32 MMA) the lane
    /// computes its four results with f32 FMAs instead (same per-lane semantics, f32 accuracy).
    void emitMma(const StmtNode& s) override {
        CodeWriter& w = writer();
        if (!s.mma || s.indices.empty()) {
            errorLine("malformed mma statement");
            return;
        }
        const lower::MmaInfo& m = *s.mma;
        const bool x3 = m.precision == lower::MmaPrecision::Tf32x3;
        w.line(std::string("{  // warp MMA m16n8k8 ") + (x3 ? "3xTF32 (big/small split, f32-level products)" : "TF32"));
        w.indent();
        lower::Var gv, qv;
        gv.id = -1000001;
        gv.name = "mg";
        qv.id = -1000002;
        qv.name = "mq";
        const ExprText lane = expr(m.lane);
        const std::string g = bindVar(gv), q = bindVar(qv);
        w.line("const int64_t " + g + " = " + operand(lane, kPrecMul) + " >> 2;");
        w.line("const int64_t " + q + " = " + operand(lane, kPrecMul) + " & 3;");
        auto at = [&](const lower::MmaOperand& o, const Expr& row, const Expr& col) {
            std::vector<Expr> idx;
            for (std::size_t d = 0; d < o.base.size() && d < o.stride.size(); ++d)
                idx.push_back(o.base[d] + row * o.stride[d].row + col * o.stride[d].col);
            return expr(lower::load(o.buffer, DType::F32, idx)).text;
        };
        const Expr G = lower::varRef(gv), Q = lower::varRef(qv);
        // TF32 MMAs need sm_80; compiled for an older architecture (the source is compiled for the
        // device it runs on) the lane computes the same four results with f32 FMAs.
        w.rawLine("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800");
        {
            lower::Var kv;
            kv.id = -1000003;
            kv.name = "mk";
            const std::string kn = bindVar(kv);
            const Expr K = lower::varRef(kv);
            for (int r = 0; r < 4; ++r) {
                std::vector<Expr> idx = s.indices;
                idx.back() = idx.back() + lower::intImm(r);
                const std::string acc = accessText(s.buffer, idx);
                const Expr row = G + lower::intImm(8 * (r / 2)), col = Q * lower::intImm(2) + lower::intImm(r % 2);
                w.line("for (int64_t " + kn + " = 0; " + kn + " < 8; ++" + kn + ") " + acc + " = fmaf(" + at(m.a, row, K) +
                       ", " + at(m.b, K, col) + ", " + acc + ");");
            }
            unbindVar(kv);
        }
        w.rawLine("#else");
        auto split = [&](const std::string& name, const std::string& value) {
            w.line("uint32_t " + name + "h, " + name + "l;");
            w.line("{");
            w.indent();
            w.line("const float tsr_x = " + value + ";");
            w.line("asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(" + name + "h) : \"f\"(tsr_x));");
            if (x3)
                w.line("asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(" + name + "l) : \"f\"(tsr_x - __uint_as_float(" + name + "h)));");
            else
                w.line(name + "l = 0u;");
            w.dedent();
            w.line("}");
        };
        for (int r = 0; r < 4; ++r)
            split("tsr_a" + std::to_string(r), at(m.a, G + lower::intImm(8 * (r % 2)), Q + lower::intImm(4 * (r / 2))));
        for (int r = 0; r < 2; ++r) split("tsr_b" + std::to_string(r), at(m.b, Q + lower::intImm(4 * r), G));
        std::string c;
        for (int r = 0; r < 4; ++r) {
            std::vector<Expr> idx = s.indices;
            idx.back() = idx.back() + lower::intImm(r);
            c += std::string(r ? ", " : "") + "\"+f\"(" + accessText(s.buffer, idx) + ")";
        }
        auto issue = [&](const char* a, const char* b) {
            const std::string A(a), B(b);
            w.line("asm(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                   "{%8,%9}, {%0,%1,%2,%3};\"");
            w.line("             : " + c);
            w.line("             : \"r\"(tsr_a0" + A + "), \"r\"(tsr_a1" + A + "), \"r\"(tsr_a2" + A + "), \"r\"(tsr_a3" + A +
                   "), \"r\"(tsr_b0" + B + "), \"r\"(tsr_b1" + B + "));");
        };
        if (x3) {
            issue("l", "h");
            issue("h", "l");
        }
        issue("h", "h");
        w.rawLine("#endif");
        unbindVar(qv);
        unbindVar(gv);
        w.dedent();
        w.line("}");
    }

    void emitAllocateDecl(int buffer, const std::string& name) override {
        const BufferDecl& b = kernel().buffers[static_cast<std::size_t>(buffer)];
        if (b.perThread) {
            const std::int64_t row = b.numElements() / b.shape[0];
            const std::string comment = "  // per-thread " + std::string(ir::dtypeName(b.dtype)) + shapeText(b.shape) +
                                        ": this thread's row";
            writer().line(storageType(b.dtype) + " " + name + (row == 1 ? "" : "[" + std::to_string(row) + "]") + ";" +
                          comment);
            return;
        }
        if (b.scope != MemoryScope::Shared) {
            CEmitter::emitAllocateDecl(buffer, name);  // per-thread scalar or array (<= 64 KiB: validated)
            return;
        }
        const std::string comment = "  // shared " + std::string(ir::dtypeName(b.dtype)) + shapeText(b.shape) + ", " +
                                    std::to_string(b.bytes()) + " bytes";
        if (isScalarTemp(buffer)) {
            writer().line("__shared__ " + storageType(b.dtype) + " " + name + ";" + comment);
        } else {
            writer().line("__shared__ " + storageType(b.dtype) + " " + name + "[" + std::to_string(b.numElements()) +
                          "];" + comment);
        }
    }

    /// A per-thread buffer keeps only the running thread's row: the leading index (the enclosing
    /// Threads loop's variable, validated) is dropped.
    std::string accessText(int buffer, const std::vector<Expr>& indices) override {
        const auto& bufs = kernel().buffers;
        if (buffer < 0 || buffer >= static_cast<int>(bufs.size()) || !bufs[static_cast<std::size_t>(buffer)].perThread)
            return CEmitter::accessText(buffer, indices);
        const BufferDecl& b = bufs[static_cast<std::size_t>(buffer)];
        if (b.shape.empty() || indices.size() != b.shape.size()) return "tsr_wrong_index_count[0]";
        if (b.numElements() / b.shape[0] == 1) return bufferName(buffer);
        std::vector<std::int64_t> strides(b.shape.size(), 1);
        for (std::size_t d = b.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * b.shape[d];
        Expr flat;
        for (std::size_t d = 1; d < b.shape.size(); ++d) {
            Expr term = indices[d] * strides[d];
            flat = flat ? flat + term : term;
        }
        return bufferName(buffer) + "[" + expr(flat).text + "]";
    }

    std::string unrollPragma(std::int64_t n) const override {
        if (n <= 0) return {};
        return "#pragma unroll " + std::to_string(n);
    }

    std::string vectorizePragma(std::int64_t factor) const override {
        if (factor <= 0) return {};  // a plain loop: no SIMD lanes inside a CUDA thread
        return "#pragma unroll " + std::to_string(std::min<std::int64_t>(factor, 64));
    }

    std::string intrinsicSpelling(lower::Intrinsic f, DType t) const override {
        if (f == lower::Intrinsic::Rsqrt) return t == DType::F64 ? "rsqrt" : "rsqrtf";
        return CEmitter::intrinsicSpelling(f, t);
    }

    ExprText floatLiteral(double v, DType t) const override {
        const bool asFloat = t != DType::F64;
        const double value = asFloat ? static_cast<double>(static_cast<float>(v)) : v;
        if (std::isnan(value))
            return {asFloat ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)", kPrecPrimary};
        if (std::isinf(value)) {
            const std::string inf = asFloat ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
            return value > 0 ? ExprText{inf, kPrecPrimary} : ExprText{"-" + inf, kPrecUnary};
        }
        return CEmitter::floatLiteral(v, t);
    }

private:
    std::unordered_map<const Kernel*, CudaLaunch> m_launches;
    std::unordered_map<const Kernel*, std::int64_t> m_threadsNeeded;
};

support::DiagnosticList validateOptions(const CudaOptions& o) {
    support::DiagnosticList d;
    if (o.maxThreadsPerBlock < 1)
        d.error({}, "CUDA options", "maxThreadsPerBlock must be at least 1 (got " + std::to_string(o.maxThreadsPerBlock) + ")");
    if (o.maxGridX < 1) d.error({}, "CUDA options", "maxGridX must be at least 1 (got " + std::to_string(o.maxGridX) + ")");
    return d;
}

CudaLaunch launchOf(const KernelAnalysis& a, const CudaOptions& o) {
    CudaLaunch l;
    l.gridX = a.hasBlocks ? std::clamp<std::int64_t>(a.maxBlocks, 1, o.maxGridX) : 1;
    if (a.hasThreads) {
        const std::int64_t cap = o.maxThreadsPerBlock;
        std::int64_t b = std::clamp<std::int64_t>(a.maxThreads, 1, cap);
        if (b % 32 != 0) b = std::min<std::int64_t>((b + 31) / 32 * 32, cap);  // whole warps
        l.blockX = b;
    }
    l.sharedBytes = a.sharedBytes();
    return l;
}

}  // namespace

support::Expected<CudaLaunch> cudaLaunchFor(const Kernel& kernel, const CudaOptions& options) {
    support::DiagnosticList d = validateOptions(options);
    if (d.hasErrors()) return d;
    KernelAnalysis a(kernel, options);
    a.run();
    if (a.diags.hasErrors()) return std::move(a.diags);
    return launchOf(a, options);
}

support::Expected<CudaModule> generateCuda(const std::vector<const Kernel*>& kernels, const CudaOptions& options) {
    support::DiagnosticList diags = validateOptions(options);
    if (diags.hasErrors()) return diags;
    std::unordered_map<const Kernel*, CudaLaunch> launches;
    std::unordered_map<const Kernel*, std::int64_t> threadsNeeded;
    std::vector<CudaLaunch> ordered;
    for (const Kernel* k : kernels) {
        if (!k) {
            ordered.emplace_back();
            continue;
        }
        KernelAnalysis a(*k, options);
        a.run();
        diags.append(a.diags);
        const CudaLaunch l = launchOf(a, options);
        launches[k] = l;
        threadsNeeded[k] = a.hasThreads ? a.maxThreads : 0;
        ordered.push_back(l);
    }
    if (diags.hasErrors()) return diags;
    CudaEmitter e(options, std::move(launches), std::move(threadsNeeded));
    CudaModule m;
    m.source = e.emitModule(kernels);
    m.launches = std::move(ordered);
    return m;
}

}  // namespace tessera::codegen
