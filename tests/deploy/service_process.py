"""One hyloop service binary as a child process of a deployment test."""
import ctypes
import os
import signal
import subprocess
import time


def die_with_parent():
    """The service gets SIGTERM if the test dies (no stray stack after a timeout)."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Service:
    """Starts build/bin/hyloop-NAME with --grpc-address ADDRESS and reads its
    `hyloop-NAME grpc HOST:PORT` line. `wrapper` prefixes the command (e.g. ip netns exec)."""

    def __init__(self, bindir, name, address, extra=(), wrapper=()):
        self.name = name
        cmd = [*wrapper, os.path.join(bindir, "hyloop-" + name), "--grpc-address", address,
               "--log-level", os.environ.get("HYLOOP_LOG", "warn"), *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                                     preexec_fn=die_with_parent)
        self.address = None
        deadline = time.time() + 30
        while time.time() < deadline and self.address is None:
            line = self.proc.stdout.readline()
            if not line:
                break
            parts = line.split()
            if len(parts) == 3 and parts[0] == "hyloop-" + name and parts[1] == "grpc":
                self.address = parts[2]
        if self.address is None:
            raise RuntimeError("hyloop-%s did not start (%s)" % (name, " ".join(cmd)))

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
