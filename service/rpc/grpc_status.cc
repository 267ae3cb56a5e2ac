#include "service/rpc/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace capplan::service {
namespace {

std::string Capped(absl::string_view message) {
  if (message.size() <= kMaxStatusMessageBytes) return std::string(message);
  size_t cut = kMaxStatusMessageBytes - 64;
  // Not inside a UTF-8 character.
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(message.substr(0, cut), "… (message cut; ", message.size(), " bytes)");
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), Capped(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace capplan::service
