#!/usr/bin/env python3
"""The limp drop of `axion run ROBOT.urdf`, in MuJoCo, for the comparison in
docs/robots.md: the robot on a free base, its lowest point about 1 mm above a ground
plane (its bounding spheres decide), friction 0.8, links colliding only with the ground
(axion-rs's default), MuJoCo's default solver settings otherwise; 2 s at each time step.

    pip install mujoco
    python3 scripts/mujoco_drop.py corpus/pybullet_data/a1/a1.urdf [more.urdf ...]

Prints, per robot and step: wall time per step, the deepest penetration once settled
(last 0.5 s), the fastest body speed, and whether the state stayed finite.
"""
import sys
import time

import mujoco
import numpy as np

STEPS = (0.005, 0.01, 0.02)
DURATION = 2.0


def drop(path, h, balance=False):
    spec = mujoco.MjSpec.from_file(path)
    spec.compiler.balanceinertia = balance
    root = spec.worldbody.first_body()
    if not root.joints:
        root.add_freejoint()
    for geom in spec.geoms:
        geom.conaffinity = 0
        geom.friction = [0.8, 0.005, 0.0001]
    spec.worldbody.add_geom(
        type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], contype=1, conaffinity=1,
        friction=[0.8, 0.005, 0.0001])
    spec.option.timestep = h
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    robot = [g for g in range(model.ngeom) if model.geom_bodyid[g] != 0]
    lowest = min(data.geom_xpos[g][2] - model.geom_rbound[g] for g in robot)
    data.qpos[2] += 1e-3 - lowest
    mujoco.mj_forward(model, data)
    steps = int(round(DURATION / h))
    settled_from = steps - int(round(0.5 / h))
    deepest, fastest = 0.0, 0.0
    start = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        if k >= settled_from and data.ncon:
            deepest = max(deepest, -min(c.dist for c in data.contact[: data.ncon]))
        fastest = max(fastest, float(np.abs(data.cvel[1:, 3:]).max(initial=0.0)))
    wall = time.perf_counter() - start
    finite = bool(np.isfinite(data.qpos).all())
    return wall / steps, deepest, fastest, finite


def main():
    print("robot | h | µs/step | penetration settled (mm) | fastest (m/s) | finite")
    for path in sys.argv[1:]:
        for h in STEPS:
            note = ""
            try:
                try:
                    result = drop(path, h)
                except ValueError as e:
                    if "balanceinertia" not in str(e):
                        raise
                    # MuJoCo refuses invalid inertias unless asked to balance them.
                    note = f" (refused: {str(e).splitlines()[0]}; run with balanceinertia)"
                    result = drop(path, h, balance=True)
            except ValueError as e:
                print(f"{path} | {h} | refused by MuJoCo: {str(e).splitlines()[0]}")
                continue
            per_step, deepest, fastest, finite = result
            print(f"{path} | {h} | {per_step * 1e6:.0f} | {deepest * 1e3:.2f} | {fastest:.2f} | {finite}{note}")


if __name__ == "__main__":
    main()
