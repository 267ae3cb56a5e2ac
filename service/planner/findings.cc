#include "service/planner/findings.h"

namespace capplan::service {

void FindingList::Add(v1::Severity severity, const std::string& code, const std::string& field,
                      const std::string& message,
                      std::initializer_list<std::pair<const char*, double>> figures) {
  v1::Finding* f = response_->add_findings();
  f->set_severity(severity);
  f->set_code(code);
  f->set_field(field);
  f->set_message(message);
  for (const auto& [key, value] : figures) (*f->mutable_figures())[key] = value;
}

void FindingList::Check(const std::string& name, const std::string& code, bool passed,
                        const std::string& detail) {
  v1::Check* c = response_->add_checks();
  c->set_name(name);
  c->set_code(code);
  c->set_passed(passed);
  c->set_detail(detail);
}

void FindingList::Skip(const std::string& name, const std::string& code, const std::string& why) {
  v1::Check* c = response_->add_checks();
  c->set_name(name);
  c->set_code(code);
  c->set_passed(true);
  c->set_skipped(true);
  c->set_detail(why);
}

}  // namespace capplan::service
