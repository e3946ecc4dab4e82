// SpanWindow (fs/format/span_window.h): a walk's runs in index order become one read per
// window; a run that does not follow the last is read alone; the mapping's end bounds every
// window.
#include "fs/format/span_window.h"

#include <gtest/gtest.h>

namespace mmfs::format {
namespace {

constexpr uint64_t kMap = 1 << 20;

TEST(SpanWindowTest, RunsInOrderAreReadOneWindowAtATime) {
  SpanWindow w(1000);
  // The first run: nothing says a walk goes on, so it alone.
  SpanWindow::Span s = w.Want(100, 164, kMap);
  EXPECT_EQ(s.begin, 100u);
  EXPECT_EQ(s.end, 164u);
  // The next follows it: itself and what follows, up to the window's size.
  s = w.Want(164, 228, kMap);
  EXPECT_EQ(s.begin, 164u);
  EXPECT_EQ(s.end, 1164u);
  // The next runs lie inside: nothing more to ask for.
  EXPECT_TRUE(w.Want(228, 300, kMap).empty());
  EXPECT_TRUE(w.Want(300, 1164, kMap).empty());
  // A run that leaves the window, a small gap after the last: the next window.
  s = w.Want(1180, 1244, kMap);
  EXPECT_EQ(s.begin, 1180u);
  EXPECT_EQ(s.end, 2180u);
}

TEST(SpanWindowTest, ARunElsewhereIsReadAloneAndALargeRunWhole) {
  SpanWindow w(1000);
  ASSERT_FALSE(w.Want(5000, 5100, kMap).empty());
  ASSERT_FALSE(w.Want(5100, 5200, kMap).empty());  // a window 5100..6100
  // Before the window (a lookup elsewhere, another level of a depth-first walk): just the run.
  SpanWindow::Span s = w.Want(10, 20, kMap);
  EXPECT_EQ(s.begin, 10u);
  EXPECT_EQ(s.end, 20u);
  // Far after the last run: just the run too.
  s = w.Want(9000, 9100, kMap);
  EXPECT_EQ(s.begin, 9000u);
  EXPECT_EQ(s.end, 9100u);
  // Larger than the window and following: all of it.
  s = w.Want(9100, 20000, kMap);
  EXPECT_EQ(s.begin, 9100u);
  EXPECT_EQ(s.end, 20000u);
}

TEST(SpanWindowTest, TheMappingsEndBoundsTheWindowAndEmptyRunsAskNothing) {
  SpanWindow w(1000);
  ASSERT_FALSE(w.Want(600, 700, 800).empty());
  SpanWindow::Span s = w.Want(700, 750, 800);
  EXPECT_EQ(s.begin, 700u);
  EXPECT_EQ(s.end, 800u);
  EXPECT_TRUE(w.Want(300, 300, 800).empty());
  EXPECT_TRUE(w.Want(900, 950, 800).empty());  // past the end
}

}  // namespace
}  // namespace mmfs::format
