#!/usr/bin/env python3
"""The limp drop of `axion run ROBOT.urdf`, in MuJoCo, for the comparison in
docs/robots.md: the robot on a free base, its lowest point about 1 mm above a ground
plane (its bounding spheres decide), friction 0.8, links colliding only with the ground
(axion-rs's default), MuJoCo's default solver settings otherwise; 2 s at each time step.
An MJCF model (`.xml`) runs as written, as `axion run MODEL.xml` runs it, with only
its time step changed.

    pip install mujoco
    python3 scripts/mujoco_drop.py [--steps 0.002,0.01] [--hold] corpus/pybullet_data/a1/a1.urdf [more ...]

`--hold` is the standing scene of `axion run ROBOT --hold`: the drives, their targets
and gains are read from `axion check ROBOT --hold` (the `axion` program named by
`AXION`, else this checkout's `target/release/axion`), each becomes a MuJoCo position
actuator (force kp (ctrl - q) - kv q', bounded as axion-rs bounds it) in place of the
file's actuators, the joints start at their targets, and MuJoCo steps with its
`implicitfast` integrator (which takes the actuators' damping implicitly; their
stiffness stays explicit in every MuJoCo integrator).

Prints, per robot and step (0.005, 0.01 and 0.02 s unless `--steps`): wall time per
step, the deepest penetration once settled (last 0.5 s), the fastest body speed, and
whether the state stayed finite.
"""
import os
import pathlib
import re
import subprocess
import sys
import time

import mujoco
import numpy as np

STEPS = (0.005, 0.01, 0.02)
DURATION = 2.0


HOLD_LINE = re.compile(
    r'^hold: joint "(?P<joint>[^"]+)" at (?P<target>\S+) \S+, ke (?P<ke>\S+) \S+, '
    r"kd (?P<kd>\S+) \S+, at most (?P<max>\S+) "
)


def holding_drives(path):
    """The drives `axion check PATH --hold` prints: joint -> (target, ke, kd, max force)."""
    axion = os.environ.get(
        "AXION", str(pathlib.Path(__file__).resolve().parent.parent / "target/release/axion")
    )
    out = subprocess.run(
        [axion, "check", path, "--hold"], capture_output=True, text=True, check=True
    ).stdout
    drives = {}
    for line in out.splitlines():
        m = HOLD_LINE.match(line)
        if m:
            drives[m["joint"]] = tuple(float(m[k]) for k in ("target", "ke", "kd", "max"))
    return drives


def hold(spec, drives):
    """Replaces the spec's actuators by position actuators holding `drives`."""
    for actuator in list(spec.actuators):
        spec.delete(actuator)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    for joint, (target, ke, kd, most) in drives.items():
        actuator = spec.add_actuator(name=f"hold_{joint}", target=joint)
        actuator.trntype = mujoco.mjtTrn.mjTRN_JOINT
        actuator.set_to_position(kp=ke, kv=kd)
        if np.isfinite(most):
            actuator.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            actuator.forcerange = [-most, most]


def start_held(model, data, drives):
    """Starts the held joints at their targets and sets the controls to them."""
    for joint, (target, *_rest) in drives.items():
        j = model.joint(joint)
        data.qpos[j.qposadr[0]] = target
        data.ctrl[model.actuator(f"hold_{joint}").id] = target


def drop(path, h, balance=False, drives=None):
    if path.endswith(".xml"):
        if drives is None:
            model = mujoco.MjModel.from_xml_path(path)
            model.opt.timestep = h
            return run(model, mujoco.MjData(model), h)
        spec = mujoco.MjSpec.from_file(path)
        hold(spec, drives)
        spec.option.timestep = h
        model = spec.compile()
        data = mujoco.MjData(model)
        start_held(model, data, drives)
        return run(model, data, h)
    spec = mujoco.MjSpec.from_file(path)
    spec.compiler.balanceinertia = balance
    if drives is not None:
        hold(spec, drives)
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
    if drives is not None:
        start_held(model, data, drives)
    mujoco.mj_forward(model, data)
    robot = [g for g in range(model.ngeom) if model.geom_bodyid[g] != 0]
    lowest = min(data.geom_xpos[g][2] - model.geom_rbound[g] for g in robot)
    data.qpos[2] += 1e-3 - lowest
    mujoco.mj_forward(model, data)
    return run(model, data, h)


def run(model, data, h):
    """Steps `DURATION` at `h`; returns wall time per step, the deepest penetration of
    the last 0.5 s, the fastest body speed and whether the state stayed finite (not
    reset by MuJoCo for diverging accelerations)."""
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
    # MuJoCo resets a state whose accelerations blow up (and warns): count that too.
    blew_up = data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0
    finite = bool(np.isfinite(data.qpos).all()) and not blew_up
    return wall / steps, deepest, fastest, finite


def main():
    args = sys.argv[1:]
    steps = STEPS
    if args[:1] == ["--steps"]:
        steps = tuple(float(h) for h in args[1].split(","))
        args = args[2:]
    held = args[:1] == ["--hold"]
    if held:
        args = args[1:]
    print("robot | h | µs/step | penetration settled (mm) | fastest (m/s) | finite")
    for path in args:
        drives = holding_drives(path) if held else None
        for h in steps:
            note = ""
            try:
                try:
                    result = drop(path, h, drives=drives)
                except ValueError as e:
                    if "balanceinertia" not in str(e):
                        raise
                    # MuJoCo refuses invalid inertias unless asked to balance them.
                    note = f" (refused: {str(e).splitlines()[0]}; run with balanceinertia)"
                    result = drop(path, h, balance=True, drives=drives)
            except ValueError as e:
                print(f"{path} | {h} | refused by MuJoCo: {str(e).splitlines()[0]}")
                continue
            per_step, deepest, fastest, finite = result
            print(f"{path} | {h} | {per_step * 1e6:.0f} | {deepest * 1e3:.2f} | {fastest:.2f} | {finite}{note}")


if __name__ == "__main__":
    main()
