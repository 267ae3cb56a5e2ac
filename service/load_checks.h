#ifndef CAPPLAN_SERVICE_LOAD_CHECKS_H_
#define CAPPLAN_SERVICE_LOAD_CHECKS_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog.h"
#include "service/deployment_resolver.h"

namespace capplan::service {

// Collects Validate's findings and checks into its response.
class FindingList {
 public:
  explicit FindingList(v1::ValidateResponse* response) : response_(response) {}
  void Add(v1::Severity severity, const std::string& code, const std::string& field,
           const std::string& message,
           std::initializer_list<std::pair<const char*, double>> figures = {});
  // A check that ran, passed or not.
  void Check(const std::string& name, const std::string& code, bool passed,
             const std::string& detail);
  // A check that did not apply.
  void Skip(const std::string& name, const std::string& code, const std::string& why);

 private:
  v1::ValidateResponse* response_;
};

// Validate's checks at the expected load: safe concurrency, TTFT/TPOT/E2E
// SLOs and stability, from the load model. Appends the tiers of the figures
// used to `tiers`; stores the curve in response->load.
absl::Status AddLoadChecks(const Catalog& catalog, const ResolvedDeployment& resolved,
                           const v1::ValidateRequest& request, FindingList* findings,
                           v1::ValidateResponse* response, std::vector<v1::Tier>* tiers);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_LOAD_CHECKS_H_
