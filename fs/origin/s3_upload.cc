#include "fs/origin/s3_upload.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <system_error>
#include <thread>

#include "base/file_util.h"
#include "fs/origin/aws_config.h"
#include "fs/origin/s3_location.h"
#include "fs/origin/s3_xml.h"

namespace mmfs::origin {
namespace {

constexpr uint64_t kMinPartBytes = 5ull << 20;  // S3 refuses a smaller part but the last
constexpr uint64_t kMaxParts = 10000;            // and more parts than this
constexpr uint64_t kMaxAnswerBytes = 1ull << 20;  // an upload id's or a completion's XML
// The slowest a body is expected to move: 1 MB/s (an 8 MiB part in 8.4 s).
constexpr uint64_t kSlowestWriteBytesPerMs = 1000;

std::string WithoutTrailingSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::vector<std::string> MetadataHeaders(const ObjectMetadata& metadata) {
  std::vector<std::string> headers;
  for (const auto& [name, value] : metadata) headers.push_back("x-amz-meta-" + name + ": " + value);
  return headers;
}

}  // namespace

std::string RemoteObject::Metadata(std::string_view name) const {
  for (const auto& [n, v] : metadata) {
    if (n == name) return v;
  }
  return "";
}

Result<std::unique_ptr<S3Uploader>> S3Uploader::Open(const std::string& url,
                                                     RemoteOptions options,
                                                     UploadOptions upload) {
  options = WithProcessSettings(std::move(options));
  MMFS_ASSIGN_OR_RETURN(S3Location where, ParseS3Url(url));
  MMFS_ASSIGN_OR_RETURN(AwsSettings aws, LoadAwsSettings(AwsSources::System()));
  if (!aws.has_credentials()) {
    return Status::InvalidArgument(url + ": writing to a bucket needs credentials "
                                   "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile)");
  }
  MMFS_ASSIGN_OR_RETURN(S3Client client, NewS3Client(where, aws, options));
  return std::make_unique<S3Uploader>(std::move(client.base_url), url,
                                      std::move(client.transport), options.retry, upload);
}

S3Uploader::S3Uploader(std::string base_url, std::string shown,
                       std::unique_ptr<HttpTransport> transport, RetryPolicy retry,
                       UploadOptions upload)
    : base_url_(WithoutTrailingSlashes(std::move(base_url))),
      shown_(WithoutTrailingSlashes(std::move(shown))),
      transport_(std::move(transport)),
      retry_(retry),
      upload_(upload) {}

std::string S3Uploader::UrlOf(const std::string& name) const {
  return base_url_ + "/" + EncodeUrlPath(name);
}

HttpResponse S3Uploader::Send(HttpRequest request) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (request.max_body == 0) request.max_body = kMaxAnswerBytes;
  // A body takes its time on the way: it is given that time at kSlowestWriteBytesPerMs (shared
  // by the parts in flight) on top of the budget a read has, so that a part which fails late is
  // still tried again, and each try may take at least that long.
  RetryPolicy policy = retry_;
  const std::chrono::milliseconds transfer(
      request.upload.size() * static_cast<uint64_t>(std::max(1, upload_.parts_in_flight)) /
      kSlowestWriteBytesPerMs);
  policy.total += transfer;
  policy.min_try = std::max(policy.min_try, transfer);
  return SendWithRetries(*transport_, request, policy);
}

Status S3Uploader::Failed(const std::string& what, const HttpResponse& response) const {
  if (response.failure != TransportFailure::kNone) return Status::IoError(what + ": " + response.error);
  std::string why = what + ": HTTP " + std::to_string(response.status);
  const std::string s3 = s3xml::S3ErrorOf(response.error_body);
  if (!s3.empty()) why += " " + s3;
  if (response.status == 404) return Status::NotFound(why);
  return Status::IoError(why);
}

Status S3Uploader::PutBytes(const std::string& name, std::string_view bytes,
                            const ObjectMetadata& metadata) {
  HttpRequest request;
  request.method = "PUT";
  request.url = UrlOf(name);
  request.upload = bytes;
  request.headers = MetadataHeaders(metadata);
  const HttpResponse response = Send(std::move(request));
  if (response.failure != TransportFailure::kNone || response.status != 200) {
    return Failed("upload of " + Shown(name), response);
  }
  bytes_sent_.fetch_add(bytes.size(), std::memory_order_relaxed);
  return Status::Ok();
}

Status S3Uploader::PutFile(const std::string& name, const std::string& path,
                           const ObjectMetadata& metadata) {
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + ": not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > upload_.single_put_bytes) return PutInParts(name, fd.get(), size, path, metadata);
  std::string bytes(size, '\0');
  MMFS_RETURN_IF_ERROR(PreadFull(fd.get(), bytes.data(), bytes.size(), 0, path));
  return PutBytes(name, bytes, metadata);
}

Status S3Uploader::PutInParts(const std::string& name, int fd, uint64_t size,
                              const std::string& path, const ObjectMetadata& metadata) {
  const std::string url = UrlOf(name);
  const std::string what = "upload of " + Shown(name) + " (from " + path + ")";
  HttpRequest create;
  create.method = "POST";
  create.url = url + "?uploads=";
  create.headers = MetadataHeaders(metadata);
  HttpResponse created = Send(std::move(create));
  if (created.failure != TransportFailure::kNone || created.status != 200) {
    return Failed(what + ": starting a multipart upload", created);
  }
  std::string upload_id;
  {
    Result<s3xml::XmlDoc> doc = s3xml::Parse(created.body);
    const xmlNode* root = doc.ok() ? xmlDocGetRootElement(doc->get()) : nullptr;
    if (root != nullptr) upload_id = s3xml::Text(s3xml::Child(root, "UploadId"));
  }
  if (upload_id.empty()) {
    return Status::IoError(what + ": the store's answer to a multipart upload has no UploadId");
  }
  const std::string id_query = "uploadId=" + EncodeQueryValue(upload_id);

  uint64_t part_bytes = std::max(upload_.part_bytes, kMinPartBytes);
  part_bytes = std::max(part_bytes, (size + kMaxParts - 1) / kMaxParts);
  const uint64_t parts = (size + part_bytes - 1) / part_bytes;
  std::vector<std::string> etags(parts);
  std::atomic<uint64_t> next{0};
  std::mutex mu;
  Status first_error;  // guarded by mu
  std::atomic<bool> failed{false};
  auto upload_parts = [&] {
    std::string buffer;
    for (uint64_t part; !failed.load() && (part = next.fetch_add(1)) < parts;) {
      if (cancelled_.load()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = Status::Cancelled(what + ": stopped");
        failed.store(true);
        break;
      }
      const uint64_t offset = part * part_bytes;
      const uint64_t n = std::min(part_bytes, size - offset);
      buffer.resize(n);
      Status status = PreadFull(fd, buffer.data(), n, offset, path);
      if (status.ok()) {
        HttpRequest put;
        put.method = "PUT";
        // Sorted by name, as SigV4's canonical query (s3_listing.h).
        put.url = url + "?partNumber=" + std::to_string(part + 1) + "&" + id_query;
        put.upload = buffer;
        const HttpResponse answer = Send(std::move(put));
        if (answer.failure != TransportFailure::kNone || answer.status != 200) {
          status = Failed(what + ": part " + std::to_string(part + 1) + " of " +
                              std::to_string(parts),
                          answer);
        } else if (answer.etag.empty()) {
          status = Status::IoError(what + ": the store sent no ETag for part " +
                                   std::to_string(part + 1));
        } else {
          etags[part] = answer.etag;
          bytes_sent_.fetch_add(n, std::memory_order_relaxed);
        }
      }
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = status;
        failed.store(true);
      }
    }
  };
  const int threads = static_cast<int>(
      std::min<uint64_t>(static_cast<uint64_t>(std::max(1, upload_.parts_in_flight)), parts));
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) {
    try {
      pool.emplace_back(upload_parts);
    } catch (const std::system_error&) {
      break;  // no thread to be had: fewer parts in flight
    }
  }
  upload_parts();
  for (std::thread& t : pool) t.join();

  Status status = first_error;
  if (status.ok()) {
    std::string body = "<CompleteMultipartUpload>";
    for (uint64_t part = 0; part < parts; ++part) {
      body += "<Part><PartNumber>" + std::to_string(part + 1) + "</PartNumber><ETag>" +
              etags[part] + "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    HttpRequest complete;
    complete.method = "POST";
    complete.url = url + "?" + id_query;
    complete.upload = body;
    const HttpResponse done = Send(std::move(complete));
    if (done.failure != TransportFailure::kNone || done.status != 200) {
      status = Failed(what + ": completing the multipart upload", done);
    } else {
      // S3 may answer 200 and fail in the body, once it has started sending it: only a
      // CompleteMultipartUploadResult says the object is there.
      Result<s3xml::XmlDoc> doc = s3xml::Parse(done.body);
      const xmlNode* root = doc.ok() ? xmlDocGetRootElement(doc->get()) : nullptr;
      if (root == nullptr || !s3xml::Named(root, "CompleteMultipartUploadResult")) {
        const std::string s3 = s3xml::S3ErrorOf(done.body);
        status = Status::IoError(what + ": completing the multipart upload: " +
                                 (s3.empty() ? "no CompleteMultipartUploadResult in the answer"
                                             : s3));
      }
    }
  }
  if (!status.ok()) {
    // The parts kept by the store would be billed and never seen: the upload is aborted.
    HttpRequest abort;
    abort.method = "DELETE";
    abort.url = url + "?" + id_query;
    const HttpResponse aborted = Send(std::move(abort));
    if (aborted.failure != TransportFailure::kNone ||
        (aborted.status != 204 && aborted.status != 200 && aborted.status != 404)) {
      return status.WithNote("; its multipart upload " + upload_id + " could not be aborted (" +
                             Failed("abort", aborted).message() + ")");
    }
  }
  return status;
}

Result<std::optional<RemoteObject>> S3Uploader::Head(const std::string& name) {
  HttpRequest request;
  request.head = true;
  request.url = UrlOf(name);
  const HttpResponse response = Send(std::move(request));
  if (response.failure == TransportFailure::kNone && response.status == 404) {
    return std::optional<RemoteObject>();
  }
  if (response.failure != TransportFailure::kNone || response.status != 200) {
    return Failed("looking at " + Shown(name), response);
  }
  if (!response.content_length) {
    return Status::IoError("looking at " + Shown(name) + ": the store sent no Content-Length");
  }
  RemoteObject object;
  object.size = *response.content_length;
  object.metadata = response.user_metadata;
  return std::optional<RemoteObject>(std::move(object));
}

Status S3Uploader::Delete(const std::string& name) {
  HttpRequest request;
  request.method = "DELETE";
  request.url = UrlOf(name);
  const HttpResponse response = Send(std::move(request));
  if (response.failure == TransportFailure::kNone &&
      (response.status == 204 || response.status == 200 || response.status == 404)) {
    return Status::Ok();
  }
  return Failed("removing " + Shown(name), response);
}

}  // namespace mmfs::origin
