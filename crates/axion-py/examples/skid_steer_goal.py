"""A vectorised Gymnasium environment: the skid-steer robot drives to a goal.

Every environment of the batch is one world of a single axion Simulator, so one
`step` call advances all of them (on every core). Copy this file to start your own
environment: the parts to change are `_observe`, the reward in `step` and the goal.

    python crates/axion-py/examples/skid_steer_goal.py      # drives 16 robots to their goals

Action (per environment): left and right wheel speed commands in [-1, 1], times
`max_wheel_speed` rad/s (the rear wheel gets their mean). Observation: the goal's
position in the chassis frame (forward, left; m), its distance (m), the chassis's
forward speed (m/s) and yaw rate (rad/s). Reward: the distance gained in the step, plus
`goal_bonus` on arrival. An environment terminates within `goal_radius` of its goal and
is truncated after `max_steps`; either way it is reset in the same step (Gymnasium's
same-step autoreset: the last observation is in info["final_obs"]).
"""

from __future__ import annotations

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode, VectorEnv

import axion

WHEEL_RADIUS = 0.36  # m, the cylinders of examples/robots/skid_steer.urdf
HALF_TRACK = 0.36  # m, the side wheels' distance from the chassis's centre line


def yaw_of(quaternions: np.ndarray) -> np.ndarray:
    """The heading (rad) of x, y, z, w quaternions about the world z axis."""
    x, y, z, w = quaternions.T
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


class SkidSteerGoalEnv(VectorEnv):
    """`num_envs` skid-steer robots, each driving to its own goal on flat ground."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 16,
        dt: float = 0.02,
        max_steps: int = 500,
        max_wheel_speed: float = 8.0,
        goal_radius: float = 0.3,
        goal_bonus: float = 10.0,
        threads: int = 0,
    ):
        self.num_envs = num_envs
        self.max_steps = max_steps
        self.max_wheel_speed = max_wheel_speed
        self.goal_radius = goal_radius
        self.goal_bonus = goal_bonus
        self.sim = axion.Simulator(axion.Model.skid_steer(), worlds=num_envs, dt=dt, threads=threads)
        names = self.sim.model.body_names
        self.chassis = names.index("chassis")
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float64)
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(5,), dtype=np.float64)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.goals = np.zeros((num_envs, 2))
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.distance = np.zeros(num_envs)
        self._rng = np.random.default_rng()

    def _new_goals(self, which: np.ndarray) -> None:
        """Goals 2 to 4 m from the start, in any direction."""
        n = int(which.sum())
        angle = self._rng.uniform(-np.pi, np.pi, n)
        radius = self._rng.uniform(2.0, 4.0, n)
        self.goals[which] = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)

    def _observe(self) -> np.ndarray:
        pose = self.sim.body_poses()[:, self.chassis]
        velocity = self.sim.body_velocities()[:, self.chassis]
        yaw = yaw_of(pose[:, 3:7])
        c, s = np.cos(yaw), np.sin(yaw)
        d = self.goals - pose[:, :2]
        forward, left = c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]
        self.distance = np.hypot(d[:, 0], d[:, 1])
        speed = c * velocity[:, 0] + s * velocity[:, 1]
        return np.stack([forward, left, self.distance, speed, velocity[:, 5]], axis=1)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.sim.reset()
        self.sim.set_velocity_targets(0.0)
        self.steps[:] = 0
        self._new_goals(np.ones(self.num_envs, dtype=bool))
        return self._observe(), {}

    def step(self, actions):
        a = np.clip(np.asarray(actions, dtype=np.float64), -1.0, 1.0) * self.max_wheel_speed
        wheels = np.stack([a[:, 0], a[:, 1], a.mean(axis=1)], axis=1)
        self.sim.set_velocity_targets(wheels, drives=["left_joint", "right_joint", "rear_joint"])
        before = self.distance.copy()
        self.sim.step()
        self.steps += 1
        obs = self._observe()
        terminated = self.distance < self.goal_radius
        truncated = (self.steps >= self.max_steps) & ~terminated
        reward = before - self.distance + self.goal_bonus * terminated
        info = {}
        done = terminated | truncated
        if done.any():
            info["final_obs"] = obs.copy()
            info["_final_obs"] = done
            # The next step sets every world's wheel targets again.
            self.sim.reset(worlds=np.flatnonzero(done).tolist())
            self.steps[done] = 0
            self._new_goals(done)
            obs = self._observe()
        return obs, reward, terminated, truncated, info


def steer(obs: np.ndarray, max_wheel_speed: float = 8.0) -> np.ndarray:
    """A unicycle controller: turn towards the goal, drive forward as it comes into view.
    Wheel speeds are (v ∓ ω b) / r for forward speed v and turn rate ω."""
    forward, left, distance = obs[:, 0], obs[:, 1], obs[:, 2]
    heading = np.arctan2(left, forward)
    v = np.clip(1.0 * distance, 0.0, 1.5) * np.clip(np.cos(heading), 0.0, 1.0)
    omega = 2.0 * heading
    left_wheel = (v - omega * HALF_TRACK) / WHEEL_RADIUS
    right_wheel = (v + omega * HALF_TRACK) / WHEEL_RADIUS
    return np.clip(np.stack([left_wheel, right_wheel], axis=1) / max_wheel_speed, -1.0, 1.0)


if __name__ == "__main__":
    env = SkidSteerGoalEnv(num_envs=16)
    obs, _ = env.reset(seed=0)
    arrived = np.zeros(env.num_envs, dtype=bool)
    for k in range(env.max_steps):
        obs, reward, terminated, truncated, info = env.step(steer(obs))
        arrived |= terminated
        if arrived.all():
            break
    print(f"{arrived.sum()} of {env.num_envs} robots reached their goal in {(k + 1) * env.sim.dt:.2f} s of simulated time")
