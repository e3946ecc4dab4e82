#include "tools/pack/image_check.h"

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

bool IsImageName(std::string_view name) {
  std::string ext = LowerExtension(name);
  return HasJpegExtension(name) || ext == "png" || ext == "webp" || ext == "gif" ||
         ext == "bmp" || ext == "tif" || ext == "tiff";
}

JpegChecker::JpegChecker() : handle_(tjInitDecompress()) {}

JpegChecker::~JpegChecker() {
  if (handle_ != nullptr) tjDestroy(static_cast<tjhandle>(handle_));
}

Result<ImageInfo> JpegChecker::Check(std::string_view bytes) {
  if (handle_ == nullptr) return Status::ResourceExhausted("cannot create a JPEG decoder");
  if (bytes.size() < 4 || static_cast<unsigned char>(bytes[0]) != 0xFF ||
      static_cast<unsigned char>(bytes[1]) != 0xD8) {
    std::string start;
    for (char c : bytes.substr(0, 4)) {
      start += std::isprint(static_cast<unsigned char>(c)) ? c : '.';
    }
    return Status::InvalidArgument(bytes.empty() ? "not a JPEG (empty file)"
                                                 : "not a JPEG (starts with '" + start + "')");
  }
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(static_cast<tjhandle>(handle_),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<unsigned long>(bytes.size()), &width, &height, &subsamp,
                          &colorspace) != 0) {
    return Status::InvalidArgument(std::string("bad JPEG header: ") +
                                   tjGetErrorStr2(static_cast<tjhandle>(handle_)));
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
