// The CUDA driver version query (core/runtime/cuda/cuda_version.h): asked without cuInit, with a
// reason when there is no driver.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/runtime/cuda/cuda_version.h"

namespace tessera::runtime::cuda {
namespace {

TEST(CudaVersion, FormatsDriverEncoding) {
    EXPECT_EQ(formatCudaVersion(13000), "13.0");
    EXPECT_EQ(formatCudaVersion(12080), "12.8");
    EXPECT_EQ(formatCudaVersion(11020), "11.2");
    EXPECT_EQ(formatCudaVersion(0), "unknown");
    EXPECT_EQ(formatCudaVersion(-1), "unknown");
}

TEST(CudaVersion, MissingDriverIsAReason) {
    // The answer is cached per process: only meaningful when this is the first query, which it is
    // (nothing else in the runtime tests asks for it).
    ::setenv("TESSERA_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    const support::Expected<int> v = cudaDriverVersion();
    ::unsetenv("TESSERA_CUDA_DRIVER");
    ASSERT_FALSE(v.ok());
    ASSERT_EQ(v.diagnostics().items().size(), 1u);
    EXPECT_EQ(v.diagnostics().items()[0].message.rfind("no CUDA driver found (", 0), 0u)
        << v.diagnostics().items()[0].message;
    EXPECT_NE(v.diagnostics().items()[0].message.find("/nonexistent/libcuda.so.1"), std::string::npos);
}

}  // namespace
}  // namespace tessera::runtime::cuda
