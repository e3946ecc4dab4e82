// The remote origin over libcurl (fs/origin/curl_transport.h) against answers no well-behaved
// server sends, from a server in a thread of the test on 127.0.0.1: a compressed range, a
// broken chunked body, a body without end, the whole object. Each refusal at the mount's check
// of a shard names its own cause. And the CA file the transport takes: only a regular file,
// looked at before it is opened, so a FIFO cannot hang a mount.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "fs/origin/curl_transport.h"
#include "fs/origin/http_origin.h"
#include "fs/origin/retry_policy.h"
#include "tests/test_util.h"

namespace mmfs::origin {
namespace {

using namespace std::chrono_literals;

// An HTTP server on 127.0.0.1, in a thread of the test, that answers every request with the
// same bytes (`head`, then `body`; with `endless`, then more bytes until the client goes). One
// connection at a time; each closed after its answer.
class CannedServer {
 public:
  CannedServer(std::string head, std::string body, bool endless = false)
      : head_(std::move(head)), body_(std::move(body)), endless_(endless) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 8) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1: " << std::strerror(errno);
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  // Waits (100 ms at most, so that the destructor is seen) until `fd` has `events`.
  bool Ready(int fd, short events) {
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, 100) == 1;
  }
  void Serve() {
    while (!stop_) {
      if (!Ready(listen_fd_, POLLIN)) continue;
      const int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      Answer(conn);
      ::close(conn);
    }
  }
  void Answer(int conn) {
    std::string request;
    char buf[4096];
    while (!stop_ && request.find("\r\n\r\n") == std::string::npos) {
      if (!Ready(conn, POLLIN)) continue;
      const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
      if (n <= 0) return;
      request.append(buf, static_cast<size_t>(n));
    }
    if (!Send(conn, head_ + body_)) return;
    const std::string more(64 << 10, 'x');
    while (endless_ && !stop_ && Send(conn, more)) {
    }
  }
  // All of `bytes`, unless the client goes or the server stops.
  bool Send(int conn, const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      if (stop_) return false;
      if (!Ready(conn, POLLOUT)) continue;
      const ssize_t n = ::send(conn, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  const std::string head_, body_;
  const bool endless_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

constexpr uint32_t kCurlShardMagic = 0xBEEFC0DE;
constexpr uint64_t kShardSize = 1 << 20;

// Why adding a one-shard tree (its magic at 16, as the mount checks it) over `server` fails.
std::string CheckRefusal(const CannedServer& server) {
  RetryPolicy quick;
  quick.initial_delay = 1ms;
  quick.max_delay = 4ms;
  quick.total = 300ms;
  HttpOrigin origin(server.url() + "/ds", std::make_unique<CurlTransport>(CurlOptions{}), quick);
  TreeSpec spec;
  spec.shards.push_back({"shard-00000.mdb", kShardSize});
  spec.magic_offset = 16;
  spec.magic = kCurlShardMagic;
  Status added = origin.AddTree(kDatasetTree, spec);
  EXPECT_FALSE(added.ok());
  return added.message();
}

const std::string kRange = "Content-Range: bytes 16-19/" + std::to_string(kShardSize) + "\r\n";

// All of these were "the server answers a range request with the whole object".
TEST(CurlTransportAnswerTest, ACompressedRangeIsNamedAsCompressed) {
  // gzip of the four bytes: longer than the range, and not its bytes in any case.
  const std::string gzip("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x73\x75\x75\x70\x00\x00\x9a"
                         "\x1b\x3c\x3e\x04\x00\x00\x00", 24);
  CannedServer long_one("HTTP/1.1 206 Partial Content\r\n" + kRange +
                            "Content-Encoding: gzip\r\nContent-Length: 24\r\n\r\n",
                        gzip);
  const std::string why = CheckRefusal(long_one);
  EXPECT_NE(why.find("shard-00000.mdb: the server compresses its answer (Content-Encoding: gzip)"),
            std::string::npos)
      << why;
  // Four bytes that say they are compressed: refused all the same, not taken for the magic.
  CannedServer short_one("HTTP/1.1 206 Partial Content\r\n" + kRange +
                             "Content-Encoding: br\r\nContent-Length: 4\r\n\r\n",
                         "\xde\xc0\xef\xbe");
  const std::string why_short = CheckRefusal(short_one);
  EXPECT_NE(why_short.find("the server compresses its answer (Content-Encoding: br)"),
            std::string::npos)
      << why_short;
}

TEST(CurlTransportAnswerTest, AnEndlessOrOverlongRangeIsNamedAsSuch) {
  CannedServer endless("HTTP/1.1 206 Partial Content\r\n" + kRange + "Connection: close\r\n\r\n",
                       "", /*endless=*/true);
  const std::string why = CheckRefusal(endless);
  EXPECT_NE(why.find("the answer to a request for bytes 16-19 holds more than the 4 bytes asked "
                     "for (HTTP 206, no Content-Length: a body without a stated end); the server "
                     "does not keep to the range"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("whole object"), std::string::npos) << why;
  // Chunked, with a chunk far longer than the range.
  CannedServer chunked("HTTP/1.1 206 Partial Content\r\n" + kRange +
                           "Transfer-Encoding: chunked\r\n\r\n",
                       "ffff\r\n" + std::string(4096, 'g'));
  const std::string why_chunked = CheckRefusal(chunked);
  EXPECT_NE(why_chunked.find("holds more than the 4 bytes asked for (HTTP 206"),
            std::string::npos)
      << why_chunked;
  EXPECT_EQ(why_chunked.find("whole object"), std::string::npos) << why_chunked;
}

TEST(CurlTransportAnswerTest, BrokenChunkingIsNamedByTheTransport) {
  CannedServer garbage("HTTP/1.1 206 Partial Content\r\n" + kRange +
                           "Transfer-Encoding: chunked\r\n\r\n",
                       "zz-not-hex\r\n\r\n");
  const std::string why = CheckRefusal(garbage);
  EXPECT_NE(why.find("chunked"), std::string::npos) << why;
  EXPECT_EQ(why.find("whole object"), std::string::npos) << why;
}

TEST(CurlTransportAnswerTest, TheWholeObjectIsNamedAsTheWholeObject) {
  CannedServer whole("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kShardSize) +
                         "\r\n\r\n",
                     "", /*endless=*/true);
  const std::string why = CheckRefusal(whole);
  EXPECT_NE(why.find("the server answers a range request with the whole object (HTTP 200: it "
                     "ignores Range)"),
            std::string::npos)
      << why;
}

// `--ca-file <(cat ca.pem)` or a FIFO hung the mount in libcurl's open; a CA file is read once,
// and only if it is a regular file of a CA file's size with a certificate in it.
TEST(CaFileTest, OnlyARegularFileWithACertificateIsRead) {
  testing::TempDir dir;
  const std::string pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  testing::WriteFile(dir / "ca.pem", pem);
  auto read = ReadCaFile(dir / "ca.pem");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, pem);

  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto fifo = ReadCaFile(dir / "fifo");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.status().message(),
            "--ca-file " + (dir / "fifo") + ": a FIFO or pipe (as <(...) gives), not a regular "
            "file");

  auto directory = ReadCaFile(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("a directory, not a regular file"),
            std::string::npos);

  testing::WriteFile(dir / "empty.pem", "not a certificate\n");
  auto empty = ReadCaFile(dir / "empty.pem");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no PEM certificate in it"), std::string::npos);

  // Larger than any CA file (sparse: nothing is written).
  const std::string big = dir / "big.pem";
  testing::WriteFile(big, "");
  ASSERT_EQ(::truncate(big.c_str(), static_cast<off_t>(kMaxCaFileBytes + 1)), 0);
  auto large = ReadCaFile(big);
  ASSERT_FALSE(large.ok());
  EXPECT_NE(large.status().message().find("more than a CA file holds"), std::string::npos);

  auto missing = ReadCaFile(dir / "none.pem");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir / "none.pem"), std::string::npos);
}

}  // namespace
}  // namespace mmfs::origin
