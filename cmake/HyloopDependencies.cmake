# Debian 12 packages only (scripts/setup.sh installs them); nothing is downloaded.
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)  # CMake's module: protobuf::libprotobuf, protobuf::protoc
find_package(cppzmq REQUIRED)    # target cppzmq (pulls libzmq)
find_package(gRPC CONFIG REQUIRED)  # gRPC::grpc++, gRPC::grpc++_reflection, gRPC::grpc_cpp_plugin
find_package(spdlog REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)  # prometheus-cpp::core, ::pull (Exposer)
if(HYLOOP_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(HYLOOP_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
