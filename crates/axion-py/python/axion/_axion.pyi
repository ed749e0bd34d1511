"""Type stubs of the axion extension module (crates/axion-py/src/lib.rs)."""

from os import PathLike
from typing import Mapping, Optional, Sequence, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str
#: The CPU solver's default friction creep c: a sticking contact slips at c λ_t / ρ
#: (docs/step.md, "Creep").
FRICTION_CREEP: float

Key = Union[int, str]
ArrayLike = npt.ArrayLike

class AxionError(Exception):
    """An error of axion-rs: a model, file, state or step it cannot take, with its message."""

class StepSummary(TypedDict):
    steps: int
    converged_steps: int
    converged_world_steps: int
    mean_iterations: float
    max_iterations: int
    wall_seconds: float

class StepStats(TypedDict):
    iterations: npt.NDArray[np.uint64]
    chord_steps: npt.NDArray[np.uint64]
    converged: npt.NDArray[np.bool_]
    dynamics: npt.NDArray[np.float64]
    joints: npt.NDArray[np.float64]
    drives: npt.NDArray[np.float64]
    contacts: npt.NDArray[np.float64]
    friction: npt.NDArray[np.float64]
    contact_count: npt.NDArray[np.uint64]
    substeps: npt.NDArray[np.uint64]
    fallback_creep: npt.NDArray[np.bool_]

class Contacts(TypedDict):
    body_a: npt.NDArray[np.uint64]
    body_b: npt.NDArray[np.uint64]
    point: npt.NDArray[np.float64]
    normal: npt.NDArray[np.float64]
    gap: npt.NDArray[np.float64]
    normal_force: npt.NDArray[np.float64]
    friction_force: npt.NDArray[np.float64]

class Model:
    """Bodies, joints, drives and their collision shapes."""

    @staticmethod
    def load(
        path: Union[str, PathLike[str]],
        *,
        fixed_base: bool = False,
        self_collision: bool = False,
        package_paths: Sequence[Union[str, PathLike[str]]] = (),
        initial_positions: Mapping[str, float] = {},
        hold: bool = False,
        hold_gains: Optional[tuple[float, float]] = None,
    ) -> Model:
        """A URDF or MJCF robot on flat ground (or bolted down with fixed_base), or a
        scene file (.toml, .json). Import warnings are in `warnings`. `hold=True`
        puts a position drive on every revolute and prismatic joint holding its start
        coordinate, with gains scaled to the robot; `hold_gains=(ke, kd)` gives every
        such drive these gains instead (docs/robots.md, "Standing under drives")."""
    @staticmethod
    def demo(name: str) -> Model:
        """A built-in demo by name (see demo_names())."""
    @staticmethod
    def demo_names() -> list[str]: ...
    @staticmethod
    def pendulum() -> Model:
        """A 1 kg point mass on a 1 m rod hinged about y, released horizontal."""
    @staticmethod
    def incline(angle: float, mu: float) -> Model:
        """A 1 m, 1 kg cube on a slope of `angle` rad with friction `mu`."""
    @staticmethod
    def cartpole(cart_velocity: float = 0.0) -> Model:
        """A cart on a velocity-driven slider along y with a pole hanging from it."""
    @staticmethod
    def skid_steer(left: float = 0.0, right: float = 0.0, rear: float = 0.0) -> Model:
        """The three-wheeled skid-steer robot, wheel velocity drives at these rad/s."""
    @staticmethod
    def stack(n: int) -> Model:
        """`n` unit cubes stacked on the ground."""
    @staticmethod
    def drop(restitution: float = 0.0) -> Model:
        """A 1 kg ball dropped from 2 m onto the ground."""
    @property
    def body_names(self) -> list[str]: ...
    @property
    def joint_names(self) -> list[str]: ...
    @property
    def drive_names(self) -> list[str]:
        """For each drive, the name of the joint it drives."""
    @property
    def drive_modes(self) -> list[str]:
        """For each drive, "position", "velocity" or "force"."""
    @property
    def body_masses(self) -> npt.NDArray[np.float64]:
        """Each body's mass (kg; 0 for a static body)."""
    @property
    def dt(self) -> Optional[float]:
        """The time step a scene file or demo asks for."""
    @property
    def warnings(self) -> list[str]: ...

class Simulator:
    """`worlds` copies of a model stepped together by `dt` seconds."""

    def __init__(
        self,
        model: Model,
        worlds: int = 1,
        dt: Optional[float] = None,
        backend: str = "cpu",
        threads: int = 0,
        solver: Optional[Mapping[str, Union[int, float, bool]]] = None,
    ) -> None: ...
    def step(self, steps: int = 1) -> StepSummary:
        """Advances every world by `steps` steps (the GIL released while computing)."""
    @property
    def model(self) -> Model: ...
    @property
    def worlds(self) -> int: ...
    @property
    def time(self) -> float: ...
    @property
    def dt(self) -> float: ...
    @property
    def backend(self) -> str: ...
    def body_poses(self) -> npt.NDArray[np.float64]:
        """(worlds, bodies, 7): x, y, z, qx, qy, qz, qw of each body's reference frame."""
    def body_velocities(self) -> npt.NDArray[np.float64]:
        """(worlds, bodies, 6): centre-of-mass velocity and angular velocity, world frame."""
    def joint_positions(self) -> npt.NDArray[np.float64]:
        """(worlds, joints): angle or displacement; NaN for joints without one coordinate."""
    def joint_velocities(self) -> npt.NDArray[np.float64]:
        """(worlds, joints): rates of joint_positions."""
    def drive_forces(self) -> npt.NDArray[np.float64]:
        """(worlds, drives): drive forces of the last step (N or N·m)."""
    def energy(self) -> npt.NDArray[np.float64]:
        """(worlds,): kinetic plus gravitational energy (J)."""
    def contacts(self, world: int) -> Contacts:
        """The last step's contacts of one world with their forces (on body_a)."""
    def contact_wrenches(self) -> npt.NDArray[np.float64]:
        """(worlds, bodies, 6): total contact force and torque (about the COM) per body."""
    def stats(self) -> StepStats:
        """Per-world statistics of the last step."""
    def set_position_targets(
        self,
        positions: ArrayLike,
        velocities: Optional[ArrayLike] = None,
        drives: Optional[Sequence[Key]] = None,
    ) -> None: ...
    def set_velocity_targets(
        self, velocities: ArrayLike, drives: Optional[Sequence[Key]] = None
    ) -> None: ...
    def set_drive_forces(
        self, forces: ArrayLike, drives: Optional[Sequence[Key]] = None
    ) -> None: ...
    def set_wrenches(
        self,
        forces: ArrayLike,
        torques: Optional[ArrayLike] = None,
        bodies: Optional[Sequence[Key]] = None,
    ) -> None: ...
    def set_friction(self, mu: Optional[ArrayLike]) -> None:
        """Every contact's friction coefficient per world (NaN/None: the materials')."""
    def set_body_mass(self, body: Key, mass: Optional[ArrayLike]) -> None:
        """A dynamic body's mass per world, inertia scaled with it (NaN/None: the model's)."""
    def reset(self, worlds: Optional[Sequence[int]] = None) -> None: ...
    def set_state(self, poses: ArrayLike, velocities: Optional[ArrayLike] = None) -> None: ...
