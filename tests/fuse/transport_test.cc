#include "fs/fuse/transport.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

TEST(TransportTest, WordsAreParsedAndOthersNamed) {
  EXPECT_EQ(*ParseTransport("auto"), Transport::kAuto);
  EXPECT_EQ(*ParseTransport("uring"), Transport::kUring);
  EXPECT_EQ(*ParseTransport("io_uring"), Transport::kUring);
  EXPECT_EQ(*ParseTransport("classic"), Transport::kClassic);
  auto bad = ParseTransport("ring");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("auto, uring and classic"), std::string::npos);
  EXPECT_FALSE(ParseTransport("").ok());
}

KernelRingOffer Offered() { return {.offered = true, .why_not = ""}; }
KernelRingOffer NotOffered() { return {.offered = false, .why_not = "enable_uring is N"}; }

TEST(TransportTest, AutoTakesTheRingOnlyWhenLibraryAndKernelOfferIt) {
  auto both = ChooseTransport(Transport::kAuto, true, Offered());
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->ring);
  EXPECT_NE(both->why.find("io_uring"), std::string::npos);

  auto no_kernel = ChooseTransport(Transport::kAuto, true, NotOffered());
  ASSERT_TRUE(no_kernel.ok());
  EXPECT_FALSE(no_kernel->ring);
  EXPECT_NE(no_kernel->why.find("enable_uring is N"), std::string::npos) << no_kernel->why;

  auto no_library = ChooseTransport(Transport::kAuto, false, Offered());
  ASSERT_TRUE(no_library.ok());
  EXPECT_FALSE(no_library->ring);
  EXPECT_NE(no_library->why.find("libfuse older than 3.18"), std::string::npos);
}

TEST(TransportTest, ARemoteOriginIsServedOverDevFuseAndUringIsRefusedForIt) {
  auto remote = ChooseTransport(Transport::kAuto, true, Offered(), /*remote_origin=*/true);
  ASSERT_TRUE(remote.ok());
  EXPECT_FALSE(remote->ring);
  EXPECT_NE(remote->why.find("served from a URL"), std::string::npos) << remote->why;
  // On the ring a READ waiting on the network would hold its CPU's cache hits too.
  auto asked = ChooseTransport(Transport::kUring, true, Offered(), /*remote_origin=*/true);
  ASSERT_FALSE(asked.ok());
  EXPECT_EQ(asked.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(asked.status().message().find("cache hits included"), std::string::npos)
      << asked.status().message();
  EXPECT_NE(asked.status().message().find("transport=auto or classic"), std::string::npos);
}

TEST(TransportTest, UringIsRefusedNamingWhatIsMissing) {
  auto ok = ChooseTransport(Transport::kUring, true, Offered());
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->ring);

  auto no_kernel = ChooseTransport(Transport::kUring, true, NotOffered());
  ASSERT_FALSE(no_kernel.ok());
  EXPECT_NE(no_kernel.status().message().find("enable_uring is N"), std::string::npos);

  auto no_library = ChooseTransport(Transport::kUring, false, Offered());
  ASSERT_FALSE(no_library.ok());
  EXPECT_NE(no_library.status().message().find("build-libfuse-uring.sh"), std::string::npos);
}

TEST(TransportTest, ClassicNeverTakesTheRing) {
  auto c = ChooseTransport(Transport::kClassic, true, Offered());
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->ring);
  EXPECT_NE(c->why.find("transport=classic"), std::string::npos);
}

TEST(TransportTest, TheKernelParameterIsReadAsTheKernelWritesIt) {
  mmfs::testing::TempDir dir;
  const std::string path = dir.path() + "/enable_uring";
  std::ofstream(path) << "Y\n";
  EXPECT_TRUE(ReadKernelRingOffer(path).offered);
  std::ofstream(path) << "N\n";
  KernelRingOffer off = ReadKernelRingOffer(path);
  EXPECT_FALSE(off.offered);
  EXPECT_NE(off.why_not.find("is N"), std::string::npos) << off.why_not;
  EXPECT_NE(off.why_not.find("echo Y > " + path), std::string::npos) << off.why_not;
  KernelRingOffer missing = ReadKernelRingOffer(dir.path() + "/absent");
  EXPECT_FALSE(missing.offered);
  EXPECT_NE(missing.why_not.find("missing"), std::string::npos) << missing.why_not;
}

}  // namespace
}  // namespace mmfs::fs
