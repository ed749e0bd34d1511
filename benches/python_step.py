"""Python-side cost of the axion bindings: the overhead of one `step` call over the
Rust step it wraps, and the cost of reading and writing the arrays.

    target/python-venv/bin/python benches/python_step.py     (after scripts/test.sh, or
                                                             pip install ./crates/axion-py)

For each scene, from the same initial state, `step(1)` called n times against `step(n)`
called once: the second pays the Python call once, so the difference per step is the
overhead of a call; `step(0)` is a call that steps nothing (argument parsing, the lock,
the summary dict). Each figure is the median of `repeats` runs.
"""

import statistics
import time

import numpy as np

import axion


def median_time(f, repeats=7, setup=lambda: None):
    times = []
    for _ in range(repeats):
        setup()
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench(name, model, worlds, n=2000):
    sim = axion.Simulator(model, worlds=worlds, dt=0.01, threads=1)

    def one_call():
        sim.step(n)

    def many_calls():
        for _ in range(n):
            sim.step()

    batched = median_time(one_call, setup=sim.reset) / n
    single = median_time(many_calls, setup=sim.reset) / n
    empty = median_time(lambda: [sim.step(0) for _ in range(n)]) / n
    reads = median_time(lambda: [sim.body_poses() for _ in range(n)]) / n
    joints = median_time(lambda: [sim.joint_positions() for _ in range(n)]) / n
    targets = np.zeros((worlds, len(model.drive_names)))
    writes = "–"
    if model.drive_names:
        seconds = median_time(lambda: [sim.set_velocity_targets(targets) for _ in range(n)]) / n
        writes = f"{seconds * 1e6:.2f} µs"
    print(f"| {name} | {worlds} | {batched * 1e6:.1f} µs | {single * 1e6:.1f} µs | "
          f"{(single - batched) * 1e6:.2f} µs | {empty * 1e6:.2f} µs | {reads * 1e6:.2f} µs | {joints * 1e6:.2f} µs | {writes} |")


if __name__ == "__main__":
    print("| scene | worlds | step, per step in step(n) | step(1) per call | difference per call | step(0) | body_poses() | joint_positions() | set_velocity_targets() |")
    print("|---|---|---|---|---|---|---|---|---|")
    bench("pendulum", axion.Model.pendulum(), 1)
    bench("skid-steer", axion.Model.skid_steer(2.0, 6.0, 4.0), 1, n=1000)
    bench("skid-steer", axion.Model.skid_steer(2.0, 6.0, 4.0), 16, n=200)
