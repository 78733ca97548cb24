#!/usr/bin/python3
"""Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/) from real inputs:
encoded loop messages of every kind (codec), the shipped scenarios (scenario) and control-plane
requests (requests). Deterministic; run it again after a proto or input-format change:

    /usr/bin/python3 tests/fuzz/make_corpus.py BUILD_DIR   # BUILD_DIR/python holds the stubs
"""
import hashlib
import math
import pathlib
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
RUN_ID = "fuzz-run"


def write(target, name, data):
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_bytes(data)


def loop_messages(loop_pb2):
    """One filled message of each kind, in the codec target's kind order."""
    measurement = loop_pb2.Frame(values=[0.0125, -0.31, -12.5])  # x_robot, v_robot, f_meas
    command = loop_pb2.Frame(values=[0.02, 0.1])  # set point, rate
    any_length = loop_pb2.Frame(values=[1.5, -2.5, 0.25, 4.0])
    telemetry = loop_pb2.Telemetry(names=["x[m]", "F[N]"], values=[0.01, -3.5],
                                   deadline_misses=4, lateness_ns=52000, rejected=2,
                                   event=loop_pb2.LOOP_EVENT_STOP, event_detail="limit")
    return [("measurement", measurement), ("command", command), ("frame", any_length),
            ("telemetry", telemetry)]


def codec_corpus(loop_pb2):
    # config: kind, mode, max age ms, first cycle (LE16), max_bytes selector (64 << 6 = 4096)
    # record: length (LE16), truncation, now_ns (LE64), bytes
    for kind, (name, msg) in enumerate(loop_messages(loop_pb2)):
        for mode in (0, 1):
            records = b""
            cycles = [5, 6, 6, 4, 8] if mode == 1 else [5, 6, 6, 4, 8, 7]
            for i, cycle in enumerate(cycles):
                msg.header.run_id = RUN_ID if i != 3 else "other-run"
                msg.header.cycle = cycle
                msg.header.virtual_time_s = cycle * 0.002
                msg.header.send_time_ns = 1_000_000_000 + cycle * 2_000_000
                msg.header.sender = 2
                msg.header.origin_time_ns = msg.header.send_time_ns - 100_000
                body = msg.SerializeToString()
                now = msg.header.send_time_ns + (50_000_000 if i == 4 else 300_000)
                records += struct.pack("<HBq", len(body), 0, now) + body
            # a truncated receive, a message with trailing garbage
            records += struct.pack("<HBq", 4, 20, 0) + body[:4]
            records += struct.pack("<HBq", len(body) + 2, 0, 0) + body + b"\x00\x00"
            config = struct.pack("<BBBHB", kind, mode, 10, 5, 6)
            write("codec", f"{name}_{'realtime' if mode else 'lockstep'}",
                  config + records)


def scenario_corpus():
    overrides = {
        "sits": ["model.mass_kg=250", "timing.duration_s=0.5"],
        "rht": ["ground_motion.peak_g=0.1", "servo.omega_rad_s=48"],
        "fcu": ["timing.duration_s=1"],
        "vrths": ["timing.duration_s=1", "controller.type=ats", "guard.window_s=0.1"],
    }
    for path in sorted((ROOT / "scenarios").rglob("*.yaml")):
        text = path.read_bytes()
        name = f"{path.parent.name}_{path.stem}"
        write("scenario", name, text)
    # overrides: exercise the --set path (kinds: the first line of each folder's files)
    for folder, sets in overrides.items():
        first = sorted((ROOT / "scenarios" / folder).glob("*.yaml"))[0]
        data = first.read_bytes().rstrip(b"\n") + b"\n#--set\n" + "\n".join(sets).encode()
        write("scenario", f"{folder}_{first.stem}_set", data)


def requests_corpus(control_pb2):
    """Seeds of the requests target: selector byte, then the serialised request."""
    wn, zeta, wz = 2 * math.pi * 40, 0.6, 300.0
    loop = control_pb2.LoopParameters(
        m_e=500, k_tc=20000, b_tc=50, tau_s=0.002, t_c=0.004, force_delay=True,
        control_cycle=True, robot=True, robot_zeros_re=[-wz], robot_zeros_im=[0.0],
        robot_poles_re=[-zeta * wn, -zeta * wn],
        robot_poles_im=[wn * math.sqrt(1 - zeta * zeta), -wn * math.sqrt(1 - zeta * zeta)],
        robot_gain=wn * wn / wz, k_h=100)
    bypassed = control_pb2.LoopParameters(m_e=500, k_tc=20000, b_tc=0, tau_s=0.002, t_c=0.004,
                                          force_delay=True, control_cycle=False, robot=False)
    for selector, name in ((0, "polynomial"), (1, "routh"), (3, "gains")):
        write("requests", f"{name}_table1", bytes([selector]) + loop.SerializeToString())
        write("requests", f"{name}_bypassed", bytes([selector]) + bypassed.SerializeToString())
    for name, coeffs in (("quadratic", [2.0, 3.0, 1.0]), ("cubic", [1.0, 0.5, -2.0, 1.0]),
                         ("zero", [0.0, 0.0]), ("degree12", [1.0 / (k + 1) for k in range(13)])):
        msg = control_pb2.PolynomialMessage(ascending=coeffs)
        write("requests", f"roots_{name}", bytes([2]) + msg.SerializeToString())
    # an ARX(2, 2, 1) system driven by a sweep
    u = [math.sin(0.05 * k + 0.001 * k * k) for k in range(80)]
    y = [0.0, 0.0]
    for k in range(2, 80):
        y.append(1.5 * y[k - 1] - 0.7 * y[k - 2] + 0.1 * u[k - 1] + 0.05 * u[k - 2])
    fit = control_pb2.FitArxRequest(input=u, output=y, na=2, nb=2, nk=1, sample_time_s=0.002)
    write("requests", "fit_arx", bytes([4]) + fit.SerializeToString())
    model = control_pb2.ArxModelMessage(a=[-1.5, 0.7], b=[0.1, 0.05], delay_steps=1,
                                        sample_time_s=0.002, fit_percent=99.0)
    write("requests", "set_model", bytes([5]) + model.SerializeToString())
    for p, f in ((4, 0.97), (7, 0.0), (5, 1.5)):
        rls = control_pb2.OnlineRlsRequest(parameters=p, forgetting_factor=f)
        write("requests", f"online_rls_{p}", bytes([6]) + rls.SerializeToString())
    for path, overrides in (("sits/table1_scvg.yaml", ["timing.duration_s=1"]),
                            ("rht/p4.yaml", []), ("fcu/polynomial.yaml", ["timing.duration_s=2"])):
        text = (ROOT / "scenarios" / path).read_text()
        req = control_pb2.LoadScenarioRequest(scenario_yaml=text, overrides=overrides,
                                              source_name=path)
        write("requests", "load_" + path.replace("/", "_").replace(".yaml", ""),
              bytes([7]) + req.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, str(pathlib.Path(sys.argv[1]).resolve() / "python"))
    from hyloop.v1 import control_pb2  # noqa: E402 (generated stubs)
    from hyloop.v2 import loop_pb2  # noqa: E402
    codec_corpus(loop_pb2)
    requests_corpus(control_pb2)
    scenario_corpus()
    for target in sorted(p.name for p in CORPUS.iterdir()):
        files = list((CORPUS / target).iterdir())
        digest = hashlib.sha256(b"".join(f.read_bytes() for f in sorted(files))).hexdigest()[:12]
        print(f"{target}: {len(files)} files, sha256 {digest}")


if __name__ == "__main__":
    main()
