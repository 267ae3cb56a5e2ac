#ifndef CAPPLAN_SERVICE_SERVER_RELOADER_H_
#define CAPPLAN_SERVICE_SERVER_RELOADER_H_

#include <functional>
#include <memory>
#include <thread>

#include "absl/time/time.h"

namespace capplan::service {

// Runs catalogue reloads on a thread of its own, so whoever asks for one
// (the signal thread on SIGHUP, the data directory poll) never waits for it:
// a load that takes long, or one stuck in a file system, can never keep
// SIGTERM from being handled.
class Reloader {
 public:
  // `reload` runs on the reloader's thread once per Request() (requests that
  // arrive while one runs are merged into one more run); `poll` runs there
  // whenever `poll_interval` (> 0) passes without a request. Either may be
  // empty.
  Reloader(std::function<void()> reload, std::function<void()> poll,
           absl::Duration poll_interval = absl::ZeroDuration());
  ~Reloader();  // Stop(absl::InfiniteDuration())

  Reloader(const Reloader&) = delete;
  Reloader& operator=(const Reloader&) = delete;

  // Asks for a reload and returns at once.
  void Request();

  // Stops the thread, waiting up to `bound` for a reload in progress. False
  // when it did not finish in time: the thread is then left to finish on its
  // own (it holds its state; the caller is about to exit and must not free
  // what `reload` uses).
  bool Stop(absl::Duration bound);

  // Runs of `reload` and `poll` finished so far.
  int completed_reloads() const;
  int completed_polls() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_SERVER_RELOADER_H_
