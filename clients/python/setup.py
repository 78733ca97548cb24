"""Build hook: generates the gRPC stubs of proto/hyloop/v{1,2}/*.proto into the package being built.

The stubs are generated at install time from the checkout's proto/ (never shipped, so they cannot
drift from the protocol): `pip install ./clients/python` installs the packages hyloop_client and
hyloop.v1 (control_pb2, control_pb2_grpc) and hyloop.v2 (loop_pb2, which control imports). HYLOOP_PROTO_DIR names another proto/ root.
"""

import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


def _proto_root() -> Path:
    env = os.environ.get("HYLOOP_PROTO_DIR")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / "proto"
    if not (root / "hyloop" / "v1" / "control.proto").is_file():
        raise SystemExit(f"hyloop-client: no hyloop/v1/control.proto under {root}: install from a "
                         "hyloop checkout (pip install ./clients/python) or set HYLOOP_PROTO_DIR")
    return root


class BuildWithStubs(build_py):
    """build_py, then grpc_tools.protoc into the build directory (hyloop/v*/*_pb2*.py)."""

    def run(self) -> None:
        super().run()
        from grpc_tools import protoc  # Debian: python3-grpc-tools

        root = _proto_root()
        out = Path(self.build_lib)
        versions = ("v1", "v2")
        protos = sorted(str(p.relative_to(root)) for v in versions
                        for p in (root / "hyloop" / v).glob("*.proto"))
        for v in versions:
            (out / "hyloop" / v).mkdir(parents=True, exist_ok=True)
        rc = protoc.main(["protoc", f"-I{root}", f"--python_out={out}",
                          f"--grpc_python_out={out}", *protos])
        if rc != 0:
            raise SystemExit(f"hyloop-client: grpc_tools.protoc failed ({rc}) on {protos}")
        for pkg in (out / "hyloop", *(out / "hyloop" / v for v in versions)):
            (pkg / "__init__.py").touch()


setup(cmdclass={"build_py": BuildWithStubs})
