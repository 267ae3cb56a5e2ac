#include "service/server/reloader.h"

#include <atomic>
#include <chrono>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

// Waits until `done` is true, up to 20 s.
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST(Reloader, RunsARequestedReloadOnItsOwnThreadAndRequestReturnsAtOnce) {
  absl::Notification release;
  std::atomic<int> started{0};
  Reloader reloader(
      [&] {
        ++started;
        release.WaitForNotification();
      },
      nullptr);
  reloader.Request();
  ASSERT_TRUE(Eventually([&] { return started.load() == 1; }));
  // A reload is running and blocked: more requests still return at once and
  // merge into one more run.
  reloader.Request();
  reloader.Request();
  release.Notify();
  ASSERT_TRUE(Eventually([&] { return reloader.completed_reloads() == 2; }));
  EXPECT_EQ(started.load(), 2);
}

TEST(Reloader, StopReturnsWithinItsBoundWhileAReloadHangs) {
  auto release = std::make_shared<absl::Notification>();
  auto started = std::make_shared<absl::Notification>();
  auto reloader = std::make_unique<Reloader>(
      [release, started] {
        started->Notify();
        release->WaitForNotification();  // a load stuck in a file system
      },
      nullptr);
  reloader->Request();
  ASSERT_TRUE(started->WaitForNotificationWithTimeout(absl::Seconds(20)));
  const absl::Time before = absl::Now();
  EXPECT_FALSE(reloader->Stop(absl::Milliseconds(200)));
  EXPECT_LT(absl::Now() - before, absl::Seconds(5));
  reloader.reset();  // the detached thread keeps its own state
  release->Notify();
}

TEST(Reloader, StopJoinsAnIdleThread) {
  Reloader reloader(nullptr, nullptr);
  EXPECT_TRUE(reloader.Stop(absl::Seconds(5)));
  EXPECT_TRUE(reloader.Stop(absl::Seconds(5)));
}

TEST(Reloader, PollsWhenNothingIsRequested) {
  std::atomic<int> polls{0};
  Reloader reloader(
      nullptr, [&] { ++polls; }, absl::Milliseconds(5));
  ASSERT_TRUE(Eventually([&] { return reloader.completed_polls() >= 3; }));
  EXPECT_EQ(reloader.completed_reloads(), 0);
  EXPECT_GE(polls.load(), 3);
}

}  // namespace
}  // namespace capplan::service
