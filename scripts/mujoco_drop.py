#!/usr/bin/env python3
"""The limp drop of `axion run ROBOT.urdf`, in MuJoCo, for the comparison in
docs/robots.md: the robot on a free base, its lowest point about 1 mm above a ground
plane (its bounding spheres decide), friction 0.8, links colliding only with the ground
(axion-rs's default), MuJoCo's default solver settings otherwise; 2 s at each time step.
An MJCF model (`.xml`) runs as written, as `axion run MODEL.xml` runs it, with only
its time step changed.

    pip install mujoco
    python3 scripts/mujoco_drop.py [--steps 0.002,0.01] corpus/pybullet_data/a1/a1.urdf [more ...]

Prints, per robot and step (0.005, 0.01 and 0.02 s unless `--steps`): wall time per
step, the deepest penetration once settled (last 0.5 s), the fastest body speed, and
whether the state stayed finite.
"""
import sys
import time

import mujoco
import numpy as np

STEPS = (0.005, 0.01, 0.02)
DURATION = 2.0


def as_written(path, h):
    """An MJCF model as its file writes it, stepped at `h`."""
    model = mujoco.MjModel.from_xml_path(path)
    model.opt.timestep = h
    return model, mujoco.MjData(model)


def drop(path, h, balance=False):
    if path.endswith(".xml"):
        model, data = as_written(path, h)
        return run(model, data, h)
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
    return run(model, data, h)


def run(model, data, h):
    """Steps `DURATION` at `h`; returns wall time per step, the deepest penetration of
    the last 0.5 s, the fastest body speed and whether the state stayed finite."""
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
    args = sys.argv[1:]
    steps = STEPS
    if args[:1] == ["--steps"]:
        steps = tuple(float(h) for h in args[1].split(","))
        args = args[2:]
    print("robot | h | µs/step | penetration settled (mm) | fastest (m/s) | finite")
    for path in args:
        for h in steps:
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
