// Writing the CLI's output files.
#ifndef CAPPLAN_SERVICE_CATALOG_FILE_UTIL_H_
#define CAPPLAN_SERVICE_CATALOG_FILE_UTIL_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace capplan::service {

// Writes `contents` to `path` through a temporary file in the same
// directory and a rename, so a failed write leaves no partial file and the
// previous file, if any, intact. Errors read "cannot write PATH: reason".
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Reads a whole file of at most max_bytes, never more (a device such as
// /dev/zero ends at the limit). NOT_FOUND when it cannot be opened,
// DATA_LOSS when a read fails, OUT_OF_RANGE when it is longer than max_bytes;
// the messages name the path.
absl::StatusOr<std::string> ReadFileLimited(const std::string& path, size_t max_bytes);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_FILE_UTIL_H_
