#include "tools/pack/shard_sequence.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/file_util.h"
#include "fs/format/format.h"

namespace mmfs::pack {

std::string ShardFileName(uint32_t shard) {
  char name[64];
  std::snprintf(name, sizeof name, format::kShardFilePattern, static_cast<unsigned>(shard));
  return name;
}

bool ShardSequence::IsWhole(const format::ShardInfo& info) const {
  struct stat st;
  std::string file = dir_ + "/" + info.file;
  return ::stat(file.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == info.size;
}

void ShardSequence::Restore(std::vector<format::ShardInfo> shards,
                            std::vector<uint64_t> record_offsets) {
  for (uint32_t i = static_cast<uint32_t>(shards.size());; ++i) {
    std::string file = dir_ + "/" + ShardFileName(i);
    if (::unlink(file.c_str()) != 0) break;
  }
  shards_ = std::move(shards);
  record_offsets_ = std::move(record_offsets);
  next_sample_ = record_offsets_.size();
}

Status ShardSequence::Append(std::span<const std::string_view> members, uint64_t bytes,
                             uint32_t* shard, uint64_t* sample) {
  if (writer_ != nullptr && writer_->samples() > 0 &&
      writer_->data_bytes() + bytes > shard_size_) {
    MMFS_RETURN_IF_ERROR(FinishShard());
  }
  if (writer_ == nullptr) {
    std::string name = ShardFileName(static_cast<uint32_t>(shards_.size()));
    MMFS_ASSIGN_OR_RETURN(writer_, format::ShardWriter::Create(dir_ + "/" + name));
    format::ShardInfo info;
    info.file = name;
    info.first_sample = next_sample_;
    shards_.push_back(info);
  }
  *shard = static_cast<uint32_t>(shards_.size() - 1);
  *sample = next_sample_;
  MMFS_RETURN_IF_ERROR(writer_->Append(next_sample_, members));
  ++next_sample_;
  return Status::Ok();
}

Status ShardSequence::FinishShard() {
  if (writer_ == nullptr) return Status::Ok();
  format::ShardInfo& info = shards_.back();
  info.samples = writer_->samples();
  info.data_bytes = writer_->data_bytes();
  MMFS_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets, writer_->Finish());
  record_offsets_.insert(record_offsets_.end(), offsets.begin(), offsets.end());
  std::string path = writer_->path();
  writer_.reset();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  info.size = static_cast<uint64_t>(st.st_size);
  MMFS_ASSIGN_OR_RETURN(info.checksum, HashFile(path));
  if (on_finished_) MMFS_RETURN_IF_ERROR(on_finished_(info, offsets));
  return Status::Ok();
}

}  // namespace mmfs::pack
