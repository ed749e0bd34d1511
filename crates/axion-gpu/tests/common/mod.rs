//! Shared by the device tests: they run where an adapter is found, are skipped with a
//! line saying so where none is, and fail without one under `AXION_GPU_TESTS=require`
//! (CI installs lavapipe and sets it): [`axion_gpu::device_tests_run`].

#![allow(dead_code)]

use axion_cpu::CpuBackend;
use axion_gpu::{GpuBackend, GpuContext, GpuSettings};
use axion_model::{Backend, BodyId, Control, Model, State, measure};

/// Whether device tests are skipped here ([`axion_gpu::device_tests_run`]).
pub fn skipped() -> bool {
    !axion_gpu::device_tests_run("axion-gpu device test")
}

fn no_adapter(e: axion_gpu::GpuError) -> ! {
    panic!("{e}\n(AXION_GPU_TESTS=require: the device tests need an adapter here)")
}

/// A device context, or `None` when device tests are skipped.
pub fn context() -> Option<GpuContext> {
    if skipped() {
        return None;
    }
    Some(GpuContext::new().unwrap_or_else(|e| no_adapter(e)))
}

/// A GPU backend for `worlds` copies of `model`, or `None` when skipped.
pub fn backend(model: &Model, worlds: usize, settings: GpuSettings) -> Option<GpuBackend> {
    if skipped() {
        return None;
    }
    match GpuBackend::for_model(model, worlds, settings) {
        Ok(b) => Some(b),
        Err(e @ (axion_gpu::GpuError::NoAdapter { .. } | axion_gpu::GpuError::Device { .. })) => {
            no_adapter(e)
        }
        Err(e) => panic!("{e}"),
    }
}

/// What a run measured.
pub struct Parity {
    /// Largest COM distance between GPU and CPU after the run (m).
    pub position: f64,
    /// Largest orientation difference (rad).
    pub orientation: f64,
    /// Largest joint error of the GPU state over the run (m, rad).
    pub joint_position: f64,
    pub joint_orientation: f64,
    pub mean_iterations: f64,
    pub max_iterations: usize,
    pub converged: usize,
    pub steps: usize,
    /// Steps in which the GPU found a different number of contacts than the CPU.
    pub contact_count_differs: usize,
    /// The GPU's centres of mass at the end (m).
    pub final_positions: Vec<[f64; 3]>,
    /// Per body: COM distance (m) and orientation difference (rad) at the end.
    pub body_differences: Vec<(f64, f64)>,
}

/// The default GPU settings with the slip coupling lagged (`slip_coupling` off: the
/// symmetric friction form of docs/constraints.md, solved by the conjugate residual
/// method).
pub fn lagged() -> GpuSettings {
    GpuSettings {
        slip_coupling: false,
        ..Default::default()
    }
}

/// One world of `model` stepped for `seconds` on the GPU and on the CPU reference.
pub fn run(name: &str, model: &Model, h: f64, seconds: f64) -> Option<Parity> {
    run_controlled(name, model, &Control::new(model, 1), h, seconds)
}

/// [`run`] with a control (wrenches, drives) for its one world.
pub fn run_controlled(
    name: &str,
    model: &Model,
    control: &Control,
    h: f64,
    seconds: f64,
) -> Option<Parity> {
    run_with(name, model, control, GpuSettings::default(), h, seconds)
}

/// [`run_controlled`] with GPU settings of its own.
pub fn run_with(
    name: &str,
    model: &Model,
    control: &Control,
    settings: GpuSettings,
    h: f64,
    seconds: f64,
) -> Option<Parity> {
    let mut gpu = backend(model, 1, settings)?;
    let mut cpu = CpuBackend::new(axion::cpu_settings_like(&settings));
    let mut s_cpu = State::new(model, 1).unwrap();
    let mut s_gpu = s_cpu.clone();
    let steps = (seconds / h).round() as usize;
    let mut p = Parity {
        position: 0.0,
        orientation: 0.0,
        joint_position: 0.0,
        joint_orientation: 0.0,
        mean_iterations: 0.0,
        max_iterations: 0,
        converged: 0,
        steps,
        contact_count_differs: 0,
        final_positions: Vec::new(),
        body_differences: Vec::new(),
    };
    for _ in 0..steps {
        let rc = cpu.step(model, &mut s_cpu, control, h).unwrap();
        assert!(
            rc.all_converged(),
            "{name}: the CPU reference did not converge"
        );
        let rg = gpu.step(model, &mut s_gpu, control, h).unwrap();
        let st = rg.worlds[0];
        p.mean_iterations += st.iterations as f64 / steps as f64;
        p.max_iterations = p.max_iterations.max(st.iterations);
        p.converged += usize::from(st.converged);
        p.contact_count_differs += usize::from(st.contact_count != rc.worlds[0].contact_count);
        let e = measure::joint_errors(model, &s_gpu, 0);
        p.joint_position = p.joint_position.max(e.position);
        p.joint_orientation = p.joint_orientation.max(e.orientation);
    }
    for b in 0..model.bodies().len() {
        let (qc, qg) = (s_cpu.com_pose(0, BodyId(b)), s_gpu.com_pose(0, BodyId(b)));
        p.position = p
            .position
            .max((qc.translation.vector - qg.translation.vector).norm());
        p.orientation = p.orientation.max(qc.rotation.angle_to(&qg.rotation));
        p.final_positions.push(qg.translation.vector.into());
        p.body_differences.push((
            (qc.translation.vector - qg.translation.vector).norm(),
            qc.rotation.angle_to(&qg.rotation),
        ));
    }
    println!(
        "{name}: |Δx| {:.2e} m, |Δθ| {:.2e} rad after {seconds} s; GPU joint errors {:.2e} m, \
         {:.2e} rad; iterations mean {:.2} max {}; converged {}/{}; contact count differs in \
         {} steps",
        p.position,
        p.orientation,
        p.joint_position,
        p.joint_orientation,
        p.mean_iterations,
        p.max_iterations,
        p.converged,
        p.steps,
        p.contact_count_differs
    );
    Some(p)
}

/// The GPU's run agrees with the CPU's: positions and orientations within 1 mm and
/// 1 mrad, joint errors at f32 level, every step converged, the same number of contacts
/// in every step.
pub fn check(p: &Parity, name: &str) {
    check_motion(p, name);
    assert_eq!(
        p.contact_count_differs, 0,
        "{name}: the GPU found a different number of contacts than the CPU"
    );
}

/// [`check`] without the contact count, for pairs where the CPU (parry) keeps manifold
/// points beyond the margin that the device does not produce.
pub fn check_motion(p: &Parity, name: &str) {
    assert!(
        p.position <= 1e-3,
        "{name}: position differs by {} m",
        p.position
    );
    assert!(
        p.orientation <= 1e-3,
        "{name}: orientation differs by {} rad",
        p.orientation
    );
    assert!(
        p.joint_position <= 1e-5,
        "{name}: joint error {} m",
        p.joint_position
    );
    assert!(
        p.joint_orientation <= 1e-5,
        "{name}: joint error {} rad",
        p.joint_orientation
    );
    assert_eq!(p.converged, p.steps, "{name}: unconverged steps");
}

/// A random rotation for the property tests: a quaternion of uniform components in
/// [−1, 1] (norm at least 0.1), normalised.
pub fn rotation() -> impl proptest::strategy::Strategy<Value = nalgebra::UnitQuaternion<f64>> {
    use proptest::prelude::*;
    prop::array::uniform4(-1.0f64..1.0).prop_filter_map("non-zero", |q| {
        let q = nalgebra::Quaternion::new(q[3], q[0], q[1], q[2]);
        (q.norm() > 0.1).then(|| nalgebra::UnitQuaternion::new_normalize(q))
    })
}

/// Adds the two dynamic bodies of the joint property tests to `b`: "parent" (2 kg) and
/// "child" (1 kg), both with the inertia diag(0.3, 0.4, 0.5) kg·m² about their centre.
pub fn parent_and_child(b: &mut axion_model::ModelBuilder) -> (BodyId, BodyId) {
    use nalgebra::{Matrix3, Vector3};
    let inertia = Matrix3::from_diagonal(&Vector3::new(0.3, 0.4, 0.5));
    let body =
        |name, mass| axion_model::BodyDesc::dynamic(name).mass(mass, Vector3::zeros(), inertia);
    let parent = b.add_body(body("parent", 2.0)).unwrap();
    let child = b.add_body(body("child", 1.0)).unwrap();
    (parent, child)
}
