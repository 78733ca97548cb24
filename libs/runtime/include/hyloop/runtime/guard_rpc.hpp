#pragma once
// The body of a gRPC handler, run so that an exception never reaches gRPC (which would answer
// only "Unexpected error in RPC handling"): it becomes INTERNAL naming the RPC and the reason.
// Handlers validate their input and answer INVALID_ARGUMENT themselves; this is the backstop.

#include <google/protobuf/descriptor.h>
#include <grpcpp/support/status.h>

#include <exception>
#include <string>
#include <string_view>

namespace hyloop::runtime {

template <class Body>
grpc::Status guard_rpc(std::string_view rpc, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, std::string(rpc) + ": " + e.what()};
  } catch (...) {
    return {grpc::StatusCode::INTERNAL, std::string(rpc) + ": unknown error"};
  }
}

/// OK when `value` is one of `type`'s values; else INVALID_ARGUMENT naming `field`, the value and
/// the allowed ones (proto3 keeps unknown enum numbers: every request enum is checked so).
inline grpc::Status check_enum(const google::protobuf::EnumDescriptor& type, int value,
                               std::string_view field) {
  if (type.FindValueByNumber(value) != nullptr) return grpc::Status::OK;
  std::string allowed;
  for (int i = 0; i < type.value_count(); ++i) {
    allowed += (i == 0 ? "" : ", ") + std::string(type.value(i)->name()) + " = " +
               std::to_string(type.value(i)->number());
  }
  return {grpc::StatusCode::INVALID_ARGUMENT, std::string(field) + " = " + std::to_string(value) +
                                                  ": not a " + std::string(type.name()) +
                                                  " (allowed: " + allowed + ")"};
}

}  // namespace hyloop::runtime
