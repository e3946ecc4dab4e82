#include "fs/read/origin_reader.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <spdlog/spdlog.h>
#include <string>

namespace mmfs::fs {

OriginReader::OriginReader(const format::Dataset& dataset, origin::Origin& origin,
                           Metrics& metrics, OriginReaderOptions options)
    : dataset_(dataset),
      origin_(origin),
      metrics_(metrics),
      options_(options),
      refetch_(dataset.entry_count()),
      read_buffer_(options.read_buffer_bytes),
      ranged_(*this, read_buffer_) {}

Result<OriginBytes> OriginReader::ReadSpan(ShardRef ref, uint64_t offset, size_t len,
                                           ReadCause cause) {
  const auto start = std::chrono::steady_clock::now();
  MMFS_ASSIGN_OR_RETURN(OriginBytes bytes, origin_.ReadSpan(ref, offset, len));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (bytes.size() != len) {
    return Status::IoError(origin_.ShardName(ref) + " at offset " +
                           std::to_string(offset) + ": short read (" +
                           std::to_string(bytes.size()) + " of " + std::to_string(len) +
                           " bytes)");
  }
  cost_.Observe(len, seconds);  // only reads that succeeded say what a read costs
  AtomicCause& c = causes_[static_cast<size_t>(cause)];
  c.reads.fetch_add(1, std::memory_order_relaxed);
  c.bytes.fetch_add(len, std::memory_order_relaxed);
  return bytes;
}

Status OriginReader::Check(const format::Entry& e, std::string_view bytes) const {
  return dataset_.CheckSum(e, XXH3_64bits(bytes.data(), bytes.size()));
}

Status OriginReader::CountError(const Status& s) {
  uint64_t n = 0;
  if (s.code() == StatusCode::kCorruption) {
    n = metrics_.checksum_failures.fetch_add(1, std::memory_order_relaxed) + 1;
  } else if (s.code() == StatusCode::kIoError) {
    n = metrics_.io_errors.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  // One line per failure names the shard and the path; a flood is thinned after 100.
  if (n > 0 && (n <= 100 || n % 1000 == 0)) {
    spdlog::error("{} (the reader gets EIO; failure #{} of this kind)", s.message(), n);
  }
  return s;
}

Result<cache::Blob> OriginReader::LoadSample(const format::Entry& e,
                                             const std::vector<format::Entry>& members,
                                             const Found& other, MemberRange sample) {
  // The span covering every member, whatever their order (an extent's files need not be back
  // to back, and two entries may share bytes).
  if (members.empty()) return Status::InvalidArgument("a sample read with no files");
  uint64_t start = UINT64_MAX, end = 0;
  for (const format::Entry& m : members) {
    start = std::min<uint64_t>(start, m.record.data_offset);
    end = std::max<uint64_t>(end, m.record.data_offset + m.size());
  }
  const uint64_t span = end - start;
  auto raw = ReadSpan({origin::kDatasetTree, e.record.shard}, start, span, ReadCause::kDemand);
  if (!raw.ok()) return CountError(raw.status());
  // What the read brought beside e: its sample's members and, from an extent, neighbours.
  const uint64_t beside = span - std::min<uint64_t>(span, e.size());
  uint64_t member_bytes = 0;
  for (const format::Entry& m : members) {
    if (m.index != e.index && sample.Contains(m.index)) member_bytes += m.size();
  }
  member_bytes = std::min(member_bytes, beside);  // entries may share bytes
  member_bytes_.fetch_add(member_bytes, std::memory_order_relaxed);
  neighbour_bytes_.fetch_add(beside - member_bytes, std::memory_order_relaxed);
  cache::Blob wanted;
  for (const format::Entry& m : members) {
    std::string_view bytes(raw->data() + (m.record.data_offset - start), m.size());
    Status intact = Check(m, bytes);
    if (intact.ok()) refetch_.NoteFetch(m.index, m.size());
    if (m.index == e.index) {
      if (!intact.ok()) return CountError(intact);
      wanted = std::make_shared<const std::string>(bytes);
    } else if (intact.ok()) {
      other(m, std::make_shared<const std::string>(bytes));
    }
  }
  return wanted;
}

void OriginReader::ReadCoalesced(std::vector<format::Entry> entries, ReadCause cause,
                                 const Found& found) {
  constexpr uint64_t kMaxSpan = 8ull << 20;
  std::sort(entries.begin(), entries.end(), [](const format::Entry& a, const format::Entry& b) {
    return a.record.shard != b.record.shard ? a.record.shard < b.record.shard
                                            : a.record.data_offset < b.record.data_offset;
  });
  // Neighbours in a shard are read together, one large sequential read, gaps included: LMDB
  // puts a node header between small values and pads large ones to whole pages.
  constexpr uint64_t kMaxGap = 64 << 10;
  for (size_t i = 0; i < entries.size();) {
    size_t j = i + 1;
    uint64_t start = entries[i].record.data_offset;
    uint64_t end = start + entries[i].size();
    while (j < entries.size() && entries[j].record.shard == entries[i].record.shard &&
           entries[j].record.data_offset >= end &&
           entries[j].record.data_offset - end <= kMaxGap &&
           entries[j].record.data_offset + entries[j].size() - start <= kMaxSpan) {
      end = entries[j].record.data_offset + entries[j].size();
      ++j;
    }
    // A span that fails, or a file in it that fails its checksum, is not handed on and not
    // counted here: nobody asked for it yet. If a reader does, its own read meets the same
    // damage and counts and logs it once (CountError), as the reader's error.
    auto raw =
        ReadSpan({origin::kDatasetTree, entries[i].record.shard}, start, end - start, cause);
    if (raw.ok()) {
      for (size_t m = i; m < j; ++m) {
        std::string_view bytes(raw->data() + (entries[m].record.data_offset - start),
                               entries[m].size());
        if (!Check(entries[m], bytes).ok()) continue;
        refetch_.NoteFetch(entries[m].index, entries[m].size());
        found(entries[m], std::make_shared<const std::string>(bytes));
      }
    }
    i = j;
  }
}

Result<cache::ReadBuffer::Span> OriginReader::ReadRange(const format::Entry& e, uint64_t offset,
                                                        size_t len) {
  auto span = ranged_.Read(e, offset, len);
  if (!span.ok()) return CountError(span.status());
  return span;
}

CauseCounters OriginReader::Counters(ReadCause cause) const {
  const AtomicCause& c = causes_[static_cast<size_t>(cause)];
  return {c.reads.load(std::memory_order_relaxed), c.bytes.load(std::memory_order_relaxed)};
}

void OriginReader::Report(OriginStats* out) const {
  const CauseCounters demand = Counters(ReadCause::kDemand);
  const CauseCounters prefetch = Counters(ReadCause::kPrefetch);
  const CauseCounters warm = Counters(ReadCause::kWarmup);
  out->demand_reads = demand.reads;
  out->demand_bytes = demand.bytes;
  out->member_bytes = member_bytes_.load(std::memory_order_relaxed);
  out->neighbour_bytes = neighbour_bytes_.load(std::memory_order_relaxed);
  out->prefetch_reads = prefetch.reads;
  out->prefetch_bytes = prefetch.bytes;
  out->warmup_reads = warm.reads;
  out->warmup_bytes = warm.bytes;
  const CauseCounters fill = Counters(ReadCause::kFill);
  out->fill_reads = fill.reads;
  out->fill_bytes = fill.bytes;
  out->streamed = StreamedCounters();
  out->rereads = RefetchCounters();
  out->cost = CostEstimate();
  out->remote = origin_.RequestStats();
}

}  // namespace mmfs::fs
