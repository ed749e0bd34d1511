//! Scene files: a model and its simulation settings in TOML (or the same structure in
//! JSON).
//!
//! The schema, with every field, is documented in `docs/scenes.md`; a minimal file:
//!
//! ```toml
//! [simulation]
//! dt = 0.01
//! duration = 2.0
//!
//! [[bodies]]
//! name = "ground"
//! kind = "static"
//! shapes = [{ type = "half-space", normal = [0, 0, 1] }]
//!
//! [[bodies]]
//! name = "ball"
//! position = [0, 0, 1]
//! shapes = [{ type = "sphere", radius = 0.1, density = 500 }]
//! ```
//!
//! Errors say where: syntax and type errors carry the line, column and field (from the
//! TOML or JSON parser); errors found while building (an unknown body, a negative mass)
//! name the line of the `[[bodies]]`, `[[joints]]` or `[[robots]]` entry and the body
//! or joint.

use nalgebra::{Isometry3, Matrix3, Vector3};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use toml::Spanned;

use axion_model::{
    Anisotropy, BodyDesc, CollisionFilter, Control, DriveDesc, DriveId, Geometry, JointDesc,
    JointDynamics, JointLimits, JointType, Material, Model, ModelBuilder, Shape, ShapeDesc,
};

use crate::mjcf::import_mjcf;
use crate::robot::RobotOptions;
use crate::urdf::import_urdf;
use axion_constraints::drive::DriveMode as DriveModeKind;

/// Why a scene file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not valid TOML / JSON, or a field of the wrong type, missing, or unknown (the
    /// message shows the line, the column and the field).
    #[error("{0}")]
    Syntax(String),
    /// A valid file describing an invalid scene.
    #[error("line {line}: {message}")]
    Invalid {
        /// 1-based line of the offending entry.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// How a scene asks to be simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneSettings {
    /// Time step (s).
    pub dt: f64,
    /// Simulated duration (s).
    pub duration: f64,
    /// Number of identical worlds.
    pub worlds: usize,
    /// `"backward-euler"` or `"energy-momentum"`.
    pub integrator: String,
    /// `"auto"` or `"cpu"`.
    pub backend: String,
    /// Solver settings the file overrides (`[simulation.solver]`).
    pub solver: SolverOverrides,
}

/// Solver settings a scene file may set; `None` keeps the solver's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverOverrides {
    /// Newton iteration limit per step.
    pub max_iterations: Option<usize>,
    /// Dynamics / drive / contact velocity tolerance (m/s).
    pub velocity_tolerance: Option<f64>,
    /// Joint position tolerance (m).
    pub position_tolerance: Option<f64>,
    /// Contact and friction tolerance (m/s).
    pub contact_tolerance: Option<f64>,
    /// Speculative contact margin (m).
    pub contact_margin: Option<f64>,
    /// Creep of sticking friction (dimensionless; both backends).
    pub friction_creep: Option<f64>,
    /// Most speed at which a distance violated at the start of a step is removed (CPU
    /// only, m/s).
    pub recovery_speed: Option<f64>,
    /// The same for angles (CPU only, rad/s).
    pub recovery_rate: Option<f64>,
    /// The creep a step that does not converge is solved again with (both backends).
    pub fallback_creep: Option<f64>,
    /// How often a step that does not converge is halved and solved again (CPU only).
    pub split_depth: Option<usize>,
    /// The contact normal rows' smoothing $\varepsilon^2$ (m², CPU only).
    pub contact_smoothing: Option<f64>,
    /// The contact normal rows' compliance $\kappa$ (dimensionless, CPU only).
    pub contact_compliance: Option<f64>,
    /// Contacts within this distance become Newton rows, the others are checked at the
    /// end of the step (m, CPU only).
    pub row_margin: Option<f64>,
    /// Whether a failed step's second attempts solve the contacts with a compliance
    /// (CPU only).
    pub compliant_retries: Option<bool>,
    /// Full Newton steps in a row without a new lowest merit after which a first
    /// attempt goes to its compliant retry (0: never; CPU only).
    pub abandon_after: Option<usize>,
}

impl SolverOverrides {
    /// The CPU-only settings the file gives (`recovery_speed`, `recovery_rate`,
    /// `split_depth`, `contact_smoothing`, `contact_compliance`, `row_margin`,
    /// `compliant_retries`, `abandon_after`): the GPU backend has none of them.
    pub fn cpu_only(&self) -> Vec<&'static str> {
        [
            ("recovery_speed", self.recovery_speed.is_some()),
            ("recovery_rate", self.recovery_rate.is_some()),
            ("split_depth", self.split_depth.is_some()),
            ("contact_smoothing", self.contact_smoothing.is_some()),
            ("contact_compliance", self.contact_compliance.is_some()),
            ("row_margin", self.row_margin.is_some()),
            ("compliant_retries", self.compliant_retries.is_some()),
            ("abandon_after", self.abandon_after.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }
}

/// A drive target that changes over time: piecewise linear through `points`
/// $(t_i, y_i)$, constant before the first and after the last.
///
/// For a position drive $y$ is the position target and the segment's slope
/// $(y_{i+1} - y_i)/(t_{i+1} - t_i)$ its feed-forward velocity (0 outside the points);
/// for a velocity drive $y$ is the velocity target.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveSchedule {
    /// The drive.
    pub drive: DriveId,
    /// Times (s, strictly increasing) and targets.
    pub points: Vec<(f64, f64)>,
}

impl DriveSchedule {
    /// Target and its rate of change at time `t`.
    pub fn at(&self, t: f64) -> (f64, f64) {
        piecewise_linear(&self.points, t)
    }
}

/// Value and slope at `t` of the piecewise-linear function through `points`
/// $(t_i, y_i)$ (times increasing, at least one): constant before the first and after
/// the last, slope 0 there.
fn piecewise_linear(p: &[(f64, f64)], t: f64) -> (f64, f64) {
    let i = p.partition_point(|&(ti, _)| ti <= t);
    if i == 0 {
        return (p[0].1, 0.0);
    }
    if i == p.len() {
        return (p[i - 1].1, 0.0);
    }
    let ((t0, y0), (t1, y1)) = (p[i - 1], p[i]);
    let slope = (y1 - y0) / (t1 - t0);
    (y0 + slope * (t - t0), slope)
}

/// `pairs` `[[t, value], …]` as schedule points: non-empty, finite, times strictly
/// increasing; `what` names the key in messages.
fn schedule_points(pairs: &[[f64; 2]], what: &str) -> Result<Points, String> {
    if pairs.is_empty() {
        return Err(format!("`{what}` needs at least one [t, value] pair"));
    }
    if pairs.iter().flatten().any(|v| !v.is_finite()) {
        return Err(format!("`{what}` must be finite numbers"));
    }
    if let Some(w) = pairs.windows(2).find(|w| w[1][0] <= w[0][0]) {
        return Err(format!(
            "`{what}` times must increase, got {} after {}",
            w[1][0], w[0][0]
        ));
    }
    Ok(pairs.iter().map(|p| (p[0], p[1])).collect())
}

/// A force and torque a scene applies to a body (`[[forces]]`), during the steps that
/// end in `start < t ≤ end`, scaled by the schedule's factor at the step's end.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedForce {
    /// The body pushed.
    pub body: axion_model::BodyId,
    /// Force (N), in the world frame or the body's ([`body_frame`](Self::body_frame)).
    pub force: Vector3<f64>,
    /// Torque (N·m), in the same frame.
    pub torque: Vector3<f64>,
    /// Point of application in the body's frame (the frame it was placed with); `None`:
    /// its centre of mass.
    pub point: Option<Vector3<f64>>,
    /// Force and torque turn with the body (a thruster) rather than keep their world
    /// direction (a wind).
    pub body_frame: bool,
    /// First instant it acts (s).
    pub start: f64,
    /// Last instant it acts (s; infinite: to the end).
    pub end: f64,
    /// A factor over time, piecewise linear through $(t_i, k_i)$; `None`: 1.
    pub schedule: Option<Vec<(f64, f64)>>,
}

impl AppliedForce {
    /// The force and the torque about the centre of mass (world frame) during the step
    /// that ends at `t`, on `body` at centre-of-mass pose `com_pose`: with the force
    /// $F$ and torque $T$ turned to the world ($R F$, $R T$ in the body frame) and the
    /// point $p$ in the world, the torque about the centre $x$ is $T + (p - x) \times F$.
    pub fn wrench_at(
        &self,
        t: f64,
        body: &axion_model::Body,
        com_pose: &axion_math::Pose,
    ) -> (Vector3<f64>, Vector3<f64>) {
        if t <= self.start || t > self.end {
            return (Vector3::zeros(), Vector3::zeros());
        }
        let k = self
            .schedule
            .as_deref()
            .map_or(1.0, |p| piecewise_linear(p, t).0);
        let turn = |v: Vector3<f64>| {
            if self.body_frame {
                com_pose.rotation * v
            } else {
                v
            }
        };
        let (force, mut torque) = (turn(self.force) * k, turn(self.torque) * k);
        if let Some(p) = self.point {
            let arm = com_pose.rotation * (p - body.com);
            torque += arm.cross(&force);
        }
        (force, torque)
    }
}

impl DriveSchedule {
    /// Sets the drive's target in `world` of `control` to the schedule's value at `t`
    /// (position drives also get the feed-forward rate; force drives their force).
    pub fn apply(
        &self,
        control: &mut Control,
        world: usize,
        t: f64,
    ) -> Result<(), axion_model::ControlError> {
        let (y, rate) = self.at(t);
        match control.drive(world, self.drive).mode() {
            DriveModeKind::Position { .. } => {
                control.set_position_target(world, self.drive, y, rate)
            }
            DriveModeKind::Velocity { .. } => control.set_velocity_target(world, self.drive, y),
            // Schedules are given to drives of the file, never to an armature.
            DriveModeKind::Force | DriveModeKind::Armature => {
                control.set_drive_force(world, self.drive, y)
            }
        }
    }
}

/// A loaded scene.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The model.
    pub model: Model,
    /// The settings.
    pub settings: SceneSettings,
    /// Drive targets over time (`targets = [[t, value], …]` on a drive).
    pub schedules: Vec<DriveSchedule>,
    /// Forces and torques applied to bodies (`[[forces]]`).
    pub forces: Vec<AppliedForce>,
    /// What the import of its robots had to say (repairs, merges, elements not
    /// simulated).
    pub warnings: Vec<crate::ImportWarning>,
}

/// The two spellings of a scene file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneFormat {
    /// TOML (`.toml`, the default).
    Toml,
    /// JSON (`.json`): the same structure, `[[bodies]]` becoming `"bodies": [...]`.
    Json,
}

impl SceneFormat {
    /// JSON for a `.json` extension, TOML otherwise.
    pub fn of(path: &std::path::Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => SceneFormat::Json,
            _ => SceneFormat::Toml,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    #[serde(default)]
    simulation: SimulationFile,
    #[serde(default)]
    bodies: Vec<BodyFile>,
    #[serde(default)]
    joints: Vec<JointFile>,
    #[serde(default)]
    robots: Vec<RobotFile>,
    #[serde(default)]
    forces: Vec<ForceFile>,
}

/// A `[[forces]]` entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForceFile {
    body: String,
    #[serde(default)]
    force: [f64; 3],
    #[serde(default)]
    torque: [f64; 3],
    point: Option<[f64; 3]>,
    #[serde(default)]
    frame: ForceFrame,
    #[serde(default)]
    start: f64,
    end: Option<f64>,
    schedule: Option<Vec<[f64; 2]>>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum ForceFrame {
    #[default]
    World,
    Body,
}

/// Where the entries of a TOML file start (byte offsets), read in a second pass.
#[derive(Deserialize)]
struct TomlEntries {
    #[serde(default)]
    bodies: Vec<Spanned<IgnoredAny>>,
    #[serde(default)]
    joints: Vec<Spanned<IgnoredAny>>,
    #[serde(default)]
    robots: Vec<Spanned<IgnoredAny>>,
    #[serde(default)]
    forces: Vec<Spanned<IgnoredAny>>,
}

/// The entries of a JSON file as slices of its text (their addresses give the offsets).
#[derive(Deserialize)]
struct JsonEntries<'a> {
    #[serde(borrow, default)]
    bodies: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    joints: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    robots: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    forces: Vec<&'a RawValue>,
}

/// 1-based first line of every entry.
struct EntryLines {
    bodies: Vec<usize>,
    joints: Vec<usize>,
    robots: Vec<usize>,
    forces: Vec<usize>,
}

impl EntryLines {
    /// Reads the entry positions of a file that already parsed as a [`SceneFile`].
    fn find(text: &str, format: SceneFormat) -> Self {
        let index = crate::LineIndex::new(text);
        let lines = |offsets: Vec<usize>| offsets.into_iter().map(|o| index.line(o)).collect();
        match format {
            SceneFormat::Toml => {
                let e: TomlEntries = toml::from_str(text).unwrap_or(TomlEntries {
                    bodies: vec![],
                    joints: vec![],
                    robots: vec![],
                    forces: vec![],
                });
                let starts =
                    |v: Vec<Spanned<IgnoredAny>>| v.iter().map(|s| s.span().start).collect();
                Self {
                    bodies: lines(starts(e.bodies)),
                    joints: lines(starts(e.joints)),
                    robots: lines(starts(e.robots)),
                    forces: lines(starts(e.forces)),
                }
            }
            SceneFormat::Json => {
                let e: JsonEntries = serde_json::from_str(text).unwrap_or(JsonEntries {
                    bodies: vec![],
                    joints: vec![],
                    robots: vec![],
                    forces: vec![],
                });
                let base = text.as_ptr() as usize;
                let starts = |v: Vec<&RawValue>| {
                    v.iter().map(|r| r.get().as_ptr() as usize - base).collect()
                };
                Self {
                    bodies: lines(starts(e.bodies)),
                    joints: lines(starts(e.joints)),
                    robots: lines(starts(e.robots)),
                    forces: lines(starts(e.forces)),
                }
            }
        }
    }
}

/// The line of entry `i` (0 when unknown, which never happens for a parsed file).
fn nth(lines: &[usize], i: usize) -> usize {
    lines.get(i).copied().unwrap_or(0)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RobotFile {
    /// Path of the URDF file, relative to the scene file.
    urdf: Option<String>,
    /// Path of the MJCF file, relative to the scene file (instead of `urdf`).
    mjcf: Option<String>,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    rotation: [f64; 3],
    #[serde(default)]
    fixed_base: bool,
    /// Prefix of the robot's body and joint names in the scene.
    #[serde(default)]
    prefix: String,
    #[serde(default = "default_friction")]
    friction: f64,
    #[serde(default)]
    drives: Vec<RobotDriveFile>,
    /// Folders searched for `package://` names, relative to the scene file.
    #[serde(default)]
    package_paths: Vec<String>,
    /// Let the robot's links collide with each other.
    #[serde(default)]
    self_collision: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RobotDriveFile {
    joint: String,
    mode: DriveMode,
    #[serde(default)]
    target: f64,
    #[serde(default)]
    target_velocity: f64,
    #[serde(default)]
    ke: f64,
    #[serde(default)]
    kd: f64,
    targets: Option<Vec<[f64; 2]>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SimulationFile {
    #[serde(default = "default_dt")]
    dt: f64,
    #[serde(default = "default_duration")]
    duration: f64,
    #[serde(default = "default_worlds")]
    worlds: usize,
    gravity: Option<[f64; 3]>,
    #[serde(default = "default_integrator")]
    integrator: Integrator,
    #[serde(default = "default_backend")]
    backend: BackendName,
    #[serde(default)]
    solver: SolverOverrides,
}

impl Default for SimulationFile {
    fn default() -> Self {
        Self {
            dt: default_dt(),
            duration: default_duration(),
            worlds: default_worlds(),
            gravity: None,
            integrator: default_integrator(),
            backend: default_backend(),
            solver: SolverOverrides::default(),
        }
    }
}

fn default_dt() -> f64 {
    0.01
}
fn default_duration() -> f64 {
    1.0
}
fn default_worlds() -> usize {
    1
}
fn default_integrator() -> Integrator {
    Integrator::BackwardEuler
}
fn default_backend() -> BackendName {
    BackendName::Auto
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum Integrator {
    BackwardEuler,
    EnergyMomentum,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum BackendName {
    Auto,
    Cpu,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum BodyKindName {
    #[default]
    Dynamic,
    Static,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyFile {
    name: String,
    #[serde(default)]
    kind: BodyKindName,
    #[serde(default)]
    position: [f64; 3],
    /// Rotation vector (axis × angle, rad).
    #[serde(default)]
    rotation: [f64; 3],
    #[serde(default)]
    velocity: [f64; 3],
    #[serde(default)]
    angular_velocity: [f64; 3],
    mass: Option<f64>,
    #[serde(default)]
    com: [f64; 3],
    /// Principal moments about the COM (kg m²), in the body frame.
    inertia: Option<[f64; 3]>,
    #[serde(default)]
    shapes: Vec<ShapeFile>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum ShapeType {
    Sphere,
    Box,
    Capsule,
    Cylinder,
    HalfSpace,
    ConvexHull,
    Mesh,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeFile {
    #[serde(rename = "type")]
    kind: ShapeType,
    radius: Option<f64>,
    half_extents: Option<[f64; 3]>,
    half_length: Option<f64>,
    normal: Option<[f64; 3]>,
    points: Option<Vec<[f64; 3]>>,
    /// Mesh file (STL, OBJ or COLLADA), relative to the scene file.
    file: Option<String>,
    /// Scale of a mesh's vertices, per axis.
    scale: Option<[f64; 3]>,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    rotation: [f64; 3],
    #[serde(default = "default_density")]
    density: f64,
    #[serde(default = "default_friction")]
    friction: f64,
    #[serde(default)]
    restitution: f64,
    /// Body-frame axis of the first friction coefficient (anisotropic friction).
    friction_axis: Option<[f64; 3]>,
    /// Friction across `friction_axis`.
    friction_across: Option<f64>,
    #[serde(default = "default_collide")]
    collide: bool,
}

fn default_density() -> f64 {
    1000.0
}
fn default_friction() -> f64 {
    Material::default().friction
}
fn default_collide() -> bool {
    true
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum JointTypeName {
    Revolute,
    Prismatic,
    Ball,
    Fixed,
    Free,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JointFile {
    name: String,
    #[serde(rename = "type")]
    kind: JointTypeName,
    parent: Option<String>,
    child: String,
    axis: Option<[f64; 3]>,
    #[serde(default)]
    parent_anchor: [f64; 3],
    #[serde(default)]
    parent_rotation: [f64; 3],
    #[serde(default)]
    child_anchor: [f64; 3],
    #[serde(default)]
    child_rotation: [f64; 3],
    #[serde(default)]
    compliance: f64,
    /// Velocity-level rows with this Baumgarte factor Υ ∈ [0, 1] instead of the
    /// position-level default.
    baumgarte: Option<f64>,
    /// `[lower, upper]` (rad or m) the solver keeps the coordinate in.
    range: Option<[f64; 2]>,
    /// Viscous damping (N·s/m or N·m·s/rad).
    damping: Option<f64>,
    /// Armature: rotor inertia reflected to the joint (kg·m² or kg).
    armature: Option<f64>,
    drive: Option<DriveFile>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum DriveMode {
    Position,
    Velocity,
    Force,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DriveFile {
    mode: DriveMode,
    /// Position target (position mode), velocity target (velocity mode) or force
    /// (force mode).
    #[serde(default)]
    target: f64,
    #[serde(default)]
    target_velocity: f64,
    #[serde(default)]
    ke: f64,
    #[serde(default)]
    kd: f64,
    /// Targets over time, `[[t, value], …]` (replaces `target`).
    targets: Option<Vec<[f64; 2]>>,
    /// The largest force or torque the drive exerts (N or N·m; none if absent).
    max_force: Option<f64>,
}

fn pose(position: [f64; 3], rotation: [f64; 3]) -> Isometry3<f64> {
    Isometry3::new(Vector3::from(position), Vector3::from(rotation))
}

impl ShapeFile {
    /// The shape, or what it lacks. Mesh files are found from `folder`; a mesh is its
    /// convex hull on a moving body and the triangle mesh on a static one.
    fn to_desc(&self, folder: &std::path::Path, is_static: bool) -> Result<ShapeDesc, String> {
        let given = [
            ("radius", self.radius.is_some()),
            ("half_extents", self.half_extents.is_some()),
            ("half_length", self.half_length.is_some()),
            ("normal", self.normal.is_some()),
            ("points", self.points.is_some()),
            ("file", self.file.is_some()),
            ("scale", self.scale.is_some()),
        ];
        let takes: &[&str] = match self.kind {
            ShapeType::Sphere => &["radius"],
            ShapeType::Box => &["half_extents"],
            ShapeType::Capsule | ShapeType::Cylinder => &["radius", "half_length"],
            ShapeType::HalfSpace => &["normal"],
            ShapeType::ConvexHull => &["points"],
            ShapeType::Mesh => &["file", "scale"],
        };
        if let Some((field, _)) = given.iter().find(|(f, g)| *g && !takes.contains(f)) {
            return Err(format!("a {} shape takes no `{field}`", self.name()));
        }
        let need = |v: Option<f64>, field: &str| {
            v.ok_or_else(|| format!("a {} shape needs `{field}`", self.name()))
        };
        let geometry = match self.kind {
            ShapeType::Sphere => Geometry::Solid(Shape::Sphere {
                radius: need(self.radius, "radius")?,
            }),
            ShapeType::Box => Geometry::Solid(Shape::Box {
                half_extents: Vector3::from(
                    self.half_extents
                        .ok_or("a box shape needs `half_extents`")?,
                ),
            }),
            ShapeType::Capsule => Geometry::Solid(Shape::Capsule {
                radius: need(self.radius, "radius")?,
                half_length: need(self.half_length, "half_length")?,
            }),
            ShapeType::Cylinder => Geometry::Solid(Shape::Cylinder {
                radius: need(self.radius, "radius")?,
                half_length: need(self.half_length, "half_length")?,
            }),
            ShapeType::HalfSpace => Geometry::HalfSpace {
                normal: Vector3::from(self.normal.ok_or("a half-space needs `normal`")?),
            },
            ShapeType::ConvexHull => Geometry::ConvexHull {
                points: self
                    .points
                    .as_ref()
                    .ok_or("a convex hull needs `points`")?
                    .iter()
                    .map(|p| Vector3::from(*p))
                    .collect(),
            },
            ShapeType::Mesh => {
                let file = self.file.as_ref().ok_or("a mesh shape needs `file`")?;
                let path = crate::package::resolve_uri(file, Some(folder), &[])
                    .map_err(|u| format!("mesh {file:?}: {u}"))?;
                let scale = Vector3::from(self.scale.unwrap_or([1.0; 3]));
                let mesh = crate::mesh::load_mesh(&path, scale).map_err(|e| e.to_string())?;
                if is_static {
                    Geometry::TriMesh {
                        vertices: mesh.vertices,
                        indices: mesh.triangles,
                    }
                } else {
                    Geometry::ConvexHull {
                        points: mesh.vertices,
                    }
                }
            }
        };
        let anisotropy = match (self.friction_axis, self.friction_across) {
            (Some(axis), Some(friction_perp)) => Some(Anisotropy {
                axis: Vector3::from(axis),
                friction_perp,
            }),
            (None, None) => None,
            _ => {
                return Err(
                    "anisotropic friction needs both `friction_axis` and `friction_across`".into(),
                );
            }
        };
        Ok(ShapeDesc::from_geometry(geometry)
            .at(pose(self.position, self.rotation))
            .density(self.density)
            .material(Material {
                friction: self.friction,
                restitution: self.restitution,
                anisotropy,
            })
            .collision(self.collide.then(CollisionFilter::default)))
    }

    fn name(&self) -> &'static str {
        match self.kind {
            ShapeType::Sphere => "sphere",
            ShapeType::Box => "box",
            ShapeType::Capsule => "capsule",
            ShapeType::Cylinder => "cylinder",
            ShapeType::HalfSpace => "half-space",
            ShapeType::ConvexHull => "convex-hull",
            ShapeType::Mesh => "mesh",
        }
    }
}

/// Parses a scene from TOML text; robot files are looked up from the current folder.
pub fn parse_scene(text: &str) -> Result<Scene, SceneError> {
    parse_scene_in(text, std::path::Path::new("."))
}

/// Parses a scene from TOML text; robot files are looked up relative to `folder`.
pub fn parse_scene_in(text: &str, folder: &std::path::Path) -> Result<Scene, SceneError> {
    parse_scene_as(text, SceneFormat::Toml, folder)
}

fn drive_desc(mode: DriveMode, target: f64, target_velocity: f64, ke: f64, kd: f64) -> DriveDesc {
    match mode {
        DriveMode::Position => DriveDesc::Position {
            target,
            target_velocity,
            ke,
            kd,
        },
        DriveMode::Velocity => DriveDesc::Velocity { target, ke },
        DriveMode::Force => DriveDesc::Force { force: target },
    }
}

/// Schedule points $(t_i, y_i)$.
type Points = Vec<(f64, f64)>;

/// A drive's description and, when it has `targets`, its schedule's points (checked:
/// non-empty, finite, times strictly increasing). The initial target is the
/// schedule's value at t = 0.
fn drive_with_schedule(
    mode: DriveMode,
    (target, target_velocity, ke, kd): (f64, f64, f64, f64),
    targets: Option<&[[f64; 2]]>,
) -> Result<(DriveDesc, Option<Points>), String> {
    if matches!(mode, DriveMode::Velocity) && (kd != 0.0 || target_velocity != 0.0) {
        return Err(
            "a velocity drive takes `target` (its velocity) and `ke`; `kd` and `target_velocity` belong to position drives"
                .into(),
        );
    }
    if matches!(mode, DriveMode::Force) && (ke != 0.0 || kd != 0.0 || target_velocity != 0.0) {
        return Err(
            "a force drive takes `target` (its force, N·m or N) and no gains; `ke`, `kd` and `target_velocity` belong to position and velocity drives"
                .into(),
        );
    }
    let Some(targets) = targets else {
        return Ok((drive_desc(mode, target, target_velocity, ke, kd), None));
    };
    let points = schedule_points(targets, "targets")?;
    let schedule = DriveSchedule {
        drive: DriveId(0),
        points,
    };
    let (y, rate) = schedule.at(0.0);
    let desc = match mode {
        DriveMode::Position => drive_desc(mode, y, rate, ke, kd),
        DriveMode::Velocity | DriveMode::Force => drive_desc(mode, y, 0.0, ke, kd),
    };
    Ok((desc, Some(schedule.points)))
}

/// Parses a scene in either format; robot files are looked up relative to `folder`.
pub fn parse_scene_as(
    text: &str,
    format: SceneFormat,
    folder: &std::path::Path,
) -> Result<Scene, SceneError> {
    let file: SceneFile = match format {
        SceneFormat::Toml => toml::from_str(text).map_err(|e| SceneError::Syntax(e.to_string()))?,
        SceneFormat::Json => {
            serde_json::from_str(text).map_err(|e| SceneError::Syntax(format!("JSON: {e}")))?
        }
    };
    if file.bodies.is_empty() && file.robots.is_empty() {
        return Err(SceneError::Syntax(
            "the scene has no [[bodies]] and no [[robots]]: nothing to simulate".into(),
        ));
    }
    let lines = EntryLines::find(text, format);
    let invalid = |line: usize, message: String| SceneError::Invalid { line, message };
    let mut b = ModelBuilder::new();
    if let Some(g) = file.simulation.gravity {
        b.gravity(Vector3::from(g))
            .map_err(|e| SceneError::Syntax(format!("[simulation] gravity: {e}")))?;
    }
    // Scheduled drives are known by joint name until the model is built.
    let mut scheduled: Vec<(usize, String, Points)> = Vec::new();
    let mut ids = std::collections::HashMap::new();
    let mut warnings = Vec::new();
    for (i, body) in file.bodies.iter().enumerate() {
        let line = nth(&lines.bodies, i);
        let moves = body.velocity != [0.0; 3] || body.angular_velocity != [0.0; 3];
        if body.kind == BodyKindName::Static
            && (body.mass.is_some() || body.inertia.is_some() || moves)
        {
            return Err(invalid(
                line,
                format!(
                    "body {:?} is static: it takes no `mass`, `inertia` or velocity",
                    body.name
                ),
            ));
        }
        let mut desc = if body.kind == BodyKindName::Static {
            BodyDesc::fixed(body.name.clone())
        } else {
            BodyDesc::dynamic(body.name.clone())
        };
        desc = desc
            .pose(pose(body.position, body.rotation))
            .velocity(axion_math::twist(
                Vector3::from(body.velocity),
                Vector3::from(body.angular_velocity),
            ));
        match (body.mass, body.inertia) {
            (Some(m), Some(i)) => {
                desc = desc.mass(
                    m,
                    Vector3::from(body.com),
                    Matrix3::from_diagonal(&Vector3::from(i)),
                )
            }
            (None, None) => {}
            _ => {
                return Err(invalid(
                    line,
                    format!(
                        "body {:?}: give both `mass` and `inertia`, or neither (mass from the shapes)",
                        body.name
                    ),
                ));
            }
        }
        for (k, shape) in body.shapes.iter().enumerate() {
            let s = shape
                .to_desc(folder, body.kind == BodyKindName::Static)
                .map_err(|m| invalid(line, format!("body {:?}, shape {k}: {m}", body.name)))?;
            desc = desc.shape(s);
        }
        let id = b.add_body(desc).map_err(|e| invalid(line, e.to_string()))?;
        ids.insert(body.name.clone(), (id, Isometry3::identity()));
    }
    for (i, robot) in file.robots.iter().enumerate() {
        let line = nth(&lines.robots, i);
        let (file, is_mjcf) = match (&robot.urdf, &robot.mjcf) {
            (Some(f), None) => (f, false),
            (None, Some(f)) => (f, true),
            _ => {
                return Err(invalid(
                    line,
                    "a robot needs exactly one of `urdf` and `mjcf`".into(),
                ));
            }
        };
        let path = folder.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            invalid(
                line,
                format!("robot {file:?}: cannot read {}: {e}", path.display()),
            )
        })?;
        let mut drives = Vec::new();
        for d in &robot.drives {
            let (desc, points) = drive_with_schedule(
                d.mode,
                (d.target, d.target_velocity, d.ke, d.kd),
                d.targets.as_deref(),
            )
            .map_err(|m| invalid(line, format!("robot {file:?}, drive {:?}: {m}", d.joint)))?;
            if let Some(points) = points {
                scheduled.push((line, format!("{}{}", robot.prefix, d.joint), points));
            }
            if drives.iter().any(|(j, _)| *j == d.joint) {
                return Err(invalid(
                    line,
                    format!("robot {file:?}: a second drive for joint {:?}", d.joint),
                ));
            }
            drives.push((d.joint.clone(), desc));
        }
        let options = RobotOptions {
            base_pose: pose(robot.position, robot.rotation),
            fixed_base: robot.fixed_base,
            prefix: robot.prefix.clone(),
            friction: robot.friction,
            drives: drives.into_iter().collect(),
            file: Some(path.clone()),
            package_paths: robot.package_paths.iter().map(|p| folder.join(p)).collect(),
            self_collision: robot.self_collision,
            ..Default::default()
        };
        let imported = if is_mjcf {
            import_mjcf(&text, &options, &mut b)
        } else {
            import_urdf(&text, &options, &mut b)
        }
        .map_err(|e| invalid(line, format!("robot {file:?}: {e}")))?;
        warnings.extend(imported.warnings.iter().cloned());
        for (link, id) in imported.links {
            let frame = imported.frames[&link];
            ids.insert(format!("{}{link}", robot.prefix), (id, frame));
        }
    }
    for (i, joint) in file.joints.iter().enumerate() {
        let line = nth(&lines.joints, i);
        let body = |name: &str| {
            ids.get(name).copied().ok_or_else(|| {
                invalid(
                    line,
                    format!("joint {:?}: unknown body {name:?}", joint.name),
                )
            })
        };
        // Bodies, and the named link's frame on them (merged URDF links are not at
        // their body's origin).
        let (child, child_frame) = body(&joint.child)?;
        let parent = joint.parent.as_deref().map(body).transpose()?;
        let parent_frame = parent.map_or(Isometry3::identity(), |p| p.1);
        let parent = parent.map(|p| p.0);
        let axis = || {
            joint.axis.map(Vector3::from).ok_or_else(|| {
                invalid(
                    line,
                    format!(
                        "joint {:?}: a {} joint needs `axis`",
                        joint.name,
                        kind_name(joint.kind)
                    ),
                )
            })
        };
        let kind = match joint.kind {
            JointTypeName::Revolute => JointType::Revolute { axis: axis()? },
            JointTypeName::Prismatic => JointType::Prismatic { axis: axis()? },
            JointTypeName::Ball => JointType::Ball,
            JointTypeName::Fixed => JointType::Fixed,
            JointTypeName::Free => JointType::Free,
        };
        let mut desc = JointDesc::new(joint.name.clone(), kind, parent, child)
            .frames(
                parent_frame * pose(joint.parent_anchor, joint.parent_rotation),
                child_frame * pose(joint.child_anchor, joint.child_rotation),
            )
            .compliance(joint.compliance);
        if let Some(b) = joint.baumgarte {
            desc = desc.velocity_level(b);
        }
        let max_force = joint.drive.as_ref().and_then(|d| d.max_force);
        if let Some(f) = max_force
            && (f.is_nan() || f <= 0.0)
        {
            return Err(invalid(
                line,
                format!(
                    "joint {:?}, drive: max_force must be positive, got {f}",
                    joint.name
                ),
            ));
        }
        if joint.range.is_some() || max_force.is_some() {
            // The range (none: unbounded) and the drive's largest force, an effort rating.
            let [lower, upper] = joint.range.unwrap_or([f64::NEG_INFINITY, f64::INFINITY]);
            desc = desc.limits(JointLimits {
                lower,
                upper,
                effort: max_force.unwrap_or(f64::INFINITY),
                velocity: f64::INFINITY,
            });
        }
        if joint.damping.is_some() || joint.armature.is_some() {
            desc = desc.dynamics(JointDynamics {
                damping: joint.damping.unwrap_or(0.0),
                friction: 0.0,
                armature: joint.armature.unwrap_or(0.0),
            });
        }
        if let Some(d) = &joint.drive {
            let (drive, points) = drive_with_schedule(
                d.mode,
                (d.target, d.target_velocity, d.ke, d.kd),
                d.targets.as_deref(),
            )
            .map_err(|m| invalid(line, format!("joint {:?}, drive: {m}", joint.name)))?;
            if let Some(points) = points {
                scheduled.push((line, joint.name.clone(), points));
            }
            desc = desc.drive(drive);
        }
        b.add_joint(desc)
            .map_err(|e| invalid(line, e.to_string()))?;
    }
    let sim = &file.simulation;
    let settings = SceneSettings {
        dt: sim.dt,
        duration: sim.duration,
        worlds: sim.worlds,
        integrator: match sim.integrator {
            Integrator::BackwardEuler => "backward-euler",
            Integrator::EnergyMomentum => "energy-momentum",
        }
        .into(),
        backend: match sim.backend {
            BackendName::Auto => "auto",
            BackendName::Cpu => "cpu",
        }
        .into(),
        solver: sim.solver,
    };
    for (what, v) in [("dt", settings.dt), ("duration", settings.duration)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(SceneError::Syntax(format!(
                "[simulation] {what} must be a positive number of seconds, got {v}"
            )));
        }
    }
    if settings.worlds == 0 {
        return Err(SceneError::Syntax(
            "[simulation] worlds must be at least 1".into(),
        ));
    }
    settings.solver.validate().map_err(SceneError::Syntax)?;
    let model = b
        .build()
        .map_err(|e| SceneError::Syntax(format!("the scene as a whole: {e}")))?;
    if settings.worlds.saturating_mul(model.bodies().len().max(1)) > axion_model::MAX_BODY_STATES {
        return Err(SceneError::Syntax(format!(
            "[simulation] worlds = {} of {} bodies is more than the {} bodies a state holds",
            settings.worlds,
            model.bodies().len(),
            axion_model::MAX_BODY_STATES
        )));
    }
    let schedules = scheduled
        .into_iter()
        .map(|(line, joint, points)| {
            let id = model.joint_id(&joint);
            let drive = model.drives().iter().position(|d| Some(d.joint) == id);
            drive
                .map(|d| DriveSchedule {
                    drive: DriveId(d),
                    points,
                })
                .ok_or_else(|| invalid(line, format!("drive of joint {joint:?}: no such drive")))
        })
        .collect::<Result<_, _>>()?;
    let forces = file
        .forces
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let line = nth(&lines.forces, i);
            let bad = |m: String| invalid(line, format!("force on {:?}: {m}", f.body));
            let body = model
                .body_id(&f.body)
                .ok_or_else(|| bad("no body has this name".into()))?;
            if !model.bodies()[body.0].is_dynamic() {
                return Err(bad("the body is static: a force cannot move it".into()));
            }
            let numbers = f
                .force
                .iter()
                .chain(&f.torque)
                .chain(f.point.iter().flatten());
            if numbers.into_iter().any(|v| !v.is_finite()) {
                return Err(bad("`force`, `torque` and `point` must be finite".into()));
            }
            let end = f.end.unwrap_or(f64::INFINITY);
            if !f.start.is_finite() || end.is_nan() || end <= f.start {
                return Err(bad(format!(
                    "`end` ({end}) must come after `start` ({})",
                    f.start
                )));
            }
            let schedule = f
                .schedule
                .as_deref()
                .map(|p| schedule_points(p, "schedule"))
                .transpose()
                .map_err(bad)?;
            Ok(AppliedForce {
                body,
                force: Vector3::from(f.force),
                torque: Vector3::from(f.torque),
                point: f.point.map(Vector3::from),
                body_frame: f.frame == ForceFrame::Body,
                start: f.start,
                end,
                schedule,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Scene {
        model,
        settings,
        schedules,
        forces,
        warnings,
    })
}

impl SolverOverrides {
    /// Checks that every given value is usable: a positive iteration limit, positive
    /// finite tolerances, a non-negative finite margin, and so on; the error names the
    /// field and the value.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_iterations == Some(0) {
            return Err("[simulation.solver] max_iterations must be at least 1".into());
        }
        for (name, v) in [
            ("velocity_tolerance", self.velocity_tolerance),
            ("position_tolerance", self.position_tolerance),
            ("contact_tolerance", self.contact_tolerance),
        ] {
            if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
                return Err(format!(
                    "[simulation.solver] {name} must be a positive number, got {v}"
                ));
            }
        }
        for (name, v) in [
            ("contact_margin", self.contact_margin),
            ("row_margin", self.row_margin),
        ] {
            if let Some(m) = v.filter(|m| !(m.is_finite() && *m >= 0.0)) {
                return Err(format!(
                    "[simulation.solver] {name} must be a non-negative number of metres, got {m}"
                ));
            }
        }
        for (name, v) in [
            ("friction_creep", self.friction_creep),
            ("fallback_creep", self.fallback_creep),
            ("contact_smoothing", self.contact_smoothing),
            ("contact_compliance", self.contact_compliance),
        ] {
            if let Some(c) = v.filter(|c| !(c.is_finite() && *c >= 0.0)) {
                return Err(format!(
                    "[simulation.solver] {name} must be a non-negative number, got {c}"
                ));
            }
        }
        // Without both, the forces of redundant contacts (a box's four corners) are not
        // determined (the solver's default compliance is 0).
        if self.contact_smoothing == Some(0.0) && self.contact_compliance.unwrap_or(0.0) == 0.0 {
            return Err(
                "[simulation.solver] contact_smoothing = 0 needs a contact_compliance above 0: \
                 without either the forces of redundant contacts are not determined"
                    .into(),
            );
        }
        if let Some(d) = self
            .split_depth
            .filter(|&d| d > axion_model::MAX_SPLIT_DEPTH)
        {
            return Err(format!(
                "[simulation.solver] split_depth must be at most {}, got {d}",
                axion_model::MAX_SPLIT_DEPTH
            ));
        }
        for (name, v) in [
            ("recovery_speed", self.recovery_speed),
            ("recovery_rate", self.recovery_rate),
        ] {
            // Infinite is allowed: violations removed in one step.
            if let Some(v) = v.filter(|v| v.is_nan() || *v <= 0.0) {
                return Err(format!(
                    "[simulation.solver] {name} must be a positive number (or inf), got {v}"
                ));
            }
        }
        Ok(())
    }
}

fn kind_name(k: JointTypeName) -> &'static str {
    match k {
        JointTypeName::Revolute => "revolute",
        JointTypeName::Prismatic => "prismatic",
        JointTypeName::Ball => "ball",
        JointTypeName::Fixed => "fixed",
        JointTypeName::Free => "free",
    }
}

/// Reads and parses a scene file: JSON for a `.json` extension, TOML otherwise; robot
/// files relative to its folder.
pub fn load_scene(path: &std::path::Path) -> Result<Scene, SceneError> {
    let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_scene_as(
        &text,
        SceneFormat::of(path),
        path.parent().unwrap_or(std::path::Path::new(".")),
    )
}
