#include "model/budget.h"

#include <algorithm>
#include <utility>

namespace capplan::model {

Budget::Budget(double max_work_units, PollFunction poll, int poll_stride)
    : max_work_units_(max_work_units),
      poll_(std::move(poll)),
      poll_stride_(std::max(1, poll_stride)) {}

bool Budget::Stopped() {
  if (stopped_.load(std::memory_order_acquire)) return true;
  if (!poll_) return false;
  if (++calls_since_poll_ < poll_stride_) return false;
  return PollNow();
}

bool Budget::PollNow() {
  if (stopped_.load(std::memory_order_acquire)) return true;
  if (!poll_) return false;
  calls_since_poll_ = 0;
  polls_.fetch_add(1, std::memory_order_relaxed);
  absl::Status why = poll_();
  if (why.ok()) return false;
  Stop(std::move(why));
  return true;
}

void Budget::Stop(absl::Status why) {
  if (why.ok()) why = absl::CancelledError("the work was stopped");
  absl::MutexLock lock(&mu_);
  if (!why_.ok()) return;
  why_ = std::move(why);
  stopped_.store(true, std::memory_order_release);
}

absl::Status Budget::status() const {
  if (!stopped_.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  return why_;
}

}  // namespace capplan::model
