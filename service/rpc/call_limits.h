#ifndef CAPPLAN_SERVICE_RPC_CALL_LIMITS_H_
#define CAPPLAN_SERVICE_RPC_CALL_LIMITS_H_

// What bounds one RPC on the server (DESIGN §6 "Bounded work"):
//  * a budget per call (model/budget.h): the planner's work cap, and a stop
//    signal polled from the call — the client's deadline, the client gone
//    (ServerContext::IsCancelled), the server's drain deadline;
//  * a server-wide limit on expensive calls running at once, with a bounded
//    queue in front of it: a call that finds the queue full is refused at
//    once (RESOURCE_EXHAUSTED), one that waits stops waiting when its budget
//    stops.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"
#include "model/budget.h"

namespace capplan::service {

// The server's drain deadline, shared by every call: infinite until the
// server starts shutting down.
class DrainSignal {
 public:
  void Set(absl::Time deadline);
  absl::Time deadline() const;

 private:
  std::atomic<int64_t> deadline_unix_nanos_{INT64_MAX};
};

// A budget for one call of `context` (which outlives it): `max_work_units`
// cap; stops with DEADLINE_EXCEEDED once the call's deadline passed,
// CANCELLED once the client cancelled or went away, UNAVAILABLE once the
// drain deadline passed. Polled every `poll_stride` checks.
std::unique_ptr<model::Budget> CallBudget(const grpc::ServerContextBase& context,
                                          const DrainSignal& drain, double max_work_units,
                                          int poll_stride);

// At most `max_running` holders at once, at most `max_waiting` waiting.
class ConcurrencyLimiter {
 public:
  ConcurrencyLimiter(int max_running, int max_waiting);

  // Released when it goes out of scope.
  class Slot {
   public:
    explicit Slot(ConcurrencyLimiter* limiter) : limiter_(limiter) {}
    Slot(Slot&& other) noexcept : limiter_(other.limiter_) { other.limiter_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    ConcurrencyLimiter* limiter_;
  };

  // A slot, waiting for one while fewer than max_waiting others wait;
  // RESOURCE_EXHAUSTED (naming `method` and the limits) when the queue is
  // full; the budget's status when it stops while waiting (checked every
  // few milliseconds).
  absl::StatusOr<Slot> Acquire(model::Budget& budget, const std::string& method);

  int running() const;
  int waiting() const;

 private:
  void Release();

  const int max_running_;
  const int max_waiting_;
  mutable absl::Mutex mu_;
  absl::CondVar freed_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_RPC_CALL_LIMITS_H_
