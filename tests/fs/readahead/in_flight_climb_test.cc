// The fill's hill-climb on requests in flight, window by window: it grows while the link's
// rate rises, holds on a plateau, steps back only after two poor windows, and does not judge a
// window in which the store was offered too few requests to say anything about the link.
#include "fs/readahead/in_flight_climb.h"

#include <gtest/gtest.h>

namespace mmfs::fs {
namespace {

constexpr double kClimbMB = 1e6;

TEST(InFlightClimbTest, StartsWithinOneAndTheMost) {
  EXPECT_EQ(InFlightClimb(4, 16).target(), 4u);
  EXPECT_EQ(InFlightClimb(0, 16).target(), 1u);
  EXPECT_EQ(InFlightClimb(32, 16).target(), 16u);
  EXPECT_EQ(InFlightClimb(4, 0).target(), 1u);
}

TEST(InFlightClimbTest, GrowsByHalfWhileTheRateRisesAndStopsAtTheMost) {
  InFlightClimb climb(4, 12);
  climb.Window(10 * kClimbMB, 4);
  EXPECT_EQ(climb.target(), 6u);
  climb.Window(20 * kClimbMB, 6);
  EXPECT_EQ(climb.target(), 9u);
  climb.Window(40 * kClimbMB, 9);
  EXPECT_EQ(climb.target(), 12u) << "capped at the most in flight";
  climb.Window(80 * kClimbMB, 12);
  EXPECT_EQ(climb.target(), 12u);
  InFlightClimb one(1, 8);
  one.Window(kClimbMB, 1);
  EXPECT_EQ(one.target(), 2u) << "grows by at least one";
}

TEST(InFlightClimbTest, APlateauHoldsUntilTheFadedBestInvitesAProbe) {
  InFlightClimb climb(4, 64);
  climb.Window(100 * kClimbMB, 4);
  ASSERT_EQ(climb.target(), 6u);
  // A little under the best: not a tenth above the fading best, not well below it.
  for (int i = 0; i < 3; ++i) climb.Window(90 * kClimbMB, 6);
  EXPECT_EQ(climb.target(), 6u);
  // The best has faded to 81 MB/s: 90 is a rise now, and the climb probes upward.
  climb.Window(90 * kClimbMB, 6);
  EXPECT_EQ(climb.target(), 9u);
}

TEST(InFlightClimbTest, OnePoorWindowIsNotEnoughTwoInARowStepBackByOne) {
  InFlightClimb climb(4, 64);
  climb.Window(100 * kClimbMB, 4);
  ASSERT_EQ(climb.target(), 6u);
  climb.Window(30 * kClimbMB, 6);
  EXPECT_EQ(climb.target(), 6u) << "one poor window is often a neighbour's burst";
  climb.Window(90 * kClimbMB, 6);  // fine again: the count of poor windows starts over
  climb.Window(30 * kClimbMB, 6);
  EXPECT_EQ(climb.target(), 6u);
  climb.Window(30 * kClimbMB, 6);
  EXPECT_EQ(climb.target(), 5u) << "two poor windows in a row";
}

TEST(InFlightClimbTest, AWindowOfferedTooFewRequestsIsNotJudged) {
  InFlightClimb climb(8, 64);
  climb.Window(100 * kClimbMB, 8);
  ASSERT_EQ(climb.target(), 12u);
  // The workers read the cluster or waited for other hosts: the store saw 2 requests of 12,
  // and its low rate says nothing about the link. Many such windows change nothing.
  for (int i = 0; i < 10; ++i) climb.Window(5 * kClimbMB, 2);
  EXPECT_EQ(climb.target(), 12u);
  // Nor does a high rate on few requests count as a rise.
  climb.Window(500 * kClimbMB, 8.9);
  EXPECT_EQ(climb.target(), 12u);
  // Three quarters of the target offered is judged.
  climb.Window(500 * kClimbMB, 9);
  EXPECT_EQ(climb.target(), 18u);
}

TEST(InFlightClimbTest, TheBestFadesSoTheClimbProbesUpwardAgain) {
  InFlightClimb climb(4, 64);
  climb.Window(100 * kClimbMB, 4);  // best 100, target 6
  ASSERT_EQ(climb.target(), 6u);
  // Unjudged windows still fade the best: after enough of them a rate of 80 is a rise.
  for (int i = 0; i < 8; ++i) climb.Window(0, 0);
  EXPECT_LT(climb.best_rate(), 80 * kClimbMB / InFlightClimb::kRise);
  climb.Window(80 * kClimbMB, 6);
  EXPECT_EQ(climb.target(), 9u);
}

TEST(InFlightClimbTest, NeverStepsBelowOne) {
  InFlightClimb climb(1, 8);
  climb.Window(100 * kClimbMB, 1);
  ASSERT_EQ(climb.target(), 2u);
  for (int i = 0; i < 10; ++i) climb.Window(kClimbMB, 2);
  EXPECT_EQ(climb.target(), 1u);
}

}  // namespace
}  // namespace mmfs::fs
