// Fused convolution-chain kernels (issue 6; FCM, semantics.md §2.5): lower_fused.h lowerConvChain.
// Work in progress: the stub reports that the chain is not lowered yet.

#include "core/lower/lower_fused.h"

namespace tessera::lower::detail {

support::Expected<LoweredKernel> lowerConvChain(const ir::Graph& g, const ConvChainSpec& chain,
                                                const LowerOptions& options, const std::string& where) {
    (void)g;
    (void)chain;
    (void)options;
    support::DiagnosticList d;
    d.error("", where, "fused convolution chains are not implemented yet");
    return d;
}

}  // namespace tessera::lower::detail
