#include "service/rpc/call_limits.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"

namespace capplan::service {
namespace {

// How often a waiting call looks at its budget.
constexpr absl::Duration kWaitPollInterval = absl::Milliseconds(5);
// How often a running call asks gRPC whether its client went away.
constexpr absl::Duration kCancellationCheckInterval = absl::Milliseconds(1);
// A cancellation this close to the deadline is the deadline's (metrics.cc).
constexpr absl::Duration kDeadlineSlack = absl::Milliseconds(100);

}  // namespace

void DrainSignal::Set(absl::Time deadline) {
  deadline_unix_nanos_.store(absl::ToUnixNanos(deadline), std::memory_order_release);
}

absl::Time DrainSignal::deadline() const {
  const int64_t nanos = deadline_unix_nanos_.load(std::memory_order_acquire);
  return nanos == INT64_MAX ? absl::InfiniteFuture() : absl::FromUnixNanos(nanos);
}

std::unique_ptr<model::Budget> CallBudget(const grpc::ServerContextBase& context,
                                          const DrainSignal& drain, double max_work_units,
                                          int poll_stride) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = absl::FromChrono(context.deadline());
  // Asking gRPC whether the call was cancelled takes its locks (a futex
  // under load): it is asked at most once per kCancellationCheckInterval;
  // the deadline, a clock read, at every poll.
  absl::Time next_cancellation_check = start;
  auto poll = [&context, &drain, start, deadline,
               next_cancellation_check]() mutable -> absl::Status {
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("the call's deadline passed; stopped after %s of work",
                          absl::FormatDuration(absl::Trunc(now - start, absl::Milliseconds(1)))));
    }
    if (now >= drain.deadline()) {
      return absl::UnavailableError(
          "the server is shutting down and its drain time ran out; retry on another replica");
    }
    if (now < next_cancellation_check) return absl::OkStatus();
    next_cancellation_check = now + kCancellationCheckInterval;
    if (context.IsCancelled()) {
      // gRPC cancels a call at its deadline on a clock of its own, which may
      // run a little ahead of the context's: that is the deadline too.
      if (now + kDeadlineSlack >= deadline) {
        return absl::DeadlineExceededError(
            absl::StrFormat("the call's deadline passed; stopped after %s of work",
                            absl::FormatDuration(absl::Trunc(now - start, absl::Milliseconds(1)))));
      }
      return absl::CancelledError("the client cancelled the call or went away");
    }
    return absl::OkStatus();
  };
  return std::make_unique<model::Budget>(max_work_units, std::move(poll), poll_stride);
}

ConcurrencyLimiter::ConcurrencyLimiter(int max_running, int max_waiting)
    : max_running_(std::max(1, max_running)), max_waiting_(std::max(0, max_waiting)) {}

ConcurrencyLimiter::Slot::~Slot() {
  if (limiter_ != nullptr) limiter_->Release();
}

absl::StatusOr<ConcurrencyLimiter::Slot> ConcurrencyLimiter::Acquire(model::Budget& budget,
                                                                     const std::string& method) {
  absl::MutexLock lock(&mu_);
  if (running_ < max_running_) {
    ++running_;
    return Slot(this);
  }
  if (waiting_ >= max_waiting_) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: the server is busy: %d expensive calls running (the limit, "
        "ServerOptions.max_concurrent_expensive_rpcs) and %d waiting (the queue's limit, "
        "ServerOptions.max_queued_expensive_rpcs); retry with backoff",
        method, running_, waiting_));
  }
  ++waiting_;
  while (running_ >= max_running_) {
    freed_.WaitWithTimeout(&mu_, kWaitPollInterval);
    if (running_ < max_running_) break;
    mu_.Unlock();
    const bool stopped = budget.PollNow();
    mu_.Lock();
    if (stopped) {
      --waiting_;
      return budget.status();
    }
  }
  --waiting_;
  ++running_;
  return Slot(this);
}

void ConcurrencyLimiter::Release() {
  absl::MutexLock lock(&mu_);
  --running_;
  freed_.Signal();
}

int ConcurrencyLimiter::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

int ConcurrencyLimiter::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

}  // namespace capplan::service
