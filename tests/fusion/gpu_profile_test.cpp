// GPU hardware profiles (issue 6): built-in table, JSON round trip, lookup errors, validation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/target/gpu_profile.h"

using namespace tessera;
using target::GpuProfile;

TEST(GpuProfile, BuiltinTable) {
    EXPECT_EQ(target::builtinGpuProfileNames(),
              (std::vector<std::string>{"h200", "h100", "a100", "rtx-a4000", "gtx-1660", "jetson-orin"}));
    auto h200 = target::findGpuProfile("H200");  // case-insensitive
    ASSERT_TRUE(h200.ok()) << h200.diagnostics().formatAll();
    EXPECT_EQ(h200->sms, 132);
    EXPECT_EQ(h200->l1Bytes, 256 * 1024);
    EXPECT_EQ(h200->sharedBytes, 227 * 1024);
    EXPECT_EQ(h200->l2Bytes, 60LL * 1024 * 1024);
    EXPECT_EQ(h200->dramGBs, 4032);
    EXPECT_EQ(h200->fp32Gflops, 63200);
    EXPECT_NE(h200->source.find("measured"), std::string::npos);
    // FusePlanner's hw_configs: gtx1660.cfg (22, 96, 64), orin.cfg (16, 192, 164).
    auto gtx = target::findGpuProfile("gtx-1660");
    ASSERT_TRUE(gtx.ok());
    EXPECT_EQ(gtx->sms, 22);
    EXPECT_EQ(gtx->l1Bytes, 96 * 1024);
    EXPECT_EQ(gtx->sharedBytes, 64 * 1024);
    auto orin = target::findGpuProfile("jetson-orin");
    ASSERT_TRUE(orin.ok());
    EXPECT_EQ(orin->sms, 16);
    EXPECT_EQ(orin->l1Bytes, 192 * 1024);
    EXPECT_EQ(orin->sharedBytes, 164 * 1024);
    // rtxa4000.cfg says 96 SMs; the card has 48 (data sheet), which the profile keeps and says so.
    auto a4000 = target::findGpuProfile("rtx-a4000");
    ASSERT_TRUE(a4000.ok());
    EXPECT_EQ(a4000->sms, 48);
    EXPECT_EQ(a4000->sharedBytes, 100 * 1024);
    EXPECT_NE(a4000->source.find("96"), std::string::npos);
    auto a100 = target::findGpuProfile("a100");
    ASSERT_TRUE(a100.ok());
    EXPECT_EQ(a100->sms, 108);
    EXPECT_EQ(a100->sharedBytes, 163 * 1024);
    EXPECT_EQ(a100->dramGBs, 2039);
    for (const GpuProfile& p : target::builtinGpuProfiles()) EXPECT_EQ(target::validateGpuProfile(p), "") << p.name;
}

TEST(GpuProfile, JsonRoundTrip) {
    for (const GpuProfile& p : target::builtinGpuProfiles()) {
        const std::string text = target::gpuProfileToJson(p);
        auto back = target::gpuProfileFromJson(text, "x.json");
        ASSERT_TRUE(back.ok()) << p.name << ": " << back.diagnostics().formatAll();
        EXPECT_EQ(back->name, p.name);
        EXPECT_EQ(back->displayName, p.displayName);
        EXPECT_EQ(back->sms, p.sms);
        EXPECT_EQ(back->warpSize, p.warpSize);
        EXPECT_EQ(back->l1Bytes, p.l1Bytes);
        EXPECT_EQ(back->sharedBytes, p.sharedBytes);
        EXPECT_EQ(back->l2Bytes, p.l2Bytes);
        EXPECT_EQ(back->dramGBs, p.dramGBs);
        EXPECT_EQ(back->fp32Gflops, p.fp32Gflops);
        EXPECT_EQ(back->source, p.source);
    }
    const std::string text = target::gpuProfileToJson(*target::findGpuProfile("h200"));
    EXPECT_NE(text.find("\"format\": \"tessera-gpu-profile\""), std::string::npos);
    EXPECT_NE(text.find("\"l2_kib\": 61440"), std::string::npos) << text;
    EXPECT_NE(text.find("\"shared_kib\": 227"), std::string::npos) << text;
}

TEST(GpuProfile, FindErrors) {
    auto bad = target::findGpuProfile("v100");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.diagnostics().formatAll().find("unknown GPU profile 'v100' (known: h200, h100, a100, rtx-a4000, "
                                                 "gtx-1660, jetson-orin"),
              std::string::npos)
        << bad.diagnostics().formatAll();

    const auto dir = std::filesystem::temp_directory_path() / "tessera_gpu_profile_test";
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "bad.json").string();
    {
        std::ofstream(file) << R"({"format": "tessera-gpu-profile", "version": 1, "name": "x", "sms": "many",
                               "l1_kib": 96, "shared_kib": 64})";
    }
    auto malformed = target::findGpuProfile(file);
    ASSERT_FALSE(malformed.ok());
    const std::string msg = malformed.diagnostics().formatAll();
    EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'sms' must be a number"), std::string::npos) << msg;

    {
        std::ofstream(file) << R"({"name": "mine", "sms": 4, "l1_kib": 32, "shared_kib": 16.5})";
    }
    auto mine = target::findGpuProfile(file);
    ASSERT_TRUE(mine.ok()) << mine.diagnostics().formatAll();
    EXPECT_EQ(mine->name, "mine");
    EXPECT_EQ(mine->sms, 4);
    EXPECT_EQ(mine->sharedBytes, 16896);  // 16.5 KiB
    EXPECT_EQ(mine->warpSize, 32);        // default

    auto missing = target::gpuProfileFromJson(R"({"name": "m", "sms": 4, "l1_kib": 32})", "m.json");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.diagnostics().formatAll().find("missing field 'shared_kib'"), std::string::npos);
    EXPECT_FALSE(target::gpuProfileFromJson("{", "m.json").ok());
    EXPECT_FALSE(target::findGpuProfile((dir / "absent.json").string()).ok());
    std::filesystem::remove_all(dir);
}

TEST(GpuProfile, Validate) {
    GpuProfile p = *target::findGpuProfile("gtx-1660");
    EXPECT_EQ(target::validateGpuProfile(p), "");
    GpuProfile q = p;
    q.sms = 0;
    EXPECT_EQ(target::validateGpuProfile(q), "sms must be >= 1 (got 0)");
    q = p;
    q.sharedBytes = 128 * 1024;
    EXPECT_EQ(target::validateGpuProfile(q), "l1_kib (96) must be >= shared_kib (128)");
    q = p;
    q.warpSize = 0;
    EXPECT_EQ(target::validateGpuProfile(q), "warp_size must be >= 1 (got 0)");
    // An out-of-range file is refused with the reason.
    auto r = target::gpuProfileFromJson(R"({"name": "m", "sms": 0, "l1_kib": 32, "shared_kib": 16})", "m.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.diagnostics().formatAll().find("sms must be >= 1"), std::string::npos);
}
