// PeerFetches: what a miss needs to know of a fill shared by a job's hosts (implemented by
// fs/readahead/fill_share.h): whether another host is fetching a file from the store into the
// cluster tier right now. A demand miss of such a file waits for the cluster (bounded) rather
// than read the store itself, so that a reader faster than the fill does not fetch each byte
// once per host.
//
// Thread-safety: implementations are called from every miss thread at once.
#pragma once

#include <chrono>
#include <cstdint>

namespace mmfs::fs {

class PeerFetches {
 public:
  // Whether original `entry` lies in a chunk another host has claimed and not yet marked done.
  // May ask the cluster (a round trip); false when it does not answer.
  virtual bool FetchingElsewhere(uint64_t entry) = 0;
  // How long a demand miss waits for such a file at most.
  virtual std::chrono::milliseconds DemandWait() const = 0;
  // A demand miss started waiting (`served` false), or found its file in the cluster after
  // waiting (`served` true).
  virtual void CountDemandWait(bool served) = 0;

 protected:
  ~PeerFetches() = default;
};

}  // namespace mmfs::fs
