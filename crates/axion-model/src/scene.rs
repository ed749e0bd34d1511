//! Scene files: a model and its simulation settings in TOML.
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
//! Errors say where: syntax and type errors carry TOML's line, column and field;
//! errors found while building (an unknown body, a negative mass) name the line of the
//! `[[bodies]]` or `[[joints]]` entry and the body or joint.

use nalgebra::{Isometry3, Matrix3, Vector3};
use serde::Deserialize;
use toml::Spanned;

use crate::desc::{BodyDesc, DriveDesc, JointDesc, JointType};
use crate::error::ModelError;
use crate::model::{Model, ModelBuilder};
use crate::shape::{Anisotropy, CollisionFilter, Geometry, Material, Shape, ShapeDesc};
use crate::urdf::{UrdfOptions, import_urdf};

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
    /// Not valid TOML, or a field of the wrong type, missing, or unknown (the message
    /// shows the line, the column and the text).
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
}

/// A loaded scene.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The model.
    pub model: Model,
    /// The settings.
    pub settings: SceneSettings,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    #[serde(default)]
    simulation: SimulationFile,
    bodies: Vec<Spanned<BodyFile>>,
    #[serde(default)]
    joints: Vec<Spanned<JointFile>>,
    #[serde(default)]
    robots: Vec<Spanned<RobotFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RobotFile {
    /// Path of the URDF file, relative to the scene file.
    urdf: String,
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RobotDriveFile {
    joint: String,
    mode: DriveMode,
    target: f64,
    #[serde(default)]
    target_velocity: f64,
    ke: f64,
    #[serde(default)]
    kd: f64,
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
    drive: Option<DriveFile>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum DriveMode {
    Position,
    Velocity,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DriveFile {
    mode: DriveMode,
    /// Position target (position mode) or velocity target (velocity mode).
    target: f64,
    #[serde(default)]
    target_velocity: f64,
    ke: f64,
    #[serde(default)]
    kd: f64,
}

fn pose(position: [f64; 3], rotation: [f64; 3]) -> Isometry3<f64> {
    Isometry3::new(Vector3::from(position), Vector3::from(rotation))
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

impl ShapeFile {
    /// The shape, or what it lacks.
    fn to_desc(&self) -> Result<ShapeDesc, String> {
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
        }
    }
}

/// Parses a scene from TOML text; robot files are looked up from the current folder.
pub fn parse_scene(text: &str) -> Result<Scene, SceneError> {
    parse_scene_in(text, std::path::Path::new("."))
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
    }
}

/// Parses a scene from TOML text; robot files are looked up relative to `folder`.
pub fn parse_scene_in(text: &str, folder: &std::path::Path) -> Result<Scene, SceneError> {
    let file: SceneFile = toml::from_str(text).map_err(|e| SceneError::Syntax(e.to_string()))?;
    let invalid = |span: std::ops::Range<usize>, message: String| SceneError::Invalid {
        line: line_of(text, span.start),
        message,
    };
    let model_error = |span: std::ops::Range<usize>, e: ModelError| invalid(span, e.to_string());
    let mut b = ModelBuilder::new();
    if let Some(g) = file.simulation.gravity {
        b.gravity(Vector3::from(g))
            .map_err(|e| invalid(0..0, e.to_string()))?;
    }
    let mut ids = std::collections::HashMap::new();
    for entry in &file.bodies {
        let span = entry.span();
        let body = entry.get_ref();
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
                    span,
                    format!(
                        "body {:?}: give both `mass` and `inertia`, or neither (mass from the shapes)",
                        body.name
                    ),
                ));
            }
        }
        for (k, shape) in body.shapes.iter().enumerate() {
            let s = shape.to_desc().map_err(|m| {
                invalid(
                    span.clone(),
                    format!("body {:?}, shape {k}: {m}", body.name),
                )
            })?;
            desc = desc.shape(s);
        }
        let id = b.add_body(desc).map_err(|e| model_error(span, e))?;
        ids.insert(body.name.clone(), id);
    }
    for entry in &file.robots {
        let span = entry.span();
        let robot = entry.get_ref();
        let path = folder.join(&robot.urdf);
        let urdf = std::fs::read_to_string(&path).map_err(|e| {
            invalid(
                span.clone(),
                format!(
                    "robot {:?}: cannot read {}: {e}",
                    robot.urdf,
                    path.display()
                ),
            )
        })?;
        let options = UrdfOptions {
            base_pose: pose(robot.position, robot.rotation),
            fixed_base: robot.fixed_base,
            prefix: robot.prefix.clone(),
            friction: robot.friction,
            drives: robot
                .drives
                .iter()
                .map(|d| {
                    (
                        d.joint.clone(),
                        drive_desc(d.mode, d.target, d.target_velocity, d.ke, d.kd),
                    )
                })
                .collect(),
        };
        let imported = import_urdf(&urdf, &options, &mut b)
            .map_err(|e| invalid(span.clone(), format!("robot {:?}: {e}", robot.urdf)))?;
        for (link, id) in imported.links {
            ids.insert(format!("{}{link}", robot.prefix), id);
        }
    }
    for entry in &file.joints {
        let span = entry.span();
        let joint = entry.get_ref();
        let body = |name: &str| {
            ids.get(name).copied().ok_or_else(|| {
                invalid(
                    span.clone(),
                    format!("joint {:?}: unknown body {name:?}", joint.name),
                )
            })
        };
        let child = body(&joint.child)?;
        let parent = joint.parent.as_deref().map(body).transpose()?;
        let axis = || {
            joint.axis.map(Vector3::from).ok_or_else(|| {
                invalid(
                    span.clone(),
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
                pose(joint.parent_anchor, joint.parent_rotation),
                pose(joint.child_anchor, joint.child_rotation),
            )
            .compliance(joint.compliance);
        if let Some(d) = &joint.drive {
            desc = desc.drive(drive_desc(d.mode, d.target, d.target_velocity, d.ke, d.kd));
        }
        b.add_joint(desc).map_err(|e| model_error(span, e))?;
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
    Ok(Scene {
        model: b.build().map_err(|e| invalid(0..0, e.to_string()))?,
        settings,
    })
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

/// Reads and parses a scene file (robot files relative to its folder).
pub fn load_scene(path: &std::path::Path) -> Result<Scene, SceneError> {
    let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_scene_in(&text, path.parent().unwrap_or(std::path::Path::new(".")))
}
