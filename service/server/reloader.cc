#include "service/server/reloader.h"

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace capplan::service {

struct Reloader::State {
  std::function<void()> reload;
  std::function<void()> poll;
  absl::Duration poll_interval;
  mutable absl::Mutex mu;
  bool pending ABSL_GUARDED_BY(mu) = false;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  bool done ABSL_GUARDED_BY(mu) = false;
  int reloads ABSL_GUARDED_BY(mu) = 0;
  int polls ABSL_GUARDED_BY(mu) = 0;

  bool Woken() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return pending || stopping; }

  void Run() {
    absl::MutexLock lock(&mu);
    while (!stopping) {
      const absl::Condition woken(this, &State::Woken);
      bool requested = true;
      if (poll_interval > absl::ZeroDuration()) {
        requested = mu.AwaitWithTimeout(woken, poll_interval);  // false: the interval passed
      } else {
        mu.Await(woken);
      }
      if (stopping) break;
      pending = false;
      const std::function<void()>& work = requested ? reload : poll;
      mu.Unlock();
      if (work) work();
      mu.Lock();
      ++(requested ? reloads : polls);
    }
    done = true;
  }
};

Reloader::Reloader(std::function<void()> reload, std::function<void()> poll,
                   absl::Duration poll_interval)
    : state_(std::make_shared<State>()) {
  state_->reload = std::move(reload);
  state_->poll = std::move(poll);
  state_->poll_interval = poll_interval;
  // The thread shares the state, so it may outlive this object (Stop false).
  thread_ = std::thread([state = state_] { state->Run(); });
}

Reloader::~Reloader() { Stop(absl::InfiniteDuration()); }

void Reloader::Request() {
  absl::MutexLock lock(&state_->mu);
  state_->pending = true;
}

bool Reloader::Stop(absl::Duration bound) {
  if (!thread_.joinable()) return true;
  bool finished = false;
  {
    absl::MutexLock lock(&state_->mu);
    state_->stopping = true;
    finished = state_->mu.AwaitWithTimeout(absl::Condition(&state_->done), bound);
  }
  if (finished) {
    thread_.join();
  } else {
    thread_.detach();
  }
  return finished;
}

int Reloader::completed_reloads() const {
  absl::MutexLock lock(&state_->mu);
  return state_->reloads;
}

int Reloader::completed_polls() const {
  absl::MutexLock lock(&state_->mu);
  return state_->polls;
}

}  // namespace capplan::service
