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
  // Whether original `entry` lies in a chunk another host has claimed and not yet marked done,
  // and no wait for that chunk has run out since the claim was made. May ask the cluster (two
  // round trips); false when it does not answer.
  virtual bool FetchingElsewhere(uint64_t entry) = 0;
  // A wait for `entry` ran out without it: its holder may be gone with its claim still there
  // (until the claim lapses), so the chunk's other files are not waited for again meanwhile.
  virtual void WaitedOut(uint64_t entry) = 0;
  // How long a demand miss waits for such a file at most (and at most half of what is left of
  // its READ's deadline, so that a store read after a vain wait keeps the rest).
  virtual std::chrono::milliseconds DemandWait() const = 0;
  // A demand miss started waiting (`served` false), or found its file in the cluster after
  // waiting (`served` true).
  virtual void CountDemandWait(bool served) = 0;

 protected:
  ~PeerFetches() = default;
};

}  // namespace mmfs::fs
