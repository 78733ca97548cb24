"""Client of the hyloop coordinator (gRPC service hyloop.v1.Experiment)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

import grpc


def _stubs_dir() -> Optional[Path]:
    """Folder of the generated stubs: $HYLOOP_PYTHON_STUBS, else None when the stubs are
    installed (pip install ./clients/python), else <repo>/build/python (the build's target
    hyloop_python_stubs, for a checkout used in place)."""
    env = os.environ.get("HYLOOP_PYTHON_STUBS")
    if env:
        return Path(env)
    try:
        import importlib.util
        if importlib.util.find_spec("hyloop.v1.control_pb2") is not None:
            return None
    except ImportError:
        pass
    return Path(__file__).resolve().parents[3] / "build" / "python"


STUBS_DIR = _stubs_dir()
if STUBS_DIR is not None and str(STUBS_DIR) not in sys.path:
    sys.path.insert(0, str(STUBS_DIR))

try:
    from hyloop.v1 import control_pb2, control_pb2_grpc  # noqa: E402
except ImportError as e:  # pragma: no cover - depends on the build
    raise ImportError(
        f"hyloop_client: no generated stubs in {STUBS_DIR} (pip install ./clients/python, "
        "build the target hyloop_python_stubs, or set HYLOOP_PYTHON_STUBS)") from e

TERMINAL_STATES = frozenset({
    control_pb2.RUN_STATE_FINISHED,
    control_pb2.RUN_STATE_STOPPED,
    control_pb2.RUN_STATE_ESTOPPED,
    control_pb2.RUN_STATE_FAILED,
})

_MODES = {
    "lockstep": control_pb2.CLOCK_MODE_LOCKSTEP,
    "realtime": control_pb2.CLOCK_MODE_REAL_TIME,
    "real_time": control_pb2.CLOCK_MODE_REAL_TIME,
}


ROLES = ("observer", "operator", "coordinator")


def read_token(path: Union[str, os.PathLike]) -> str:
    """A token file: one line of 64 hex digits, not readable by group or others."""
    p = Path(path)
    mode = p.stat().st_mode & 0o777
    if mode & 0o077:
        raise ValueError(f"{p} has mode {mode:04o}: a token must not be readable by group or "
                         "others (chmod 600)")
    token = p.read_text().strip()
    if len(token) != 64 or any(c not in "0123456789abcdefABCDEF" for c in token):
        raise ValueError(f"{p}: a token is one line of 64 hex digits (hyloop certs writes them)")
    return token


def _channel(address: str, ca_file: Optional[Union[str, os.PathLike]],
             token_file: Optional[Union[str, os.PathLike]],
             security_dir: Optional[Union[str, os.PathLike]], role: str,
             insecure: bool) -> grpc.Channel:
    pair = ca_file is not None or token_file is not None
    if (security_dir is not None) + pair + bool(insecure) != 1:
        raise ValueError("give one of security_dir=DIR, ca_file=FILE with token_file=FILE, or "
                         "insecure=True (a development stack without TLS)")
    if insecure:
        return grpc.insecure_channel(address)
    if security_dir is not None:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r} (allowed: {', '.join(ROLES)})")
        ca_file = Path(security_dir) / "ca.crt"
        token_file = Path(security_dir) / "tokens" / role
    if ca_file is None or token_file is None:
        raise ValueError("ca_file and token_file go together")
    credentials = grpc.composite_channel_credentials(
        grpc.ssl_channel_credentials(root_certificates=Path(ca_file).read_bytes()),
        grpc.access_token_call_credentials(read_token(token_file)))
    return grpc.secure_channel(address, credentials)


def state_name(state: int) -> str:
    """Short name of a RunState value, e.g. "FINISHED"."""
    return control_pb2.RunState.Name(state).removeprefix("RUN_STATE_")


class HyloopClient:
    """Drives a coordinator: load a scenario, start, watch, stop and read results."""

    def __init__(self, address: str, timeout_s: float = 10.0, *,
                 ca_file: Optional[Union[str, os.PathLike]] = None,
                 token_file: Optional[Union[str, os.PathLike]] = None,
                 security_dir: Optional[Union[str, os.PathLike]] = None,
                 role: str = "operator", insecure: bool = False) -> None:
        """Connect to the coordinator at host:port; unary calls time out after timeout_s.

        Security (docs/security.md), exactly one of: ``ca_file`` and ``token_file`` (TLS trusting
        that CA, the token sent as ``authorization: Bearer <token>`` on every call);
        ``security_dir`` (its ca.crt and tokens/<role>); ``insecure=True`` (plaintext, for a
        stack started with --insecure).
        """
        self.address = address
        self.timeout_s = timeout_s
        self._channel = _channel(address, ca_file, token_file, security_dir, role, insecure)
        self._stub = control_pb2_grpc.ExperimentStub(self._channel)

    def __enter__(self) -> "HyloopClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def load_scenario(self, path_or_text: Union[str, os.PathLike],
                      overrides: Sequence[str] = ()) -> Any:
        """Validate a scenario (a file path or YAML text); returns LoadScenarioReply."""
        text, source = _scenario_text(path_or_text)
        request = control_pb2.LoadScenarioRequest(
            scenario_yaml=text, overrides=list(overrides), source_name=source)
        return self._stub.LoadScenario(request, timeout=self.timeout_s)

    def start(self, out_dir: Union[str, os.PathLike], mode: str = "lockstep") -> Any:
        """Start the loaded scenario; returns RunStatus (RUNNING, its out_dir the full path).

        out_dir names the run directory inside the coordinator's --runs-dir (a relative name:
        the coordinator refuses absolute paths and '..').
        """
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, not {mode!r}")
        request = control_pb2.StartRequest(out_dir=os.fspath(out_dir), mode=_MODES[mode])
        return self._stub.Start(request, timeout=self.timeout_s)

    def status(self) -> Any:
        """Current RunStatus."""
        return self._stub.GetStatus(control_pb2.StatusRequest(), timeout=self.timeout_s)

    def wait(self, timeout_s: Optional[float] = None, poll_s: float = 0.1) -> Any:
        """Poll until the run is in a terminal state; returns that RunStatus.

        Raises TimeoutError after timeout_s (None: wait forever).
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            status = self.status()
            if status.state in TERMINAL_STATES:
                return status
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(
                    f"run {status.run_id} still {state_name(status.state)} after "
                    f"{timeout_s} s (cycle {status.cycle}/{status.total_cycles})")
            time.sleep(poll_s)

    def telemetry(self, decimation: int = 10,
                  timeout_s: Optional[float] = None) -> Iterator[Dict[str, Any]]:
        """Yield {cycle, t, state, values: {name: value}} per frame until the run ends."""
        call = self._stub.StreamTelemetry(
            control_pb2.TelemetryRequest(decimation=decimation), timeout=timeout_s)
        names: List[str] = []
        try:
            for frame in call:
                if frame.names:
                    names = list(frame.names)
                yield {
                    "cycle": frame.cycle,
                    "t": frame.virtual_time_s,
                    "state": state_name(frame.state),
                    "values": dict(zip(names, frame.values)),
                }
        finally:
            call.cancel()

    def summary(self, run_id: str = "") -> Dict[str, Any]:
        """The run's summary.json as a dict (run_id "" is the latest run)."""
        reply = self._stub.GetRunSummary(
            control_pb2.RunSummaryRequest(run_id=run_id), timeout=self.timeout_s)
        return json.loads(reply.summary_json)

    def runs(self) -> List[Any]:
        """RunInfo of every run the coordinator knows."""
        reply = self._stub.ListRuns(control_pb2.ListRunsRequest(), timeout=self.timeout_s)
        return list(reply.runs)

    def stop(self) -> Any:
        """Stop the run (the run directory is written); returns RunStatus."""
        return self._stub.Stop(control_pb2.StopRequest(), timeout=self.timeout_s)

    def estop(self, reason: str) -> Any:
        """Emergency stop with a reason; returns RunStatus. It stays latched (start is refused)
        until reset()."""
        return self._stub.EmergencyStop(
            control_pb2.EmergencyStopRequest(reason=reason), timeout=self.timeout_s)

    def reset(self, reason: str = "") -> Any:
        """Clear a latched emergency stop (operator); returns RunStatus. Refused
        (FAILED_PRECONDITION) while a run is in progress."""
        return self._stub.Reset(control_pb2.ResetRequest(reason=reason), timeout=self.timeout_s)


def _scenario_text(path_or_text: Union[str, os.PathLike]) -> "tuple[str, str]":
    """(text, source name) of a scenario given as a path or as YAML text."""
    if isinstance(path_or_text, os.PathLike):
        path = Path(path_or_text)
        return path.read_text(encoding="utf-8"), str(path)
    if "\n" not in path_or_text and os.path.isfile(path_or_text):
        return Path(path_or_text).read_text(encoding="utf-8"), path_or_text
    return path_or_text, "<text>"
