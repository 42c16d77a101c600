// The categories of failure (support/Error.h): a broken invariant is an InternalError that
// names the compiler source position and, when the program construct being compiled is known,
// its location (the driver prints both and exits 2); a user error is a located CompileError
// (exit 1). tests/lint/internal_errors_are_internal.py keeps bugs from posing as user errors.
#include <gtest/gtest.h>

#include <string>

#include "support/Error.h"

namespace {

TEST(Errors, InternalErrorAtCarriesTheProgramLocation) {
  const spl::SourceLoc where{1, 12, 7};
  try {
    internal_error_at(where) << "a value that is not a pair";
    FAIL() << "internal_error_at did not throw";
  } catch (const spl::InternalError &e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("internal compiler error at ", 0), 0u) << what;
    EXPECT_NE(what.find("ErrorTest.cpp:"), std::string::npos) << "the compiler's own position: " << what;
    EXPECT_NE(what.find("a value that is not a pair"), std::string::npos) << what;
    EXPECT_EQ(e.loc.line, 12u);
    EXPECT_EQ(e.loc.col, 7u);
  }
}

TEST(Errors, InternalAssertHasNoProgramLocationButIsStillInternal) {
  EXPECT_THROW({ internal_assert(1 + 1 == 3) << "arithmetic"; }, spl::InternalError);
  try {
    internal_assert(false) << "context";
  } catch (const spl::InternalError &e) {
    EXPECT_FALSE(e.loc.valid());
    EXPECT_NE(std::string(e.what()).find("condition failed: false"), std::string::npos) << e.what();
  }
}

TEST(Errors, UserErrorsAreNotInternal) {
  const spl::SourceLoc where{1, 3, 4};
  try {
    user_error_at(where) << "'x' is not defined";
    FAIL() << "user_error_at did not throw";
  } catch (const spl::InternalError &) {
    FAIL() << "a user error must not be internal";
  } catch (const spl::CompileError &e) {
    EXPECT_EQ(std::string(e.what()), "'x' is not defined");
    EXPECT_EQ(e.loc.line, 3u);
  }
}

}  // namespace
