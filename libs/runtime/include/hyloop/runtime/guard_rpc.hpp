#pragma once
// The body of a gRPC handler, run so that an exception never reaches gRPC (which would answer
// only "Unexpected error in RPC handling"): it becomes INTERNAL naming the RPC and the reason.
// Handlers validate their input and answer INVALID_ARGUMENT themselves; this is the backstop.

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

}  // namespace hyloop::runtime
