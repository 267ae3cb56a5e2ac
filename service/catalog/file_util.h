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

// Writes `contents` to `path` so that nothing is lost or leaked: the data
// goes first to a file without a name (O_TMPFILE in the same directory),
// written and fsync'ed, then linked onto the target (kCreateOnly: directly,
// failing when the name exists) or linked to an unpredictable temporary
// name and renamed onto it (kReplace), and the directory fsync'ed. A kill
// while the data is written leaves no file at all; only a kill in the
// instant between the link and the rename can leave a temporary, which
// RemoveTemporaryFiles removes. Where O_TMPFILE is not supported, the
// temporary is named from the start (O_EXCL | O_NOFOLLOW, a random suffix).
// A failure leaves the previous file (or none) intact, never a torn one. A
// target that is a symbolic link is refused. Errors read
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

// Reads a file the server owns (a catalogue entry, a key, a token) without
// ever blocking or reading past a limit: the path is resolved first, and when
// `within_dir` is not empty the resolved file must lie inside it (a symbolic
// link inside the tree, as a Kubernetes ConfigMap mounts them, is fine; one
// pointing out of it is not). The resolved path is opened with O_NOFOLLOW |
// O_NONBLOCK (a FIFO never blocks the open), fstat'ed on the opened
// descriptor, and refused unless it is a regular file of at most max_bytes,
// all before a byte is read. FAILED_PRECONDITION for a file that is not
// regular or lies outside `within_dir`, OUT_OF_RANGE for one too large,
// NOT_FOUND when it cannot be resolved or opened, DATA_LOSS when a read fails;
// the messages name the path.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes,
                                            const std::string& within_dir = "");

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_FILE_UTIL_H_
