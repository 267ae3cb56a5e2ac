#ifndef CAPPLAN_SERVICE_CATALOG_FILE_UTIL_H_
#define CAPPLAN_SERVICE_CATALOG_FILE_UTIL_H_

// Reading and writing the files capplan owns, so that nothing is lost:
// reads are bounded, writes are atomic and durable.

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace capplan::service {

// The prefix of the temporary files an atomic write creates beside its
// target (".capplan-tmp-<name>-<random>"): a file of this name is a write in
// flight, or one a kill interrupted.
inline constexpr char kTemporaryPrefix[] = ".capplan-tmp-";
bool IsTemporaryFileName(absl::string_view file_name);

enum class WriteMode {
  kReplace,     // an existing file is replaced
  kCreateOnly,  // ALREADY_EXISTS when the target exists (checked atomically)
};

// Writes `contents` to `path`: a temporary file with an unpredictable name
// created with O_EXCL | O_NOFOLLOW in the same directory, written, fsync'ed,
// then renamed (or, kCreateOnly, hard-linked) onto the target and the
// directory fsync'ed. A failure or a kill at any moment leaves the previous
// file (or none) intact, never a torn one; the temporary is removed on
// failure. A target that is a symbolic link is refused. Errors read
// "cannot write PATH: reason".
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents,
                                 WriteMode mode = WriteMode::kReplace);

// Removes the temporary files interrupted writes left in `dir` (not
// recursive); the number removed.
absl::StatusOr<int> RemoveTemporaryFiles(const std::string& dir);

// Reads a whole file of at most max_bytes, never more (a device such as
// /dev/zero ends at the limit). NOT_FOUND when it cannot be opened,
// DATA_LOSS when a read fails, OUT_OF_RANGE when it is longer than max_bytes;
// the messages name the path.
absl::StatusOr<std::string> ReadFileLimited(const std::string& path, size_t max_bytes);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_FILE_UTIL_H_
