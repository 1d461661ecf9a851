#pragma once
/// @file
/// SharedArena: the memory-mapped file through which RunnerClient and tessera-runner share
/// kernel buffers (core/runtime/runner_protocol.h). The client creates it, writes inputs, sends
/// its path and size with a run request and reads outputs after the answer.
///
/// The file is created with a unique name (tessera-arena-XXXXXX) in /dev/shm when that has room
/// for it, else in $TMPDIR, else /tmp; its space is reserved up front (posix_fallocate), so
/// writing into the mapping cannot fault for lack of space later. It is mapped MAP_SHARED,
/// zero-filled, page aligned, and unlinked and unmapped on destruction.
///
/// Thread rules: a SharedArena may be read and written from any thread, but the caller orders
/// those accesses with the runs that use it (do not write while a run is in flight).

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor.h"
#include "core/runtime/runner_protocol.h"
#include "core/support/expected.h"

namespace tessera::runtime {

class SharedArena {
public:
    /// A mapped arena of `bytes` bytes (at least 1). `dir` forces the folder (tests); empty = the
    /// choice above. Errors name the folder and the system error.
    static support::Expected<SharedArena> create(std::int64_t bytes, const std::string& dir = {});

    SharedArena() = default;
    SharedArena(SharedArena&& other) noexcept;
    SharedArena& operator=(SharedArena&& other) noexcept;
    SharedArena(const SharedArena&) = delete;
    SharedArena& operator=(const SharedArena&) = delete;
    ~SharedArena();

    bool valid() const { return m_data != nullptr; }
    const std::string& path() const { return m_path; }
    std::int64_t size() const { return m_size; }
    std::uint8_t* data() { return m_data; }
    const std::uint8_t* data() const { return m_data; }
    /// Address of byte `offset` (no bounds check beyond a debug assertion).
    std::uint8_t* at(std::int64_t offset) { return m_data + offset; }
    const std::uint8_t* at(std::int64_t offset) const { return m_data + offset; }
    template <typename T>
    T* as(std::int64_t offset) {
        return reinterpret_cast<T*>(m_data + offset);
    }
    template <typename T>
    const T* as(std::int64_t offset) const {
        return reinterpret_cast<const T*>(m_data + offset);
    }
    /// Copies `bytes` bytes into the buffer `b` (bytes.size() must not exceed b.bytes).
    void write(const BufferSpec& b, const void* src, std::int64_t bytes);
    /// Copies the buffer `b` out.
    std::vector<std::uint8_t> read(const BufferSpec& b) const;

    /// Copies a tensor's bytes into `b`. False (nothing written) when they do not fit, or the
    /// tensor is a string tensor.
    bool writeTensor(const BufferSpec& b, const ir::TensorData& tensor);
    /// The buffer `b` as a tensor of `dtype` and `dims` (its first numElements * size bytes;
    /// fewer when the buffer is smaller, which TensorData::sizeConsistent() then reports).
    ir::TensorData readTensor(const BufferSpec& b, ir::DType dtype, std::vector<std::int64_t> dims) const;

    /// Fills RunRequest::arenaPath and arenaBytes.
    void attach(RunRequest& request) const {
        request.arenaPath = m_path;
        request.arenaBytes = m_size;
    }

private:
    void release();

    std::string m_path;
    std::uint8_t* m_data = nullptr;
    std::int64_t m_size = 0;
};

/// Places buffers of the given sizes back to back, each offset a multiple of `alignment`
/// (a power of two). Returns the specs; `totalBytes` receives the arena size they need.
std::vector<BufferSpec> layoutBuffers(const std::vector<std::int64_t>& sizes, std::int64_t& totalBytes,
                                      std::int64_t alignment = 64);

}  // namespace tessera::runtime
