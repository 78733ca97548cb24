"""Python client of hyloop's control plane (the coordinator's gRPC Experiment service)."""

from .client import (ROLES, STUBS_DIR, TERMINAL_STATES, HyloopClient, control_pb2,
                     control_pb2_grpc, read_token, state_name)

__all__ = [
    "HyloopClient",
    "ROLES",
    "STUBS_DIR",
    "TERMINAL_STATES",
    "control_pb2",
    "control_pb2_grpc",
    "read_token",
    "state_name",
]
