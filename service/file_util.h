// Writing the CLI's output files.
#ifndef CAPPLAN_SERVICE_FILE_UTIL_H_
#define CAPPLAN_SERVICE_FILE_UTIL_H_

#include <string>

#include "absl/status/status.h"

namespace capplan::service {

// Writes `contents` to `path` through a temporary file in the same
// directory and a rename, so a failed write leaves no partial file and the
// previous file, if any, intact. Errors read "cannot write PATH: reason".
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_FILE_UTIL_H_
