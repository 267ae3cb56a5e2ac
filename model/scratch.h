// Vectors a computation borrows from its thread's pool and gives back, so
// that the next one reuses their capacity (DESIGN §5 "Speed").
//
// Why: every point of a load curve builds two latency laws, sorts their
// atoms and keeps a dozen prefix-sum arrays of a few thousand doubles. Freed,
// they are often the top of the heap, and the allocator hands that back to
// the system (brk) and faults it in again at the next point: on a
// virtualised host that page-table work cost 40-60% of an open-loop sweep.
//
// The pool holds at most kMaxScratchVectors vectors per element type and
// thread, none above kMaxScratchVectorBytes of capacity and together at most
// kMaxScratchPoolBytes (what does not fit is freed), so a thread keeps at
// most a few MiB per element type.
#ifndef CAPPLAN_MODEL_SCRATCH_H_
#define CAPPLAN_MODEL_SCRATCH_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace capplan::model {

inline constexpr size_t kMaxScratchVectors = 32;
inline constexpr size_t kMaxScratchVectorBytes = size_t{1} << 20;  // 1 MiB
inline constexpr size_t kMaxScratchPoolBytes = size_t{4} << 20;    // 4 MiB

namespace scratch_internal {
template <typename T>
struct Pool {
  std::vector<std::vector<T>> free;
  size_t bytes = 0;  // the capacity held in `free`
};
template <typename T>
Pool<T> &ThreadPool() {
  thread_local Pool<T> pool;
  return pool;
}
}  // namespace scratch_internal

// An empty vector, with the capacity of one given back earlier if any.
template <typename T>
std::vector<T> TakeScratch() {
  scratch_internal::Pool<T> &pool = scratch_internal::ThreadPool<T>();
  if (pool.free.empty()) return {};
  std::vector<T> v = std::move(pool.free.back());
  pool.free.pop_back();
  pool.bytes -= v.capacity() * sizeof(T);
  v.clear();
  return v;
}

// Gives `v`'s capacity back to this thread's pool (or frees it: too large,
// or the pool is full).
template <typename T>
void GiveBackScratch(std::vector<T> &&v) {
  scratch_internal::Pool<T> &pool = scratch_internal::ThreadPool<T>();
  const size_t bytes = v.capacity() * sizeof(T);
  if (bytes == 0 || bytes > kMaxScratchVectorBytes || pool.free.size() >= kMaxScratchVectors ||
      pool.bytes + bytes > kMaxScratchPoolBytes) {
    std::vector<T>().swap(v);
    return;
  }
  pool.bytes += bytes;
  pool.free.push_back(std::move(v));
}

// A borrowed vector for one scope.
template <typename T>
class ScratchVector {
 public:
  ScratchVector() : v_(TakeScratch<T>()) {}
  ~ScratchVector() { GiveBackScratch(std::move(v_)); }
  ScratchVector(const ScratchVector &) = delete;
  ScratchVector &operator=(const ScratchVector &) = delete;
  std::vector<T> &operator*() { return v_; }
  std::vector<T> *operator->() { return &v_; }

 private:
  std::vector<T> v_;
};

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_SCRATCH_H_
