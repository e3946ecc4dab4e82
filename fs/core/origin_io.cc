#include "fs/core/origin_io.h"

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

}  // namespace mmfs::fs
