// Sources by URL: `mmfs pack s3://BUCKET/PREFIX/ DST` packs the WebDataset tars under the
// prefix straight from the store, with no local copy; `mmfs pack
// https://host/shards/{00000..00099}.tar DST` the tars a web server serves under those names
// (a server cannot be listed: the pattern names them, as WebDataset and img2dataset write it).
//
// The prefix is listed once (fs/origin/s3_listing.h, the same endpoint, credentials, TLS and
// retries as a mount's). Each tar directly under it becomes a folder named after it, as a local
// tar does; objects below a further '/' and objects that are not tars are left out with one
// warning. While packing, a tar is read once, front to back, through an ObjectStream
// (fs/origin/object_stream.h: large ranged GETs, a few ahead) over an origin pinned to the
// object's ETag, so an object replaced while it is read is an error, never a mix. Since there
// is no first pass, its members are grouped as neighbours (TarGrouper::Neighbours).
//
// What the outputs may show: a bucket has no file modes, so its tars count as readable by the
// packing user alone (the dataset's files get no group or other read bits from them).
//
// Ownership: a BucketTar owns its origin, its stream and its reader.
// Thread-safety: ListBucketTars is reentrant; a BucketTar is used by one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/origin/object_stream.h"
#include "fs/origin/s3_origin.h"
#include "tools/pack/reporter.h"
#include "tools/pack/tar_source.h"

namespace mmfs::pack {

// True for a source given as a bucket URL ("s3://...").
bool IsBucketSource(std::string_view source);
// True for a source given by URL: a bucket prefix, or tars on a web server
// ("https://host/shards/{00000..00099}.tar").
bool IsRemoteSource(std::string_view source);

struct BucketTarObject {
  std::string url;   // "s3://bkt/wds/00001.tar", as the user or the listing gives it
  std::string name;  // "00001.tar": the object's name in its folder (an http URL's decoded)
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // the listing's LastModified; 0 when it gave none
};

// The name of the tar at `url` in its folder: an s3:// key's last step as it is; an http(s)://
// URL's last step percent-decoded (a request encodes it again). InvalidArgument naming the URL
// for a malformed escape or one that decodes to '/' or NUL.
Result<std::string> RemoteTarName(const std::string& url);

// The tars directly under the prefix `source` ("s3://BUCKET/PREFIX/"), in key order. Objects
// that are not (other names, or keys below a further '/') are counted in `*left_out`.
// InvalidArgument naming `source` when it holds no tar, or names a whole bucket (its root's
// objects are not packed: a tar is opened as the object of a dataset URL, which names a key).
Result<std::vector<BucketTarObject>> ListBucketTars(const std::string& source,
                                                    const origin::RemoteOptions& remote,
                                                    uint64_t* left_out);

// The tars a URL source names: an s3:// prefix's (ListBucketTars), or an http(s):// URL's or
// pattern's (origin::ExpandBraceRanges), each asked for its size (HEAD, several at once) with
// the same TLS and retry rules as a mount of a URL. InvalidArgument naming the URL for a name
// that is not a tar's (.tar, .tar.gz, .tgz) or makes no folder; AlreadyExists for two tars that
// would be one folder; the server's error (NotFound for a 404) for a tar it does not serve.
// `cancel` (not owned; may be null), when set, stops the size queries (Cancelled).
Result<std::vector<BucketTarObject>> ListRemoteTars(const std::string& source,
                                                    const origin::RemoteOptions& remote,
                                                    uint64_t* left_out,
                                                    const std::atomic<bool>* cancel = nullptr);

class BucketTar {
 public:
  // Starts reading the tar `object` (its size as listed); `block_bytes`: each GET's size.
  static Result<std::unique_ptr<BucketTar>> Open(const BucketTarObject& object,
                                                 const origin::RemoteOptions& remote,
                                                 PackReporter& reporter,
                                                 uint64_t max_member_bytes,
                                                 size_t block_bytes = 8 << 20);
  TarReader& reader() { return *reader_; }

 private:
  BucketTar() = default;
  // Destroyed in reverse: the reader (which reads from the stream), the stream (which reads
  // from the origin), then the origin.
  std::unique_ptr<origin::HttpOrigin> origin_;
  std::unique_ptr<origin::ObjectStream> stream_;
  std::unique_ptr<TarReader> reader_;
};

}  // namespace mmfs::pack
