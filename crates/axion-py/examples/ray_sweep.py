"""A parameter sweep on Ray: friction × slope angle on the incline.

Each Ray task runs one slope angle as a batch of worlds, one world per friction
coefficient, in one process, and returns numpy arrays; the driver gathers them.

    python crates/axion-py/examples/ray_sweep.py                     # a local Ray on this machine
    python crates/axion-py/examples/ray_sweep.py --address auto      # the Ray cluster this node belongs to

On a cluster: `ray start --head` on one machine, `ray start --address HEAD_IP:6379`
on the others, the axion package installed on every node
(`pip install ./crates/axion-py`), then run this script on any node with
`--address auto` (or `--address ray://HEAD_IP:10001` from outside the cluster).
"""

from __future__ import annotations

import argparse

import numpy as np
import ray

import axion

G = 9.81


@ray.remote(num_cpus=1)
def slide(angle: float, mus: np.ndarray, duration: float = 1.0, dt: float = 0.01) -> dict:
    """Slides the unit cube down a slope of `angle` rad once per friction coefficient
    (one world each) for `duration` s; returns the distance slid and the final speed."""
    sim = axion.Simulator(axion.Model.incline(angle, 0.5), worlds=len(mus), dt=dt, threads=1)
    sim.set_friction(mus)
    cube = sim.model.body_names.index("cube")
    start = sim.body_poses()[:, cube, 0]
    summary = sim.step(round(duration / dt))
    return {
        "angle": angle,
        "mu": np.asarray(mus, dtype=float),
        "distance": sim.body_poses()[:, cube, 0] - start,
        "speed": sim.body_velocities()[:, cube, 0],
        "converged_steps": summary["converged_steps"],
        "steps": summary["steps"],
    }


def expected_distance(angle: float, mu: np.ndarray, steps: int, dt: float) -> np.ndarray:
    """Backward Euler's exact distance under the constant acceleration
    a = g (sin θ − μ cos θ) (zero where tan θ ≤ μ: the cube sticks):
    v_k = a k h, x_n = Σ v_k h = a h² n (n + 1) / 2."""
    a = np.maximum(G * (np.sin(angle) - mu * np.cos(angle)), 0.0)
    return a * dt * dt * steps * (steps + 1) / 2.0


def sweep(angles, mus, duration: float = 1.0, dt: float = 0.01) -> list[dict]:
    """One Ray task per angle; Ray must be initialised."""
    return ray.get([slide.remote(a, np.asarray(mus), duration, dt) for a in angles])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="Ray cluster address (default: start a local Ray)")
    parser.add_argument("--angles", type=int, default=8, help="slope angles from 5° to 40°")
    parser.add_argument("--frictions", type=int, default=16, help="friction coefficients from 0 to 1")
    args = parser.parse_args()
    ray.init(address=args.address)
    angles = np.radians(np.linspace(5.0, 40.0, args.angles))
    mus = np.linspace(0.0, 1.0, args.frictions)
    for r in sweep(angles, mus):
        sliding = r["mu"][r["distance"] > 1e-6]
        limit = f"slides for mu < {sliding.max():.3f}" if len(sliding) else "sticks for every mu"
        print(f"slope {np.degrees(r['angle']):5.1f}°: tan = {np.tan(r['angle']):.3f}, {limit}; "
              f"{r['converged_steps']}/{r['steps']} steps converged")


if __name__ == "__main__":
    main()
