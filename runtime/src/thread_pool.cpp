/* thread_pool.cpp: the CPU thread pool behind spl_parallel_for (and _from_end, _shared) and
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
/* Chunks per thread in spl_parallel_for (where the grain allows): more than one so uneven
 * iterations even out; more where each thread starts from a home of its own (below), whose
 * thieves take one chunk at a time (with 4 a thread, homes ran libsplblas's dsyr and dsyr2 at
 * 4000, whose stores skip a triangle the work estimate does not see, 10-15% slower on two
 * threads; with 16 as fast as from one counter, where 16 ran dspr 400 0.72x). */
constexpr int64_t kChunksPerThread = 4;
constexpr int64_t kChunksPerThreadInHomes = 16;
/* Homes of fewer chunks than this each are not worth their imbalance: a job of few large
 * chunks (gemm's and syrk's blocks of C, 4 of them at n = 1000) claims from one counter. */
constexpr int64_t kMinChunksPerHome = 4;
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

/* A job's chunks are cut into homes, runs of neighbouring chunks, one per thread that may run
 * them (at most kMaxHomes). The caller claims the chunks of home 0 from its first, the pool's
 * worker w those of home 1 + w mod (homes - 1), and a thread whose home is spent claims the
 * others' from their last (work stealing's two ends: a home's first chunks stay with its
 * owner). A call repeated on the same data (an iterative solver's SpMV, a benchmark's loop)
 * then runs each part on the core that ran it the last time, from that core's L2. Claimed from
 * one counter, the chunks had gone to whichever thread came first: the caller took the first
 * few before its helper woke, and a part changed cores from call to call. On the 2-core Zen 5
 * EPYC (2026-11-30, paired against one counter, two threads) libsplblas's dger at n = 400 (a
 * matrix of 1.3 MB whose halves fit the two cores' L2 of 1 MB; it had run no faster on two
 * threads than on one, where OpenBLAS's fixed split ran 1.6x faster) ran 1.35-1.7x faster,
 * dsyr, dsyr2, dgemv T and dsymv at 400 1.0-1.4x; dealt as cards (home h: chunks h, h + homes,
 * ...), dger only 1.1x. Where the work grows from chunk to chunk (a triangle's lengthening
 * rows: from_end, the heaviest first) the job keeps one counter, which balances best (in homes
 * dtrmv ran 10-20% slower at 4000), as does a caller's spl_parallel_for_shared and a job of fewer
 * than kMinChunksPerHome chunks a home or of 2^31 chunks or more. Work that shrinks (a
 * triangle's columns) runs from homes since session 27: in one counter dspr 400 on two threads
 * ran 1.21x slower (in homes it had run 15% slower at session 24, before its 256-bit columns). */
enum class Claim {
  Homes,   /* from homes of neighbouring chunks */
  Shared,  /* from one counter, first to last */
  FromEnd, /* from one counter, last to first */
};
constexpr int kMaxHomes = 16;
struct alignas(64) Home {
  /* The home's chunks not claimed yet, [first, last), as first << 32 | last: the owner's claim
   * of `first` and a thief's of `last - 1` are each one compare-exchange. */
  std::atomic<uint64_t> range{0};
};
inline uint64_t pack_range(int64_t first, int64_t last) {
  return static_cast<uint64_t>(first) << 32 | static_cast<uint64_t>(last);
}

/* One parallel call: [begin, begin + nchunks * chunk + longer) in nchunks chunks; the first
 * `longer` chunks have chunk + 1 iterations, the rest `chunk`, so no chunk falls below the
 * grain; `aligned` (chunk at least the grain + kChunkAlignment) moves each boundary down to a
 * multiple of kChunkAlignment from begin, which keeps every chunk above the grain. Fields after
 * `homes` are guarded by Pool::mutex_. */
struct Job {
  spl_range_fn fn;
  void *closure;
  int64_t begin;
  int64_t chunk;
  int64_t longer;
  int64_t nchunks;
  Claim claim_order = Claim::Homes; /* homes, or one counter (`next`) and which way */
  bool aligned = false;  /* boundaries at multiples of kChunkAlignment */
  int max_helpers = 0; /* pool workers that may join, so the thread count limit holds */
  std::atomic<int64_t> next{0}; /* one home: the next chunk to claim */
  int nhomes = 1;
  Home homes[kMaxHomes]; /* nhomes > 1 */
  int64_t done = 0;
  int helpers = 0;
  /* Chunks finished and helpers gone, mirrored for lock-free polling by the waiting caller. */
  std::atomic<bool> finished{false};

  /* Cuts the chunks into up to `count` homes (count <= kMaxHomes) of near-equal length. */
  void set_homes(int count) {
    nhomes = 1;
    if (claim_order == Claim::Homes && nchunks < (int64_t{1} << 31))
      nhomes = static_cast<int>(
          std::max<int64_t>(1, std::min<int64_t>(count, nchunks / kMinChunksPerHome)));
    for (int h = 0; nhomes > 1 && h < nhomes; ++h)
      homes[h].range.store(pack_range(nchunks * h / nhomes, nchunks * (h + 1) / nhomes),
                           std::memory_order_relaxed);
  }
  /* The home of the pool's worker `w` (the caller's is 0). */
  int home_of_worker(size_t w) const {
    return nhomes > 1 ? 1 + static_cast<int>(w % static_cast<size_t>(nhomes - 1)) : 0;
  }
  /* Claims a chunk of home `h`, its first (the owner) or its last (a thief); -1 when the home
   * is spent. */
  int64_t claim(int h, bool owner) {
    uint64_t r = homes[h].range.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t first = static_cast<int64_t>(r >> 32);
      const int64_t last = static_cast<int64_t>(r & 0xffffffffu);
      if (first >= last)
        return -1;
      const uint64_t rest = owner ? pack_range(first + 1, last) : pack_range(first, last - 1);
      if (homes[h].range.compare_exchange_weak(r, rest, std::memory_order_relaxed))
        return owner ? first : last - 1;
    }
  }
  bool has_unclaimed_chunks() const {
    if (nhomes == 1)
      return next.load(std::memory_order_relaxed) < nchunks;
    for (int h = 0; h < nhomes; ++h) {
      const uint64_t r = homes[h].range.load(std::memory_order_relaxed);
      if ((r >> 32) < (r & 0xffffffffu))
        return true;
    }
    return false;
  }
  int64_t chunk_begin(int64_t c) const {
    const int64_t at = c * chunk + std::min(c, longer);
    if (!aligned || c == nchunks)
      return begin + at;
    return begin + (at & ~(kChunkAlignment - 1));
  }
};

/* Claims and runs chunks until none are left, those of `home` first; returns how many this
 * thread ran. */
int64_t run_chunks(Job &job, int home) {
  int64_t ran = 0;
  auto run = [&](int64_t k) {
    job.fn(job.closure, job.chunk_begin(k), job.chunk_begin(k + 1));
    ++ran;
  };
  if (job.nhomes == 1) {
    for (int64_t c; (c = job.next.fetch_add(1, std::memory_order_relaxed)) < job.nchunks;)
      run(job.claim_order == Claim::FromEnd ? job.nchunks - 1 - c : c);
    return ran;
  }
  for (int i = 0; i < job.nhomes; ++i) {
    const int h = (home + i) % job.nhomes;
    for (int64_t c; (c = job.claim(h, i == 0)) >= 0;)
      run(c);
  }
  return ran;
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
      ran = run_chunks(job, 0);
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
        const size_t index = workers_.size();
        workers_.emplace_back([this, index] { worker_loop(index); });
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

  void worker_loop(size_t index) {
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
      int64_t ran = run_chunks(*job, job->home_of_worker(index));
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
               Claim order = Claim::Homes, bool aligned = false) {
  const int threads = spl_num_threads();
  Job job;
  job.claim_order = order;
  job.aligned = aligned;
  job.fn = fn;
  job.closure = closure;
  job.begin = begin;
  job.chunk = (end - begin) / nchunks;
  job.longer = (end - begin) % nchunks;
  job.nchunks = nchunks;
  if (nchunks > 1 && threads > 1 && !tls_in_parallel_region) {
    job.max_helpers = static_cast<int>(std::min<int64_t>(threads - 1, nchunks - 1));
    job.set_homes(std::min(kMaxHomes, job.max_helpers + 1));
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
                  spl_rt::Claim order) {
  if (end <= begin || fn == nullptr)
    return;
  int64_t total = end - begin;
  grain = std::max<int64_t>(grain, 1);
  int threads = spl_num_threads();
  if (threads == 1 || total / 2 < grain || spl_rt::in_parallel_region()) {
    fn(closure, begin, end);
    return;
  }
  const int64_t per_thread =
      order == spl_rt::Claim::Homes ? spl_rt::kChunksPerThreadInHomes : spl_rt::kChunksPerThread;
  int64_t nchunks = std::min<int64_t>(threads * per_thread, total / grain);
  const int64_t chunk = total / nchunks;
  const bool aligned = chunk >= std::max(spl_rt::kAlignedChunksFrom, grain + spl_rt::kChunkAlignment);
  spl_rt::run_split(begin, end, nchunks, fn, closure, order, aligned);
}
} // namespace

void spl_parallel_for(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn,
                      void *closure) {
  parallel_for(begin, end, grain, fn, closure, spl_rt::Claim::Homes);
}

void spl_parallel_for_from_end(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn,
                               void *closure) {
  parallel_for(begin, end, grain, fn, closure, spl_rt::Claim::FromEnd);
}

void spl_parallel_for_shared(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn,
                             void *closure) {
  parallel_for(begin, end, grain, fn, closure, spl_rt::Claim::Shared);
}

void spl_parallel_chunks(int64_t nchunks, spl_range_fn fn, void *closure) {
  if (nchunks <= 0 || fn == nullptr)
    return;
  spl_rt::run_split(0, nchunks, nchunks, fn, closure);
}
