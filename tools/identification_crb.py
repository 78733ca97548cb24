#!/usr/bin/python3
"""Cramer-Rao bound of the identified phase of G_R at 10 Hz (docs/identification.md).

Usage: identification_crb.py [--sigma 1e-4]

For the DESIGN §6 default robot sampled with a zero-order hold at T = 2 ms (end-of-step
convention, model (b0 + b1 z^-1)/(1 + a1 z^-1 + a2 z^-2)) and white output noise sigma, the
output-error Fisher information is J^T J / sigma^2 with J = d y_hat / d theta (the same Jacobian
as core::fit_oe); the bound of the 10 Hz phase is sqrt(g^T (J^T J)^-1 g) sigma, g its gradient
(by central differences through the inverse ZOH). Printed for the paper's 3 Hz sine (N = 1501 and
5000) and the chirps of scenarios/sits/identify_chirp.yaml. Uses Debian's numpy and scipy.
"""

import argparse

import numpy as np
import scipy.linalg as sl
import scipy.signal as sig

T = 0.002
WN, ZETA, WZ = 2 * np.pi * 40, 0.6, 300.0
NUM = [WN**2 / WZ, WN**2]
DEN = [1, 2 * ZETA * WN, WN**2]


def sampled():
    a, b, c, _ = sig.tf2ss(NUM, DEN)
    m = sl.expm(np.block([[a, b], [np.zeros((1, 3))]]) * T)
    return m[:2, :2], m[:2, 2:], c


def simulate(u):
    ad, bd, c = sampled()
    x = np.zeros((2, 1))
    y = np.zeros(len(u))
    for k, uk in enumerate(u):
        x = ad @ x + bd * uk
        y[k] = (c @ x)[0, 0]
    return y


def theta_of(u, y):
    phi = np.column_stack([-y[1:-1], -y[:-2], u[2:], u[1:-1]])
    return np.linalg.lstsq(phi, y[2:], rcond=None)[0]


def phase_deg(theta, f_hz):
    a1, a2, b0, b1 = theta
    ad, bd, cd, _ = sig.tf2ss([b0, b1], [1, a1, a2])  # H(z)·z^-1: strictly proper
    log = sl.logm(np.block([[ad, bd], [np.zeros((1, 2)), np.eye(1)]])) / T
    s = 2j * np.pi * f_hz
    g = (cd @ np.linalg.solve(s * np.eye(2) - log[:2, :2], log[:2, 2:]))[0, 0]
    return np.degrees(np.angle(g))


def bound(u, sigma, f_hz=10.0):
    theta = theta_of(u, simulate(u))
    den = [1, theta[0], theta[1]]
    y_hat = sig.lfilter(theta[2:], den, u)
    uf = sig.lfilter([1], den, u)
    yf = sig.lfilter([1], den, y_hat)
    jac = np.zeros((len(u), 4))
    jac[1:, 0] = -yf[:-1]
    jac[2:, 1] = -yf[:-2]
    jac[:, 2] = uf
    jac[1:, 3] = uf[:-1]
    cov = np.linalg.inv(jac.T @ jac) * sigma**2
    grad = np.zeros(4)
    for i in range(4):
        d = np.zeros(4)
        d[i] = 1e-7
        grad[i] = (phase_deg(theta + d, f_hz) - phase_deg(theta - d, f_hz)) / 2e-7
    return float(np.sqrt(grad @ cov @ grad))


def chirp(n, amplitude, f0, f1):
    t = np.arange(n) * T
    return amplitude * np.sin(2 * np.pi * (f0 * t + (f1 - f0) * t**2 / (2 * t[-1])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sigma", type=float, default=1e-4)
    args = parser.parse_args()
    for n in (1501, 5000):
        u = 0.025 * np.sin(6 * np.pi * np.arange(n) * T)
        print(f"sine 3 Hz, A = 25 mm, N = {n}: {bound(u, args.sigma):.4f} deg")
    for amplitude, f1 in ((0.012, 20.0), (0.025, 20.0)):
        u = chirp(1501, amplitude, 1.0, f1)
        print(f"chirp 1-{f1:g} Hz, A = {amplitude * 1e3:g} mm, N = 1501: "
              f"{bound(u, args.sigma):.4f} deg")


if __name__ == "__main__":
    main()
