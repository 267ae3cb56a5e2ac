#ifndef CAPPLAN_TESTS_TEST_COMMON_STATUS_MATCHERS_H_
#define CAPPLAN_TESTS_TEST_COMMON_STATUS_MATCHERS_H_

// StatusIs(code, message_matcher): one matcher for absl::Status and
// absl::StatusOr<T> (Abseil 20220623 ships none), so a test states the code
// and the field path an error must name in one line:
//   EXPECT_THAT(Plan(catalog, request),
//               StatusIs(absl::StatusCode::kInvalidArgument,
//               HasSubstr("PlanRequest.duty_factor")));

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace capplan::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

template <typename StatusType>
class StatusIsMatcherImpl : public ::testing::MatcherInterface<StatusType> {
 public:
  StatusIsMatcherImpl(absl::StatusCode code, ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  bool MatchAndExplain(StatusType actual, ::testing::MatchResultListener* listener) const override {
    const absl::Status& status = GetStatus(actual);
    if (status.code() != code_) {
      *listener << "whose code is " << absl::StatusCodeToString(status.code()) << " ("
                << status.message() << ")";
      return false;
    }
    const std::string message(status.message());
    ::testing::StringMatchResultListener inner;
    if (!message_.MatchAndExplain(message, &inner)) {
      *listener << "whose message \"" << message << "\" does not match";
      if (!inner.str().empty()) *listener << ", " << inner.str();
      return false;
    }
    return true;
  }

  void DescribeTo(std::ostream* os) const override {
    *os << "has code " << absl::StatusCodeToString(code_) << " and a message that ";
    message_.DescribeTo(os);
  }

  void DescribeNegationTo(std::ostream* os) const override {
    *os << "does not have code " << absl::StatusCodeToString(code_) << " or has a message that ";
    message_.DescribeNegationTo(os);
  }

 private:
  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

class StatusIsMatcher {
 public:
  StatusIsMatcher(absl::StatusCode code, ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  template <typename StatusType>
  operator ::testing::Matcher<StatusType>() const {  // NOLINT: implicit by design
    return ::testing::Matcher<StatusType>(
        new StatusIsMatcherImpl<const std::decay_t<StatusType>&>(code_, message_));
  }

 private:
  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

}  // namespace internal

// Matches a Status or StatusOr whose code is `code` and whose message
// matches `message` (a string matcher such as HasSubstr("field.path")).
inline internal::StatusIsMatcher StatusIs(absl::StatusCode code,
                                          ::testing::Matcher<const std::string&> message) {
  return internal::StatusIsMatcher(code, std::move(message));
}

// Only the code.
inline internal::StatusIsMatcher StatusIs(absl::StatusCode code) {
  return internal::StatusIsMatcher(code, ::testing::_);
}

// An OK Status or StatusOr (printing the error when not).
MATCHER(IsOk, "is OK") {
  const absl::Status& status = internal::GetStatus(arg);
  if (!status.ok()) *result_listener << "whose status is " << status;
  return status.ok();
}

}  // namespace capplan::testing

#endif  // CAPPLAN_TESTS_TEST_COMMON_STATUS_MATCHERS_H_
