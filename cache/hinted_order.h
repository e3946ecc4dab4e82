// HintedOrder: the order in which a training job said it will read its samples.
//
// Shuffled training has no pattern a detector could find, but the job knows its order in advance
// (the sampler draws the whole epoch's permutation up front). The job writes that order to
// MNT/.mmfs/hint; this class keeps it as a list of keys and decides what to prefetch: everything
// up to `window` positions past the furthest position read so far, each position issued once,
// in batches of at least `batch` positions while earlier ones are still ahead of the readers (one
// multi-get or a few large reads for a batch, instead of a round trip per sample).
// Reads out of order (DataLoader workers each take a batch) are fine: the cursor is the furthest
// position seen, and positions behind it were issued when they were ahead of it.
//
// Memory: one 4-byte slot per possible key (allocated on the first order) plus 8 bytes per
// position of the current order.
//
// Thread-safety: all methods are thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace mmfs::cache {

struct HintCounters {
  uint64_t orders = 0;         // orders received
  uint64_t positions = 0;      // keys in the current order
  uint64_t unknown = 0;        // lines that named no file (all orders)
  uint64_t cursor = 0;         // furthest position read + 1 in the current order
  uint64_t issued_to = 0;      // positions handed out for prefetch in the current order
  uint64_t off_order_reads = 0;  // reads of keys not in the current order
};

class HintedOrder {
 public:
  // Keys are in [0, key_space). `window`: positions kept in flight ahead of the cursor; `batch`:
  // the fewest positions issued at once, unless the readers caught up or the order ends.
  HintedOrder(uint64_t key_space, uint32_t window, uint32_t batch = 1);

  // Starts a new order (the previous one is dropped).
  void Begin();
  // Appends keys to the current order; keys >= key_space are ignored. Returns the positions
  // that are now due for prefetch (the start of an order is due before any read arrives).
  std::vector<uint64_t> Append(const std::vector<uint64_t>& keys);
  // Counts a line that named nothing.
  void CountUnknown(uint64_t n = 1);
  // A reader read `key`. Returns the keys now due for prefetch, in order (possibly none).
  std::vector<uint64_t> OnRead(uint64_t key);

  bool active() const;
  HintCounters Counters() const;

 private:
  static constexpr uint32_t kNotInOrder = UINT32_MAX;
  std::vector<uint64_t> DueLocked();

  const uint64_t key_space_;
  const uint32_t window_;
  const uint32_t batch_;
  mutable std::mutex mu_;
  std::vector<uint32_t> position_of_;  // by key; kNotInOrder if absent; guarded by mu_
  std::vector<uint64_t> order_;        // guarded by mu_
  HintCounters counters_;              // guarded by mu_
};

}  // namespace mmfs::cache
