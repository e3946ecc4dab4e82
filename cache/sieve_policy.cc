#include "cache/sieve_policy.h"

#include <algorithm>

namespace mmfs::cache {

namespace {
constexpr uint32_t kAdmissionMargin = 1;
}  // namespace

SievePolicy::SievePolicy(uint64_t budget_bytes, uint64_t expected_keys)
    : budget_(budget_bytes), sketch_(expected_keys) {}

SievePolicy::~SievePolicy() {
  for (auto& [key, node] : nodes_) delete node;
}

bool SievePolicy::Access(uint64_t key) {
  sketch_.Increment(key);
  auto it = nodes_.find(key);
  if (it == nodes_.end()) return false;
  it->second->visited = true;
  return true;
}

void SievePolicy::PushNewest(Node* node) {
  node->older = newest_;
  node->newer = nullptr;
  if (newest_ != nullptr) newest_->newer = node;
  newest_ = node;
  if (oldest_ == nullptr) oldest_ = node;
}

void SievePolicy::Unlink(Node* node) {
  if (hand_ == node) hand_ = node->newer;
  if (node->newer != nullptr) node->newer->older = node->older;
  if (node->older != nullptr) node->older->newer = node->newer;
  if (newest_ == node) newest_ = node->older;
  if (oldest_ == node) oldest_ = node->newer;
}

SievePolicy::Node* SievePolicy::NextVictim() {
  Node* n = hand_ != nullptr ? hand_ : oldest_;
  // At most two sweeps: the first may clear every visited bit.
  for (uint64_t steps = 0; n != nullptr && n->visited && steps <= 2 * nodes_.size(); ++steps) {
    n->visited = false;
    n = n->newer != nullptr ? n->newer : oldest_;
  }
  hand_ = n;
  return n;
}

bool SievePolicy::Admit(uint64_t key, uint64_t charge, std::vector<uint64_t>* evicted) {
  if (nodes_.count(key) > 0) return true;
  if (charge > budget_) {
    ++rejected_;
    return false;
  }
  if (used_ + charge > budget_) {
    // Collect victims until the newcomer fits; it must beat each one's frequency.
    uint32_t freq = sketch_.Estimate(key);
    std::vector<Node*> victims;
    uint64_t freed = 0;
    while (used_ - freed + charge > budget_) {
      Node* n = NextVictim();
      if (n == nullptr || std::find(victims.begin(), victims.end(), n) != victims.end()) break;
      // A margin of one: in an epoch, keys already read this epoch are one ahead of those
      // still to come, which says nothing about the future; only a real lead earns a place.
      if (sketch_.Estimate(n->key) + kAdmissionMargin >= freq) {
        ++rejected_;
        return false;
      }
      victims.push_back(n);
      freed += n->charge;
      hand_ = n->newer != nullptr ? n->newer : oldest_;
    }
    if (used_ - freed + charge > budget_) {
      ++rejected_;
      return false;
    }
    for (Node* v : victims) {
      Unlink(v);
      used_ -= v->charge;
      evicted->push_back(v->key);
      nodes_.erase(v->key);
      delete v;
      ++evictions_;
    }
  }
  Node* node = new Node{key, charge};
  PushNewest(node);
  nodes_.emplace(key, node);
  used_ += charge;
  return true;
}

bool SievePolicy::Restore(uint64_t key, uint64_t charge) {
  if (nodes_.count(key) > 0) return true;
  if (used_ + charge > budget_) return false;
  Node* node = new Node{key, charge};
  PushNewest(node);
  nodes_.emplace(key, node);
  used_ += charge;
  return true;
}

void SievePolicy::SetBudget(uint64_t budget_bytes, std::vector<uint64_t>* evicted) {
  budget_ = budget_bytes;
  while (used_ > budget_) {
    Node* v = NextVictim();
    if (v == nullptr) break;
    Unlink(v);  // moves the hand past v
    used_ -= v->charge;
    evicted->push_back(v->key);
    nodes_.erase(v->key);
    delete v;
    ++evictions_;
  }
}

void SievePolicy::Remove(uint64_t key) {
  auto it = nodes_.find(key);
  if (it == nodes_.end()) return;
  Node* node = it->second;
  Unlink(node);
  used_ -= node->charge;
  nodes_.erase(it);
  delete node;
}

}  // namespace mmfs::cache
