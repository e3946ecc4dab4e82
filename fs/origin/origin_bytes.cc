#include "fs/origin/origin_bytes.h"

namespace mmfs::origin {

OriginBytes OriginBytes::Allocate(size_t capacity, size_t alignment) {
  OriginBytes out;
  if (capacity == 0) capacity = 1;
  if (alignment == 0) {
    out.buffer_.reset(static_cast<char*>(std::malloc(capacity)));
  } else {
    // aligned_alloc's rule: the size is a multiple of the alignment.
    const size_t size = (capacity + alignment - 1) & ~(alignment - 1);
    out.buffer_.reset(static_cast<char*>(std::aligned_alloc(alignment, size)));
  }
  return out;
}

}  // namespace mmfs::origin
