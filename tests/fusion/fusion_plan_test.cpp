#include <gtest/gtest.h>

#include "core/schedule/fusion_plan.h"

namespace tessera::schedule {

TEST(FusionPlan, KindNamesRoundTrip) {
    EXPECT_STREQ(fusionKindName(FusionKind::DwPw), "dw-pw");
    EXPECT_EQ(parseFusionKind("prologue-epilogue"), FusionKind::PrologueEpilogue);
    EXPECT_EQ(parseFusionKind("nope"), std::nullopt);
    EXPECT_TRUE(isConvChain(FusionKind::PwPw));
    EXPECT_FALSE(isConvChain(FusionKind::Single));
}

}  // namespace tessera::schedule
