#include "tools/pack/bucket_source.h"

#include <map>

#include "fs/format/format.h"
#include "fs/origin/s3_listing.h"

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
  const std::string folder = object.url.substr(0, object.url.size() - object.name.size() - 1);
  MMFS_ASSIGN_OR_RETURN(t->origin_, origin::OpenUrlOrigin(folder, remote));
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
