#!/usr/bin/python3
"""A protocol peer playing OpenSees/OpenFresco: the one-bay frame of docs/opensees.md.

    opensees_frame_peer.py run  [--host H] [--port P] [--protocol generic-tcp|generic-client]
                                [--udp] [--pga-g 0.2] [--duration 20] [--out peer.csv]
    opensees_frame_peer.py plot RUN_DIR [--peer peer.csv] [--out frame.png]

`run` is the numerical substructure: a one-bay, one-storey frame (a rigid truss beam on two
columns, one lateral DOF) under El Centro 1940 NS (data/ground_motion). Column 1 is numerical
(k1); column 2 is the physical substructure at the site (hyloop's servo-hydraulic emulator):

    m·ü + c·u̇ + k1·u + r(u) = −m·a_g,       r = the force the site measures

integrated by explicit Newmark (γ = 1/2, β = 0, OpenSees' NewmarkExplicit): per step the
predicted displacement u_{n+1} = u_n + Δt·v_n + Δt²/2·a_n goes out as the trial, the site's
force comes back, then a_{n+1} = (−m·a_g − k1·u − r − c·(v_n + Δt/2·a_n)) / (m + c·Δt/2) and
v_{n+1} = v_n + Δt/2·(a_n + a_{n+1}). The messages are those of OpenFresco's
`expControl GenericTCP` (set-up ID ctrl disp, daq disp + force; per step trial 3, getDaq 6;
no commit; 99 at the end) or of OpenSees' `element genericClient` (ctrl disp, vel, accel, time,
daq force; trial 3, getForce 10, commit 5), sent the way their TCP_Socket does: host-order
doubles, one send per message, Nagle left on; with --udp as their UDP_Socket does (`-udp`): each
message sent with sendto() in datagrams of at most 9126 bytes, no handshake, a 10 s receive
timeout where OpenSees would wait forever.

`plot` draws the run directory the site recorded (samples.csv): the trial and the measured
displacement against time, the force against the displacement (the column's hysteresis), and,
with --peer, what the peer received over the recorded values (they must lie on each other).

Only Python's standard library, numpy and matplotlib (Agg) are used.
"""

import argparse
import csv
import os
import socket
import struct
import sys

DATA_SIZE = 256
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(ROOT, "data", "ground_motion", "elcentro_ns_1940.txt")
G = 9.80665


def read_elcentro(path=RECORD):
    """(dt, accelerations in g) of the AT2-like record in data/ground_motion."""
    with open(path) as f:
        lines = f.read().splitlines()
    dt = None
    values = []
    for line in lines:
        if "NPTS" in line.upper():
            dt = float(line.upper().split("DT=")[1].split()[0])
            continue
        try:
            row = [float(x) for x in line.split()]
        except ValueError:
            continue
        values.extend(row)
    return dt, values


def ground_at(dt, acc, t):
    """a_g(t) in g by linear interpolation (0 after the record)."""
    i = int(t / dt)
    if i + 1 >= len(acc):
        return 0.0
    w = t / dt - i
    return (1.0 - w) * acc[i] + w * acc[i + 1]


class Peer:
    """OpenSees' TCP_Socket: blocking, Nagle on (TCP_NODELAY 0), host-order doubles."""

    def __init__(self, host, port, setup):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        self.sock.sendall(struct.pack("<11i", *setup))
        self.msg = [0.0] * DATA_SIZE

    def send(self, code, values=()):
        self.msg[0] = float(code)
        for i, v in enumerate(values):
            self.msg[1 + i] = v
        self.sock.sendall(struct.pack("<%dd" % DATA_SIZE, *self.msg))

    def receive(self):
        want = 8 * DATA_SIZE
        data = b""
        while len(data) < want:
            chunk = self.sock.recv(want - len(data))
            if not chunk:
                raise ConnectionError("the site closed the connection (see its log)")
            data += chunk
        return struct.unpack("<%dd" % DATA_SIZE, data)

    def close(self):
        self.sock.close()


MAX_UDP_DATAGRAM = 9126


class UdpPeer(Peer):
    """OpenSees' UDP_Socket: sendto() in pieces of at most 9126 bytes, replies from the site."""

    def __init__(self, host, port, setup):
        self.site = (host, port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(10)
        self.sock.sendto(struct.pack("<11i", *setup), self.site)
        self.msg = [0.0] * DATA_SIZE

    def send(self, code, values=()):
        self.msg[0] = float(code)
        for i, v in enumerate(values):
            self.msg[1 + i] = v
        data = struct.pack("<%dd" % DATA_SIZE, *self.msg)
        for at in range(0, len(data), MAX_UDP_DATAGRAM):
            self.sock.sendto(data[at:at + MAX_UDP_DATAGRAM], self.site)

    def receive(self):
        want = 8 * DATA_SIZE
        data = b""
        while len(data) < want:
            try:
                piece, source = self.sock.recvfrom(65536)
            except socket.timeout:
                raise ConnectionError("no reply from the site within 10 s (see its log)")
            if source[1] == self.site[1] and len(piece) == min(want - len(data),
                                                               MAX_UDP_DATAGRAM):
                data += piece
        return struct.unpack("<%dd" % DATA_SIZE, data)


def run(args):
    dt = args.dt
    m, k1 = args.mass, args.k1
    omega = ((k1 + args.k2) / m) ** 0.5
    c = 2.0 * args.zeta * omega * m
    rec_dt, acc = read_elcentro()
    scale = args.pga_g / max(abs(a) for a in acc)
    generic_client = args.protocol == "generic-client"
    setup = [1, 1, 1, 0, 1, 0, 0, 0, 1, 0, DATA_SIZE] if generic_client else \
        [1, 0, 0, 0, 0, 1, 0, 0, 1, 0, DATA_SIZE]
    peer = (UdpPeer if args.udp else Peer)(args.host, args.port, setup)
    rows = []
    steps = int(round(args.duration / dt))
    try:
        step_frame(args, peer, (m, k1, c, scale, rec_dt, acc), rows, steps)
    except (ConnectionError, OSError) as e:
        print(f"the site ended the session at step {len(rows) + 1} ({e}): see its log and "
              f"run directory", file=sys.stderr)
        write_rows(args.out, rows)
        return 3
    peer.send(99)
    peer.close()
    write_rows(args.out, rows)
    peak = max(abs(r[2]) for r in rows)
    print(f"{steps} steps, T = {2 * 3.141592653589793 / omega:.3f} s, peak drift {peak:.4f} m; "
          f"wrote {args.out}", file=sys.stderr)
    return 0


def step_frame(args, peer, model, rows, steps):
    """Explicit Newmark over `steps` steps, one trial and one measurement each."""
    m, k1, c, scale, rec_dt, acc = model
    dt = args.dt
    generic_client = args.protocol == "generic-client"
    u = v = a = 0.0
    for n in range(steps):
        t = (n + 1) * dt
        u_next = u + dt * v + 0.5 * dt * dt * a
        v_pred = v + 0.5 * dt * a
        if generic_client:
            peer.send(3, (u_next, v_pred, a, t))
            peer.send(10)
            reply = peer.receive()
            d_meas, r = float("nan"), reply[0]
        else:
            peer.send(3, (u_next,))
            peer.send(6)
            reply = peer.receive()
            d_meas, r = reply[0], reply[1]
        p = -m * scale * ground_at(rec_dt, acc, t) * G
        a_next = (p - k1 * u_next - r - c * v_pred) / (m + 0.5 * c * dt)
        v = v + 0.5 * dt * (a + a_next)
        u, a = u_next, a_next
        if generic_client:
            peer.send(5)
        rows.append((n + 1, t, u, d_meas, r))


def write_rows(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["trial[-]", "time[s]", "u[m]", "d_received[m]", "f_received[N]"])
        for row in rows:
            w.writerow([repr(x) for x in row])


def read_columns(path):
    with open(path) as f:
        reader = csv.reader(f)
        header = next(reader)
        cols = {h: [] for h in header}
        for row in reader:
            for h, x in zip(header, row):
                cols[h].append(float(x))
    return cols


def plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = read_columns(os.path.join(args.run_dir, "samples.csv"))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    t = s["time[s]"]
    ax1.plot(t, [1e3 * x for x in s["d_trial[m]"]], label="trial (OpenSees)")
    ax1.plot(t, [1e3 * x for x in s["d_measured[m]"]], label="measured (site)", lw=0.8)
    ax1.set_xlabel("rig time [s]")
    ax1.set_ylabel("column top displacement [mm]")
    ax1.legend()
    ax2.plot([1e3 * x for x in s["d_measured[m]"]], [1e-3 * f for f in s["f_measured[N]"]],
             lw=0.7, label="recorded by the site")
    if args.peer:
        p = read_columns(args.peer)
        ax2.plot([1e3 * x for x in p["d_received[m]"]], [1e-3 * f for f in p["f_received[N]"]],
                 ls="none", marker=".", ms=1.5, label="received by the peer")
        same = p["f_received[N]"] == s["f_measured[N]"][:len(p["f_received[N]"])]
        print(f"peer's forces equal the recorded ones: {same}", file=sys.stderr)
    ax2.set_xlabel("measured displacement [mm]")
    ax2.set_ylabel("column force [kN]")
    ax2.legend()
    fig.suptitle(args.title or f"one-bay frame, physical column on the servo-hydraulic "
                 f"emulator ({os.path.basename(os.path.normpath(args.run_dir))})")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(args.out)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="drive the site with the one-bay frame")
    r.add_argument("--host", default="127.0.0.1")
    r.add_argument("--port", type=int, default=44000)
    r.add_argument("--protocol", choices=["generic-tcp", "generic-client"], default="generic-tcp")
    r.add_argument("--udp", action="store_true", help="UDP (OpenSees' -udp) instead of TCP")
    r.add_argument("--dt", type=float, default=0.01, help="step, s (the site's trial time)")
    r.add_argument("--duration", type=float, default=20.0, help="s of the record")
    r.add_argument("--pga-g", type=float, default=0.2, help="El Centro scaled to this peak, g")
    r.add_argument("--mass", type=float, default=5000.0, help="storey mass, kg")
    r.add_argument("--k1", type=float, default=2.0e5, help="numerical column, N/m")
    r.add_argument("--k2", type=float, default=2.0e5,
                   help="the physical column's stiffness, N/m (for the period and damping only)")
    r.add_argument("--zeta", type=float, default=0.02, help="damping ratio of the first mode")
    r.add_argument("--out", default="peer.csv")
    p = sub.add_parser("plot", help="plot a run directory the site recorded")
    p.add_argument("run_dir")
    p.add_argument("--peer", help="the peer's CSV (run --out) to overlay")
    p.add_argument("--out", default="frame.png")
    p.add_argument("--title", help="the figure's title")
    args = ap.parse_args(argv)
    return run(args) if args.command == "run" else plot(args)


if __name__ == "__main__":
    sys.exit(main())
