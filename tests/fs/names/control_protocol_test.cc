#include "fs/names/control_protocol.h"

#include <gtest/gtest.h>

namespace mmfs::fs {
namespace {

using Kind = ControlCommand::Kind;

TEST(ControlProtocolTest, WhatTheWriterFormatsTheReaderParses) {
  const ControlCommand commands[] = {{Kind::kWarm, "ssd", "train/class_000"},
                                     {Kind::kWarm, "ram", ""},
                                     {Kind::kEvict, "", "a b/c.jpg"},
                                     {Kind::kSync, "", "1234-99"}};
  for (const ControlCommand& c : commands) {
    std::string line = FormatControlLine(c);
    ASSERT_EQ(line.back(), '\n');
    auto parsed = ParseControlLine(line);
    ASSERT_TRUE(parsed.ok()) << line;
    EXPECT_EQ(*parsed, c) << line;
  }
}

TEST(ControlProtocolTest, LinesAsTheDaemonGetsThem) {
  auto warm = ParseControlLine("warm ssd train/x.jpg\r");
  ASSERT_TRUE(warm.ok());
  EXPECT_EQ(warm->kind, Kind::kWarm);
  EXPECT_EQ(warm->tier, "ssd");
  EXPECT_EQ(warm->arg, "train/x.jpg");
  auto whole = ParseControlLine("warm ram");  // the whole mount
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->arg, "");
  EXPECT_EQ(ParseControlLine("evict with spaces/in name").value().arg, "with spaces/in name");
  EXPECT_EQ(ParseControlLine("warm").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseControlLine("prefetch x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseControlLine("").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mmfs::fs
