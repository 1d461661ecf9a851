#include "core/runtime/runner_service.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>

#include "core/runtime/cuda/cuda_driver.h"
#include "core/runtime/cuda/cuda_runner.h"
#include "core/runtime/runner_protocol.h"
#include "core/runtime/shared_arena.h"
#include "core/runtime/timing.h"

namespace tessera::runtime {

using nlohmann::json;

namespace {

using KernelFn = void (*)(void* const*);
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();

json failure(const std::string& message) { return {{"ok", false}, {"error", message}}; }

/// A read-write MAP_SHARED view of the client's arena file, unmapped on destruction.
class ArenaMapping {
public:
    ~ArenaMapping() {
        if (m_data) ::munmap(m_data, m_size);
    }
    bool map(const std::string& path, std::int64_t bytes, std::string& error) {
        if (bytes <= 0) return true;
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            error = "cannot open the arena '" + path + "': " + std::strerror(errno);
            return false;
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0 || st.st_size < bytes) {
            ::close(fd);
            error = "the arena '" + path + "' is smaller than " + std::to_string(bytes) + " bytes";
            return false;
        }
        void* p = ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        const int err = errno;
        ::close(fd);
        if (p == MAP_FAILED) {
            error = "cannot map the arena '" + path + "': " + std::strerror(err);
            return false;
        }
        m_data = static_cast<std::uint8_t*>(p);
        m_size = static_cast<std::size_t>(bytes);
        return true;
    }
    std::uint8_t* data() const { return m_data; }

private:
    std::uint8_t* m_data = nullptr;
    std::size_t m_size = 0;
};

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};
using Block = std::unique_ptr<std::uint8_t, FreeDeleter>;

Block allocatePages(std::int64_t bytes) {
    const std::size_t size = (static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1)) + 4095) / 4096 * 4096;
    return Block(static_cast<std::uint8_t*>(std::aligned_alloc(4096, size)));
}

/// The most extra memory rotation copies may take: a quarter of the available memory, at most 2 GiB.
std::int64_t rotationMemoryCap() {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    std::int64_t cap = std::int64_t{2} << 30;
    if (pages > 0 && pageSize > 0) cap = std::min<std::int64_t>(cap, static_cast<std::int64_t>(pages) * pageSize / 4);
    return cap;
}

int threadsFromEnvironment() {
    const char* env = std::getenv("OMP_NUM_THREADS");
    if (!env) return 0;
    return std::max(0, std::atoi(env));
}

}  // namespace

RunnerService::RunnerService() = default;

RunnerService::~RunnerService() {
    m_cuda.reset();
    for (auto& [path, handle] : m_libraries) ::dlclose(handle);
}

void* RunnerService::library(const std::string& path, std::string& error) {
    if (auto it = m_libraries.find(path); it != m_libraries.end()) return it->second;
    ::dlerror();
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = ::dlerror();
        error = "cannot load library '" + path + "': " + (e ? e : "unknown error");
        return nullptr;
    }
    m_libraries[path] = h;
    return h;
}

json RunnerService::handle(const json& request, const Emit& emit) {
    try {
        if (!request.is_object()) return failure("bad request: not a JSON object");
        const auto it = request.find("request");
        if (it == request.end() || !it->is_string()) return failure("bad request: no \"request\" field");
        const std::string kind = it->get<std::string>();
        if (kind == "hello") return hello(request);
        if (kind == "run") return run(request, emit);
        if (kind == "devices") return devices();
        return failure("unknown request '" + kind + "'");
    } catch (const std::exception& e) {
        return failure(std::string("bad request: ") + e.what());
    }
}

json RunnerService::hello(const json& request) {
    json answer = {{"ok", true}, {"protocol", kRunnerProtocolVersion}, {"pid", static_cast<std::int64_t>(::getpid())},
                   {"omp_max_threads", nullptr}};
    if (auto it = request.find("library"); it != request.end() && it->is_string() && !it->get<std::string>().empty()) {
        std::string error;
        void* h = library(it->get<std::string>(), error);
        if (!h) return failure(error);
        if (auto get = reinterpret_cast<GetThreadsFn>(::dlsym(h, "tessera_get_max_threads")))
            answer["omp_max_threads"] = get();
    }
    return answer;
}

json RunnerService::run(const json& requestJson, const Emit& emit) {
    auto parsed = runRequestFromJson(requestJson);
    if (!parsed) return failure("bad request: " + parsed.diagnostics().items().front().message);
    const RunRequest& req = *parsed;

    std::string error;
    if (req.target == RunTarget::Cuda) {
        ArenaMapping arena;
        if (!arena.map(req.arenaPath, req.arenaBytes, error)) return failure(error);
        if (!m_cuda) m_cuda = std::make_unique<cuda::CudaRunner>();
        return m_cuda->run(req, arena.data(), emit);
    }
    void* lib = library(req.libraryPath, error);
    if (!lib) return failure(error);
    std::vector<KernelFn> fns;
    for (const auto& l : req.launches) {
        ::dlerror();
        void* sym = ::dlsym(lib, l.entry.c_str());
        if (!sym) {
            const char* e = ::dlerror();
            return failure("entry '" + l.entry + "' not found in '" + req.libraryPath + "': " + (e ? e : "null symbol"));
        }
        fns.push_back(reinterpret_cast<KernelFn>(sym));
    }
    if (req.threads > 0)
        if (auto set = reinterpret_cast<SetThreadsFn>(::dlsym(lib, "tessera_set_num_threads"))) set(req.threads);
    int threads = req.threads > 0 ? req.threads : threadsFromEnvironment();
    if (auto get = reinterpret_cast<GetThreadsFn>(::dlsym(lib, "tessera_get_max_threads"))) threads = get();

    ArenaMapping arena;
    if (!arena.map(req.arenaPath, req.arenaBytes, error)) return failure(error);

    // Argument arrays of every launch over a base address (the arena, or the timing copy).
    auto argsOver = [&](std::uint8_t* base) {
        std::vector<std::vector<void*>> all;
        for (const auto& l : req.launches) {
            std::vector<void*> a;
            for (int b : l.args) a.push_back(base + req.buffers[static_cast<std::size_t>(b)].offset);
            if (a.empty()) a.push_back(nullptr);
            all.push_back(std::move(a));
        }
        return all;
    };

    // 1. The checked pass, on the arena itself.
    {
        const auto args = argsOver(arena.data());
        for (std::size_t i = 0; i < fns.size(); ++i) {
            emit({{"event", "launch"}, {"index", i}});
            fns[i](args[i].data());
        }
    }

    RunResult result;
    result.threads = threads;
    if (!req.timing.time) return runResultToJson(result);
    result.timed = true;

    // 2. Timing, on a private copy so that the arena keeps the checked results.
    Block work = allocatePages(req.arenaBytes);
    if (!work) return failure("out of memory for the timing copy of the arena (" + std::to_string(req.arenaBytes) + " bytes)");
    if (req.arenaBytes > 0) std::memcpy(work.get(), arena.data(), static_cast<std::size_t>(req.arenaBytes));
    const auto workArgs = argsOver(work.get());
    const RepeatPolicy policy{req.timing.warmup, req.timing.minReps, req.timing.maxReps, req.timing.minSeconds};
    const std::int64_t memoryCap = rotationMemoryCap();

    for (std::size_t i = 0; i < fns.size(); ++i) {
        emit({{"event", "time"}, {"index", i}});
        const LaunchSpec& launch = req.launches[i];
        // The distinct buffers this launch names and their bytes.
        std::vector<int> ids;
        for (int b : launch.args)
            if (std::find(ids.begin(), ids.end(), b) == ids.end()) ids.push_back(b);
        std::vector<std::int64_t> sizes;
        std::int64_t launchBytes = 0;
        for (int b : ids) {
            sizes.push_back(req.buffers[static_cast<std::size_t>(b)].bytes);
            launchBytes += sizes.back();
        }
        int copies = rotationCopies(launchBytes, req.rotateBytes, kMaxRotatedCopies, memoryCap);

        // Copy c > 0 holds every buffer of the launch in one block; copy 0 is the work copy itself.
        std::vector<Block> blocks;
        std::vector<std::vector<void*>> argSets{workArgs[i]};
        std::int64_t blockBytes = 0;
        const std::vector<BufferSpec> placed = layoutBuffers(sizes, blockBytes, 64);
        for (int c = 1; c < copies; ++c) {
            Block blk = allocatePages(blockBytes);
            if (!blk) {
                copies = c;
                break;
            }
            for (std::size_t k = 0; k < ids.size(); ++k)
                std::memcpy(blk.get() + placed[k].offset, work.get() + req.buffers[static_cast<std::size_t>(ids[k])].offset,
                            static_cast<std::size_t>(placed[k].bytes));
            std::vector<void*> a;
            for (int b : launch.args) {
                const auto k = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), b) - ids.begin());
                a.push_back(blk.get() + placed[k].offset);
            }
            if (a.empty()) a.push_back(nullptr);
            argSets.push_back(std::move(a));
            blocks.push_back(std::move(blk));
        }
        const KernelFn fn = fns[i];
        const auto samples = measureRepeated(policy, [&](std::int64_t rep) {
            fn(argSets[static_cast<std::size_t>(rep % static_cast<std::int64_t>(argSets.size()))].data());
        });
        result.kernels.push_back({launchLabel(launch), computeTimingStats(samples), static_cast<int>(argSets.size())});
    }

    // 3. The whole sequence end to end.
    emit({{"event", "time_total"}});
    const auto totalSamples = measureRepeated(policy, [&](std::int64_t) {
        for (std::size_t i = 0; i < fns.size(); ++i) fns[i](workArgs[i].data());
    });
    result.total = computeTimingStats(totalSamples);
    return runResultToJson(result);
}

json RunnerService::devices() {
    auto list = cuda::listCudaDevices();
    if (!list) return failure(list.diagnostics().items().front().message);
    json out = json::array();
    for (const auto& d : *list) out.push_back(cuda::cudaDeviceInfoToJson(d));
    return {{"ok", true}, {"devices", std::move(out)}};
}

int serveRunner(int inFd, int outFd) {
    bool writeFailed = false;
    auto writeLine = [&](const json& j) {
        if (writeFailed) return;
        std::string line = dumpLine(j);
        line += '\n';
        std::size_t done = 0;
        while (done < line.size()) {
            const ssize_t n = ::write(outFd, line.data() + done, line.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                writeFailed = true;
                return;
            }
            done += static_cast<std::size_t>(n);
        }
    };
    RunnerService service;
    bool fatal = false;
    auto process = [&](const std::string& line) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) return;
        json request = json::parse(line, nullptr, false);
        if (request.is_discarded()) {
            writeLine(failure("bad request: not valid JSON"));
            return;
        }
        const json answer = service.handle(request, writeLine);
        writeLine(answer);
        if (auto it = answer.find("fatal"); it != answer.end() && it->is_boolean() && it->get<bool>()) fatal = true;
    };
    std::string buffer;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(inFd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buffer.append(chunk, static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
            process(buffer.substr(start, nl - start));
            if (writeFailed) return 1;
            if (fatal) return kRunnerFatalExitStatus;
        }
        buffer.erase(0, start);
    }
    if (!buffer.empty()) process(buffer);
    if (writeFailed) return 1;
    return fatal ? kRunnerFatalExitStatus : 0;
}

}  // namespace tessera::runtime
