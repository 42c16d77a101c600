/* thread_pool.cpp: the CPU thread pool behind spl_parallel_for (and _from_end) and
 * spl_parallel_chunks.
 *
 * Design: a set of persistent std::threads, started lazily on the first parallel call and grown
 * when spl_set_num_threads asks for more. A parallel call publishes a Job (a range split into
 * equal chunks) on a queue and works on it itself; workers claim chunks with an atomic counter,
 * so load balancing needs no further locking. The queue lets several user threads run parallel
 * loops at once. A Job lives on its caller's stack: the caller removes it from the queue and
 * then waits until every chunk is done and no worker still holds it, which is what makes
 * returning (and destroying the Job) safe.
 *
 * Nested parallelism is off: a call made while the thread already runs chunks (a worker, or a
 * caller helping with its own loop) runs inline. That avoids deadlock by construction and
 * matches how generated kernels use the pool (one parallel loop per kernel).
 *
 * Waiting spins briefly before it blocks (kSpin, as OpenMP runtimes do, far shorter than their
 * default): a worker that finished a job polls for the next one, and a caller whose chunks are
 * done polls for its helpers, before sleeping on a condition variable. Kernels called back to
 * back (an iterative solver's SpMV) then find their workers awake instead of paying a futex
 * wake-up at each start and end, which cost SPL's 2-thread kernels 10-30% of their median time
 * on sub-millisecond calls.
 *
 * The pool object is never destroyed: workers stay blocked on a condition variable until the
 * process exits, so no static destructor can pull the mutex out from under them. The shared
 * library is linked with -z nodelete for the same reason (dlclose must not unmap the code the
 * workers sleep in).
 */
#include "export.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace spl_rt {
namespace {

/* Generous upper bound on the thread count, against typos in SPL_NUM_THREADS. */
constexpr int kMaxThreads = 1024;
/* Chunks per thread in spl_parallel_for: more than one so uneven iterations even out. */
constexpr int64_t kChunksPerThread = 4;
/* How long a waiting thread polls before it blocks. */
constexpr std::chrono::microseconds kSpin{50};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/* Polls `ready` (cheap, lock-free) for up to kSpin; true as soon as it holds. */
template <typename Ready> bool spin_until(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready())
      return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline)
      return false;
  }
}

thread_local bool tls_in_parallel_region = false;

/* Marks the current thread as running parallel chunks for the lifetime of the guard. */
class ParallelRegionGuard {
public:
  ParallelRegionGuard() : saved_(tls_in_parallel_region) { tls_in_parallel_region = true; }
  ~ParallelRegionGuard() { tls_in_parallel_region = saved_; }
  ParallelRegionGuard(const ParallelRegionGuard &) = delete;
  ParallelRegionGuard &operator=(const ParallelRegionGuard &) = delete;

private:
  bool saved_;
};

int clamp_thread_count(long n) {
  if (n < 1)
    return 1;
  if (n > kMaxThreads)
    return kMaxThreads;
  return static_cast<int>(n);
}

int default_thread_count() {
  static const int count = [] {
    if (const char *env = std::getenv("SPL_NUM_THREADS")) {
      char *end = nullptr;
      long n = std::strtol(env, &end, 10);
      if (end != env && n > 0)
        return clamp_thread_count(n);
    }
    return clamp_thread_count(static_cast<long>(std::thread::hardware_concurrency()));
  }();
  return count;
}

/* 0 means "use the default". */
std::atomic<int> thread_count_override{0};

/* spl_parallel_for's chunks of at least kAlignedChunksFrom iterations (and kChunkAlignment more
 * than the grain) start a multiple of kChunkAlignment iterations from the loop's first: a
 * generated loop whose first iteration reads or writes the start of a 64-byte line
 * (loopir/AlignStreams: a scalar head runs before the parallel loop) then has every chunk start
 * on a line, 16 floats or 8 doubles being one (AVX-512 reads that straddle two lines ran a dot
 * product at half its speed on a Zen 5 EPYC). */
constexpr int64_t kChunkAlignment = 16;
constexpr int64_t kAlignedChunksFrom = 64;

/* One parallel call: [begin, begin + nchunks * chunk + longer) in nchunks chunks; the first
 * `longer` chunks have chunk + 1 iterations, the rest `chunk`, so no chunk falls below the
 * grain; `aligned` (chunk at least the grain + kChunkAlignment) moves each boundary down to a
 * multiple of kChunkAlignment from begin, which keeps every chunk above the grain. Fields after
 * `next` are guarded by Pool::mutex_. */
struct Job {
  spl_range_fn fn;
  void *closure;
  int64_t begin;
  int64_t chunk;
  int64_t longer;
  int64_t nchunks;
  bool from_end = false; /* claim the last chunk first (spl_parallel_for_from_end) */
  bool aligned = false;  /* boundaries at multiples of kChunkAlignment */
  int max_helpers = 0; /* pool workers that may join, so the thread count limit holds */
  std::atomic<int64_t> next{0};
  int64_t done = 0;
  int helpers = 0;
  /* Chunks finished and helpers gone, mirrored for lock-free polling by the waiting caller. */
  std::atomic<bool> finished{false};

  bool has_unclaimed_chunks() const {
    return next.load(std::memory_order_relaxed) < nchunks;
  }
  int64_t chunk_begin(int64_t c) const {
    const int64_t at = c * chunk + std::min(c, longer);
    if (!aligned || c == nchunks)
      return begin + at;
    return begin + (at & ~(kChunkAlignment - 1));
  }
};

/* Claims and runs chunks until none are left; returns how many this thread ran. */
int64_t run_chunks(Job &job) {
  int64_t ran = 0;
  for (;;) {
    int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.nchunks)
      return ran;
    const int64_t k = job.from_end ? job.nchunks - 1 - c : c;
    job.fn(job.closure, job.chunk_begin(k), job.chunk_begin(k + 1));
    ++ran;
  }
}

class Pool {
public:
  /* Queues `job` for the workers, starting them if needed. Throws (std::bad_alloc,
   * std::system_error) only before the job is visible to any worker. */
  void publish(Job &job) {
    std::lock_guard<std::mutex> lock(mutex_);
    grow_locked(job.max_helpers);
    jobs_.push_back(&job);
    generation_.fetch_add(1, std::memory_order_release);
  }

  /* Runs chunks of a published job on the calling thread, then waits for the helpers. */
  void help_and_wait(Job &job) noexcept {
    work_cv_.notify_all();
    int64_t ran;
    {
      ParallelRegionGuard guard;
      ran = run_chunks(job);
    }
    std::unique_lock<std::mutex> lock(mutex_);
    job.done += ran;
    auto it = std::find(jobs_.begin(), jobs_.end(), &job);
    if (it != jobs_.end())
      jobs_.erase(it);
    auto all_done = [&] { return job.done == job.nchunks && job.helpers == 0; };
    if (all_done())
      return;
    lock.unlock();
    spin_until([&] { return job.finished.load(std::memory_order_acquire); });
    lock.lock();
    done_cv_.wait(lock, all_done);
  }

private:
  /* Starts workers until there are `count`. Failing to start one is not an error: the loop
   * still completes with the threads that exist, the caller included. */
  void grow_locked(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      try {
        workers_.emplace_back([this] { worker_loop(); });
      } catch (...) {
        return;
      }
    }
  }

  /* The first queued job with chunks left and room for another helper; drops spent jobs. */
  Job *find_joinable_locked() {
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      Job *job = *it;
      if (!job->has_unclaimed_chunks()) {
        it = jobs_.erase(it);
        continue;
      }
      if (job->helpers < job->max_helpers)
        return job;
      ++it;
    }
    return nullptr;
  }

  void worker_loop() {
    tls_in_parallel_region = true;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      Job *job = find_joinable_locked();
      if (!job) {
        // Poll for a newly published job for a while, then sleep until one is.
        const uint64_t seen = generation_.load(std::memory_order_acquire);
        lock.unlock();
        bool fresh = spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
        lock.lock();
        if (fresh)
          continue;
        work_cv_.wait(lock, [&] { return (job = find_joinable_locked()) != nullptr; });
      }
      ++job->helpers;
      lock.unlock();
      int64_t ran = run_chunks(*job);
      lock.lock();
      job->done += ran;
      --job->helpers;
      if (job->done == job->nchunks && job->helpers == 0)
        job->finished.store(true, std::memory_order_release);
      done_cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::atomic<uint64_t> generation_{0}; /* jobs published so far */
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Job *> jobs_;
  std::vector<std::thread> workers_;
};

Pool &pool() {
  static Pool *instance = new Pool; /* never destroyed; see the file comment */
  return *instance;
}

/* Runs [begin, end) as nchunks chunks of near-equal size, in parallel when it can. */
void run_split(int64_t begin, int64_t end, int64_t nchunks, spl_range_fn fn, void *closure,
               bool from_end = false, bool aligned = false) {
  const int threads = spl_num_threads();
  Job job;
  job.from_end = from_end;
  job.aligned = aligned;
  job.fn = fn;
  job.closure = closure;
  job.begin = begin;
  job.chunk = (end - begin) / nchunks;
  job.longer = (end - begin) % nchunks;
  job.nchunks = nchunks;
  if (nchunks > 1 && threads > 1 && !tls_in_parallel_region) {
    job.max_helpers = static_cast<int>(std::min<int64_t>(threads - 1, nchunks - 1));
    bool published = false;
    try {
      pool().publish(job);
      published = true;
    } catch (...) {
      /* No memory for the pool or the queue: run inline below. */
    }
    if (published) {
      pool().help_and_wait(job);
      return;
    }
  }
  for (int64_t c = 0; c < nchunks; ++c)
    fn(closure, job.chunk_begin(c), job.chunk_begin(c + 1));
}

} // namespace

bool in_parallel_region() { return tls_in_parallel_region; }

} // namespace spl_rt

int spl_num_threads(void) {
  int n = spl_rt::thread_count_override.load(std::memory_order_relaxed);
  return n > 0 ? n : spl_rt::default_thread_count();
}

void spl_set_num_threads(int n) {
  spl_rt::thread_count_override.store(n > 0 ? spl_rt::clamp_thread_count(n) : 0,
                                      std::memory_order_relaxed);
}

namespace {
void parallel_for(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn, void *closure,
                  bool from_end) {
  if (end <= begin || fn == nullptr)
    return;
  int64_t total = end - begin;
  grain = std::max<int64_t>(grain, 1);
  int threads = spl_num_threads();
  if (threads == 1 || total / 2 < grain || spl_rt::in_parallel_region()) {
    fn(closure, begin, end);
    return;
  }
  int64_t nchunks = std::min<int64_t>(threads * spl_rt::kChunksPerThread, total / grain);
  const int64_t chunk = total / nchunks;
  const bool aligned = chunk >= std::max(spl_rt::kAlignedChunksFrom, grain + spl_rt::kChunkAlignment);
  spl_rt::run_split(begin, end, nchunks, fn, closure, from_end, aligned);
}
} // namespace

void spl_parallel_for(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn,
                      void *closure) {
  parallel_for(begin, end, grain, fn, closure, false);
}

void spl_parallel_for_from_end(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn,
                               void *closure) {
  parallel_for(begin, end, grain, fn, closure, true);
}

void spl_parallel_chunks(int64_t nchunks, spl_range_fn fn, void *closure) {
  if (nchunks <= 0 || fn == nullptr)
    return;
  spl_rt::run_split(0, nchunks, nchunks, fn, closure);
}
