"""axion-rs from Python: rigid-body physics for robotics with exact contacts, friction
and joints, stepping batches of worlds.

    import axion
    sim = axion.Simulator(axion.Model.incline(0.3, 0.5), worlds=4, dt=0.01)
    sim.set_friction([0.1, 0.2, 0.3, 0.4])
    sim.step(100)
    print(sim.body_velocities()[:, 1, 0])   # the cube's speed down the slope, per world

See docs/python.md in the repository.
"""

from ._axion import FRICTION_CREEP, AxionError, Model, Simulator, __version__

__all__ = ["FRICTION_CREEP", "AxionError", "Model", "Simulator", "__version__"]
