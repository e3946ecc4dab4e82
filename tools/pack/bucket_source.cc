#include "tools/pack/bucket_source.h"

#include <atomic>
#include <charconv>
#include <map>
#include <system_error>
#include <thread>

#include "fs/format/format.h"
#include "fs/origin/s3_listing.h"
#include "fs/origin/s3_location.h"
#include "fs/origin/url.h"
#include "fs/origin/url_pattern.h"

namespace mmfs::pack {

namespace {
// The folder a tar object becomes: its name without .tar/.tar.gz/.tgz. A bucket's keys are the
// dataset maker's, so a name no folder can have is refused here, naming the key, before
// anything is read: empty (".tar"), "." or "..", or longer than a name may be.
Status CheckFolderName(const std::string& folder, const std::string& url) {
  if (folder.empty() || folder == "." || folder == "..") {
    return Status::InvalidArgument(url + ": a tar named so has no folder name ('" + folder +
                                   "'); rename the object");
  }
  if (folder.size() > format::kMaxNameLength) {
    return Status::InvalidArgument(url + ": its folder name is longer than " +
                                   std::to_string(format::kMaxNameLength) + " bytes");
  }
  return Status::Ok();
}
}  // namespace

bool IsBucketSource(std::string_view source) { return source.rfind("s3://", 0) == 0; }

bool IsRemoteSource(std::string_view source) {
  return IsBucketSource(source) || origin::IsHttpUrl(std::string(source));
}

Result<std::string> RemoteTarName(const std::string& url) {
  const size_t slash = url.rfind('/');
  const std::string last = slash == std::string::npos ? url : url.substr(slash + 1);
  if (IsBucketSource(url)) return last;
  std::string name;
  for (size_t i = 0; i < last.size(); ++i) {
    if (last[i] != '%') {
      name += last[i];
      continue;
    }
    unsigned value = 0;
    const auto [end, ec] =
        i + 2 < last.size() ? std::from_chars(last.data() + i + 1, last.data() + i + 3, value, 16)
                            : std::from_chars_result{nullptr, std::errc::invalid_argument};
    if (ec != std::errc() || end != last.data() + i + 3 || value == 0 || value == '/') {
      return Status::InvalidArgument(origin::RedactUrl(url) + ": '" + last.substr(i, 3) +
                                     "' is not an escape a file name can have");
    }
    name += static_cast<char>(value);
    i += 2;
  }
  return name;
}

namespace {

// Sizes asked for at once: a web server's answers to HEADs come back one round trip each, and
// thousands of tars asked one after the other would cost minutes before the first byte.
constexpr int kSizeQueries = 8;

Result<std::vector<BucketTarObject>> ListUrlTars(const std::string& source,
                                                 origin::RemoteOptions remote,
                                                 const std::atomic<bool>* cancel) {
  // --endpoint names an S3 store (for the s3:// sources or DST beside this one); a URL names
  // its own server.
  remote.endpoint.clear();
  MMFS_ASSIGN_OR_RETURN(std::vector<std::string> urls, origin::ExpandBraceRanges(source));
  std::vector<BucketTarObject> tars;
  std::map<std::string, std::string> by_folder;  // folder name -> the URL that has it
  std::map<std::string, std::unique_ptr<origin::HttpOrigin>> origins;  // by the tars' folder
  std::vector<origin::HttpOrigin*> origin_of;
  tars.reserve(urls.size());
  origin_of.reserve(urls.size());
  for (const std::string& url : urls) {
    const std::string shown = origin::RedactUrl(url);
    const size_t slash = url.rfind('/');
    MMFS_ASSIGN_OR_RETURN(std::string name, RemoteTarName(url));
    if (slash == std::string::npos || !IsTarName(name)) {
      return Status::InvalidArgument(shown + ": a source by URL names tar files (.tar, .tar.gz, "
                                     ".tgz), one or a pattern of them ({00000..00099}.tar)");
    }
    MMFS_RETURN_IF_ERROR(CheckFolderName(TarStem(name), shown));
    auto [at, fresh] = by_folder.emplace(TarStem(name), shown);
    if (!fresh) {
      return Status::AlreadyExists(origin::RedactUrl(source) + ": '" + at->second + "' and '" +
                                   shown + "' would both be the folder '" + TarStem(name) +
                                   "'; pack them separately");
    }
    const std::string folder = url.substr(0, slash);
    std::unique_ptr<origin::HttpOrigin>& folder_origin = origins[folder];
    if (folder_origin == nullptr) {
      MMFS_ASSIGN_OR_RETURN(folder_origin, origin::OpenUrlOrigin(folder, remote));
    }
    origin_of.push_back(folder_origin.get());
    tars.push_back({url, name, 0, 0});
  }
  // The sizes, kSizeQueries at a time, until one fails (or the pack is stopped): the first
  // error in URL order is the answer.
  std::vector<Status> errors(tars.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto ask = [&] {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < tars.size();) {
      if (cancel != nullptr && cancel->load()) {
        errors[i] = Status::Cancelled("interrupted while asking for the tars' sizes");
        failed.store(true);
        break;
      }
      Result<uint64_t> size = origin_of[i]->ObjectSize(tars[i].name);
      if (size.ok()) {
        tars[i].size = *size;
      } else {
        errors[i] = size.status();
        failed.store(true);
      }
    }
  };
  std::vector<std::thread> askers;
  askers.reserve(kSizeQueries);
  for (int i = 1; i < kSizeQueries && static_cast<size_t>(i) < tars.size(); ++i) {
    try {
      askers.emplace_back(ask);
    } catch (const std::system_error&) {
      break;  // fewer at once
    }
  }
  ask();
  for (std::thread& t : askers) t.join();
  for (const Status& e : errors) MMFS_RETURN_IF_ERROR(e);
  return tars;
}

}  // namespace

Result<std::vector<BucketTarObject>> ListRemoteTars(const std::string& source,
                                                    const origin::RemoteOptions& remote,
                                                    uint64_t* left_out,
                                                    const std::atomic<bool>* cancel) {
  if (IsBucketSource(source)) return ListBucketTars(source, remote, left_out);
  return ListUrlTars(source, remote, cancel);
}

Result<std::vector<BucketTarObject>> ListBucketTars(const std::string& source,
                                                    const origin::RemoteOptions& remote,
                                                    uint64_t* left_out) {
  // The prefix as the listing takes it (slashes around the key trimmed): "s3://b//wds//" lists
  // "wds/", and the keys below are cut at that same prefix.
  MMFS_ASSIGN_OR_RETURN(origin::S3Location where, origin::ParseS3Prefix(source));
  if (where.key.empty()) {
    // A tar's origin is its folder's URL, and a dataset URL always names a key.
    return Status::InvalidArgument(source + ": name the prefix the tars are under "
                                   "(s3://BUCKET/PREFIX/); a bucket's root is not packed");
  }
  const std::string key_prefix = where.key + "/";
  const std::string url_prefix = "s3://" + where.bucket + "/" + key_prefix;
  MMFS_ASSIGN_OR_RETURN(std::vector<origin::ListedObject> listed,
                        origin::ListS3Prefix(url_prefix, remote));
  std::vector<BucketTarObject> tars;
  std::map<std::string, std::string> by_folder;  // folder name -> the key that has it
  for (const origin::ListedObject& o : listed) {
    if (o.key.size() < key_prefix.size() || o.key.compare(0, key_prefix.size(), key_prefix) != 0) {
      ++*left_out;  // not below the prefix: a store that lists more than it was asked
      continue;
    }
    std::string rest = o.key.substr(key_prefix.size());
    if (rest.empty()) continue;  // the prefix's own folder marker ("wds/")
    if (rest.find('/') != std::string::npos || !IsTarName(rest)) {
      ++*left_out;
      continue;
    }
    BucketTarObject t{url_prefix + rest, rest, o.size, o.last_modified_ns};
    const std::string folder = TarStem(rest);
    MMFS_RETURN_IF_ERROR(CheckFolderName(folder, t.url));
    auto [at, fresh] = by_folder.emplace(folder, o.key);
    if (!fresh) {
      return Status::AlreadyExists(source + ": '" + at->second + "' and '" + o.key +
                                   "' would both be the folder '" + folder +
                                   "'; pack them separately");
    }
    tars.push_back(std::move(t));
  }
  if (tars.empty()) {
    return Status::InvalidArgument(source + ": no .tar, .tar.gz or .tgz object directly under "
                                   "it (" + std::to_string(listed.size()) + " objects listed)");
  }
  return tars;
}

Result<std::unique_ptr<BucketTar>> BucketTar::Open(const BucketTarObject& object,
                                                   const origin::RemoteOptions& remote,
                                                   PackReporter& reporter,
                                                   uint64_t max_member_bytes,
                                                   size_t block_bytes) {
  std::unique_ptr<BucketTar> t(new BucketTar());
  // The origin's root is the tar's folder, without its '/' ("s3://bkt/wds", "s3://bkt"), as a
  // dataset's URL is given.
  const std::string folder = object.url.substr(0, object.url.rfind('/'));
  origin::RemoteOptions options = remote;
  if (!IsBucketSource(object.url)) options.endpoint.clear();  // the URL names its server
  MMFS_ASSIGN_OR_RETURN(t->origin_, origin::OpenUrlOrigin(folder, options));
  origin::TreeSpec spec;
  spec.shards.push_back({object.name, object.size});
  spec.size_hint = " (it changed since the bucket was listed)";
  MMFS_RETURN_IF_ERROR(t->origin_->AddTree(origin::kDatasetTree, spec));
  origin::ObjectStreamOptions stream_options;
  stream_options.block_bytes = block_bytes;
  t->stream_ = std::make_unique<origin::ObjectStream>(
      *t->origin_, origin::ShardRef{origin::kDatasetTree, 0}, object.size, stream_options);
  origin::ObjectStream* stream = t->stream_.get();
  MMFS_ASSIGN_OR_RETURN(
      t->reader_,
      TarReader::OpenStream(object.url, [stream] { return stream->Next(); }, reporter,
                            max_member_bytes));
  return t;
}

}  // namespace mmfs::pack
