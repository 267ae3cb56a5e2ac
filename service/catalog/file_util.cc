#include "service/catalog/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace capplan::service
