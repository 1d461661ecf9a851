#include "core/runtime/shared_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tessera::runtime {

namespace {

support::DiagnosticList errorList(const std::string& message) {
    support::DiagnosticList d;
    d.error("", "", message);
    return d;
}

}  // namespace

support::Expected<SharedArena> SharedArena::create(std::int64_t bytes, const std::string& dir) {
    if (bytes < 0) return errorList("arena size is negative");
    if (bytes == 0) bytes = 1;
    std::vector<std::string> dirs;
    if (!dir.empty()) {
        dirs.push_back(dir);
    } else {
        dirs.push_back("/dev/shm");
        if (const char* t = std::getenv("TMPDIR"); t && *t) dirs.push_back(t);
        dirs.push_back("/tmp");
    }
    std::string lastError;
    for (const auto& d : dirs) {
        std::string templ = d + "/tessera-arena-XXXXXX";
        const int fd = ::mkostemp(templ.data(), O_CLOEXEC);
        if (fd < 0) {
            lastError = "cannot create an arena file in '" + d + "': " + std::strerror(errno);
            continue;
        }
        // Reserve the space now: on a full tmpfs a write into the mapping would raise SIGBUS.
        const int rc = ::posix_fallocate(fd, 0, bytes);
        if (rc != 0) {
            lastError = "cannot reserve " + std::to_string(bytes) + " bytes in '" + d + "': " + std::strerror(rc);
            ::close(fd);
            ::unlink(templ.c_str());
            continue;
        }
        void* p = ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        const int mapErr = errno;
        ::close(fd);
        if (p == MAP_FAILED) {
            lastError = "cannot map the arena file '" + templ + "': " + std::strerror(mapErr);
            ::unlink(templ.c_str());
            continue;
        }
        SharedArena a;
        a.m_path = templ;
        a.m_data = static_cast<std::uint8_t*>(p);
        a.m_size = bytes;
        return a;
    }
    return errorList(lastError);
}

SharedArena::SharedArena(SharedArena&& other) noexcept
    : m_path(std::move(other.m_path)), m_data(other.m_data), m_size(other.m_size) {
    other.m_data = nullptr;
    other.m_size = 0;
    other.m_path.clear();
}

SharedArena& SharedArena::operator=(SharedArena&& other) noexcept {
    if (this != &other) {
        release();
        m_path = std::move(other.m_path);
        m_data = other.m_data;
        m_size = other.m_size;
        other.m_data = nullptr;
        other.m_size = 0;
        other.m_path.clear();
    }
    return *this;
}

SharedArena::~SharedArena() { release(); }

void SharedArena::release() {
    if (m_data) ::munmap(m_data, static_cast<std::size_t>(m_size));
    if (!m_path.empty()) ::unlink(m_path.c_str());
    m_data = nullptr;
    m_size = 0;
    m_path.clear();
}

void SharedArena::write(const BufferSpec& b, const void* src, std::int64_t bytes) {
    assert(bytes <= b.bytes && b.offset + b.bytes <= m_size);
    std::memcpy(m_data + b.offset, src, static_cast<std::size_t>(bytes));
}

std::vector<std::uint8_t> SharedArena::read(const BufferSpec& b) const {
    assert(b.offset + b.bytes <= m_size);
    return std::vector<std::uint8_t>(m_data + b.offset, m_data + b.offset + b.bytes);
}

bool SharedArena::writeTensor(const BufferSpec& b, const ir::TensorData& tensor) {
    if (tensor.dtype == ir::DType::String || static_cast<std::int64_t>(tensor.bytes.size()) > b.bytes) return false;
    if (!tensor.bytes.empty()) std::memcpy(m_data + b.offset, tensor.bytes.data(), tensor.bytes.size());
    return true;
}

ir::TensorData SharedArena::readTensor(const BufferSpec& b, ir::DType dtype, std::vector<std::int64_t> dims) const {
    ir::TensorData t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    const std::int64_t want = t.numElements() * static_cast<std::int64_t>(ir::dtypeSize(dtype));
    const std::int64_t n = std::max<std::int64_t>(0, std::min(want, b.bytes));
    t.bytes.assign(m_data + b.offset, m_data + b.offset + n);
    return t;
}

std::vector<BufferSpec> layoutBuffers(const std::vector<std::int64_t>& sizes, std::int64_t& totalBytes,
                                      std::int64_t alignment) {
    if (alignment < 1) alignment = 1;
    std::vector<BufferSpec> out;
    std::int64_t offset = 0;
    for (const std::int64_t s : sizes) {
        offset = (offset + alignment - 1) / alignment * alignment;
        out.push_back({offset, s});
        offset += std::max<std::int64_t>(s, 0);
    }
    totalBytes = offset;
    return out;
}

}  // namespace tessera::runtime
