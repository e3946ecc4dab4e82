#include "fs/format/shard_reads.h"

#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <string_view>

namespace mmfs::format {

Result<origin::OriginBytes> ReadVerified(origin::Origin& origin, const Dataset& dataset,
                                         const Entry& entry) {
  if (!entry.is_regular()) return Status::InvalidArgument("read outside the file");
  MMFS_ASSIGN_OR_RETURN(origin::OriginBytes bytes,
                        origin.ReadSpan({origin::kDatasetTree, entry.record.shard},
                                        entry.record.data_offset, entry.size()));
  MMFS_RETURN_IF_ERROR(dataset.CheckSum(entry, XXH3_64bits(bytes.data(), bytes.size())));
  return bytes;
}

Result<origin::OriginBytes> ReadVerified(origin::Origin& origin, const View& view,
                                         const ViewFile& file, const std::string& path) {
  if (file.source != ViewFile::Source::kView) {
    return Status::InvalidArgument(view.dir() + ": read outside a view file");
  }
  MMFS_ASSIGN_OR_RETURN(origin::OriginBytes bytes,
                        origin.ReadSpan({view.tree(), file.shard}, file.data_offset, file.size));
  MMFS_RETURN_IF_ERROR(view.Check(file, path, std::string_view(bytes.data(), bytes.size())));
  return bytes;
}

Result<uint64_t> HashShard(origin::Origin& origin, origin::ShardRef ref) {
  constexpr uint64_t kPiece = 4ull << 20;
  MMFS_ASSIGN_OR_RETURN(uint64_t size, origin.ShardSize(ref));
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 XXH3_freeState);
  if (state == nullptr) {
    return Status::ResourceExhausted("out of memory hashing " + origin.ShardName(ref));
  }
  XXH3_64bits_reset(state.get());
  for (uint64_t pos = 0; pos < size; pos += kPiece) {
    const auto n = static_cast<size_t>(std::min(kPiece, size - pos));
    MMFS_ASSIGN_OR_RETURN(origin::OriginBytes piece, origin.ReadSpan(ref, pos, n));
    XXH3_64bits_update(state.get(), piece.data(), piece.size());
  }
  return XXH3_64bits_digest(state.get());
}

}  // namespace mmfs::format
