#include "fs/origin/delayed_origin.h"

#include <chrono>
#include <thread>

namespace mmfs::origin {

namespace {
class DelayedOrigin final : public OriginWrapper {
 public:
  DelayedOrigin(std::unique_ptr<Origin> inner, uint64_t delay_us)
      : OriginWrapper(std::move(inner)), delay_us_(delay_us) {}
  Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len) override {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    return OriginWrapper::ReadSpan(ref, offset, len);
  }

 private:
  const uint64_t delay_us_;
};
}  // namespace

std::unique_ptr<Origin> NewDelayedOrigin(std::unique_ptr<Origin> inner, uint64_t delay_us) {
  return std::make_unique<DelayedOrigin>(std::move(inner), delay_us);
}

}  // namespace mmfs::origin
