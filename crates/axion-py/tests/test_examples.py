"""The examples a user copies: the vectorised environment and the Ray sweep."""

import numpy as np
import pytest

import axion

gym = pytest.importorskip("gymnasium")
ray = pytest.importorskip("ray")

from skid_steer_goal import SkidSteerGoalEnv, steer  # noqa: E402
import ray_sweep  # noqa: E402


def test_environment_follows_the_vector_api_and_the_controller_reaches_every_goal():
    env = SkidSteerGoalEnv(num_envs=8, max_steps=500)
    obs, info = env.reset(seed=1)
    assert obs.shape == (8, 5) and env.observation_space.contains(obs.astype(np.float64))
    assert np.all((obs[:, 2] >= 2.0) & (obs[:, 2] <= 4.0)), "goals 2 to 4 m away"
    arrived = np.zeros(8, dtype=bool)
    returns = np.zeros(8)
    for _ in range(env.max_steps):
        obs, reward, terminated, truncated, info = env.step(steer(obs))
        returns += np.where(arrived, 0.0, reward)
        arrived |= terminated
        assert not truncated.any(), "every robot reaches its goal before the time limit"
        if arrived.all():
            break
    assert arrived.all()
    if "final_obs" in info:
        assert info["final_obs"].shape == (8, 5)
    # Until arrival the rewards sum to the distance covered (2–4 m, less the 0.3 m
    # radius) plus the bonus.
    assert np.all(returns > 1.7 + env.goal_bonus) and np.all(returns < 4.0 + env.goal_bonus)


def test_a_sweep_on_ray_finds_the_coulomb_limit():
    """Four slopes × eight frictions in four Ray tasks on a local Ray: a cube slides
    exactly where μ < tan θ, by backward Euler's exact distance a h² n(n+1)/2. A cube
    that sticks creeps at the solver's friction creep, c h g sin θ with four sticking
    corners and at most twice that when the uphill corners slip (test_simulator.py), so
    distances agree within 2 c h g sin θ × the duration."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        angles = np.radians([10.0, 20.0, 30.0, 40.0])
        mus = np.linspace(0.05, 0.95, 8)
        duration = 0.5
        results = ray_sweep.sweep(angles, mus, duration=duration, dt=0.01)
    finally:
        ray.shutdown()
    assert [r["angle"] for r in results] == list(angles)
    for r in results:
        expected = ray_sweep.expected_distance(r["angle"], r["mu"], r["steps"], 0.01)
        creep = 2 * axion.FRICTION_CREEP * 0.01 * 9.81 * np.sin(r["angle"])
        np.testing.assert_allclose(r["distance"], expected, atol=creep * duration)
        slides = r["distance"] > 1e-6
        np.testing.assert_array_equal(slides, r["mu"] < np.tan(r["angle"]))
