// RefetchTracker: a fetch of a file whose previous fetch never reached a reader is a re-read;
// a fetch after delivery is not.

#include "cache/refetch_tracker.h"

#include <gtest/gtest.h>

namespace mmfs::cache {
namespace {

TEST(RefetchTrackerTest, AFetchBeforeThePreviousOneWasDeliveredIsAReread) {
  RefetchTracker t(/*keys=*/10);
  t.NoteFetch(3, 100);  // first fetch (a prefetch, say): not a re-read
  t.NoteFetch(3, 100);  // again before any reader got it: the first copy was lost
  EXPECT_EQ(t.Counters().files, 1u);
  EXPECT_EQ(t.Counters().bytes, 100u);
  t.NoteDelivered(3);
  t.NoteFetch(3, 100);  // delivered, then fetched: the next pass, not a re-read
  EXPECT_EQ(t.Counters().files, 1u);
  t.NoteDelivered(7);  // delivered without a fetch (from a tier): nothing to count
  t.NoteFetch(7, 50);
  t.NoteFetch(10, 50);  // out of range: ignored
  t.NoteFetch(10, 50);
  t.NoteDelivered(10);
  EXPECT_EQ(t.Counters().files, 1u);
  EXPECT_EQ(t.Counters().bytes, 100u);
}

}  // namespace
}  // namespace mmfs::cache
