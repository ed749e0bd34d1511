//! Python bindings of axion-rs: the `axion._axion` extension module behind the `axion`
//! Python package (`crates/axion-py/python/axion`).
//!
//! A `Model` (`PyModel`) is loaded from a file (URDF, MJCF, scene file) or built from a
//! built-in scene; a `Simulator` (`PySimulator`) steps a batch of its worlds and reads and writes
//! them as numpy arrays shaped `(worlds, …)`. Array outputs are fresh arrays (poses
//! are converted from the centre-of-mass poses the solver keeps to the reference
//! frames the user placed, so there is nothing to share without a copy); inputs are
//! read in place. Every error of the library becomes an [`AxionError`] (or a
//! `ValueError`/`IndexError`/`KeyError` for a badly shaped argument) with the
//! library's message.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use axion::math::Pose;
use axion::{BackendChoice, BodyId, DriveId, JointId, Model, SolverSettings, State};
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use numpy::ndarray::{Array1, Array2, Array3, ArrayViewD, IxDyn};
use numpy::{AllowTypeChange, IntoPyArray, PyArray1, PyArray2, PyArray3, PyArrayLikeDyn};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyIndexError, PyKeyError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The most steps `Simulator.step` runs between two checks for Ctrl-C.
const MAX_BLOCK: usize = 1024;

create_exception!(
    _axion,
    AxionError,
    PyException,
    "An error of axion-rs: a model, file, state or step it cannot take, with its message."
);

/// Any library error as an [`AxionError`] carrying its message.
fn axion_err(e: impl std::fmt::Display) -> PyErr {
    AxionError::new_err(e.to_string())
}

/// A body, joint or drive given by index or by name.
#[derive(FromPyObject)]
enum Key {
    Index(usize),
    Name(String),
}

/// A model: bodies, joints, drives and their collision shapes. Load one with
/// `Model.load`, or build a built-in scene (`Model.pendulum()`, `Model.incline(…)`, …).
#[pyclass(name = "Model", module = "axion", frozen)]
struct PyModel {
    model: Model,
    /// The time step a scene file asks for.
    dt: Option<f64>,
    warnings: Vec<String>,
}

impl PyModel {
    fn built(model: Result<Model, impl std::fmt::Display>) -> PyResult<Self> {
        Ok(Self {
            model: model.map_err(axion_err)?,
            dt: None,
            warnings: Vec::new(),
        })
    }

    fn body(&self, key: Key) -> PyResult<BodyId> {
        let n = self.model.bodies().len();
        match key {
            Key::Index(i) if i < n => Ok(BodyId(i)),
            Key::Index(i) => Err(PyIndexError::new_err(format!(
                "body {i} does not exist (the model has {n})"
            ))),
            Key::Name(name) => self
                .model
                .body_id(&name)
                .ok_or_else(|| PyKeyError::new_err(format!("no body is named {name:?}"))),
        }
    }

    /// A drive by index, or by the name of the joint it drives.
    fn drive(&self, key: Key) -> PyResult<DriveId> {
        let n = self.model.drives().len();
        match key {
            Key::Index(i) if i < n => Ok(DriveId(i)),
            Key::Index(i) => Err(PyIndexError::new_err(format!(
                "drive {i} does not exist (the model has {n})"
            ))),
            Key::Name(name) => self
                .model
                .drive_id(&name)
                .ok_or_else(|| PyKeyError::new_err(format!("no joint named {name:?} has a drive"))),
        }
    }
}

#[pymethods]
impl PyModel {
    /// Loads a robot (URDF or MJCF, told apart by content) or a scene file (`.toml`,
    /// `.json`). A robot is set up as `axion run` sets it up: on flat ground (μ 0.8)
    /// with its lowest point 1 mm above it, or bolted to the world with
    /// `fixed_base=True`; `package_paths` are searched for `package://` meshes before
    /// `ROS_PACKAGE_PATH`; `initial_positions` gives joints their start angle or
    /// offset by name (rad or m; the others start as the file describes them);
    /// `hold=True` holds the start pose with a position drive on every revolute and
    /// prismatic joint, its gains scaled to the robot, and `hold_gains=(ke, kd)` with
    /// these gains on every joint (docs/robots.md, "Standing under drives"). What the
    /// import repaired or left out is in `warnings` (and issued as one Python warning).
    #[staticmethod]
    #[pyo3(signature = (path, *, fixed_base=false, self_collision=false, package_paths=Vec::new(), initial_positions=std::collections::HashMap::new(), hold=false, hold_gains=None))]
    #[allow(clippy::too_many_arguments)]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        fixed_base: bool,
        self_collision: bool,
        package_paths: Vec<PathBuf>,
        initial_positions: std::collections::HashMap<String, f64>,
        hold: bool,
        hold_gains: Option<(f64, f64)>,
    ) -> PyResult<Self> {
        let setup = axion_cli::RobotSetup {
            fixed_base,
            package_paths,
            self_collision,
            initial_positions,
            hold: axion_cli::Hold::from_options(hold, hold_gains)
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
        };
        let (model, dt, warnings, schedules, forces) = if axion_cli::is_robot(&path) {
            let (model, imported) = axion_cli::robot_model(&path, &setup).map_err(axion_err)?;
            (model, None, imported.warnings, 0, 0)
        } else if setup.any_given() {
            return Err(PyValueError::new_err(format!(
                "{}: fixed_base, self_collision, package_paths, initial_positions, hold and hold_gains apply to URDF and MJCF files; a scene file sets them on its [[robots]] entry",
                path.display()
            )));
        } else {
            let scene = axion::load_scene(&path).map_err(axion_err)?;
            let (schedules, forces) = (scene.schedules.len(), scene.forces.len());
            (
                scene.model,
                Some(scene.settings.dt),
                scene.warnings,
                schedules,
                forces,
            )
        };
        let mut warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        if schedules > 0 {
            warnings.push(format!(
                "{}: {schedules} drive schedule(s) (`targets = [[t, value], …]`) are applied by the axion command, not by the Python Simulator: set targets with set_position_targets / set_velocity_targets",
                path.display()
            ));
        }
        if forces > 0 {
            warnings.push(format!(
                "{}: {forces} [[forces]] entr(y/ies) are applied by the axion command, not by the Python Simulator: set them with set_wrenches",
                path.display()
            ));
        }
        if !warnings.is_empty() {
            let text = std::ffi::CString::new(warnings.join("\n").replace('\0', " "))
                .expect("NULs replaced");
            PyErr::warn(py, &py.get_type::<PyUserWarning>(), &text, 1)?;
        }
        Ok(Self {
            model,
            dt,
            warnings,
        })
    }

    /// A built-in demo by the name `axion demo --list` prints (e.g. "double-pendulum",
    /// "skid-steer", "pyramid").
    #[staticmethod]
    fn demo(name: &str) -> PyResult<Self> {
        let demo = axion_cli::find(name).map_err(|e| PyKeyError::new_err(e.to_string()))?;
        let mut model = Self::built(demo.model())?;
        model.dt = Some(demo.dt);
        Ok(model)
    }

    /// The names of the built-in demos.
    #[staticmethod]
    fn demo_names() -> Vec<&'static str> {
        axion_cli::names()
    }

    /// A 1 kg point mass on a 1 m massless rod, hinged about y and released horizontal.
    #[staticmethod]
    fn pendulum() -> PyResult<Self> {
        Self::built(axion::scenes::pendulum())
    }

    /// A 1 m, 1 kg cube resting on the ground with friction `mu` (both), on a slope of
    /// `angle` rad made by tilting gravity: the cube slides along +x when
    /// tan(angle) > mu.
    #[staticmethod]
    fn incline(angle: f64, mu: f64) -> PyResult<Self> {
        Self::built(axion::scenes::incline(angle, mu))
    }

    /// A 240 kg cart on a prismatic joint along y with a velocity drive (gain 1000)
    /// at `cart_velocity` m/s, and a 20 kg, 2 m pole hanging from it on a free hinge.
    #[staticmethod]
    #[pyo3(signature = (cart_velocity=0.0))]
    fn cartpole(cart_velocity: f64) -> PyResult<Self> {
        Self::built(axion::scenes::cartpole(cart_velocity))
    }

    /// The three-wheeled skid-steer robot on the ground (μ 0.7), its wheel joints
    /// (`left_joint`, `right_joint`, `rear_joint`) with velocity drives (gain 150) at
    /// the given rad/s; the chassis is the body `chassis`.
    #[staticmethod]
    #[pyo3(signature = (left=0.0, right=0.0, rear=0.0))]
    fn skid_steer(left: f64, right: f64, rear: f64) -> PyResult<Self> {
        Self::built(axion::scenes::skid_steer([left, right, rear]))
    }

    /// `n` unit cubes (1 m, 1 kg) stacked on the ground, μ 0.8.
    #[staticmethod]
    fn stack(n: usize) -> PyResult<Self> {
        Self::built(axion::scenes::stack(n))
    }

    /// A 1 kg ball (radius 0.1 m) dropped from 2 m onto the ground with the given
    /// restitution.
    #[staticmethod]
    #[pyo3(signature = (restitution=0.0))]
    fn drop(restitution: f64) -> PyResult<Self> {
        Self::built(axion::scenes::drop(restitution))
    }

    /// Body names, indexed like the bodies of every array.
    #[getter]
    fn body_names(&self) -> Vec<String> {
        self.model.bodies().iter().map(|b| b.name.clone()).collect()
    }

    /// Joint names, indexed like the joints of every array.
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.model.joints().iter().map(|j| j.name.clone()).collect()
    }

    /// For each drive, the name of the joint it drives.
    #[getter]
    fn drive_names(&self) -> Vec<String> {
        self.model
            .drives()
            .iter()
            .map(|d| self.model.joints()[d.joint.0].name.clone())
            .collect()
    }

    /// For each drive, "position" or "velocity" (which `set_*_targets` it takes), or
    /// "force" (an actuator commanded in force: `set_drive_forces`).
    #[getter]
    fn drive_modes(&self) -> Vec<&'static str> {
        self.model
            .drives()
            .iter()
            .map(|d| axion::mode_name(d.initial.mode()))
            .collect()
    }

    /// Each body's mass (kg; 0 for a static body).
    #[getter]
    fn body_masses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let m: Array1<f64> = self
            .model
            .bodies()
            .iter()
            .map(|b| if b.is_dynamic() { b.mass.mass() } else { 0.0 })
            .collect();
        m.into_pyarray(py)
    }

    /// The time step the scene file or demo asks for (s), if any.
    #[getter]
    fn dt(&self) -> Option<f64> {
        self.dt
    }

    /// What the import repaired or left out, one message a line with file and line.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<axion.Model: {} bodies, {} joints, {} drives>",
            self.model.bodies().len(),
            self.model.joints().len(),
            self.model.drives().len()
        )
    }
}

/// `worlds` copies of a model stepped together by `dt` seconds on one backend.
#[pyclass(name = "Simulator", module = "axion", frozen)]
struct PySimulator {
    sim: Mutex<axion::Simulator>,
    model: Py<PyModel>,
}

impl PySimulator {
    /// The simulator, locked. While another thread holds it (a `step` running without
    /// the GIL), this thread waits detached from Python, so the stepping thread can
    /// take the GIL back: no deadlock. A panic inside a step cannot leave a
    /// half-written state the caller could see as valid (the backend writes a world
    /// only from a finished solve), so a poisoned lock is used as it is.
    fn sim(&self, py: Python<'_>) -> MutexGuard<'_, axion::Simulator> {
        loop {
            match self.sim.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => py.detach(|| {
                    drop(self.sim.lock());
                }),
            }
        }
    }
}

/// Why there are no contacts to read.
fn no_contacts(sim: &axion::Simulator) -> PyErr {
    AxionError::new_err(format!(
        "no contacts to report: the world has not stepped since the simulator was created, reset or its state set, or the backend ({}) does not keep them",
        sim.backend_name()
    ))
}

/// `value` (a scalar, one row of `k`, or `worlds × k`) as a `worlds × k` view.
fn per_world<'a>(
    value: &'a ArrayViewD<'a, f64>,
    worlds: usize,
    k: usize,
    what: &str,
) -> PyResult<ArrayViewD<'a, f64>> {
    value.broadcast(IxDyn(&[worlds, k])).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{what}: shape {:?} does not broadcast to (worlds, {k}) = ({worlds}, {k})",
            value.shape()
        ))
    })
}

/// A per-world parameter given as a scalar or one value per world, NaN or `None`
/// meaning "the model's own": one `Option` per world.
fn optional_per_world(
    value: Option<PyArrayLikeDyn<'_, f64, AllowTypeChange>>,
    worlds: usize,
    what: &str,
) -> PyResult<Vec<Option<f64>>> {
    let Some(value) = value else {
        return Ok(vec![None; worlds]);
    };
    let view = value.as_array();
    let values = view.broadcast(IxDyn(&[worlds])).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{what}: shape {:?} does not broadcast to (worlds,) = ({worlds},)",
            view.shape()
        ))
    })?;
    Ok(values.iter().map(|&v| (!v.is_nan()).then_some(v)).collect())
}

/// The solver settings a `solver` dict gives, under the names and checks of a scene
/// file's `[simulation.solver]` table (docs/scenes.md): numbers and booleans only, an
/// unknown key or an unusable value an error that names it.
fn solver_overrides(solver: &Bound<'_, PyDict>) -> PyResult<axion::SolverOverrides> {
    let mut table = toml::Table::new();
    for (key, value) in solver.iter() {
        let key: String = key
            .extract()
            .map_err(|_| PyValueError::new_err("solver: keys must be strings"))?;
        let value = if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
            toml::Value::Boolean(b.is_true())
        } else if let Ok(i) = value.cast::<pyo3::types::PyInt>() {
            toml::Value::Integer(i.extract()?)
        } else if let Ok(x) = value.extract::<f64>() {
            toml::Value::Float(x)
        } else {
            return Err(PyValueError::new_err(format!(
                "solver: {key} must be a number, got {}",
                value.repr()?
            )));
        };
        table.insert(key, value);
    }
    let overrides: axion::SolverOverrides = toml::Value::Table(table).try_into().map_err(|e| {
        let e = e.to_string();
        PyValueError::new_err(format!("solver: {}", e.trim_end().replace('\n', " ")))
    })?;
    overrides.validate().map_err(|e| {
        let e = e.strip_prefix("[simulation.solver] ").unwrap_or(&e);
        PyValueError::new_err(format!("solver: {e}"))
    })?;
    Ok(overrides)
}

/// A pose as x, y, z, qx, qy, qz, qw.
fn pose_row(pose: &Pose) -> [f64; 7] {
    let (t, q) = (pose.translation.vector, pose.rotation.quaternion());
    [t.x, t.y, t.z, q.i, q.j, q.k, q.w]
}

#[pymethods]
impl PySimulator {
    /// `worlds` copies of `model` stepped by `dt` s (the model's own time step if
    /// omitted, else 0.01) on `backend`: "cpu" (f64 reference), "gpu" (f32, wgpu; an
    /// error without an adapter) or "auto" (the GPU for large batches on a hardware
    /// adapter). `threads` = 0 steps the worlds on every core. `solver` overrides
    /// solver settings by the names of a scene file's `[simulation.solver]` table
    /// (docs/scenes.md), e.g. `{"contact_smoothing": 0.0, "contact_compliance": 1e-8}`;
    /// as there, settings the GPU does not have are refused on "gpu", and "auto" with
    /// any of them runs on the CPU.
    #[new]
    #[pyo3(signature = (model, worlds=1, dt=None, backend="cpu", threads=0, solver=None))]
    fn new(
        model: Py<PyModel>,
        worlds: usize,
        dt: Option<f64>,
        backend: &str,
        threads: usize,
        solver: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let m = model.get();
        let dt = dt.or(m.dt).unwrap_or(0.01);
        let choice = match backend {
            "cpu" => BackendChoice::CpuWith(SolverSettings {
                threads,
                ..SolverSettings::default()
            }),
            "gpu" => BackendChoice::Gpu,
            "auto" => BackendChoice::Auto,
            other => {
                return Err(PyValueError::new_err(format!(
                    "backend {other:?}: expected \"cpu\", \"gpu\" or \"auto\""
                )));
            }
        };
        let choice = match solver {
            Some(solver) => {
                let overrides = solver_overrides(solver)?;
                let cpu_only = overrides.cpu_only();
                if backend == "gpu" && !cpu_only.is_empty() {
                    return Err(PyValueError::new_err(format!(
                        "solver: {} only the CPU backend has; use backend=\"cpu\" (or \"auto\")",
                        cpu_only.join(", ")
                    )));
                }
                let settings = axion::SceneSettings {
                    dt,
                    duration: 0.0,
                    worlds,
                    integrator: "backward-euler".into(),
                    backend: "auto".into(),
                    solver: overrides,
                };
                axion_cli::scene_backend(&settings, choice)
                    .map_err(|e| PyValueError::new_err(format!("solver: {e}")))?
            }
            None => choice,
        };
        let sim = axion::Simulator::new(m.model.clone(), worlds, dt, choice).map_err(axion_err)?;
        Ok(Self {
            sim: Mutex::new(sim),
            model,
        })
    }

    /// Advances every world by `steps` steps, without holding the GIL while it
    /// computes. The steps run in blocks (the GPU keeps the state on the device within
    /// one), growing while a block takes under 50 ms; Ctrl-C (KeyboardInterrupt) stops
    /// after the current block, the state that of its last step. Returns a summary:
    /// steps, converged_steps (every world converged), converged_world_steps,
    /// mean_iterations, max_iterations, wall_seconds.
    #[pyo3(signature = (steps=1))]
    fn step<'py>(&self, py: Python<'py>, steps: usize) -> PyResult<Bound<'py, PyDict>> {
        let mut sim = self.sim(py);
        let start = Instant::now();
        let (mut done, mut converged, mut max_iterations) = (0usize, 0usize, 0usize);
        let (mut iterations, mut converged_world_steps) = (0usize, 0usize);
        let mut block = 1;
        while done < steps {
            let n = block.min(steps - done);
            let simulator: &mut axion::Simulator = &mut sim;
            let began = Instant::now();
            let summary = py.detach(|| simulator.run(n)).map_err(axion_err)?;
            if began.elapsed() < Duration::from_millis(50) {
                block = (2 * block).min(MAX_BLOCK);
            }
            done += summary.steps;
            converged += summary.converged_steps;
            max_iterations = max_iterations.max(summary.max_iterations);
            iterations += summary.iterations;
            converged_world_steps += summary.converged_world_steps;
            py.check_signals()?;
        }
        let world_steps = done * sim.state().worlds();
        let summary = PyDict::new(py);
        summary.set_item("steps", done)?;
        summary.set_item("converged_steps", converged)?;
        summary.set_item("converged_world_steps", converged_world_steps)?;
        summary.set_item(
            "mean_iterations",
            iterations as f64 / world_steps.max(1) as f64,
        )?;
        summary.set_item("max_iterations", max_iterations)?;
        summary.set_item("wall_seconds", start.elapsed().as_secs_f64())?;
        Ok(summary)
    }

    /// The model.
    #[getter]
    fn model(&self, py: Python<'_>) -> Py<PyModel> {
        self.model.clone_ref(py)
    }

    /// Number of worlds.
    #[getter]
    fn worlds(&self, py: Python<'_>) -> usize {
        self.sim(py).state().worlds()
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self, py: Python<'_>) -> f64 {
        self.sim(py).time()
    }

    /// The time step (s).
    #[getter]
    fn dt(&self, py: Python<'_>) -> f64 {
        self.sim(py).dt()
    }

    /// The backend's name and why it was chosen.
    #[getter]
    fn backend(&self, py: Python<'_>) -> String {
        let sim = self.sim(py);
        format!("{} ({})", sim.backend_name(), sim.backend_reason())
    }

    /// Body poses in their reference frames, `(worlds, bodies, 7)`: x, y, z, qx, qy,
    /// qz, qw (world frame, unit quaternion).
    fn body_poses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray3<f64>> {
        let sim = self.sim(py);
        let (model, state) = (sim.model(), sim.state());
        let (w, b) = (state.worlds(), model.bodies().len());
        Array3::from_shape_fn((w, b, 7), |(wi, bi, k)| {
            pose_row(&state.body_pose(model, wi, BodyId(bi)))[k]
        })
        .into_pyarray(py)
    }

    /// Body velocities, `(worlds, bodies, 6)`: the centre of mass's linear velocity
    /// vx, vy, vz and the angular velocity wx, wy, wz, both in the world frame.
    fn body_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray3<f64>> {
        let sim = self.sim(py);
        let state = sim.state();
        let (w, b) = (state.worlds(), state.body_count());
        Array3::from_shape_fn((w, b, 6), |(wi, bi, k)| state.velocity(wi, BodyId(bi))[k])
            .into_pyarray(py)
    }

    /// Joint coordinates, `(worlds, joints)`: the angle (rad) of a revolute joint, the
    /// displacement (m) of a prismatic one, NaN for joints without a single
    /// coordinate (fixed, ball, free).
    fn joint_positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.joint_array(py, |m| m.position)
    }

    /// Joint rates, `(worlds, joints)` (rad/s or m/s; NaN as in `joint_positions`).
    fn joint_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.joint_array(py, |m| m.velocity)
    }

    /// Drive forces of the last step, `(worlds, drives)` (N or N·m along each
    /// drive's coordinate).
    fn drive_forces<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let sim = self.sim(py);
        let (w, d) = (sim.state().worlds(), sim.model().drives().len());
        Array2::from_shape_fn((w, d), |(wi, di)| sim.drive_force(wi, DriveId(di))).into_pyarray(py)
    }

    /// Each world's kinetic plus gravitational energy (J), `(worlds,)`.
    fn energy<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let sim = self.sim(py);
        Array1::from_shape_fn(sim.state().worlds(), |w| sim.energy(w).total()).into_pyarray(py)
    }

    /// The contacts of world `world` in the last step: a dict of arrays, one row per
    /// contact — `body_a`, `body_b` (body indices; the normal points from b into a),
    /// `point` (k, 3; m, world), `normal` (k, 3), `gap` (m, at the step's start),
    /// `normal_force` (N) and `friction_force` (k, 3; N, world), both on body a.
    /// An AxionError before the first step, after a reset, or on a backend that does
    /// not keep them (the GPU).
    fn contacts<'py>(&self, py: Python<'py>, world: usize) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.sim(py);
        let n = sim.state().worlds();
        if world >= n {
            return Err(PyIndexError::new_err(format!(
                "world {world} does not exist (there are {n})"
            )));
        }
        let contacts = sim.contacts(world).ok_or_else(|| no_contacts(&sim))?;
        let k = contacts.len();
        let rows = |f: fn(&axion::ContactForce) -> Vector3<f64>| {
            Array2::from_shape_fn((k, 3), |(i, j)| f(&contacts[i])[j])
        };
        let d = PyDict::new(py);
        let index = |f: fn(&axion::ContactForce) -> BodyId| -> Array1<u64> {
            contacts.iter().map(|c| f(c).0 as u64).collect()
        };
        d.set_item("body_a", index(|c| c.body_a).into_pyarray(py))?;
        d.set_item("body_b", index(|c| c.body_b).into_pyarray(py))?;
        d.set_item("point", rows(|c| c.point).into_pyarray(py))?;
        d.set_item("normal", rows(|c| c.normal).into_pyarray(py))?;
        d.set_item(
            "gap",
            contacts
                .iter()
                .map(|c| c.gap)
                .collect::<Array1<f64>>()
                .into_pyarray(py),
        )?;
        d.set_item(
            "normal_force",
            contacts
                .iter()
                .map(|c| c.normal_force)
                .collect::<Array1<f64>>()
                .into_pyarray(py),
        )?;
        d.set_item(
            "friction_force",
            rows(|c| c.friction_force).into_pyarray(py),
        )?;
        Ok(d)
    }

    /// The total contact force and torque on every body in the last step,
    /// `(worlds, bodies, 6)`: fx, fy, fz, tx, ty, tz (world frame, torque about the
    /// body's centre of mass). An AxionError where `contacts` is one.
    fn contact_wrenches<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let sim = self.sim(py);
        let (w, b) = (sim.state().worlds(), sim.model().bodies().len());
        let mut out = Array3::<f64>::zeros((w, b, 6));
        for wi in 0..w {
            let wrenches = sim.contact_wrenches(wi).ok_or_else(|| no_contacts(&sim))?;
            for (bi, wrench) in wrenches.iter().enumerate() {
                for k in 0..6 {
                    out[[wi, bi, k]] = wrench[k];
                }
            }
        }
        Ok(out.into_pyarray(py))
    }

    /// Statistics of the last step, per world: iterations (chord_steps of them solved
    /// with factors kept from an earlier iteration), converged, the residuals
    /// (dynamics, joints, drives, contacts, friction; in m/s, m or rad), contact_count
    /// substeps (1, or more for a step the CPU solved again as shorter steps) and
    /// fallback_creep (whether the CPU solved the step with its larger creep of sticking
    /// friction), each an array of length `worlds`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.sim(py);
        let worlds = &sim.last_report().worlds;
        let d = PyDict::new(py);
        let column =
            |f: fn(&axion::StepStats) -> f64| -> Array1<f64> { worlds.iter().map(f).collect() };
        let count = |f: fn(&axion::StepStats) -> usize| -> Array1<u64> {
            worlds.iter().map(|s| f(s) as u64).collect()
        };
        let flag =
            |f: fn(&axion::StepStats) -> bool| -> Array1<bool> { worlds.iter().map(f).collect() };
        d.set_item("iterations", count(|s| s.iterations).into_pyarray(py))?;
        d.set_item("chord_steps", count(|s| s.chord_steps).into_pyarray(py))?;
        d.set_item("converged", flag(|s| s.converged).into_pyarray(py))?;
        d.set_item("dynamics", column(|s| s.dynamics).into_pyarray(py))?;
        d.set_item("joints", column(|s| s.joints).into_pyarray(py))?;
        d.set_item("drives", column(|s| s.drives).into_pyarray(py))?;
        d.set_item("contacts", column(|s| s.contacts).into_pyarray(py))?;
        d.set_item("friction", column(|s| s.friction).into_pyarray(py))?;
        d.set_item("contact_count", count(|s| s.contact_count).into_pyarray(py))?;
        d.set_item("substeps", count(|s| s.substeps).into_pyarray(py))?;
        d.set_item(
            "fallback_creep",
            flag(|s| s.fallback_creep).into_pyarray(py),
        )?;
        Ok(d)
    }

    /// Sets position drives' targets: `positions` (and the feed-forward `velocities`,
    /// default 0) are a scalar, one value per listed drive, or `(worlds, drives)`.
    /// `drives` lists drives by index or by joint name (default: every drive). A
    /// velocity drive in the list is an error.
    #[pyo3(signature = (positions, velocities=None, drives=None))]
    fn set_position_targets(
        &self,
        py: Python<'_>,
        positions: PyArrayLikeDyn<'_, f64, AllowTypeChange>,
        velocities: Option<PyArrayLikeDyn<'_, f64, AllowTypeChange>>,
        drives: Option<Vec<Key>>,
    ) -> PyResult<()> {
        let drives = self.drives(drives)?;
        let mut sim = self.sim(py);
        let worlds = sim.state().worlds();
        let p = positions.as_array();
        let p = per_world(&p, worlds, drives.len(), "positions")?;
        let zero = numpy::ndarray::ArrayD::<f64>::zeros(IxDyn(&[]));
        let v_owned = velocities.as_ref().map(|v| v.as_array());
        let v_view = v_owned.as_ref().map_or(zero.view(), |v| v.view());
        let v = per_world(&v_view, worlds, drives.len(), "velocities")?;
        // Written into a copy, so that an error leaves every target as it was.
        let mut control = sim.control().clone();
        for w in 0..worlds {
            for (k, &d) in drives.iter().enumerate() {
                control
                    .set_position_target(w, d, p[[w, k]], v[[w, k]])
                    .map_err(axion_err)?;
            }
        }
        *sim.control_mut() = control;
        Ok(())
    }

    /// Sets velocity drives' targets: `velocities` is a scalar, one value per listed
    /// drive, or `(worlds, drives)`; `drives` as in `set_position_targets`. A position
    /// or force drive in the list is an error.
    #[pyo3(signature = (velocities, drives=None))]
    fn set_velocity_targets(
        &self,
        py: Python<'_>,
        velocities: PyArrayLikeDyn<'_, f64, AllowTypeChange>,
        drives: Option<Vec<Key>>,
    ) -> PyResult<()> {
        self.set_per_drive(py, velocities, drives, "velocities", |c, w, d, v| {
            c.set_velocity_target(w, d, v)
        })
    }

    /// Sets drives' forces (N·m or N): the force of a force drive (MuJoCo's `motor`: its
    /// ctrl times its gear), the feed-forward force added to a position or velocity
    /// drive's law (gravity compensation). `forces` is a scalar, one value per listed
    /// drive, or `(worlds, drives)`; `drives` as in `set_position_targets`. A drive's
    /// largest force bounds the total. The forces stay until changed.
    #[pyo3(signature = (forces, drives=None))]
    fn set_drive_forces(
        &self,
        py: Python<'_>,
        forces: PyArrayLikeDyn<'_, f64, AllowTypeChange>,
        drives: Option<Vec<Key>>,
    ) -> PyResult<()> {
        self.set_per_drive(py, forces, drives, "forces", |c, w, d, f| {
            c.set_drive_force(w, d, f)
        })
    }

    /// Sets the external force (N) and torque (N·m) at listed bodies' centres of mass,
    /// world frame, applied in every following step until changed: `forces` and
    /// `torques` (default 0) broadcast to `(worlds, bodies, 3)`; `bodies` lists bodies
    /// by index or name (default: every body).
    #[pyo3(signature = (forces, torques=None, bodies=None))]
    fn set_wrenches(
        &self,
        py: Python<'_>,
        forces: PyArrayLikeDyn<'_, f64, AllowTypeChange>,
        torques: Option<PyArrayLikeDyn<'_, f64, AllowTypeChange>>,
        bodies: Option<Vec<Key>>,
    ) -> PyResult<()> {
        let m = self.model.get();
        let bodies: Vec<BodyId> = match bodies {
            Some(keys) => keys
                .into_iter()
                .map(|k| m.body(k))
                .collect::<PyResult<_>>()?,
            None => (0..m.model.bodies().len()).map(BodyId).collect(),
        };
        let mut sim = self.sim(py);
        let worlds = sim.state().worlds();
        let shape = IxDyn(&[worlds, bodies.len(), 3]);
        let f = forces.as_array();
        let f = f.broadcast(shape.clone()).ok_or_else(|| {
            PyValueError::new_err(format!(
                "forces: shape {:?} does not broadcast to (worlds, bodies, 3) = ({worlds}, {}, 3)",
                f.shape(),
                bodies.len()
            ))
        })?;
        let zero = numpy::ndarray::ArrayD::<f64>::zeros(IxDyn(&[]));
        let t_owned = torques.as_ref().map(|t| t.as_array());
        let t_view = t_owned.as_ref().map_or(zero.view(), |t| t.view());
        let t = t_view.broadcast(shape).ok_or_else(|| {
            PyValueError::new_err(format!(
                "torques: shape {:?} does not broadcast to (worlds, bodies, 3)",
                t_view.shape()
            ))
        })?;
        let mut control = sim.control().clone();
        for w in 0..worlds {
            for (k, &b) in bodies.iter().enumerate() {
                let v = |a: &ArrayViewD<'_, f64>| {
                    Vector3::new(a[[w, k, 0]], a[[w, k, 1]], a[[w, k, 2]])
                };
                let (force, torque) = (v(&f), v(&t));
                if !(force.iter().chain(torque.iter()).all(|x| x.is_finite())) {
                    return Err(PyValueError::new_err(format!(
                        "the wrench on body {} of world {w} is not finite",
                        b.0
                    )));
                }
                control.set_wrench(w, b, force, torque);
            }
        }
        *sim.control_mut() = control;
        Ok(())
    }

    /// Gives every contact of each world the friction coefficient `mu` (a scalar or
    /// one per world; NaN or None: the materials' own, as the model describes).
    fn set_friction(
        &self,
        py: Python<'_>,
        mu: Option<PyArrayLikeDyn<'_, f64, AllowTypeChange>>,
    ) -> PyResult<()> {
        let mut sim = self.sim(py);
        let mu = optional_per_world(mu, sim.state().worlds(), "mu")?;
        let mut control = sim.control().clone();
        for (w, m) in mu.into_iter().enumerate() {
            control.set_friction(w, m).map_err(axion_err)?;
        }
        *sim.control_mut() = control;
        Ok(())
    }

    /// Gives a dynamic body (index or name) of each world the mass `mass` kg (a scalar
    /// or one per world; NaN or None: the model's), its inertia scaled with it.
    fn set_body_mass(
        &self,
        py: Python<'_>,
        body: Key,
        mass: Option<PyArrayLikeDyn<'_, f64, AllowTypeChange>>,
    ) -> PyResult<()> {
        let body = self.model.get().body(body)?;
        let mut sim = self.sim(py);
        let mass = optional_per_world(mass, sim.state().worlds(), "mass")?;
        let mut control = sim.control().clone();
        for (w, m) in mass.into_iter().enumerate() {
            control.set_body_mass(w, body, m).map_err(axion_err)?;
        }
        *sim.control_mut() = control;
        Ok(())
    }

    /// Puts worlds back in the model's initial state: the listed ones (indices), or
    /// all of them and the time to 0 when `worlds` is omitted. Targets, wrenches and
    /// parameters are kept.
    #[pyo3(signature = (worlds=None))]
    fn reset(&self, py: Python<'_>, worlds: Option<Vec<usize>>) -> PyResult<()> {
        let mut sim = self.sim(py);
        let Some(list) = worlds else {
            return sim.reset().map_err(axion_err);
        };
        let n = sim.state().worlds();
        if let Some(&bad) = list.iter().find(|&&w| w >= n) {
            return Err(PyIndexError::new_err(format!(
                "world {bad} does not exist (there are {n})"
            )));
        }
        let initial = State::new(sim.model(), 1).map_err(axion_err)?;
        for w in list {
            let world = sim.state_mut().world_mut(w);
            world.poses.copy_from_slice(initial.world_poses(0));
            world
                .velocities
                .copy_from_slice(initial.world_velocities(0));
            world.joint_forces.fill(0.0);
            world.drive_forces.fill(0.0);
        }
        Ok(())
    }

    /// Sets body poses (reference frames; x, y, z, qx, qy, qz, qw, the quaternion
    /// normalised here) and optionally velocities (vx, vy, vz, wx, wy, wz), each
    /// `(worlds, bodies, 7 or 6)` as `body_poses` and `body_velocities` return them.
    #[pyo3(signature = (poses, velocities=None))]
    fn set_state(
        &self,
        py: Python<'_>,
        poses: PyArrayLikeDyn<'_, f64, AllowTypeChange>,
        velocities: Option<PyArrayLikeDyn<'_, f64, AllowTypeChange>>,
    ) -> PyResult<()> {
        let mut sim = self.sim(py);
        let (w, b) = (sim.state().worlds(), sim.model().bodies().len());
        let p = poses.as_array();
        if p.shape() != [w, b, 7] {
            return Err(PyValueError::new_err(format!(
                "poses: shape {:?}, expected (worlds, bodies, 7) = ({w}, {b}, 7)",
                p.shape()
            )));
        }
        if let Some(v) = &velocities
            && v.as_array().shape() != [w, b, 6]
        {
            return Err(PyValueError::new_err(format!(
                "velocities: shape {:?}, expected (worlds, bodies, 6) = ({w}, {b}, 6)",
                v.as_array().shape()
            )));
        }
        if p.iter().any(|x| !x.is_finite()) {
            return Err(PyValueError::new_err("poses contain NaN or infinity"));
        }
        if let Some(v) = &velocities
            && v.as_array().iter().any(|x| !x.is_finite())
        {
            return Err(PyValueError::new_err("velocities contain NaN or infinity"));
        }
        let mut new_poses = Vec::with_capacity(w * b);
        for wi in 0..w {
            for bi in 0..b {
                let r = |k: usize| p[[wi, bi, k]];
                let q = Quaternion::new(r(6), r(3), r(4), r(5));
                if q.norm() < 1e-12 {
                    return Err(PyValueError::new_err(format!(
                        "the quaternion of body {bi} in world {wi} is zero"
                    )));
                }
                let reference = Isometry3::from_parts(
                    Translation3::new(r(0), r(1), r(2)),
                    UnitQuaternion::from_quaternion(q),
                );
                new_poses.push(sim.model().bodies()[bi].com_pose(&reference));
            }
        }
        // Checked above: nothing fails from here on.
        for (wi, poses) in new_poses.chunks(b).enumerate() {
            sim.state_mut().world_mut(wi).poses.copy_from_slice(poses);
        }
        if let Some(v) = velocities {
            let v = v.as_array();
            for wi in 0..w {
                for bi in 0..b {
                    let twist = axion::math::Twist::from_fn(|k, _| v[[wi, bi, k]]);
                    sim.state_mut().set_velocity(wi, BodyId(bi), twist);
                }
            }
        }
        Ok(())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let sim = self.sim(py);
        format!(
            "<axion.Simulator: {} worlds, dt {} s, t = {} s, {}>",
            sim.state().worlds(),
            sim.dt(),
            sim.time(),
            sim.backend_name()
        )
    }
}

impl PySimulator {
    /// Sets one value per world and listed drive with `set`: `values` is a scalar, one
    /// value per drive, or `(worlds, drives)`. Written into a copy of the control, so
    /// that an error leaves every drive as it was.
    fn set_per_drive(
        &self,
        py: Python<'_>,
        values: PyArrayLikeDyn<'_, f64, AllowTypeChange>,
        drives: Option<Vec<Key>>,
        what: &str,
        set: impl Fn(&mut axion::Control, usize, DriveId, f64) -> Result<(), axion::ControlError>,
    ) -> PyResult<()> {
        let drives = self.drives(drives)?;
        let mut sim = self.sim(py);
        let worlds = sim.state().worlds();
        let v = values.as_array();
        let v = per_world(&v, worlds, drives.len(), what)?;
        let mut control = sim.control().clone();
        for w in 0..worlds {
            for (k, &d) in drives.iter().enumerate() {
                set(&mut control, w, d, v[[w, k]]).map_err(axion_err)?;
            }
        }
        *sim.control_mut() = control;
        Ok(())
    }

    fn drives(&self, keys: Option<Vec<Key>>) -> PyResult<Vec<DriveId>> {
        let m = self.model.get();
        match keys {
            Some(keys) => keys.into_iter().map(|k| m.drive(k)).collect(),
            None => Ok((0..m.model.drives().len()).map(DriveId).collect()),
        }
    }

    fn joint_array<'py>(
        &self,
        py: Python<'py>,
        part: fn(&axion::JointMotion) -> f64,
    ) -> Bound<'py, PyArray2<f64>> {
        let sim = self.sim(py);
        let (w, j) = (sim.state().worlds(), sim.model().joints().len());
        Array2::from_shape_fn((w, j), |(wi, ji)| {
            sim.joint_motion(wi, JointId(ji))
                .map_or(f64::NAN, |m| part(&m))
        })
        .into_pyarray(py)
    }
}

/// The extension module.
#[pymodule]
fn _axion(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyModel>()?;
    m.add_class::<PySimulator>()?;
    m.add("AxionError", m.py().get_type::<AxionError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FRICTION_CREEP", axion::FRICTION_CREEP)?;
    Ok(())
}
