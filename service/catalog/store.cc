#include "service/catalog/store.h"

#include <sys/stat.h>

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"
#include "service/catalog/file_util.h"

namespace capplan::service {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFolders[] = {"hardware", "models", "baselines",
                                    "engines",  "priors", "tiers"};

}  // namespace

bool IsCatalogId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id.front() == '-' || id.back() == '-') return false;
  for (char c : id) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-' || c == '.')) return false;
  }
  return id.find("..") == std::string::npos;
}

std::string RenderCatalogFile(const google::protobuf::Message& entity) {
  std::string body;
  google::protobuf::TextFormat::Printer printer;
  printer.SetUseUtf8StringEscaping(true);
  printer.PrintToString(entity, &body);
  return absl::StrCat("# proto-file: capplan/v1/catalog.proto\n# proto-message: ",
                      entity.GetDescriptor()->name(), "\n\n", body);
}

absl::StatusOr<std::unique_ptr<DirectoryStore>> DirectoryStore::Open(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("catalogue directory '", dir, "' does not exist"));
  }
  std::unique_ptr<DirectoryStore> store(new DirectoryStore(dir));
  for (const char* folder : kFolders) {
    CAPPLAN_ASSIGN_OR_RETURN(int removed, RemoveTemporaryFiles((fs::path(dir) / folder).string()));
    store->temporaries_removed_ += removed;
  }
  return store;
}

absl::StatusOr<std::shared_ptr<const Catalog>> DirectoryStore::Load() const {
  return Catalog::LoadFromDirectory(dir_);
}

absl::StatusOr<StoredEntity> DirectoryStore::Put(const std::string& folder, const std::string& id,
                                                 const google::protobuf::Message& entity,
                                                 bool replace) {
  if (!IsCatalogId(id)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "id = \"%s\"; must be lowercase kebab-case (a-z, 0-9, '-', '.'), 1 to 128 characters",
        id.substr(0, 256)));
  }
  const fs::path dir = fs::path(dir_) / folder;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path target = dir / absl::StrCat(id, ".txtpb");
  const std::string text = RenderCatalogFile(entity);
  if (text.size() > kMaxCatalogFileBytes) {
    // A file the next load would refuse must not be written.
    return absl::InvalidArgumentError(
        absl::StrFormat("%s/%s.txtpb would be %d bytes; a catalogue file may hold at most %d",
                        folder, id, text.size(), kMaxCatalogFileBytes));
  }
  absl::MutexLock lock(&mu_);
  struct stat st;
  const bool existed = ::lstat(target.c_str(), &st) == 0;
  absl::Status written = WriteFileAtomically(
      target.string(), text, replace ? WriteMode::kReplace : WriteMode::kCreateOnly);
  if (absl::IsAlreadyExists(written)) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "%s/%s.txtpb exists; give replace (--replace) to overwrite it", folder, id));
  }
  CAPPLAN_RETURN_IF_ERROR(written);
  return StoredEntity{absl::StrCat(folder, "/", id, ".txtpb"), existed};
}

absl::StatusOr<StoredEntity> DirectoryStore::PutBaseline(const v1::Baseline& baseline,
                                                         bool replace) {
  return Put("baselines", baseline.id(), baseline, replace);
}

absl::StatusOr<StoredEntity> DirectoryStore::PutModel(const v1::Model& model, bool replace) {
  return Put("models", model.id(), model, replace);
}

absl::StatusOr<StoredEntity> DirectoryStore::PutHardware(const v1::Hardware& hardware,
                                                         bool replace) {
  return Put("hardware", hardware.id(), hardware, replace);
}

absl::StatusOr<StoredEntity> DirectoryStore::PutPrior(const v1::EfficiencyPrior& prior,
                                                      bool replace) {
  return Put("priors", prior.id(), prior, replace);
}

absl::StatusOr<std::string> DirectoryStore::ChangeToken() const {
  // A rename or link into a folder changes the folder's modification time.
  std::string token;
  for (const char* folder : kFolders) {
    struct stat st;
    const fs::path dir = fs::path(dir_) / folder;
    if (::stat(dir.c_str(), &st) != 0) {
      absl::StrAppend(&token, folder, ":absent;");
      continue;
    }
    absl::StrAppend(&token, folder, ":", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ";");
  }
  return token;
}

}  // namespace capplan::service
