#include "tools/view/image_resizer.h"

#include <vips/vips.h>
// After vips.h, which it needs: vips_vector_set_enabled.
#include <vips/vector.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "fs/format/view_format.h"
#include "tools/pack/image_check.h"

namespace mmfs::view {

namespace {

// Owns a VipsImage reference.
class ImageRef {
 public:
  ImageRef() = default;
  ~ImageRef() { Reset(); }
  ImageRef(const ImageRef&) = delete;
  ImageRef& operator=(const ImageRef&) = delete;
  VipsImage* get() const { return image_; }
  // Out-parameter for a libvips call; drops what was held before.
  VipsImage** out() {
    Reset();
    return &image_;
  }
  void Reset() {
    if (image_ != nullptr) g_object_unref(image_);
    image_ = nullptr;
  }

 private:
  VipsImage* image_ = nullptr;
};

// libvips keeps one error buffer for the process: take (and clear) it in one locked step.
Status VipsError(const std::string& what) {
  char* text = vips_error_buffer_copy();
  std::string reason = text != nullptr ? text : "";
  g_free(text);
  while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
  // Keep the first line: libvips repeats the failing loader's chain.
  if (size_t nl = reason.find('\n'); nl != std::string::npos) reason.resize(nl);
  return Status::InvalidArgument(what + (reason.empty() ? "" : ": " + reason));
}

void DropWarning(const gchar*, GLogLevelFlags, const gchar*, gpointer) {}

// A WebP is lossless when its image chunk is VP8L (simple format, or inside a VP8X container).
bool IsLosslessWebp(std::string_view bytes) {
  size_t pos = 12;  // after "RIFF" size "WEBP"
  while (pos + 8 <= bytes.size()) {
    std::string_view fourcc = bytes.substr(pos, 4);
    if (fourcc == "VP8L") return true;
    if (fourcc == "VP8 ") return false;
    uint32_t size = 0;
    std::memcpy(&size, bytes.data() + pos + 4, 4);  // little-endian, like the format
    pos += 8 + size + (size & 1);
  }
  return false;
}

int Load(ImageKind kind, std::string_view bytes, int jpeg_shrink, VipsImage** out) {
  void* buf = const_cast<char*>(bytes.data());
  // Sequential access: the image streams through decode, resize and encode in strips.
  switch (kind) {
    case ImageKind::kJpeg:
      return vips_jpegload_buffer(buf, bytes.size(), out, "access", VIPS_ACCESS_SEQUENTIAL,
                                  "fail_on", VIPS_FAIL_ON_ERROR, "shrink", jpeg_shrink, nullptr);
    case ImageKind::kPng:
      return vips_pngload_buffer(buf, bytes.size(), out, "access", VIPS_ACCESS_SEQUENTIAL,
                                 "fail_on", VIPS_FAIL_ON_ERROR, nullptr);
    case ImageKind::kWebp:
      return vips_webpload_buffer(buf, bytes.size(), out, "access", VIPS_ACCESS_SEQUENTIAL,
                                  "fail_on", VIPS_FAIL_ON_ERROR, nullptr);
    case ImageKind::kOther:
      break;
  }
  return -1;
}

std::string KindName(ImageKind kind) {
  switch (kind) {
    case ImageKind::kJpeg: return "JPEG";
    case ImageKind::kPng: return "PNG";
    case ImageKind::kWebp: return "WebP";
    case ImageKind::kOther: break;
  }
  return "image";
}

}  // namespace

ImageKind ImageKindOf(std::string_view name) {
  if (pack::HasJpegExtension(name)) return ImageKind::kJpeg;
  if (pack::HasPngExtension(name)) return ImageKind::kPng;
  if (pack::HasWebpExtension(name)) return ImageKind::kWebp;
  return ImageKind::kOther;
}

Status InitImageLibrary() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    if (vips_init("mmfs") != 0) {
      status = Status::NotSupported("libvips does not start: " + std::string(vips_error_buffer()));
      return;
    }
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    // No liborc (SIMD code compiled at run time for reduce and convolution): freeing a compiled
    // program while another thread frees or runs one crashes (orc_code_free from
    // vips_vector_free in a g_object_unref, found in a core dump: `mmfs view add` segfaulted in
    // about 1 run of 40-60 with our worker threads each resizing). The plain C paths keep the
    // views within the quality bounds their tests check (ViewQualityTest, against PIL).
    vips_vector_set_enabled(FALSE);
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, DropWarning, nullptr);
  });
  return status;
}

std::string ResamplerName() { return std::string("libvips ") + vips_version_string() + " lanczos3"; }

Result<std::optional<ResizedImage>> ResizeImage(std::string_view bytes, const ResizeRequest& request) {
  if (request.kind == ImageKind::kOther) return std::optional<ResizedImage>();
  const std::string what = KindName(request.kind) + " does not decode";
  ImageRef header;
  if (Load(request.kind, bytes, 1, header.out()) != 0) return VipsError(what);
  const uint32_t width = static_cast<uint32_t>(vips_image_get_width(header.get()));
  const uint32_t height = static_cast<uint32_t>(vips_image_get_height(header.get()));
  if (static_cast<uint64_t>(width) * height > pack::kMaxImagePixels) {
    return Status::InvalidArgument(KindName(request.kind) + " of " + std::to_string(width) + "x" +
                                   std::to_string(height) + " pixels is over the limit");
  }
  int pages = 1;
  if (vips_image_get_typeof(header.get(), "n-pages") != 0 &&
      vips_image_get_int(header.get(), "n-pages", &pages) == 0 && pages > 1) {
    return std::optional<ResizedImage>();  // animated: a resize would keep one frame
  }
  uint32_t target_w = 0, target_h = 0;
  if (!format::ViewSize(width, height, request.side, &target_w, &target_h)) {
    return std::optional<ResizedImage>();
  }
  // Shrink-on-load: the largest DCT scale (1/2, 1/4, 1/8) that leaves the shorter side at least
  // 1.25 N, so a real Lanczos reduce always follows. Without that margin a 512 px JPEG bound for
  // 256 px was decoded straight to 256 px and served with no Lanczos step: 31 dB against PIL's
  // resize on the quality test's grainy images, where every other JPEG is above 36 dB.
  ImageRef loaded;
  VipsImage* image = header.get();
  if (request.kind == ImageKind::kJpeg) {
    const uint32_t shorter = std::min(width, height);
    int shrink = 1;
    while (shrink < 8 && static_cast<uint64_t>(shorter) * 4 >=
                             static_cast<uint64_t>(request.side) * 5 * static_cast<uint32_t>(shrink * 2)) {
      shrink *= 2;
    }
    if (shrink > 1) {
      if (Load(request.kind, bytes, shrink, loaded.out()) != 0) return VipsError(what);
      image = loaded.get();
    }
  }
  const double hscale = static_cast<double>(target_w) / vips_image_get_width(image);
  const double vscale = static_cast<double>(target_h) / vips_image_get_height(image);
  const VipsBandFormat band_format = vips_image_get_format(image);
  const bool alpha = vips_image_hasalpha(image);
  ImageRef premultiplied, resized, unpremultiplied, result;
  if (alpha) {
    if (vips_premultiply(image, premultiplied.out(), nullptr) != 0) return VipsError(what);
    image = premultiplied.get();
  }
  if (vips_resize(image, resized.out(), hscale, "vscale", vscale, "kernel", VIPS_KERNEL_LANCZOS3,
                  nullptr) != 0) {
    return VipsError(what);
  }
  image = resized.get();
  if (alpha) {
    if (vips_unpremultiply(image, unpremultiplied.out(), nullptr) != 0 ||
        vips_cast(unpremultiplied.get(), result.out(), band_format, nullptr) != 0) {
      return VipsError(what);
    }
    image = result.get();
  }
  if (static_cast<uint32_t>(vips_image_get_width(image)) != target_w ||
      static_cast<uint32_t>(vips_image_get_height(image)) != target_h) {
    return Status::InvalidArgument("resize gave " + std::to_string(vips_image_get_width(image)) +
                                   "x" + std::to_string(vips_image_get_height(image)) + ", not " +
                                   std::to_string(target_w) + "x" + std::to_string(target_h));
  }
  void* out = nullptr;
  size_t out_len = 0;
  int rc = -1;
  switch (request.kind) {
    case ImageKind::kJpeg: {
      // Chroma: libvips's own rule (subsample only below Q 90). At the default Q 90 the view
      // keeps full chroma: 4:2:0 cost 4-5 dB of PSNR against PIL's resize on the quality test's
      // images (36 against 41 dB for a Q 90 re-encode alone), 4:4:4 about a fifth more bytes.
      // Progressive sources stay progressive.
      int interlaced = 0;
      if (vips_image_get_typeof(image, "interlaced") != 0) {
        (void)vips_image_get_int(image, "interlaced", &interlaced);
      }
      rc = vips_jpegsave_buffer(image, &out, &out_len, "Q", request.quality, "optimize_coding",
                                TRUE, "interlace", interlaced != 0 ? TRUE : FALSE,
                                "subsample_mode", VIPS_FOREIGN_SUBSAMPLE_AUTO, nullptr);
      break;
    }
    case ImageKind::kPng:
      rc = vips_pngsave_buffer(image, &out, &out_len, nullptr);
      break;
    case ImageKind::kWebp:
      // smart_subsample: sharp RGB->YUV420 conversion; plain 4:2:0 left lossy WebPs of the
      // quality test at 34.6-35.0 dB against PIL's resize.
      rc = vips_webpsave_buffer(image, &out, &out_len, "Q", request.quality, "lossless",
                                IsLosslessWebp(bytes) ? TRUE : FALSE, "smart_subsample", TRUE,
                                nullptr);
      break;
    case ImageKind::kOther:
      break;
  }
  if (rc != 0) return VipsError(what);
  ResizedImage r;
  r.bytes.assign(static_cast<const char*>(out), out_len);
  g_free(out);
  r.width = target_w;
  r.height = target_h;
  return std::optional<ResizedImage>(std::move(r));
}

}  // namespace mmfs::view
