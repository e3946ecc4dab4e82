// CurlTransport: HttpTransport over libcurl, with kept-alive connections.
//
// Idle easy handles wait in a small locked pool and are reused, so that their connections stay
// open between requests (a shard read is one ranged GET on a warm connection). Every handle is
// set up the same way: no signals (CURLOPT_NOSIGNAL: the daemon is multi-threaded), connect and
// transfer timeouts, http and https only, no redirect followed, TLS checked against the system's
// CAs or only those of `ca_pem` (read once by ReadCaFile: libcurl never opens the file, so a
// FIFO named by mistake cannot hang a request, nor can the file change between the check and
// the handshake). For an S3 store the options carry SigV4 signing (libcurl signs each request
// with CURLOPT_AWS_SIGV4; x-amz-content-sha256, which S3 requires, is the empty body's hash, or
// UNSIGNED-PAYLOAD for a write's body) and the credentials; the secret is never put in an error
// message. A write (PUT, POST) sends its body from memory, with no 100-continue wait.
//
// Ownership: owns its easy handles (cleaned up by the destructor).
// Thread-safety: Send may be called from any number of threads at once (a handle serves one
// request at a time).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "fs/origin/http_transport.h"

namespace mmfs::origin {

struct CurlOptions {
  // The CAs (PEM text, as ReadCaFile gives it) trusted instead of the system's, which are then
  // not trusted at all; empty: the system's.
  std::string ca_pem;
  std::chrono::milliseconds connect_timeout{5000};
  // A request that moves fewer than 1 KiB/s for this long fails (transient): a stalled server
  // is given up on without bounding how long a large range may take.
  std::chrono::seconds stall_timeout{15};
  size_t max_idle_handles = 16;
  // SigV4 signing: libcurl's provider string ("aws:amz:us-east-1:s3"); empty: none.
  std::string aws_sigv4;
  std::string access_key, secret_key;
  std::string session_token;  // sent as x-amz-security-token when not empty
};

// The CA certificates in the PEM file `path`, for CurlOptions::ca_pem. Only a regular file of at
// most kMaxCaFileBytes is read, and it is opened without blocking: a FIFO (`--ca-file <(...)`)
// would otherwise hang the mount, waiting for a writer. InvalidArgument naming the path and what
// is wrong (not a regular file and what it is instead, too large, no certificate in it).
// (libcurl takes at most 8,000,000 bytes; the Debian bundle of every public CA is 0.2 MB.)
inline constexpr uint64_t kMaxCaFileBytes = 4ull << 20;
Result<std::string> ReadCaFile(const std::string& path);

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(CurlOptions options);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  HttpResponse Send(const HttpRequest& request) override;
  void DropIdle() override;

 private:
  void* TakeHandle();           // a CURL*, from the pool or new; null when curl has no memory
  void GiveBack(void* handle);  // to the pool, or cleaned up when the pool is full

  const CurlOptions options_;
  std::mutex mu_;
  std::vector<void*> idle_;  // guarded by mu_
};

}  // namespace mmfs::origin
