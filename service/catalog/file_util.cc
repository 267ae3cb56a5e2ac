#include "service/catalog/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace capplan::service {
namespace {

namespace fs = std::filesystem;

absl::Status CannotWrite(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("cannot write %s: %s", path, why));
}

std::string Errno() { return std::strerror(errno); }

std::string RandomSuffix() {
  std::random_device seed;
  return absl::StrFormat("%08x%08x", seed(), seed());
}

absl::Status WriteAll(int fd, const std::string& contents) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::DataLossError(Errno());
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Makes a rename or link in `dir` durable.
void SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Writes and syncs `contents` to a new file that has no name yet (O_TMPFILE:
// a kill before it is linked leaves nothing behind); -1 when the file
// system cannot make one (the caller falls back to a named temporary).
int WriteUnnamed(const fs::path& dir, const std::string& contents) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (!WriteAll(fd, contents).ok() || ::fsync(fd) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Gives the unnamed file `fd` the name `name`; false (errno set) when that
// fails, EEXIST when the name is taken.
bool LinkUnnamed(int fd, const fs::path& name) {
  if (::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0) return true;
  if (errno == EEXIST) return false;
  // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc's link to the descriptor does not.
  const std::string proc = absl::StrCat("/proc/self/fd/", fd);
  return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

// Creates, writes and syncs the temporary file; its path in `temp`.
absl::Status WriteTemporary(const fs::path& dir, const fs::path& target,
                            const std::string& contents, fs::path* temp) {
  *temp = dir / absl::StrCat(kTemporaryPrefix, target.filename().string(), "-", RandomSuffix());
  const int fd = ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    return CannotWrite(target.string(),
                       absl::StrCat("cannot create a file in ", dir.string(), ": ", Errno()));
  }
  absl::Status written = WriteAll(fd, contents);
  if (written.ok() && ::fsync(fd) != 0) written = absl::DataLossError(Errno());
  if (::close(fd) != 0 && written.ok()) written = absl::DataLossError(Errno());
  if (!written.ok()) {
    ::unlink(temp->c_str());
    return CannotWrite(target.string(), absl::StrCat("write failed: ", written.message()));
  }
  return absl::OkStatus();
}

// Links the unnamed file onto `target`: directly for kCreateOnly (EEXIST is
// ALREADY_EXISTS), through a named temporary and a rename for kReplace (the
// only moment a kill can leave a temporary behind is between the two calls).
// UNAVAILABLE when linking is not possible here (fall back).
absl::Status PlaceUnnamed(int fd, const fs::path& dir, const fs::path& target, WriteMode mode) {
  if (mode == WriteMode::kCreateOnly) {
    if (LinkUnnamed(fd, target)) return absl::OkStatus();
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrFormat("cannot write %s: it exists", target.string()));
    }
    return absl::UnavailableError(Errno());
  }
  const fs::path temp =
      dir / absl::StrCat(kTemporaryPrefix, target.filename().string(), "-", RandomSuffix());
  if (!LinkUnnamed(fd, temp)) return absl::UnavailableError(Errno());
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string why = Errno();
    ::unlink(temp.c_str());
    return CannotWrite(target.string(), why);
  }
  return absl::OkStatus();
}

}  // namespace

bool IsTemporaryFileName(absl::string_view file_name) {
  return absl::StartsWith(file_name, kTemporaryPrefix);
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents,
                                 WriteMode mode) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  struct stat st;
  if (::lstat(target.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return CannotWrite(path, "it is a symbolic link");
    if (!S_ISREG(st.st_mode)) return CannotWrite(path, "it is not a regular file");
    if (mode == WriteMode::kCreateOnly) {
      return absl::AlreadyExistsError(absl::StrFormat("cannot write %s: it exists", path));
    }
  }
  const int unnamed = WriteUnnamed(dir, contents);
  if (unnamed >= 0) {
    absl::Status linked = PlaceUnnamed(unnamed, dir, target, mode);
    ::close(unnamed);
    if (!absl::IsUnavailable(linked)) {
      if (linked.ok()) SyncDirectory(dir);
      return linked;
    }
  }
  fs::path temp;
  absl::Status status = WriteTemporary(dir, target, contents, &temp);
  if (!status.ok()) return status;
  if (mode == WriteMode::kCreateOnly) {
    // link() fails with EEXIST if another writer created the target since.
    if (::link(temp.c_str(), target.c_str()) != 0) {
      const int err = errno;
      ::unlink(temp.c_str());
      if (err == EEXIST) {
        return absl::AlreadyExistsError(absl::StrFormat("cannot write %s: it exists", path));
      }
      return CannotWrite(path, std::strerror(err));
    }
    ::unlink(temp.c_str());
  } else if (::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string why = Errno();
    ::unlink(temp.c_str());
    return CannotWrite(path, why);
  }
  SyncDirectory(dir);
  return absl::OkStatus();
}

absl::StatusOr<int> RemoveTemporaryFiles(const std::string& dir) {
  std::error_code ec;
  int removed = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (!IsTemporaryFileName(entry.path().filename().string())) continue;
    if (::unlink(entry.path().c_str()) == 0) ++removed;
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::UnavailableError(absl::StrCat(dir, ": cannot list: ", ec.message()));
  }
  if (removed > 0) SyncDirectory(dir);
  return removed;
}

absl::StatusOr<std::string> ReadFileLimited(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string out;
  char buffer[1 << 16];
  while (in && out.size() <= max_bytes) {
    in.read(buffer, sizeof(buffer));
    out.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  if (out.size() > max_bytes) {
    return absl::OutOfRangeError(absl::StrFormat("%s: larger than %d bytes", path, max_bytes));
  }
  return out;
}

namespace {

std::string FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The canonical path of `path`, required to lie in `within_dir` when given.
absl::StatusOr<fs::path> ResolveWithin(const std::string& path, const std::string& within_dir) {
  std::error_code ec;
  const fs::path resolved = fs::canonical(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", ec.message()));
  if (within_dir.empty()) return resolved;
  const fs::path root = fs::canonical(within_dir, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(within_dir, ": cannot open: ", ec.message()));
  const std::string prefix = absl::StrCat(root.string(), root.string() == "/" ? "" : "/");
  if (!absl::StartsWith(resolved.string(), prefix)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: resolves to %s, outside the directory %s; only files inside it "
                        "are read",
                        path, resolved.string(), root.string()));
  }
  return resolved;
}

absl::StatusOr<std::string> ReadOpened(int fd, const std::string& path, size_t max_bytes) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return absl::DataLossError(absl::StrCat(path, ": ", Errno()));
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: is %s; must be a regular file", path, FileKind(st.st_mode)));
  }
  if (static_cast<uintmax_t>(st.st_size) > max_bytes) {
    return absl::OutOfRangeError(absl::StrFormat("%s: is %d bytes; the limit is %d bytes", path,
                                                 static_cast<int64_t>(st.st_size), max_bytes));
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  for (;;) {
    if (done == out.size()) {
      // One byte more than fstat said: a file that grows past the limit meanwhile is refused.
      if (out.size() > max_bytes) break;
      out.resize(std::min(max_bytes + 1, out.size() + 4096));
    }
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::DataLossError(absl::StrCat(path, ": read failed: ", Errno()));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  if (out.size() > max_bytes) {
    return absl::OutOfRangeError(
        absl::StrFormat("%s: grew past the limit of %d bytes while read", path, max_bytes));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes,
                                            const std::string& within_dir) {
  absl::StatusOr<fs::path> resolved = ResolveWithin(path, within_dir);
  if (!resolved.ok()) return resolved.status();
  const int fd =
      ::open(resolved->c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", Errno()));
  absl::StatusOr<std::string> text = ReadOpened(fd, path, max_bytes);
  ::close(fd);
  return text;
}

}  // namespace capplan::service
