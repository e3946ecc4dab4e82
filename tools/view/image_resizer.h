// Making the view image of one source image: decode, shrink so the shorter side is N (Lanczos),
// encode in the source's own format, with its EXIF (orientation included) and ICC profile.
//
// Built on libvips (Debian 12: libvips 8.14) rather than a hand-written resampler: a well-kept
// library whose JPEG loader shrinks by 2, 4 or 8 inside libjpeg-turbo's DCT (the IDCT is done at
// the smaller size, so a 1000 px JPEG bound for 256 px is decoded as 500 px: most of the speed),
// whose Lanczos3 reduce is separable and vectorised, and which carries EXIF/ICC/XMP metadata
// through a resize and writes it back (updating the EXIF dimensions) without extra code.
// Colour is never converted: a CMYK JPEG stays CMYK, grayscale stays grayscale, 16-bit PNG stays
// 16-bit, so colour management and ImageOps.exif_transpose act on the view as on the original.
// Alpha is premultiplied around the resize (as PIL does), so transparent pixels do not bleed.
//
// Thread-safety: InitImageLibrary once (any thread; later calls return its first result), then
// ResizeImage from any number of threads at once (each call uses its own libvips objects).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::view {

enum class ImageKind { kOther, kJpeg, kPng, kWebp };

// By file name, as the packer tells images apart: .jpg/.jpeg/.jpe/.jfif, .png, .webp (any case).
ImageKind ImageKindOf(std::string_view name);

// Starts libvips for this process: one libvips thread per call (the builder runs -j calls side by
// side, which keeps both cores busy on small images with less overhead), no operation cache (every
// image is seen once), library warnings silenced (damage is reported through Status instead).
Status InitImageLibrary();
// "libvips 8.14.1 lanczos3".
std::string ResamplerName();

struct ResizedImage {
  std::string bytes;
  uint32_t width = 0;   // as stored, before EXIF orientation
  uint32_t height = 0;
};

struct ResizeRequest {
  ImageKind kind = ImageKind::kOther;
  uint32_t side = 256;  // the shorter side of the result
  int quality = 90;     // JPEG and lossy WebP
};

// The view image of `bytes`, or nullopt when the original is served as it is: not larger than
// `side` on its shorter side (never upscaled), an animated PNG or WebP (a resize would keep one
// frame), or kind kOther. InvalidArgument with libvips's reason when the image does not decode.
// REQUIRES: InitImageLibrary() returned OK.
Result<std::optional<ResizedImage>> ResizeImage(std::string_view bytes, const ResizeRequest& request);

}  // namespace mmfs::view
