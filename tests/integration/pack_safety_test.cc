// A dataset edited or arranged by a careless or hostile hand, through the real CLI (no mount):
// `mmfs verify` reports the modes the packer never writes (setuid, devices) and names the path,
// prints names with control characters escaped, and refuses a dataset whose files are symbolic
// links; `mmfs view add` refuses a side whose "@N" folder the dataset already has.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <signal.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fs/format/dataset.h"
#include "fs/format/format.h"
#include "fs/format/manifest.h"
#include "tests/integration/mount_helper.h"
#include "tests/origin_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

class PackSafetyTest : public ::testing::Test {
 protected:
  std::string src() const { return tmp_ / "src"; }
  std::string dst() const { return tmp_ / "data.mmfs"; }
  CommandResult Mmfs(std::vector<std::string> args) {
    args.insert(args.begin(), MmfsBinary());
    return RunCommand(args, 120);
  }
  void Pack() {
    auto pack = Mmfs({"pack", "-q", src(), dst()});
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
  }
  // Rewrites the mode of the index record of `path`, and the index checksum in the manifest as
  // the format requires (a consistent edit, not damage).
  void SetMode(const std::string& path, uint32_t mode) {
    // Looked up once: after an edit to a device type the entry no longer reads as valid.
    uint64_t& index = index_of_[path];
    if (index == 0) {
      auto ds = format::Dataset::Open(dst());
      ASSERT_TRUE(ds.ok()) << ds.status().ToString();
      auto e = testing::EntryAtPath(**ds, path);
      ASSERT_TRUE(e.ok()) << path;
      index = e->index;
    }
    std::string bytes = ReadFile(dst() + "/index.mmfs");
    const size_t at = sizeof(format::IndexHeader) + index * sizeof(format::EntryRecord) +
                      offsetof(format::EntryRecord, mode);
    ASSERT_LE(at + 4, bytes.size());
    std::memcpy(bytes.data() + at, &mode, sizeof mode);
    WriteFile(dst() + "/index.mmfs", bytes);
    auto m = format::Manifest::Parse(ReadFile(dst() + "/manifest.json"), "manifest.json");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    m->index_checksum = XXH3_64bits(bytes.data(), bytes.size());
    WriteFile(dst() + "/manifest.json", m->ToJson());
  }
  TempDir tmp_;
  std::map<std::string, uint64_t> index_of_;
};

TEST_F(PackSafetyTest, VerifyReportsSetuidBitsAndDeviceTypesNamingThePath) {
  WriteFile(src() + "/bin/tool", "#!/bin/sh\nid\n");
  WriteFile(src() + "/train/a/1.txt", "one");
  ASSERT_EQ(::chmod((src() + "/bin/tool").c_str(), 0755), 0);
  Pack();
  auto intact = Mmfs({"verify", dst()});
  ASSERT_EQ(intact.exit_code, 0) << intact.output;

  SetMode("bin/tool", format::kModeRegular | 06755);
  auto setuid = Mmfs({"verify", dst()});
  EXPECT_EQ(setuid.exit_code, 1) << setuid.output;
  EXPECT_NE(setuid.output.find("DAMAGED bin/tool: mode 106755 has setuid, setgid bits, which "
                               "mmfs pack never writes"),
            std::string::npos)
      << setuid.output;
  SetMode("bin", format::kModeDirectory | 01777);
  auto sticky = Mmfs({"verify", "--json", dst()});
  EXPECT_EQ(sticky.exit_code, 1) << sticky.output;
  EXPECT_NE(sticky.output.find("bin: mode 041777 has sticky bit"), std::string::npos)
      << sticky.output;
  SetMode("bin", format::kModeDirectory | 0755);

  SetMode("bin/tool", 0020644);  // a character device
  auto device = Mmfs({"verify", dst()});
  EXPECT_EQ(device.exit_code, 1) << device.output;
  EXPECT_NE(device.output.find("DAMAGED bin/tool: "), std::string::npos) << device.output;
  EXPECT_NE(device.output.find("mode 020644 is a character device, which a dataset never holds"),
            std::string::npos)
      << device.output;
  SetMode("bin/tool", 0010644);  // a FIFO
  auto fifo = Mmfs({"verify", dst()});
  EXPECT_EQ(fifo.exit_code, 1) << fifo.output;
  EXPECT_NE(fifo.output.find("DAMAGED bin/tool: "), std::string::npos) << fifo.output;
  EXPECT_NE(fifo.output.find("is a FIFO"), std::string::npos) << fifo.output;
}

// Root mounts an index edited to make a copy of id(1) setuid root, for every user: the mount
// serves it without the bit, and another user who runs it stays who they are (the mount is also
// nosuid: either would do, both hold).
TEST_F(PackSafetyTest, ASetuidModeInAnEditedIndexIsNeverServedNorHonoured) {
  ASSERT_EQ(::geteuid(), 0u) << "root mounts, nobody reads";
  WriteFile(src() + "/bin/id", ReadFile("/usr/bin/id"));
  ASSERT_EQ(::chmod((src() + "/bin/id").c_str(), 0755), 0);
  Pack();
  SetMode("bin/id", format::kModeRegular | 04755);
  const std::string mnt = tmp_ / "mnt";
  std::filesystem::create_directories(mnt);
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);  // nobody must reach the mount point
  ForegroundMount m(dst(), mnt, {"-o", "allow_other"});
  ASSERT_TRUE(m.mounted());
  const std::vector<std::string> as_nobody = {"setpriv", "--reuid=65534", "--regid=65534",
                                              "--clear-groups"};
  auto with = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), as_nobody.begin(), as_nobody.end());
    return RunCommand(argv, 30);
  };
  auto mode = with({"stat", "-c", "%a", mnt + "/bin/id"});
  EXPECT_EQ(mode.exit_code, 0) << mode.output;
  EXPECT_EQ(mode.output, "755\n");
  auto ran = with({mnt + "/bin/id", "-u"});
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output, "65534\n") << "a setuid program through the mount ran as root";
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(PackSafetyTest, VerifyEscapesControlCharactersInNames) {
  // A name that, printed raw, would forge a finding of its own on the next line.
  const std::string name = "x\nDAMAGED forged.txt";
  WriteFile(src() + "/a/" + name, "caption bytes");
  Pack();
  std::string shard = ReadFile(dst() + "/shard-00000.mdb");
  size_t at = shard.find("caption bytes");
  ASSERT_NE(at, std::string::npos);
  shard[at] = 'C';
  WriteFile(dst() + "/shard-00000.mdb", shard);
  auto verify = Mmfs({"verify", dst()});
  EXPECT_EQ(verify.exit_code, 1) << verify.output;
  EXPECT_NE(verify.output.find("a/x\\nDAMAGED forged.txt"), std::string::npos) << verify.output;
  EXPECT_EQ(verify.output.find("\nDAMAGED forged.txt"), std::string::npos) << verify.output;
  // JSON keeps the name as it is (JSON escapes it).
  auto json = Mmfs({"verify", "--json", dst()});
  EXPECT_NE(json.output.find("a/x\\nDAMAGED forged.txt"), std::string::npos) << json.output;
}

TEST_F(PackSafetyTest, ADatasetWhoseShardIsASymlinkIsRefusedNamingIt) {
  WriteFile(src() + "/a/1.txt", "one");
  Pack();
  // The shard replaced by a link to a larger file elsewhere: its size must not be reported.
  std::string shard = dst() + "/shard-00000.mdb";
  std::string elsewhere = tmp_ / "elsewhere.mdb";
  ASSERT_EQ(::rename(shard.c_str(), elsewhere.c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), shard.c_str()), 0);
  for (const char* cmd : {"verify", "info"}) {
    auto r = Mmfs({cmd, dst()});
    EXPECT_NE(r.exit_code, 0) << cmd << ": " << r.output;
    EXPECT_NE(r.output.find(shard + " is a symbolic link"), std::string::npos)
        << cmd << ": " << r.output;
  }
}

TEST_F(PackSafetyTest, ViewAddRefusesASideWhoseFolderTheDatasetHas) {
  WriteFile(src() + "/@256/1.jpg", MakeJpeg(300, 200));
  WriteFile(src() + "/train/2.jpg", MakeJpeg(300, 200));
  auto pack = Mmfs({"pack", src(), dst()});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  EXPECT_NE(pack.output.find("@256 is packed at the top level"), std::string::npos)
      << pack.output;
  auto add = Mmfs({"view", "add", dst(), "256", "-q"});
  EXPECT_NE(add.exit_code, 0) << add.output;
  EXPECT_NE(add.output.find("has a top-level folder '@256' of its own"), std::string::npos)
      << add.output;
  EXPECT_FALSE(std::filesystem::exists(dst() + "/views/256"));
  // Another side has no folder in the way.
  auto other = Mmfs({"view", "add", dst(), "128", "-q"});
  EXPECT_EQ(other.exit_code, 0) << other.output;
}

}  // namespace
}  // namespace mmfs::testing
