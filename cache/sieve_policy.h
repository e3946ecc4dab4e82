// SievePolicy: which entries a byte-budgeted tier keeps, and which new ones it lets in.
//
// Eviction is SIEVE (Zhang et al., NSDI'24): a FIFO queue, one "visited" bit per entry, and a
// hand that moves from the oldest entry towards the newest, sparing visited entries once. Hits
// cost one bit store and no list move.
//
// Admission is TinyLFU: when the tier is full, a newcomer gets in only if the sketch says it has
// been asked for more often than the entry it would push out. Training reads every sample once
// per epoch in a new random order; every key then has the same frequency, so the resident set
// stays put and each epoch hits (cache size / dataset size) of its reads, the best any policy
// without knowledge of the order can do, where LRU or FIFO would evict exactly what comes next.
// Skewed (Zipf) access still lets popular keys in. docs/cache.md has the measurements.
//
// Thread-safety: not thread-safe; the owning tier serializes calls.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cache/frequency_sketch.h"

namespace mmfs::cache {

class SievePolicy {
 public:
  SievePolicy(uint64_t budget_bytes, uint64_t expected_keys);
  ~SievePolicy();
  SievePolicy(const SievePolicy&) = delete;
  SievePolicy& operator=(const SievePolicy&) = delete;

  // Records an access (hit or miss) of `key`; returns true if `key` is resident.
  bool Access(uint64_t key);
  // Decides whether `key` (costing `charge` bytes) may come in. On yes, it is resident and
  // `evicted` lists the keys pushed out to make room; on no, nothing changed.
  bool Admit(uint64_t key, uint64_t charge, std::vector<uint64_t>* evicted);
  // Makes `key` resident without an admission test (e.g. entries found on disk at start-up).
  // Returns false if it does not fit.
  bool Restore(uint64_t key, uint64_t charge);
  void Remove(uint64_t key);
  // Changes the budget; when it shrinks, evicts (SIEVE order) until the entries fit and lists
  // the evicted keys in `evicted`.
  void SetBudget(uint64_t budget_bytes, std::vector<uint64_t>* evicted);
  bool Contains(uint64_t key) const { return nodes_.count(key) > 0; }

  uint64_t bytes_used() const { return used_; }
  uint64_t budget() const { return budget_; }
  uint64_t entries() const { return nodes_.size(); }
  uint64_t evictions() const { return evictions_; }
  uint64_t rejected() const { return rejected_; }

 private:
  struct Node {
    uint64_t key;
    uint64_t charge;
    bool visited = false;
    Node* newer = nullptr;
    Node* older = nullptr;
  };
  // The entry the hand would evict next (clearing visited bits on its way), or null.
  Node* NextVictim();
  void PushNewest(Node* node);
  void Unlink(Node* node);

  uint64_t budget_;
  uint64_t used_ = 0;
  uint64_t evictions_ = 0;
  uint64_t rejected_ = 0;
  FrequencySketch sketch_;
  std::unordered_map<uint64_t, Node*> nodes_;  // owns the nodes
  Node* newest_ = nullptr;
  Node* oldest_ = nullptr;
  Node* hand_ = nullptr;
};

}  // namespace mmfs::cache
