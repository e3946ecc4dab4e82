// Checking images while packing: is a .jpg really a whole JPEG, and how large is it?
//
// Uses libjpeg-turbo to parse the header (dimensions, subsampling) and checks that the stream
// ends with an end-of-image marker, which catches the most common damage in scraped datasets:
// truncated downloads and HTML error pages saved as .jpg.
//
// Thread-safety: a JpegChecker is used by one thread at a time; use one per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace mmfs::pack {

// Images with more pixels are refused: PIL's DecompressionBombError threshold (2 x 89,478,485).
inline constexpr uint64_t kMaxImagePixels = 178956970;

struct ImageInfo {
  uint32_t width = 0;
  uint32_t height = 0;
};

// True for names ending in .jpg, .jpeg, .jpe or .jfif (any case).
bool HasJpegExtension(std::string_view name);
// True for the image types datasets carry: JPEG, PNG, WebP, GIF, BMP, TIFF (any case).
bool IsImageName(std::string_view name);
bool HasPngExtension(std::string_view name);
bool HasWebpExtension(std::string_view name);

// A PNG's signature and header (libpng), its size against the pixel limit, and that it ends
// with an IEND chunk (not truncated).
Result<ImageInfo> CheckPng(std::string_view bytes);
// A WebP's RIFF container and header (libwebp), its size against the pixel limit, and that the
// RIFF length matches the bytes (not truncated).
Result<ImageInfo> CheckWebp(std::string_view bytes);

// Bytes at the start of a file enough for CheckImageStart.
inline constexpr size_t kImageStartBytes = 16;

// The signature of the image type `name`'s extension says (JPEG, PNG, WebP), from the file's
// first bytes (`head`: kImageStartBytes, or the whole file when shorter): the error the whole
// file's check would give when they cannot start such an image, so that a large file that is
// not one is refused before it is read. Ok for other names.
Status CheckImageStart(std::string_view name, std::string_view head);

class JpegChecker {
 public:
  JpegChecker();
  ~JpegChecker();
  JpegChecker(const JpegChecker&) = delete;
  JpegChecker& operator=(const JpegChecker&) = delete;

  // InvalidArgument with a short reason ("not a JPEG (starts with '<htm')", "truncated: no
  // end-of-image marker") when `bytes` is not a complete JPEG.
  // Each call is independent of the ones before: a bad file never affects the next.
  Result<ImageInfo> Check(std::string_view bytes);

 private:
  // Replaces the decoder with a fresh one (after an error left it mid-header).
  void ResetHandle();

  void* handle_;  // owned tjhandle; nullptr if TurboJPEG could not allocate one
};

}  // namespace mmfs::pack
