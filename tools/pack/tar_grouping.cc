#include "tools/pack/tar_grouping.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "tools/pack/tar_source.h"

namespace mmfs::pack {

namespace {
// The plan pass reports nothing: the data pass meets the same members and reports them once.
class SilentReporter final : public PackReporter {
 public:
  void Warning(const std::string&) override {}
  void Phase(const std::string&) override {}
  void Progress(const PackProgress&) override {}
};
}  // namespace

std::string MemberKey(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::string key(slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1));
  key += SampleKeyOf(name);
  return key;
}

Result<TarSamplePlan> PlanTarSamples(const std::string& path, uint64_t max_member_bytes) {
  SilentReporter silent;
  MMFS_ASSIGN_OR_RETURN(auto reader, TarReader::Open(path, silent, max_member_bytes));
  TarSamplePlan plan;
  std::string previous;
  TarMember m;
  for (;;) {
    MMFS_ASSIGN_OR_RETURN(bool more, reader->Next(&m, /*read_data=*/false));
    if (!more) break;
    std::string key = MemberKey(m.path);
    uint32_t& n = plan.members_of[key];
    // A key seen before, with another key in between: the members are not grouped.
    if (n > 0 && key != previous) plan.grouped = false;
    ++n;
    ++plan.members;
    previous = std::move(key);
  }
  return plan;
}

TarGrouper::TarGrouper(const TarSamplePlan& plan, std::string spill_dir, uint64_t memory_limit)
    : plan_(&plan), spill_dir_(std::move(spill_dir)), memory_limit_(memory_limit) {}

TarGrouper TarGrouper::Neighbours(std::string spill_dir, uint64_t memory_limit) {
  static const TarSamplePlan kNoPlan;
  // One sample is held at a time; a hostile one of many members spills rather than filling
  // memory.
  TarGrouper g(kNoPlan, std::move(spill_dir), memory_limit);
  g.plan_ = nullptr;
  return g;
}

Result<bool> TarGrouper::AddNeighbour(const std::string& key, SourceNode* node, std::string data,
                                      TarSample* done) {
  bool handed = false;
  if (key != current_) {
    if (handed_over_.count(key) > 0) {
      return Status::InvalidArgument(
          "the members of sample '" + key + "' are not next to each other; a tar read from a "
          "bucket is read once, front to back: pack a local copy of it instead");
    }
    if (!current_.empty()) {
      MMFS_RETURN_IF_ERROR(HandOver(current_, done));
      handed = true;
    }
    current_ = key;
  }
  Pending& p = pending_[key];
  p.nodes.push_back(node);
  Held h;
  h.size = data.size();
  h.data = std::move(data);
  if (in_memory_ + h.size > memory_limit_) {
    MMFS_RETURN_IF_ERROR(Spill(&h));
  } else {
    in_memory_ += h.size;
  }
  p.held.push_back(std::move(h));
  return handed;
}

Result<bool> TarGrouper::Finish(TarSample* done) {
  if (plan_ != nullptr || current_.empty()) return false;
  MMFS_RETURN_IF_ERROR(HandOver(current_, done));
  current_.clear();
  return true;
}

Status TarGrouper::HandOver(const std::string& key, TarSample* done) {
  Pending& p = pending_[key];
  done->key = key;
  done->nodes = std::move(p.nodes);
  done->contents.clear();
  for (Held& held : p.held) {
    if (held.spilled) {
      MMFS_RETURN_IF_ERROR(Unspill(&held));
    } else {
      in_memory_ -= held.size;
    }
    done->contents.push_back(std::move(held.data));
  }
  pending_.erase(key);
  handed_over_.insert(key);
  return Status::Ok();
}

Result<bool> TarGrouper::Add(const std::string& path, SourceNode* node, std::string data,
                             TarSample* done) {
  std::string key = MemberKey(path);
  if (plan_ == nullptr) return AddNeighbour(key, node, std::move(data), done);
  auto expected = plan_->members_of.find(key);
  if (expected == plan_->members_of.end()) {
    return Status::Corruption("member '" + path + "' was not there when the archive was first "
                              "read: it changed while packing");
  }
  Pending& p = pending_[key];
  if (p.nodes.size() >= expected->second || handed_over_.count(key) > 0) {
    return Status::Corruption("sample '" + key + "' has more members than when the archive was "
                              "first read: it changed while packing");
  }
  p.nodes.push_back(node);
  Held h;
  h.size = data.size();
  h.data = std::move(data);
  bool complete = p.nodes.size() == expected->second;
  // Members of samples still waiting count against the limit; a sample that is complete now is
  // handed over at once and never needs the spill file.
  if (!complete && in_memory_ + h.size > memory_limit_) {
    MMFS_RETURN_IF_ERROR(Spill(&h));
  } else if (!complete) {
    in_memory_ += h.size;
  }
  p.held.push_back(std::move(h));
  if (!complete) return false;
  done->key = key;
  done->nodes = std::move(p.nodes);
  done->contents.clear();
  for (size_t i = 0; i < p.held.size(); ++i) {
    Held& held = p.held[i];
    if (held.spilled) {
      MMFS_RETURN_IF_ERROR(Unspill(&held));
    } else if (i + 1 < p.held.size()) {
      in_memory_ -= held.size;  // the last one was never counted
    }
    done->contents.push_back(std::move(held.data));
  }
  pending_.erase(key);
  handed_over_.insert(std::move(key));
  return true;
}

std::vector<std::string> TarGrouper::Incomplete() const {
  std::vector<std::string> keys;
  for (const auto& [key, p] : pending_) keys.push_back(key);
  return keys;
}

Status TarGrouper::Spill(Held* h) {
  if (!spill_fd_.valid()) {
    spill_name_ = spill_dir_ + "/tar-spill-XXXXXX";
    int fd = ::mkstemp(spill_name_.data());
    if (fd < 0) return Status::FromErrno(errno, "create " + spill_name_);
    spill_fd_.Reset(fd);
    // Unlinked at once: the space is freed however the pack ends.
    ::unlink(spill_name_.c_str());
  }
  MMFS_RETURN_IF_ERROR(WriteFull(spill_fd_.get(), h->data.data(), h->data.size(), spill_name_));
  h->spill_offset = spill_end_;
  spill_end_ += h->size;
  h->spilled = true;
  std::string().swap(h->data);
  return Status::Ok();
}

Status TarGrouper::Unspill(Held* h) {
  h->data.resize(h->size);
  return PreadFull(spill_fd_.get(), h->data.data(), h->size, h->spill_offset, spill_name_);
}

}  // namespace mmfs::pack
