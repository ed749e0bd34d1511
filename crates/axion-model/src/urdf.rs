//! URDF import: links become bodies, joints become joints.
//!
//! * A link's reference frame is its URDF frame; its `<inertial>` gives the mass, the
//!   centre of mass (`origin/xyz`) and the inertia, rotated from the inertial frame
//!   (`origin/rpy`) into the link frame, $I = R I_{inertial} R^\top$.
//! * `<collision>` boxes, cylinders (along z), capsules and spheres become shapes with
//!   their `origin` (density 0: the mass is the inertial's). STL collision meshes (with
//!   their `scale`) become the convex hull of their vertices on moving links and the
//!   triangle mesh itself on a static root; other mesh formats are refused. Mesh files
//!   are found from [`UrdfOptions::mesh_folder`] (see [`resolve_mesh`]). `<visual>`
//!   elements are not simulated.
//! * Joints: revolute and continuous → revolute, prismatic, fixed, floating → free,
//!   spherical → ball; planar is refused. The joint frame is the joint `origin` in the
//!   parent link and the child link's own frame; the axis is in the joint frame.
//!   `<limit>` (revolute, prismatic; continuous joints keep effort and velocity with an
//!   infinite range) and `<dynamics>` are kept in [`crate::ModelJoint::limits`] and
//!   [`crate::ModelJoint::dynamics`]. The solver enforces the `lower`/`upper` range
//!   ([`crate::ModelJoint::range`]: unilateral rows on the joint coordinate; a revolute
//!   range of a full turn or more is no constraint), not the effort and velocity
//!   ratings; `<dynamics damping>` of a revolute or prismatic joint becomes an implicit
//!   damper ([`crate::ModelJoint::damper`]), `friction` is kept, not applied; `<mimic>`,
//!   `<calibration>` and `<safety_controller>` are ignored.
//! * Initial link poses follow the joint origins from the root link at the given base
//!   pose; the root is static with `fixed_base`.
//! * Links without mass (no `<inertial>`, or mass 0: frames such as `base_footprint`
//!   or `tool0`) attached by a fixed joint are merged into the body they are fixed
//!   to: their shapes join that body, joints that hang from them hang from it, and
//!   [`ImportedRobot::frames`] tells where their frame is on it. A massless root of a
//!   floating robot is merged into the first link fixed to it. A massless link that
//!   would move is refused with an error naming it.
//!
//! URDF `rpy` is roll about x, then pitch about y, then yaw about z, all fixed axes:
//! $R = R_z(\text{yaw})R_y(\text{pitch})R_x(\text{roll})$.

use std::collections::HashMap;

use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};

use crate::desc::{
    BodyDesc, BodyId, DriveDesc, JointDesc, JointDynamics, JointId, JointLimits, JointType,
};
use crate::error::ModelError;
use crate::model::ModelBuilder;
use crate::shape::{Geometry, Material, Shape, ShapeDesc};

/// Why a URDF could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UrdfError {
    /// Not a readable URDF document.
    #[error("invalid URDF: {0}")]
    Parse(String),
    /// A feature the importer does not handle (named with its link or joint).
    #[error("{element}: {what} is not supported")]
    Unsupported {
        /// `link "…"` or `joint "…"`.
        element: String,
        /// What.
        what: String,
    },
    /// The links do not form one tree.
    #[error("URDF structure: {0}")]
    Structure(String),
    /// A body or joint the model refused.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// How to place and drive an imported robot.
#[derive(Clone, Debug, PartialEq)]
pub struct UrdfOptions {
    /// Pose of the root link in the world.
    pub base_pose: Isometry3<f64>,
    /// Make the root link static (a robot bolted to the world).
    pub fixed_base: bool,
    /// Prefix for body and joint names (to import a robot twice).
    pub prefix: String,
    /// Drives, by URDF joint name.
    pub drives: HashMap<String, DriveDesc>,
    /// Friction coefficient of the collision shapes.
    pub friction: f64,
    /// Folder of the URDF file, from which mesh files are found; `None` refuses meshes.
    pub mesh_folder: Option<std::path::PathBuf>,
}

impl Default for UrdfOptions {
    fn default() -> Self {
        Self {
            base_pose: Isometry3::identity(),
            fixed_base: false,
            prefix: String::new(),
            drives: HashMap::new(),
            friction: Material::default().friction,
            mesh_folder: None,
        }
    }
}

/// The bodies and joints an import created, by URDF name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportedRobot {
    /// Link name → the body that carries it (its own, or the one it was merged into).
    pub links: HashMap<String, BodyId>,
    /// Link name → pose of the link frame in its body's reference frame (identity for
    /// links that are bodies of their own).
    pub frames: HashMap<String, Isometry3<f64>>,
    /// Joint name → joint (fixed joints of merged links have none).
    pub joints: HashMap<String, JointId>,
    /// Fixed joints removed by merging a massless link, by name.
    pub merged_joints: Vec<String>,
}

/// Where a link's frame lives: the link whose body carries it and the link frame's
/// pose in that link's frame.
#[derive(Clone, Copy)]
struct Host<'a> {
    link: &'a str,
    offset: Isometry3<f64>,
}

fn pose(p: &urdf_rs::Pose) -> Isometry3<f64> {
    let rotation = UnitQuaternion::from_euler_angles(p.rpy[0], p.rpy[1], p.rpy[2]);
    Isometry3::from_parts(Vector3::from(*p.xyz).into(), rotation)
}

/// Imports the URDF document `text` into `builder`.
pub fn import_urdf(
    text: &str,
    options: &UrdfOptions,
    builder: &mut ModelBuilder,
) -> Result<ImportedRobot, UrdfError> {
    let robot = urdf_rs::read_from_string(text).map_err(|e| UrdfError::Parse(e.to_string()))?;
    let link_index: HashMap<&str, usize> = robot
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.as_str(), i))
        .collect();
    let mut parent_joint: HashMap<&str, usize> = HashMap::new();
    for (j, joint) in robot.joints.iter().enumerate() {
        for name in [&joint.parent.link, &joint.child.link] {
            if !link_index.contains_key(name.as_str()) {
                return Err(UrdfError::Structure(format!(
                    "joint {:?} names unknown link {name:?}",
                    joint.name
                )));
            }
        }
        if parent_joint.insert(joint.child.link.as_str(), j).is_some() {
            return Err(UrdfError::Structure(format!(
                "link {:?} is the child of two joints",
                joint.child.link
            )));
        }
    }
    let roots: Vec<&str> = robot
        .links
        .iter()
        .map(|l| l.name.as_str())
        .filter(|n| !parent_joint.contains_key(n))
        .collect();
    let [root] = roots[..] else {
        return Err(UrdfError::Structure(format!(
            "expected one root link, found {roots:?}"
        )));
    };
    // World poses of the links, parents first.
    let mut world: HashMap<&str, Isometry3<f64>> = HashMap::from([(root, options.base_pose)]);
    let mut order = vec![root];
    let mut k = 0;
    while k < order.len() {
        let parent = order[k];
        for joint in robot.joints.iter().filter(|j| j.parent.link == parent) {
            let child = joint.child.link.as_str();
            if world.contains_key(child) {
                return Err(UrdfError::Structure(format!(
                    "joint {:?} closes a loop",
                    joint.name
                )));
            }
            world.insert(child, world[parent] * pose(&joint.origin));
            order.push(child);
        }
        k += 1;
    }
    if order.len() != robot.links.len() {
        return Err(UrdfError::Structure(
            "some links are not connected to the root".into(),
        ));
    }

    let massless = |name: &str| robot.links[link_index[name]].inertial.mass.value == 0.0;
    let is_fixed = |j: &urdf_rs::Joint| j.joint_type == urdf_rs::JointType::Fixed;
    // Which body carries each link.
    let mut host: HashMap<&str, Host> = HashMap::new();
    let mut merged = std::collections::HashSet::new();
    let root_anchor = if massless(root) && !options.fixed_base {
        let joint = robot
            .joints
            .iter()
            .find(|j| j.parent.link == root && is_fixed(j) && !massless(&j.child.link))
            .ok_or_else(|| UrdfError::Unsupported {
                element: format!("link {root:?}"),
                what: "a massless root link (no <inertial>) with no massive link fixed to it \
                       (bolt it to the world with fixed_base, or give it an <inertial>)"
                    .into(),
            })?;
        merged.insert(joint.name.as_str());
        Some((joint.child.link.as_str(), pose(&joint.origin).inverse()))
    } else {
        None
    };
    for name in &order {
        let h = if *name == root {
            match root_anchor {
                Some((anchor, offset)) => Host {
                    link: anchor,
                    offset,
                },
                None => Host {
                    link: name,
                    offset: Isometry3::identity(),
                },
            }
        } else {
            let joint = &robot.joints[parent_joint[name]];
            if massless(name) && !(*name == root && options.fixed_base) {
                if !is_fixed(joint) {
                    return Err(UrdfError::Unsupported {
                        element: format!("link {name:?}"),
                        what: format!(
                            "a massless link (no <inertial>) moving on joint {:?}; give it an <inertial>",
                            joint.name
                        ),
                    });
                }
                merged.insert(joint.name.as_str());
                let parent = host[joint.parent.link.as_str()];
                Host {
                    link: parent.link,
                    offset: parent.offset * pose(&joint.origin),
                }
            } else {
                Host {
                    link: name,
                    offset: Isometry3::identity(),
                }
            }
        };
        host.insert(name, h);
    }

    let mut imported = ImportedRobot::default();
    for name in order.iter().filter(|n| host[*n].link == **n) {
        let link = &robot.links[link_index[name]];
        let is_static = *name == root && options.fixed_base;
        let mut desc = if is_static {
            BodyDesc::fixed(format!("{}{}", options.prefix, link.name))
        } else {
            let i = &link.inertial;
            let inertia = Matrix3::new(
                i.inertia.ixx,
                i.inertia.ixy,
                i.inertia.ixz, //
                i.inertia.ixy,
                i.inertia.iyy,
                i.inertia.iyz, //
                i.inertia.ixz,
                i.inertia.iyz,
                i.inertia.izz,
            );
            let frame = pose(&i.origin);
            let r = frame.rotation.to_rotation_matrix().into_inner();
            BodyDesc::dynamic(format!("{}{}", options.prefix, link.name)).mass(
                i.mass.value,
                frame.translation.vector,
                r * inertia * r.transpose(),
            )
        };
        desc = desc.pose(world[name]);
        // The link's own shapes and those of the links merged into it.
        for carried in order.iter().filter(|n| host[*n].link == *name) {
            let link = &robot.links[link_index[carried]];
            for collision in &link.collision {
                let geometry = collision_geometry(link, &collision.geometry, is_static, options)?;
                desc = desc.shape(
                    ShapeDesc::from_geometry(geometry)
                        .at(host[carried].offset * pose(&collision.origin))
                        .density(0.0)
                        .material(Material {
                            friction: options.friction,
                            ..Default::default()
                        }),
                );
            }
        }
        let id = builder.add_body(desc)?;
        imported.links.insert(link.name.clone(), id);
    }
    for name in &order {
        let h = host[name];
        let body = imported.links[h.link];
        imported.links.insert(name.to_string(), body);
        imported.frames.insert(name.to_string(), h.offset);
    }
    for joint in &robot.joints {
        if merged.contains(joint.name.as_str()) {
            imported.merged_joints.push(joint.name.clone());
            continue;
        }
        let element = || format!("joint {:?}", joint.name);
        let axis = Vector3::from(*joint.axis.xyz);
        let kind = match joint.joint_type {
            urdf_rs::JointType::Revolute | urdf_rs::JointType::Continuous => {
                JointType::Revolute { axis }
            }
            urdf_rs::JointType::Prismatic => JointType::Prismatic { axis },
            urdf_rs::JointType::Fixed => JointType::Fixed,
            urdf_rs::JointType::Floating => JointType::Free,
            urdf_rs::JointType::Spherical => JointType::Ball,
            urdf_rs::JointType::Planar => {
                return Err(UrdfError::Unsupported {
                    element: element(),
                    what: "a planar joint".into(),
                });
            }
        };
        let parent = host[joint.parent.link.as_str()];
        let mut desc = JointDesc::new(
            format!("{}{}", options.prefix, joint.name),
            kind,
            Some(imported.links[parent.link]),
            imported.links[&joint.child.link],
        )
        .frames(parent.offset * pose(&joint.origin), Isometry3::identity());
        let l = &joint.limit;
        match joint.joint_type {
            urdf_rs::JointType::Revolute | urdf_rs::JointType::Prismatic => {
                desc = desc.limits(JointLimits {
                    lower: l.lower,
                    upper: l.upper,
                    effort: l.effort,
                    velocity: l.velocity,
                });
            }
            urdf_rs::JointType::Continuous => {
                desc = desc.limits(JointLimits {
                    lower: f64::NEG_INFINITY,
                    upper: f64::INFINITY,
                    effort: l.effort,
                    velocity: l.velocity,
                });
            }
            _ => {}
        }
        if let Some(d) = &joint.dynamics {
            desc = desc.dynamics(JointDynamics {
                damping: d.damping,
                friction: d.friction,
            });
        }
        if let Some(drive) = options.drives.get(&joint.name) {
            desc = desc.drive(*drive);
        }
        imported
            .joints
            .insert(joint.name.clone(), builder.add_joint(desc)?);
    }
    for name in options.drives.keys() {
        if imported.merged_joints.contains(name) {
            return Err(UrdfError::Structure(format!(
                "a drive names joint {name:?}, a fixed joint merged away with its massless link"
            )));
        }
        if !imported.joints.contains_key(name) {
            return Err(UrdfError::Structure(format!(
                "a drive names joint {name:?}, which the robot does not have"
            )));
        }
    }
    Ok(imported)
}

/// The geometry of a `<collision>` element: a solid, or an STL mesh (convex hull on a
/// moving link, triangle mesh on a static one).
fn collision_geometry(
    link: &urdf_rs::Link,
    geometry: &urdf_rs::Geometry,
    is_static: bool,
    options: &UrdfOptions,
) -> Result<Geometry, UrdfError> {
    let unsupported = |what: String| UrdfError::Unsupported {
        element: format!("link {:?}", link.name),
        what,
    };
    Ok(Geometry::Solid(match geometry {
        urdf_rs::Geometry::Box { size } => Shape::Box {
            half_extents: Vector3::from(**size) / 2.0,
        },
        urdf_rs::Geometry::Cylinder { radius, length } => Shape::Cylinder {
            radius: *radius,
            half_length: length / 2.0,
        },
        urdf_rs::Geometry::Capsule { radius, length } => Shape::Capsule {
            radius: *radius,
            half_length: length / 2.0,
        },
        urdf_rs::Geometry::Sphere { radius } => Shape::Sphere { radius: *radius },
        urdf_rs::Geometry::Mesh { filename, scale } => {
            let folder = options.mesh_folder.as_deref().ok_or_else(|| {
                unsupported(format!(
                    "collision mesh {filename:?} without a folder to find it from"
                ))
            })?;
            let path = resolve_mesh(filename, folder)
                .ok_or_else(|| unsupported(format!("collision mesh {filename:?}: no such file")))?;
            let is_stl = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("stl"));
            if !is_stl {
                return Err(unsupported(format!(
                    "collision mesh {filename:?} (only STL meshes are read)"
                )));
            }
            let mesh = std::fs::File::open(&path)
                .and_then(|f| stl_io::read_stl(&mut std::io::BufReader::new(f)))
                .map_err(|e| unsupported(format!("collision mesh {filename:?}: {e}")))?;
            let s = scale.map_or(Vector3::repeat(1.0), |s| Vector3::from(*s));
            let vertices: Vec<Vector3<f64>> = mesh
                .vertices
                .iter()
                .map(|v| {
                    Vector3::new(v.0[0] as f64, v.0[1] as f64, v.0[2] as f64).component_mul(&s)
                })
                .collect();
            return Ok(if is_static {
                let indices = mesh
                    .faces
                    .iter()
                    .map(|f| f.vertices.map(|i| i as u32))
                    .collect();
                Geometry::TriMesh { vertices, indices }
            } else {
                Geometry::ConvexHull { points: vertices }
            });
        }
    }))
}

/// The file a URDF mesh `filename` names, if it exists: `file://` paths as they are;
/// `package://pkg/rest` as `A/pkg/rest` or `A/rest` for `A` the URDF's folder or any
/// folder above it (the nearest wins; ROS itself is not consulted); other names relative
/// to the URDF's folder.
pub fn resolve_mesh(filename: &str, folder: &std::path::Path) -> Option<std::path::PathBuf> {
    if let Some(path) = filename.strip_prefix("file://") {
        let path = std::path::PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    if let Some(rest) = filename.strip_prefix("package://") {
        let (package, inside) = rest.split_once('/')?;
        return folder
            .ancestors()
            .flat_map(|a| [a.join(package).join(inside), a.join(inside)])
            .find(|p| p.is_file());
    }
    let path = folder.join(filename);
    path.is_file().then_some(path)
}
