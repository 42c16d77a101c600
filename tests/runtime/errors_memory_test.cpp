// errors_memory_test.cpp: spl_error_string for every code, spl_alloc/spl_free alignment (64 bytes,
// 2 MiB from 2 MiB on), spl_temp_alloc/spl_temp_free's scratch (stack order, given back out of
// order, full, per thread).
#include "spl_runtime.h"

#include <gtest/gtest.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/resource.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(ErrorString, NamesEveryCode) {
  struct Expected {
    int code;
    const char *prefix;
  };
  const Expected codes[] = {
      {SPL_OK, "SPL_OK"},
      {SPL_ERR_BAD_INPUT, "SPL_ERR_BAD_INPUT"},
      {SPL_ERR_ALLOC, "SPL_ERR_ALLOC"},
      {SPL_ERR_CUDA, "SPL_ERR_CUDA"},
      {SPL_ERR_UNSUPPORTED, "SPL_ERR_UNSUPPORTED"},
      {SPL_ERR_INTERNAL, "SPL_ERR_INTERNAL"},
  };
  for (const Expected &e : codes) {
    const char *text = spl_error_string(e.code);
    ASSERT_NE(text, nullptr) << e.code;
    std::string s(text);
    EXPECT_EQ(s.rfind(std::string(e.prefix) + ":", 0), 0u) << s;
    EXPECT_GT(s.size(), std::strlen(e.prefix) + 5) << "message should explain the code: " << s;
  }
}

TEST(ErrorString, MessagesAreDistinct) {
  for (int a = SPL_OK; a <= SPL_ERR_INTERNAL; ++a)
    for (int b = a + 1; b <= SPL_ERR_INTERNAL; ++b)
      EXPECT_STRNE(spl_error_string(a), spl_error_string(b)) << a << " vs " << b;
}

TEST(ErrorString, UnknownCodeGetsGenericMessage) {
  for (int code : {-1, 6, 42, 1 << 30}) {
    const char *text = spl_error_string(code);
    ASSERT_NE(text, nullptr);
    EXPECT_NE(std::string(text).find("unknown"), std::string::npos) << text;
  }
}

TEST(Alloc, ZeroBytesGivesNull) { EXPECT_EQ(spl_alloc(0), nullptr); }

TEST(Alloc, IsAlignedTo64AndWritable) {
  for (size_t bytes : {size_t(1), size_t(7), size_t(63), size_t(64), size_t(65), size_t(4096),
                       size_t(1) << 20}) {
    auto *p = static_cast<unsigned char *>(spl_alloc(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 0xab, bytes);
    EXPECT_EQ(p[bytes - 1], 0xab);
    spl_free(p);
  }
}

// Buffers of 1 MiB or more start on a 2 MiB boundary (whole huge pages for MADV_HUGEPAGE), every
// byte writable up to the end whatever its size's remainder.
TEST(Alloc, LargeBuffersStartOnAHugePage) {
  for (size_t bytes : {(size_t(1) << 20) - 1, size_t(1) << 20, (size_t(2) << 20) - 1, size_t(2) << 20,
                       (size_t(2) << 20) + 1, (size_t(5) << 20) + 4093}) {
    auto *p = static_cast<unsigned char *>(spl_alloc(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (bytes >= (size_t(1) << 20) ? (size_t(2) << 20) : 64), 0u) << bytes;
    std::memset(p, 0xcd, bytes);
    EXPECT_EQ(p[0], 0xcd);
    EXPECT_EQ(p[bytes - 1], 0xcd);
    spl_free(p);
  }
}

// A static whose address lies in a mapping of the test program, to probe /proc/self/smaps.
static int anchor_for_smaps = 0;

// The VmFlags of the mapping that holds `address` (/proc/self/smaps), or "" where none is found.
static std::string mapping_flags(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = address >= lo && address < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

// Linux is asked for huge pages up to a large buffer's last byte, not only over the whole huge
// pages inside it: a plan's x of 500,000 doubles (3.8 MiB) had run its last 1.8 MiB on small
// pages, whose first touch cost 40 times as much on a VM.
TEST(Alloc, HugePagesReachALargeBuffersLastByte) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  {
    void *probe = nullptr;
    ASSERT_EQ(posix_memalign(&probe, size_t(2) << 20, size_t(2) << 20), 0);
    const bool supported = madvise(probe, size_t(2) << 20, MADV_HUGEPAGE) == 0;
    free(probe);
    if (!supported || mapping_flags(reinterpret_cast<uintptr_t>(&probe)).empty())
      GTEST_SKIP() << "no transparent huge pages or no /proc/self/smaps here";
  }
  for (size_t bytes : {size_t(3998792), size_t(1) << 20, (size_t(2) << 20) + 8, size_t(1999396)}) {
    auto *p = static_cast<unsigned char *>(spl_alloc(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    std::memset(p, 0x5a, bytes);
    EXPECT_NE(mapping_flags(reinterpret_cast<uintptr_t>(p)).find(" hg "), std::string::npos) << bytes;
    EXPECT_NE(mapping_flags(reinterpret_cast<uintptr_t>(p + bytes - 1)).find(" hg "), std::string::npos) << bytes;
    spl_free(p);
  }
#else
  GTEST_SKIP() << "huge pages are asked of Linux only";
#endif
}

// A freed buffer of huge pages is given out again for the next buffer of its size (a kernel's
// temporary of a MB or more at every call maps and faults once), while buffers of other sizes,
// and more buffers than are kept, still come and go whole.
TEST(Alloc, AFreedLargeBufferServesTheNextOfItsSize) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const size_t bytes = (size_t(3) << 20) + 100;
  auto *first = static_cast<unsigned char *>(spl_alloc(bytes));
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, bytes);
  spl_free(first);
  auto *again = static_cast<unsigned char *>(spl_alloc(bytes - 200)); /* the same whole huge pages */
  EXPECT_EQ(again, first);
  std::memset(again, 2, bytes - 200);
  std::vector<unsigned char *> many;
  for (size_t k = 1; k <= 9; ++k) {
    many.push_back(static_cast<unsigned char *>(spl_alloc(k << 20)));
    ASSERT_NE(many.back(), nullptr) << k;
    std::memset(many.back(), static_cast<int>(k), k << 20);
  }
  for (unsigned char *p : many)
    spl_free(p);
  for (size_t k = 9; k >= 1; --k) {
    auto *p = static_cast<unsigned char *>(spl_alloc(k << 20));
    ASSERT_NE(p, nullptr) << k;
    std::memset(p, 3, k << 20);
    EXPECT_EQ(p[(k << 20) - 1], 3);
    spl_free(p);
  }
  EXPECT_EQ(again[bytes - 201], 2);
  spl_free(again);
#else
  GTEST_SKIP() << "large buffers are mappings of their own on Linux only";
#endif
}

// A freed buffer from 64 KiB up is taken again without touching new memory: glibc had given such
// buffers back to the system at free (the top of its heap, or a mapping past its threshold), and
// each plan of a small matrix paid 20-40 page faults for its x and y, about 10 microseconds each
// on a VM. Counted in the process's minor faults over the second buffer's writes.
TEST(Alloc, AFreedMidSizeBufferIsTakenAgainWithoutFaults) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  auto minor_faults = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<long>(usage.ru_minflt);
  };
  for (size_t bytes : {(size_t(64) << 10) + 64, size_t(300) << 10, (size_t(1) << 20) - 100}) {
    auto *first = static_cast<unsigned char *>(spl_alloc(bytes));
    ASSERT_NE(first, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u) << bytes;
    std::memset(first, 1, bytes);
    spl_free(first);
    auto *again = static_cast<unsigned char *>(spl_alloc(bytes - 64));
    ASSERT_NE(again, nullptr) << bytes;
    const long before = minor_faults();
    std::memset(again, 2, bytes - 64);
    const long faults = minor_faults() - before;
    EXPECT_LE(faults, 1) << bytes << " bytes: " << faults << " faults (" << (bytes >> 12) << " pages)";
    EXPECT_EQ(again[bytes - 65], 2);
    spl_free(again);
  }
#else
  GTEST_SKIP() << "buffers from 64 KiB are mappings of their own on Linux only";
#endif
}

// spl_release_memory gives the kept mappings back: a freed buffer's range is no longer mapped
// (/proc/self/smaps) and the next buffer of its size is a new one, writable whole.
TEST(Alloc, ReleaseMemoryUnmapsTheKeptBuffers) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  spl_release_memory(); /* nothing kept: a no-op */
  if (mapping_flags(reinterpret_cast<uintptr_t>(&anchor_for_smaps)).empty())
    GTEST_SKIP() << "no /proc/self/smaps here";
  for (size_t bytes : {size_t(300) << 10, (size_t(3) << 20) + 100}) {
    auto *p = static_cast<unsigned char *>(spl_alloc(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    std::memset(p, 7, bytes);
    spl_free(p);
    EXPECT_FALSE(mapping_flags(reinterpret_cast<uintptr_t>(p)).empty()) << bytes << ": kept after spl_free";
    spl_release_memory();
    EXPECT_TRUE(mapping_flags(reinterpret_cast<uintptr_t>(p)).empty()) << bytes << ": still mapped after the release";
    auto *again = static_cast<unsigned char *>(spl_alloc(bytes));
    ASSERT_NE(again, nullptr) << bytes;
    std::memset(again, 8, bytes);
    EXPECT_EQ(again[bytes - 1], 8);
    spl_free(again);
  }
  spl_release_memory();
#else
  spl_release_memory(); /* defined everywhere, a no-op where nothing is kept */
  GTEST_SKIP() << "buffers are kept on Linux only";
#endif
}

// A kernel's temporaries come from its thread's scratch in stack order: the next one starts at
// the next line after the last, and a block given back returns its bytes when it is the last.
TEST(TempAlloc, TakesAndGivesBackInStackOrder) {
  EXPECT_EQ(spl_temp_alloc(0), nullptr);
  spl_temp_free(nullptr);
  auto *a = static_cast<char *>(spl_temp_alloc(1000));
  auto *b = static_cast<char *>(spl_temp_alloc(1));
  auto *c = static_cast<char *>(spl_temp_alloc(64));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(b, a + 1024);
  EXPECT_EQ(c, b + 64);
  std::memset(a, 1, 1000);
  std::memset(b, 2, 1);
  std::memset(c, 3, 64);
  EXPECT_EQ(a[999], 1);
  EXPECT_EQ(b[0], 2);
  spl_temp_free(c);
  EXPECT_EQ(spl_temp_alloc(10), c);  // c's bytes came back
  spl_temp_free(c);
  spl_temp_free(b);
  spl_temp_free(a);
  EXPECT_EQ(spl_temp_alloc(5), a);
  spl_temp_free(a);
}

// Given back out of order, a block keeps its bytes until every block above it is given back too.
TEST(TempAlloc, ABlockGivenBackOutOfOrderReturnsWithTheBlocksAboveIt) {
  auto *a = static_cast<char *>(spl_temp_alloc(128));
  auto *b = static_cast<char *>(spl_temp_alloc(128));
  spl_temp_free(a);
  auto *c = static_cast<char *>(spl_temp_alloc(128));
  EXPECT_EQ(c, b + 128);  // a's bytes are still below b
  spl_temp_free(c);
  spl_temp_free(b);
  EXPECT_EQ(spl_temp_alloc(1), a);  // b, then a, came back
  spl_temp_free(a);
}

// Past the scratch's 256 KB (one temporary or together), or past 64 live blocks, the heap.
TEST(TempAlloc, WhatDoesNotFitComesFromTheHeap) {
  auto *a = static_cast<char *>(spl_temp_alloc(64));
  auto *big = static_cast<char *>(spl_temp_alloc(size_t(300) << 10));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % 64, 0u);
  EXPECT_TRUE(big + (size_t(300) << 10) <= a || big >= a + (size_t(256) << 10)) << "inside the scratch";
  std::memset(big, 7, size_t(300) << 10);
  auto *next = static_cast<char *>(spl_temp_alloc(64));
  EXPECT_EQ(next, a + 64);  // the heap block took none of the scratch
  std::vector<char *> many;
  for (int i = 0; i < 70; ++i) many.push_back(static_cast<char *>(spl_temp_alloc(64)));
  for (int i = 0; i < 70; ++i) {
    ASSERT_NE(many[i], nullptr);
    std::memset(many[i], i, 64);
  }
  for (int i = 0; i < 70; ++i) EXPECT_EQ(many[i][63], static_cast<char>(i)) << i;  // no two overlap
  for (int i = 69; i >= 0; --i) spl_temp_free(many[i]);
  spl_temp_free(next);
  spl_temp_free(big);
  spl_temp_free(a);
  EXPECT_EQ(spl_temp_alloc(64), a);
  spl_temp_free(a);
}

// Each thread has a scratch of its own.
TEST(TempAlloc, EachThreadHasItsOwnScratch) {
  auto *mine = static_cast<char *>(spl_temp_alloc(64));
  char *theirs = nullptr;
  std::thread t([&] {
    theirs = static_cast<char *>(spl_temp_alloc(64));
    std::memset(theirs, 9, 64);
    spl_temp_free(theirs);
  });
  t.join();
  ASSERT_NE(theirs, nullptr);
  EXPECT_NE(theirs, mine);
  spl_temp_free(mine);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SPL_TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SPL_TEST_UNDER_SANITIZER 1
#endif
#endif

TEST(Alloc, HugeRequestFailsWithNull) {
#ifdef SPL_TEST_UNDER_SANITIZER
  GTEST_SKIP() << "sanitizer allocators abort on impossible sizes instead of returning NULL";
#else
  EXPECT_EQ(spl_alloc(SIZE_MAX - 16), nullptr);
#endif
}

TEST(Alloc, FreeNullIsNoOp) { spl_free(nullptr); }

} // namespace
