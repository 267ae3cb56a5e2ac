#include "service/catalog/file_util.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace capplan::service {

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path temp =
      dir / absl::StrCat(".", target.filename().string(), ".tmp", static_cast<long>(getpid()));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::InvalidArgumentError(
          absl::StrFormat("cannot write %s: cannot create a file in %s", path, dir.string()));
    }
    out << contents;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(temp, ec);
      return absl::InternalError(absl::StrFormat("cannot write %s: write failed", path));
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot write %s: %s", path, ec.message()));
  }
  return absl::OkStatus();
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
    return absl::OutOfRangeError(
        absl::StrFormat("%s: larger than %d bytes", path, max_bytes));
  }
  return out;
}

}  // namespace capplan::service
