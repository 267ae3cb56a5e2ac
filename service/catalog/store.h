#ifndef CAPPLAN_SERVICE_CATALOG_STORE_H_
#define CAPPLAN_SERVICE_CATALOG_STORE_H_

// Where the catalogue lives. Everything above catalog/ reads and writes it
// through this interface and never learns how entries are stored (a data
// directory today; a database when a fleet outgrows a shared directory).

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "capplan/v1/catalog.pb.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

struct StoredEntity {
  std::string location;  // where the entry now lives ("baselines/<id>.txtpb")
  bool replaced = false;
};

class CatalogStore {
 public:
  virtual ~CatalogStore() = default;

  // The whole catalogue, loaded and validated.
  virtual absl::StatusOr<std::shared_ptr<const Catalog>> Load() const = 0;

  // Writes one entry: ALREADY_EXISTS for an existing id unless `replace`.
  // A failure leaves the previous entry (or none) intact.
  virtual absl::StatusOr<StoredEntity> PutBaseline(const v1::Baseline& baseline, bool replace) = 0;
  virtual absl::StatusOr<StoredEntity> PutModel(const v1::Model& model, bool replace) = 0;
  virtual absl::StatusOr<StoredEntity> PutHardware(const v1::Hardware& hardware, bool replace) = 0;
  virtual absl::StatusOr<StoredEntity> PutPrior(const v1::EfficiencyPrior& prior, bool replace) = 0;

  // Something that changes whenever an entry is added, replaced or removed
  // (replicas sharing the store poll it to reload).
  virtual absl::StatusOr<std::string> ChangeToken() const = 0;
};

// A data directory of text-proto files: <dir>/{hardware,models,baselines,
// engines}/<id>.txtpb. Writes are atomic and durable (WriteFileAtomically)
// and serialised within the process; across processes a create races
// safely (a hard link that fails when the name exists).
class DirectoryStore : public CatalogStore {
 public:
  // Removes the temporary files interrupted writes left behind (a kill -9
  // mid-write), so a store always starts from whole files.
  static absl::StatusOr<std::unique_ptr<DirectoryStore>> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  int temporaries_removed() const { return temporaries_removed_; }

  absl::StatusOr<std::shared_ptr<const Catalog>> Load() const override;
  absl::StatusOr<StoredEntity> PutBaseline(const v1::Baseline& baseline, bool replace) override;
  absl::StatusOr<StoredEntity> PutModel(const v1::Model& model, bool replace) override;
  absl::StatusOr<StoredEntity> PutHardware(const v1::Hardware& hardware, bool replace) override;
  absl::StatusOr<StoredEntity> PutPrior(const v1::EfficiencyPrior& prior, bool replace) override;
  absl::StatusOr<std::string> ChangeToken() const override;

 private:
  explicit DirectoryStore(std::string dir) : dir_(std::move(dir)) {}
  absl::StatusOr<StoredEntity> Put(const std::string& folder, const std::string& id,
                                   const google::protobuf::Message& entity, bool replace);

  const std::string dir_;
  int temporaries_removed_ = 0;
  absl::Mutex mu_;  // one write at a time
};

// An entity as a catalogue file: the "# proto-file:" / "# proto-message:"
// header, then the text format.
std::string RenderCatalogFile(const google::protobuf::Message& entity);

// Lowercase kebab-case, 1..128 characters: the rule for every id.
bool IsCatalogId(const std::string& id);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_STORE_H_
