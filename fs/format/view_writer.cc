#include "fs/format/view_writer.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>

#include "base/file_util.h"

namespace mmfs::format {

Result<IndexFileInfo> WriteViewIndexFile(const std::string& path, const ViewIndexIdentity& id,
                                         std::span<const ViewRecord> records) {
  for (size_t i = 1; i < records.size(); ++i) {
    if (records[i].entry <= records[i - 1].entry) {
      return Status::InvalidArgument(path + ": view records must be sorted by entry");
    }
  }
  ViewIndexHeader h{};
  std::memcpy(h.magic, kViewIndexMagic, sizeof h.magic);
  h.version = kViewFormatVersion;
  h.header_size = sizeof(ViewIndexHeader);
  h.record_size = sizeof(ViewRecord);
  h.side = id.side;
  h.record_count = records.size();
  h.base_entry_count = id.base_entry_count;
  h.base_index_checksum = id.base_index_checksum;
  h.records_offset = sizeof(ViewIndexHeader);
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  MMFS_RETURN_IF_ERROR(WriteFull(fd.get(), &h, sizeof h, path));
  MMFS_RETURN_IF_ERROR(WriteFull(fd.get(), records.data(), records.size_bytes(), path));
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + path);
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::ResourceExhausted("out of memory writing " + path);
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, &h, sizeof h);
  XXH3_64bits_update(state, records.data(), records.size_bytes());
  IndexFileInfo info;
  info.checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  info.size = sizeof h + records.size_bytes();
  return info;
}

}  // namespace mmfs::format
