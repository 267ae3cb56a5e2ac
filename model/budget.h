// What one request may spend (DESIGN §6 "Bounded work"): a cap on its
// estimated work, checked before the work starts, and a stop signal checked
// while it runs.
//
// The model has no clock: whoever owns the request (the RPC handler) gives
// the budget a `poll` function that says whether to stop (the deadline has
// passed, the client went away, the server is draining) and why. Long loops
// call Stopped() once per step; every `poll_stride` calls it polls, so a
// cheap step costs one counter increment and an expensive one a poll. A
// budget may also be stopped from any thread with Stop(). Once stopped it
// stays stopped; status() says why.
//
// A loop that sees Stopped() returns early with whatever it has; the caller
// that owns the result checks status() and returns it instead of the partial
// answer. A null Budget* is an unlimited one (see the free functions below).
#ifndef CAPPLAN_MODEL_BUDGET_H_
#define CAPPLAN_MODEL_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace capplan::model {

class Budget {
 public:
  // OK to go on; any other status stops the work with that status.
  using PollFunction = std::function<absl::Status()>;

  // Never stops and admits any work.
  Budget() = default;
  // Admits work up to `max_work_units` (Admits) and polls `poll` every
  // `poll_stride` calls of Stopped() (1 = every call).
  Budget(double max_work_units, PollFunction poll, int poll_stride = 1);

  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // The cap on a request's estimated work, in the units of model/cost.h.
  double max_work_units() const { return max_work_units_; }
  bool Admits(double estimated_work_units) const { return estimated_work_units <= max_work_units_; }

  // True once the work must stop. Called by the thread doing the work.
  bool Stopped();
  // Stopped(), polling now whatever the stride (for a thread that waits).
  bool PollNow();
  // Stops the work with `why` (not OK) from any thread; the first reason wins.
  void Stop(absl::Status why);
  // OK while the work may go on, else why it stopped (CANCELLED,
  // DEADLINE_EXCEEDED, ...).
  absl::Status status() const;
  // How many times poll ran (tests check the stride).
  int64_t polls() const { return polls_.load(std::memory_order_relaxed); }

 private:
  double max_work_units_ = std::numeric_limits<double>::infinity();
  PollFunction poll_;
  int poll_stride_ = 1;
  int calls_since_poll_ = 0;  // touched by the working thread only
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> polls_{0};
  mutable absl::Mutex mu_;
  absl::Status why_ ABSL_GUARDED_BY(mu_);
};

// Null-tolerant forms for code that takes an optional budget.
inline bool Stopped(Budget* budget) { return budget != nullptr && budget->Stopped(); }
inline absl::Status BudgetStatus(const Budget* budget) {
  return budget == nullptr ? absl::OkStatus() : budget->status();
}

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_BUDGET_H_
