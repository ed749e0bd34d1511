//! URDF import: links become bodies, joints become joints.
//!
//! * A link's reference frame is its URDF frame; its `<inertial>` gives the mass, the
//!   centre of mass (`origin/xyz`) and the inertia, rotated from the inertial frame
//!   (`origin/rpy`) into the link frame, $I = R I_{inertial} R^\top$.
//! * `<collision>` boxes, cylinders (along z), capsules and spheres become shapes with
//!   their `origin` (density 0: the mass is the inertial's). Collision meshes are
//!   refused (no mesh loading yet); `<visual>` elements are not simulated.
//! * Joints: revolute and continuous → revolute, prismatic, fixed, floating → free,
//!   spherical → ball; planar is refused. The joint frame is the joint `origin` in the
//!   parent link and the child link's own frame; the axis is in the joint frame.
//!   `<limit>`, `<dynamics>`, `<mimic>`, `<calibration>` and `<safety_controller>` are
//!   ignored (joint limits are planned as unilateral rows).
//! * Initial link poses follow the joint origins from the root link at the given base
//!   pose; the root is static with `fixed_base`.
//!
//! URDF `rpy` is roll about x, then pitch about y, then yaw about z, all fixed axes:
//! $R = R_z(\text{yaw})R_y(\text{pitch})R_x(\text{roll})$.

use std::collections::HashMap;

use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};

use crate::desc::{BodyDesc, BodyId, DriveDesc, JointDesc, JointId, JointType};
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
}

impl Default for UrdfOptions {
    fn default() -> Self {
        Self {
            base_pose: Isometry3::identity(),
            fixed_base: false,
            prefix: String::new(),
            drives: HashMap::new(),
            friction: Material::default().friction,
        }
    }
}

/// The bodies and joints an import created, by URDF name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportedRobot {
    /// Link name → body.
    pub links: HashMap<String, BodyId>,
    /// Joint name → joint.
    pub joints: HashMap<String, JointId>,
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

    let mut imported = ImportedRobot::default();
    for name in &order {
        let link = &robot.links[link_index[name]];
        let element = || format!("link {:?}", link.name);
        let mut desc = if *name == root && options.fixed_base {
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
        for collision in &link.collision {
            let shape = match &collision.geometry {
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
                urdf_rs::Geometry::Mesh { filename, .. } => {
                    return Err(UrdfError::Unsupported {
                        element: element(),
                        what: format!("collision mesh {filename:?}"),
                    });
                }
            };
            desc = desc.shape(
                ShapeDesc::from_geometry(Geometry::Solid(shape))
                    .at(pose(&collision.origin))
                    .density(0.0)
                    .material(Material {
                        friction: options.friction,
                        ..Default::default()
                    }),
            );
        }
        imported
            .links
            .insert(link.name.clone(), builder.add_body(desc)?);
    }
    for joint in &robot.joints {
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
        let parent = imported.links[&joint.parent.link];
        let child = imported.links[&joint.child.link];
        let mut desc = JointDesc::new(
            format!("{}{}", options.prefix, joint.name),
            kind,
            Some(parent),
            child,
        )
        .frames(pose(&joint.origin), Isometry3::identity());
        if let Some(drive) = options.drives.get(&joint.name) {
            desc = desc.drive(*drive);
        }
        imported
            .joints
            .insert(joint.name.clone(), builder.add_joint(desc)?);
    }
    for name in options.drives.keys() {
        if !imported.joints.contains_key(name) {
            return Err(UrdfError::Structure(format!(
                "a drive names joint {name:?}, which the robot does not have"
            )));
        }
    }
    Ok(imported)
}
