// errors_memory_test.cpp: spl_error_string for every code, spl_alloc/spl_free alignment (64 bytes,
// 2 MiB from 2 MiB on).
#include "spl_runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

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

// Buffers of 2 MiB or more start on a 2 MiB boundary (whole huge pages for MADV_HUGEPAGE), every
// byte writable up to the end whatever its size's remainder.
TEST(Alloc, LargeBuffersStartOnAHugePage) {
  for (size_t bytes : {(size_t(2) << 20) - 1, size_t(2) << 20, (size_t(2) << 20) + 1, (size_t(5) << 20) + 4093}) {
    auto *p = static_cast<unsigned char *>(spl_alloc(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (bytes >= (size_t(2) << 20) ? (size_t(2) << 20) : 64), 0u) << bytes;
    std::memset(p, 0xcd, bytes);
    EXPECT_EQ(p[0], 0xcd);
    EXPECT_EQ(p[bytes - 1], 0xcd);
    spl_free(p);
  }
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
