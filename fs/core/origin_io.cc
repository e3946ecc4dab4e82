#include "fs/core/origin_io.h"

#include <chrono>
#include <thread>

namespace mmfs::fs {

namespace {
class DatasetIo final : public OriginIo {
 public:
  explicit DatasetIo(const format::Dataset& dataset) : dataset_(dataset) {}
  Result<OriginBytes> ReadSpan(uint32_t shard, uint64_t offset, size_t len) override {
    MMFS_ASSIGN_OR_RETURN(format::ShardBytes bytes, dataset_.ReadShardSpan(shard, offset, len));
    return OriginBytes(std::move(bytes));
  }

 private:
  const format::Dataset& dataset_;
};
}  // namespace

std::unique_ptr<OriginIo> NewDatasetIo(const format::Dataset& dataset) {
  return std::make_unique<DatasetIo>(dataset);
}

namespace {
class DelayedIo final : public OriginIo {
 public:
  DelayedIo(std::unique_ptr<OriginIo> inner, uint64_t delay_us)
      : inner_(std::move(inner)), delay_us_(delay_us) {}
  Result<OriginBytes> ReadSpan(uint32_t shard, uint64_t offset, size_t len) override {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    return inner_->ReadSpan(shard, offset, len);
  }

 private:
  const std::unique_ptr<OriginIo> inner_;
  const uint64_t delay_us_;
};
}  // namespace

std::unique_ptr<OriginIo> NewDelayedIo(std::unique_ptr<OriginIo> inner, uint64_t delay_us) {
  return std::make_unique<DelayedIo>(std::move(inner), delay_us);
}

}  // namespace mmfs::fs
