"""The Python API against physics it must reproduce, and its refusals."""

import math
import pathlib

import numpy as np
import pytest

import axion
from conftest import REPOSITORY

G = 9.81


def sticking_creep(angle: float, dt: float) -> float:
    """The speed at which the incline's cube creeps while all four corners stick:
    each corner carries λ_t = m g sin θ / 4 and slips at c λ_t / ρ with ρ = m / (4 h),
    so v = c h g sin θ (docs/step.md, "Creep")."""
    return axion.FRICTION_CREEP * dt * G * math.sin(angle)


def test_per_world_friction_on_the_incline_slides_at_the_coulomb_rate():
    """μ below tan θ slides at g (sin θ − μ cos θ), exactly per backward Euler step;
    μ above it sticks, creeping at the solver's friction creep. One batch, one
    friction per world."""
    angle, dt, steps = 0.3, 0.01, 100
    mus = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.6])
    sim = axion.Simulator(axion.Model.incline(angle, 0.5), worlds=len(mus), dt=dt)
    sim.set_friction(mus)
    summary = sim.step(steps)
    assert summary["converged_steps"] == steps
    assert summary["converged_world_steps"] == steps * len(mus)
    cube = sim.model.body_names.index("cube")
    speed = sim.body_velocities()[:, cube, 0]
    slides = mus < math.tan(angle)
    a = G * (math.sin(angle) - mus[slides] * math.cos(angle))
    np.testing.assert_allclose(speed[slides], a * steps * dt, atol=1e-8)  # the solver's 1e-8 m/s tolerance
    creep = sticking_creep(angle, dt)
    # μ = 0.6: all four corners stick.
    np.testing.assert_allclose(speed[mus == 0.6], creep, rtol=1e-3)
    # μ = 0.4 is close to tan θ = 0.309: the lighter uphill corners may slip at μ λ_n,
    # so the two downhill corners carry the rest and creep faster, at most twice as fast.
    assert creep * (1 - 1e-3) <= speed[mus == 0.4][0] <= 2 * creep


def test_per_world_mass_sets_the_acceleration_of_a_pushed_cube():
    """On a level, frictionless floor a 5 N push accelerates each world's cube at F/m."""
    masses = np.array([1.0, 2.0, 4.0])
    sim = axion.Simulator(axion.Model.incline(0.0, 0.5), worlds=3, dt=0.01)
    sim.set_friction(0.0)
    sim.set_body_mass("cube", masses)
    sim.set_wrenches([5.0, 0.0, 0.0], bodies=["cube"])
    sim.step(50)
    np.testing.assert_allclose(sim.body_velocities()[:, 1, 0], 5.0 * 0.5 / masses, rtol=1e-9)
    sim.set_body_mass("cube", None)
    sim.reset()
    sim.step(50)
    np.testing.assert_allclose(sim.body_velocities()[:, 1, 0], 5.0 * 0.5, rtol=1e-9)


def test_pendulum_joint_angle_is_the_rod_angle_and_its_rate_moves_it():
    """The hinge angle equals the rod's geometric angle; backward Euler turns the hinge
    by exactly h q̇ per step."""
    dt = 0.01
    sim = axion.Simulator(axion.Model.pendulum(), worlds=2, dt=dt)
    previous = sim.joint_positions()[:, 0].copy()
    for _ in range(30):
        sim.step()
        q = sim.joint_positions()[:, 0]
        x, z = sim.body_poses()[:, 0, 0], sim.body_poses()[:, 0, 2]
        np.testing.assert_allclose(q, np.arctan2(-z, x), atol=1e-9)
        np.testing.assert_allclose((q - previous) / dt, sim.joint_velocities()[:, 0], atol=1e-7)
        previous = q.copy()
    energy = sim.energy()
    assert energy[0] == energy[1]


def test_wheels_reach_their_targets_and_the_robot_rolls_without_slipping():
    """Velocity drives by joint name: 2 rad/s on every wheel; after 3 s the wheels turn at
    2 rad/s and the chassis rolls forward at ω r = 0.72 m/s."""
    model = axion.Model.skid_steer()
    assert model.drive_modes == ["velocity"] * 3
    sim = axion.Simulator(model, worlds=1, dt=0.01)
    sim.set_velocity_targets(2.0, drives=["left_joint", "right_joint", "rear_joint"])
    sim.step(300)
    wheels = [model.joint_names.index(j) for j in ("left_joint", "right_joint", "rear_joint")]
    np.testing.assert_allclose(sim.joint_velocities()[0, wheels], 2.0, atol=1e-3)
    chassis = model.body_names.index("chassis")
    assert sim.body_velocities()[0, chassis, 0] == pytest.approx(2.0 * 0.36, abs=1e-3)


def test_stats_describe_every_world():
    """Three cubes stacked: 4 face corners on each of the 3 interfaces, each world's
    step converged with its contact residual under the solver's 1e-8 m/s, and the
    per-world iterations agree with the step's summary."""
    sim = axion.Simulator(axion.Model.stack(3), worlds=2, dt=0.01)
    summary = sim.step(1)
    stats = sim.stats()
    assert stats["converged"].shape == (2,) and stats["converged"].all()
    assert list(stats["contact_count"]) == [12, 12]
    assert (stats["contacts"] <= 1e-8).all()
    assert stats["iterations"].max() == summary["max_iterations"]
    assert list(stats["substeps"]) == [1, 1]
    # A stack set down converges its first step with the usual creep of sticking friction.
    assert stats["fallback_creep"].dtype == bool and not stats["fallback_creep"].any()
    # A first step has no factors kept from a step before: no chord step starts it.
    assert (stats["chord_steps"] < stats["iterations"]).all()


def test_state_round_trips_and_single_worlds_reset():
    sim = axion.Simulator(axion.Model.drop(), worlds=3, dt=0.01)
    start = sim.body_poses()
    sim.step(20)
    moved = sim.body_poses()
    assert not np.allclose(moved, start)
    sim.set_state(moved, sim.body_velocities())
    np.testing.assert_allclose(sim.body_poses(), moved, atol=1e-12)
    sim.reset(worlds=[1])
    poses = sim.body_poses()
    np.testing.assert_allclose(poses[1], start[1], atol=1e-12)
    np.testing.assert_allclose(poses[[0, 2]], moved[[0, 2]], atol=1e-12)
    assert np.all(sim.body_velocities()[1] == 0.0)


def test_errors_name_the_problem():
    sim = axion.Simulator(axion.Model.skid_steer(), worlds=2, dt=0.01)
    with pytest.raises(axion.AxionError, match="set_velocity_target"):
        sim.set_position_targets(1.0, drives=["left_joint"])
    with pytest.raises(KeyError, match="no joint named"):
        sim.set_velocity_targets(1.0, drives=["elbow"])
    with pytest.raises(ValueError, match="does not broadcast"):
        sim.set_velocity_targets(np.zeros((3, 3)))
    with pytest.raises(axion.AxionError, match="static"):
        sim.set_body_mass("ground", 2.0)
    with pytest.raises(axion.AxionError, match="positive"):
        sim.set_body_mass("chassis", -1.0)
    with pytest.raises(axion.AxionError, match="non-negative"):
        sim.set_friction(-0.5)
    with pytest.raises(IndexError):
        sim.reset(worlds=[5])
    with pytest.raises(ValueError, match="not finite"):
        sim.set_wrenches([np.nan, 0.0, 0.0])
    with pytest.raises(axion.AxionError, match="time step"):
        axion.Simulator(axion.Model.pendulum(), dt=0.0)
    with pytest.raises(ValueError, match="backend"):
        axion.Simulator(axion.Model.pendulum(), backend="tpu")


def test_files_load_with_their_messages(tmp_path: pathlib.Path):
    robot = axion.Model.load(REPOSITORY / "examples/robots/skid_steer.urdf")
    assert "chassis" in robot.body_names and "ground" in robot.body_names
    missing = tmp_path / "nowhere.urdf"
    with pytest.raises(axion.AxionError, match="nowhere.urdf"):
        axion.Model.load(missing)
    broken = tmp_path / "broken.urdf"
    broken.write_text('<robot name="r">\n  <link name="a">\n</robot>\n')
    with pytest.raises(axion.AxionError, match=r"broken\.urdf:\d+"):
        axion.Model.load(broken)
    scene = axion.Model.load(REPOSITORY / "examples/scenes/pendulum.toml")
    assert scene.dt == 0.01 and scene.warnings == []
    with pytest.warns(UserWarning, match="drive schedule"):
        swing = axion.Model.load(REPOSITORY / "examples/scenes/swing.json")
    assert any("set_position_targets" in w for w in swing.warnings)


def test_motor_forces_spin_a_wheel_with_its_armature(tmp_path: pathlib.Path):
    """An MJCF motor (gear 2, controls within ±1) on a wheel's hinge with armature 0.1:
    each world's joint force gear × ctrl, the last clamped by the control range,
    spins the wheel at n h τ / (I + a) exactly (backward Euler about a fixed axis)."""
    wheel = tmp_path / "wheel.xml"
    wheel.write_text(
        """<mujoco>
  <worldbody>
    <body name="wheel" pos="0 0 1">
      <joint name="spin" axis="0 0 1" armature="0.1"/>
      <geom type="cylinder" size="0.2 0.05" mass="1"/>
    </body>
  </worldbody>
  <actuator><motor joint="spin" gear="2" ctrlrange="-1 1"/></actuator>
</mujoco>
"""
    )
    model = axion.Model.load(wheel)
    assert model.drive_modes == ["force", "armature"]
    ctrl = np.array([0.5, -1.0, 3.0])
    sim = axion.Simulator(model, worlds=3, dt=0.01)
    sim.set_drive_forces((2.0 * ctrl)[:, None], drives=["spin"])
    sim.step(100)
    inertia = 1.0 * 0.2**2 / 2 + 0.1
    spin = model.joint_names.index("spin")
    np.testing.assert_allclose(
        sim.joint_velocities()[:, spin], 1.0 * 2.0 * np.clip(ctrl, -1, 1) / inertia, rtol=1e-9
    )
    np.testing.assert_allclose(sim.drive_forces()[:, 0], 2.0 * np.clip(ctrl, -1, 1), rtol=1e-9)
    with pytest.raises(axion.AxionError, match="set_drive_force"):
        sim.set_position_targets(0.0, drives=["spin"])


def test_demos_are_available_by_name():
    assert "double-pendulum" in axion.Model.demo_names()
    demo = axion.Model.demo("double-pendulum")
    assert demo.dt == 0.01
    with pytest.raises(KeyError):
        axion.Model.demo("no-such-demo")


def test_contact_forces_carry_the_weight_and_slide_at_mu_n():
    """World 0 rests on level ground, world 1 (μ 0.2 on a level floor pushed by 5 N)
    slides: normal forces sum to m g in both, the slider's friction is μ N against its
    motion, and the resting cube's contact wrench is its weight, upwards."""
    sim = axion.Simulator(axion.Model.incline(0.0, 0.5), worlds=2, dt=0.01)
    with pytest.raises(axion.AxionError, match="not stepped"):
        sim.contacts(0)
    sim.set_friction([np.nan, 0.2])
    sim.set_wrenches(np.array([[0.0, 0.0, 0.0], [5.0, 0.0, 0.0]])[:, None, :], bodies=["cube"])
    sim.step(30)
    cube = sim.model.body_names.index("cube")
    for world in (0, 1):
        c = sim.contacts(world)
        sign = np.where(c["body_a"] == cube, 1.0, -1.0)
        assert c["normal_force"].sum() == pytest.approx(G, rel=1e-9)
        friction = (sign[:, None] * c["friction_force"]).sum(axis=0)
        expected = [0.0, 0.0, 0.0] if world == 0 else [-0.2 * G, 0.0, 0.0]
        np.testing.assert_allclose(friction, expected, atol=1e-9)
        np.testing.assert_allclose(c["point"][:, 2], 0.0, atol=1e-6)
    wrenches = sim.contact_wrenches()
    assert wrenches.shape == (2, 2, 6)
    np.testing.assert_allclose(wrenches[0, cube], [0, 0, G, 0, 0, 0], atol=1e-9)
    sim.reset(worlds=[0])
    with pytest.raises(axion.AxionError, match="not stepped"):
        sim.contacts(0)
    assert len(sim.contacts(1)["normal_force"]) > 0


def test_a_robot_starts_at_the_joint_angles_given():
    """`initial_positions` by joint name: the cartpole's slider starts 0.3 m out and its
    pole 0.5 rad over, as joint_positions reads them before any step; the others at 0."""
    with pytest.warns(UserWarning, match="velocity limits of 1 joints"):
        model = axion.Model.load(
            REPOSITORY / "examples/robots/cartpole.urdf",
            fixed_base=True,
            initial_positions={"slider": 0.3, "hinge": 0.5},
        )
    sim = axion.Simulator(model, worlds=2)
    q = sim.joint_positions()
    names = model.joint_names
    np.testing.assert_allclose(q[:, names.index("slider")], 0.3, atol=1e-12)
    np.testing.assert_allclose(q[:, names.index("hinge")], 0.5, atol=1e-12)


def test_a_held_pole_settles_where_its_drive_carries_its_weight():
    """`hold_gains=(ke, kd)` holds the cartpole's start pose (slider 0.3 m out, pole
    0.5 rad over): the 20 kg pole, its centre of mass 1 m below the hinge, settles
    where the drive's torque ke (0.5 - q) equals gravity's m g sin q, the slider stays
    at its target, and the drive forces read back as those laws."""
    ke, kd = 2000.0, 600.0
    with pytest.warns(UserWarning):
        model = axion.Model.load(
            REPOSITORY / "examples/robots/cartpole.urdf",
            fixed_base=True,
            initial_positions={"slider": 0.3, "hinge": 0.5},
            hold_gains=(ke, kd),
        )
    assert sorted(model.drive_names) == ["hinge", "slider"]
    assert set(model.drive_modes) == {"position"}
    sim = axion.Simulator(model, worlds=1, dt=0.01)
    sim.step(2000)
    q = sim.joint_positions()[0]
    names = model.joint_names
    hinge, slider = q[names.index("hinge")], q[names.index("slider")]
    # ke (0.5 - q) = m g d sin q, by Newton's method.
    expected = 0.5
    for _ in range(50):
        f = ke * (0.5 - expected) - 20.0 * G * np.sin(expected)
        expected -= f / (-ke - 20.0 * G * np.cos(expected))
    assert hinge == pytest.approx(expected, abs=1e-8)
    assert slider == pytest.approx(0.3, abs=1e-8)
    forces = dict(zip(model.drive_names, sim.drive_forces()[0]))
    assert forces["hinge"] == pytest.approx(ke * (0.5 - expected), rel=1e-7)
    assert forces["slider"] == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="apply to URDF and MJCF files"):
        axion.Model.load(REPOSITORY / "examples/scenes/pendulum.toml", hold=True)


def test_a_refused_write_changes_nothing():
    """set_friction([0.1, -1]) is refused as a whole: world 0 keeps the model's μ 0.5 and
    sticks on the 0.3 rad slope (with μ 0.1 it would slide); set_state with a NaN
    velocity leaves the poses as they were."""
    sim = axion.Simulator(axion.Model.incline(0.3, 0.5), worlds=2, dt=0.01)
    with pytest.raises(axion.AxionError, match="non-negative"):
        sim.set_friction([0.1, -1.0])
    sim.step(50)
    np.testing.assert_allclose(sim.body_velocities()[0, 1, 0], sticking_creep(0.3, 0.01), rtol=1e-3)
    poses = sim.body_poses()
    moved = poses.copy()
    moved[:, 1, 2] += 1.0
    bad = np.zeros((2, 2, 6))
    bad[1, 1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        sim.set_state(moved, bad)
    np.testing.assert_array_equal(sim.body_poses(), poses)


def test_reading_from_another_thread_while_stepping_does_not_deadlock():
    """A thread steps (without the GIL) while the main thread keeps reading: both
    finish, and the reads see whole steps."""
    import threading

    sim = axion.Simulator(axion.Model.stack(3), worlds=4, dt=0.01, threads=1)
    worker = threading.Thread(target=lambda: sim.step(300))
    worker.start()
    times = []
    while worker.is_alive():
        times.append(sim.time)
        sim.body_poses()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert sim.time == pytest.approx(3.0)
    assert times == sorted(times)


def test_solver_settings_reach_the_cpu_and_are_checked():
    """`solver` takes a scene file's `[simulation.solver]` names. The incline's cube
    resting on level ground (angle 0) has four corners with w = 4/m each (1/m, and 3/m
    through its inertia m s²/6) carrying m g / 4: smoothed, it floats ε²/(2 h² g) above
    the ground; with the compliance κ alone it sinks κ h² g (docs/constraints.md,
    "Contact normal"). Unknown names, unusable values and settings the GPU lacks are
    refused by name."""
    dt, kappa = 0.01, 1e-4
    heights = []
    for solver in (None, {"contact_smoothing": 0.0, "contact_compliance": kappa}):
        sim = axion.Simulator(axion.Model.incline(0.0, 0.5), dt=dt, solver=solver)
        summary = sim.step(50)
        assert summary["converged_steps"] == 50
        heights.append(sim.body_poses()[0, sim.model.body_names.index("cube"), 2])
    float_smoothed = 1e-12 / (2 * dt * dt * G)
    sink = kappa * dt * dt * G
    assert heights[0] - heights[1] == pytest.approx(float_smoothed + sink, abs=4e-10)
    model = axion.Model.incline(0.0, 0.5)
    for solver, name in [
        ({"tolerance": 1e-9}, "tolerance"),
        ({"contact_compliance": -1.0}, "contact_compliance"),
        ({"split_depth": "deep"}, "split_depth"),
        ({"contact_smoothing": 0}, "contact_smoothing"),
        ({"compliant_retries": 1}, "compliant_retries"),
        ({"abandon_after": -1}, "abandon_after"),
    ]:
        with pytest.raises(ValueError, match=name):
            axion.Simulator(model, solver=solver)
    with pytest.raises(ValueError, match="contact_compliance"):
        axion.Simulator(model, backend="gpu", solver={"contact_compliance": 1e-8})
