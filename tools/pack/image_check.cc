#include "tools/pack/image_check.h"

#include <png.h>
#include <webp/decode.h>

#include <cstring>

#include <turbojpeg.h>

#include <algorithm>
#include <cctype>
#include <string>

namespace mmfs::pack {

bool HasJpegExtension(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return false;
  std::string ext;
  for (char c : name.substr(dot + 1)) ext += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "jpg" || ext == "jpeg" || ext == "jpe" || ext == "jfif";
}

namespace {
std::string LowerExtension(std::string_view name) {
  size_t dot = name.rfind('.');
  std::string ext;
  if (dot == std::string_view::npos) return ext;
  for (char c : name.substr(dot + 1)) ext += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}
}  // namespace

bool HasPngExtension(std::string_view name) { return LowerExtension(name) == "png"; }
bool HasWebpExtension(std::string_view name) { return LowerExtension(name) == "webp"; }

namespace {
std::string Printable(std::string_view bytes) {
  std::string start;
  for (char c : bytes.substr(0, 4)) start += std::isprint(static_cast<unsigned char>(c)) ? c : '.';
  return start;
}

// The signature checks, on the whole file or on its first kImageStartBytes alike.
Status JpegStart(std::string_view bytes) {
  if (bytes.size() >= 4 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8) {
    return Status::Ok();
  }
  return Status::InvalidArgument(bytes.empty() ? "not a JPEG (empty file)"
                                               : "not a JPEG (starts with '" + Printable(bytes) + "')");
}

Status PngStart(std::string_view bytes) {
  if (bytes.size() >= 8 && png_sig_cmp(reinterpret_cast<png_const_bytep>(bytes.data()), 0, 8) == 0) {
    return Status::Ok();
  }
  return Status::InvalidArgument(bytes.empty() ? "not a PNG (empty file)"
                                               : "not a PNG (starts with '" + Printable(bytes) + "')");
}

Status WebpStart(std::string_view bytes) {
  if (bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP") {
    return Status::Ok();
  }
  return Status::InvalidArgument(bytes.empty() ? "not a WebP (empty file)"
                                               : "not a WebP (starts with '" + Printable(bytes) + "')");
}

Status CheckPixels(const char* kind, uint64_t width, uint64_t height) {
  if (width == 0 || height == 0) return Status::InvalidArgument(std::string(kind) + " with zero size");
  if (width * height > kMaxImagePixels) {
    return Status::InvalidArgument(std::string(kind) + " of " + std::to_string(width) + "x" +
                                   std::to_string(height) + " pixels, over the limit of " +
                                   std::to_string(kMaxImagePixels) + " (a decompression bomb?)");
  }
  return Status::Ok();
}
}  // namespace

Result<ImageInfo> CheckPng(std::string_view bytes) {
  const auto* data = reinterpret_cast<png_const_bytep>(bytes.data());
  MMFS_RETURN_IF_ERROR(PngStart(bytes));
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&image, data, bytes.size()) == 0) {
    std::string why = image.message;
    png_image_free(&image);
    return Status::InvalidArgument("bad PNG header: " + why);
  }
  ImageInfo info{image.width, image.height};
  png_image_free(&image);
  MMFS_RETURN_IF_ERROR(CheckPixels("PNG", info.width, info.height));
  // The last chunk is IEND: length 0, type, CRC (12 bytes).
  if (bytes.size() < 12 || bytes.substr(bytes.size() - 8, 4) != "IEND") {
    return Status::InvalidArgument("truncated PNG: does not end with an IEND chunk");
  }
  return info;
}

Result<ImageInfo> CheckWebp(std::string_view bytes) {
  MMFS_RETURN_IF_ERROR(WebpStart(bytes));
  int width = 0, height = 0;
  if (WebPGetInfo(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &width, &height) == 0) {
    return Status::InvalidArgument("bad WebP header");
  }
  MMFS_RETURN_IF_ERROR(CheckPixels("WebP", static_cast<uint64_t>(width), static_cast<uint64_t>(height)));
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  uint64_t riff = u[4] | (u[5] << 8) | (u[6] << 16) | (static_cast<uint64_t>(u[7]) << 24);
  if (riff + 8 > bytes.size()) {
    return Status::InvalidArgument("truncated WebP: " + std::to_string(bytes.size()) +
                                   " bytes, the RIFF header says " + std::to_string(riff + 8));
  }
  return ImageInfo{static_cast<uint32_t>(width), static_cast<uint32_t>(height)};
}

Status CheckImageStart(std::string_view name, std::string_view head) {
  if (HasJpegExtension(name)) return JpegStart(head);
  if (HasPngExtension(name)) return PngStart(head);
  if (HasWebpExtension(name)) return WebpStart(head);
  return Status::Ok();
}

bool IsImageName(std::string_view name) {
  std::string ext = LowerExtension(name);
  return HasJpegExtension(name) || ext == "png" || ext == "webp" || ext == "gif" ||
         ext == "bmp" || ext == "tif" || ext == "tiff";
}

JpegChecker::JpegChecker() : handle_(tjInitDecompress()) {}

JpegChecker::~JpegChecker() {
  if (handle_ != nullptr) tjDestroy(static_cast<tjhandle>(handle_));
}

void JpegChecker::ResetHandle() {
  if (handle_ != nullptr) tjDestroy(static_cast<tjhandle>(handle_));
  handle_ = tjInitDecompress();
}

Result<ImageInfo> JpegChecker::Check(std::string_view bytes) {
  if (handle_ == nullptr) handle_ = tjInitDecompress();  // a reset that could not allocate
  if (handle_ == nullptr) return Status::ResourceExhausted("cannot create a JPEG decoder");
  MMFS_RETURN_IF_ERROR(JpegStart(bytes));
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(static_cast<tjhandle>(handle_),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<unsigned long>(bytes.size()), &width, &height, &subsamp,
                          &colorspace) != 0) {
    std::string why = tjGetErrorStr2(static_cast<tjhandle>(handle_));
    // TurboJPEG (2.1) leaves its decompressor mid-header after an error (it returns from the
    // error longjmp without jpeg_abort), so the next file's header would be read as the rest of
    // this one ("two SOI markers", "Bogus marker length") and every later JPEG would look bad.
    // A fresh decoder per error keeps one bad file from condemning the ones after it.
    ResetHandle();
    return Status::InvalidArgument("bad JPEG header: " + why);
  }
  if (width <= 0 || height <= 0) return Status::InvalidArgument("JPEG with zero size");
  // A decompression bomb: a small file whose decoded image would take gigabytes in every loader
  // worker that opens it (the limit is PIL's, which would refuse it too).
  if (static_cast<uint64_t>(width) * static_cast<uint64_t>(height) > kMaxImagePixels) {
    return Status::InvalidArgument("JPEG of " + std::to_string(width) + "x" +
                                   std::to_string(height) + " pixels, over the limit of " +
                                   std::to_string(kMaxImagePixels) +
                                   " (a decompression bomb?)");
  }
  // The end-of-image marker may be followed by a little padding; look at the tail only.
  size_t tail = std::min<size_t>(bytes.size(), 4096);
  std::string_view end = bytes.substr(bytes.size() - tail);
  bool has_eoi = false;
  for (size_t i = end.size(); i >= 2; --i) {
    if (static_cast<unsigned char>(end[i - 2]) == 0xFF &&
        static_cast<unsigned char>(end[i - 1]) == 0xD9) {
      has_eoi = true;
      break;
    }
  }
  if (!has_eoi) return Status::InvalidArgument("truncated JPEG: no end-of-image marker");
  return ImageInfo{static_cast<uint32_t>(width), static_cast<uint32_t>(height)};
}

}  // namespace mmfs::pack
