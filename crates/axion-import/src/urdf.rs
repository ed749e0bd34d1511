//! URDF import: links become bodies, joints become joints, by the rules of
//! [`crate::robot`] (links joined by fixed joints merged, inertias repaired, massless
//! roots bolted down).
//!
//! * A link's `<inertial>` gives the mass, the centre of mass (`origin/xyz`) and the
//!   inertia, rotated from the inertial frame (`origin/rpy`) into the link frame,
//!   $I = R I_{inertial} R^\top$. A link with mass and an all-zero inertia takes that of
//!   its solid collision shapes, with a warning.
//! * `<collision>` boxes, cylinders (along z), capsules and spheres become shapes with
//!   their `origin` (density 0: the mass is the inertial's). Meshes in STL, OBJ or
//!   COLLADA (with their `scale`, see [`crate::mesh`]) become the convex hull of their
//!   vertices on moving bodies and the triangle mesh itself on static ones; their file
//!   names are resolved by [`crate::package::resolve_uri`]. `<visual>` elements are not
//!   simulated. pybullet's `<contact><lateral_friction>` sets a link's friction and its
//!   `<plane>` is a static half-space.
//! * Joints: revolute and continuous → revolute, prismatic, floating → a free body,
//!   spherical → ball; planar is refused. The joint frame is the joint `origin` in the
//!   parent link and the child link's own frame; the axis is in the joint frame (default
//!   x, normalised with a warning when it is not of unit length). `<limit lower upper>`
//!   of a revolute or prismatic joint is enforced as a range; without `<limit>`, or
//!   without `lower` and `upper`, the joint is left unlimited with a warning.
//!   `<dynamics damping>` becomes an implicit damper. A positive `effort` bounds the
//!   force of the drive given to the joint ([`RobotOptions::drives`]). The velocity
//!   rating and `<dynamics friction>` are kept in [`axion_model::ModelJoint`] but not
//!   applied, and `<mimic>` is not enforced: each is said in a warning.
//! * Links of one robot do not collide with each other unless
//!   [`RobotOptions::self_collision`].
//!
//! URDF `rpy` is roll about x, then pitch about y, then yaw about z, all fixed axes:
//! $R = R_z(\text{yaw})R_y(\text{pitch})R_x(\text{roll})$.
//!
//! Every error and warning names the file (when the text came from one) and the line.

use std::path::Path;

use axion_model::{CollisionFilter, JointDynamics, ModelBuilder, Shape};
use nalgebra::{Isometry3, Matrix3, Vector3};
use roxmltree::Node;

use crate::robot::{
    Collision, GeometrySpec, ImportedRobot, Importer, Joint, Kind, Link, RobotError,
    RobotErrorKind, RobotOptions, read_robot_file, uses_axis,
};
use crate::xml::Xml;

/// Elements of URDF that are read elsewhere or deliberately not simulated: no warning.
const QUIET_ROBOT_CHILDREN: [&str; 5] = ["link", "joint", "material", "gazebo", "transmission"];

/// Reads the URDF file at `path` and imports it ([`import_urdf`] with
/// [`RobotOptions::file`] set to `path`).
pub fn import_urdf_file(
    path: &Path,
    options: &RobotOptions,
    builder: &mut ModelBuilder,
) -> Result<ImportedRobot, RobotError> {
    let (text, options) = read_robot_file(path, options)?;
    import_urdf(&text, &options, builder)
}

/// Imports the URDF document `text` into `builder`.
pub fn import_urdf(
    text: &str,
    options: &RobotOptions,
    builder: &mut ModelBuilder,
) -> Result<ImportedRobot, RobotError> {
    Importer::new(options).run(text, builder)
}

impl Importer<'_> {
    fn run(self, text: &str, builder: &mut ModelBuilder) -> Result<ImportedRobot, RobotError> {
        self.parse(text, "robot", |xml| self.read(xml, builder))
    }

    /// The `<robot>` document: links, joints, then the build.
    fn read(&self, xml: &Xml, builder: &mut ModelBuilder) -> Result<ImportedRobot, RobotError> {
        let robot = xml.doc.root_element();
        let name = robot.attribute("name").unwrap_or_default().to_string();
        let mut links = Vec::new();
        let mut joints = Vec::new();
        for child in robot.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "link" => links.push(self.link(xml, child)?),
                "joint" => joints.push(self.joint(xml, child)?),
                other if QUIET_ROBOT_CHILDREN.contains(&other) => {}
                _ => self.unread(xml, child),
            }
        }
        self.flush_unread();
        self.build(name, links, joints, builder)
    }

    fn link<'a>(&self, xml: &Xml<'a>, node: Node<'a, 'a>) -> Result<Link<'a>, RobotError> {
        let e = |i| self.invalid(i);
        let name = xml.required(node, "name").map_err(e)?;
        let mut link = Link {
            name,
            line: xml.line(node),
            mass: 0.0,
            com: Vector3::zeros(),
            inertia: Matrix3::zeros(),
            collisions: Vec::new(),
            friction: None,
            frame: false,
        };
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "inertial" => {
                    let origin = xml.origin(child).map_err(e)?;
                    let mass = xml
                        .child(child, "mass")
                        .ok_or_else(|| xml.issue(child, "<inertial> needs a <mass>"))
                        .and_then(|m| xml.required_number(m, "value"))
                        .map_err(e)?;
                    if mass < 0.0 {
                        return Err(e(
                            xml.issue(child, format!("link {name:?}: negative mass {mass}"))
                        ));
                    }
                    let i = xml
                        .child(child, "inertia")
                        .ok_or_else(|| xml.issue(child, "<inertial> needs an <inertia>"))
                        .map_err(e)?;
                    let mut n = [0.0; 6];
                    for (v, key) in n.iter_mut().zip(["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]) {
                        *v = xml.required_number(i, key).map_err(e)?;
                    }
                    let inertia =
                        Matrix3::new(n[0], n[1], n[2], n[1], n[3], n[4], n[2], n[4], n[5]);
                    let r = origin.rotation.to_rotation_matrix().into_inner();
                    link.mass = mass;
                    link.com = origin.translation.vector;
                    link.inertia = r * inertia * r.transpose();
                }
                "collision" => {
                    let origin = xml.origin(child).map_err(e)?;
                    let geometry = self.geometry(xml, child)?;
                    link.collisions.push(Collision {
                        line: xml.line(child),
                        origin,
                        geometry,
                        friction: None,
                        filter: CollisionFilter::default(),
                    });
                }
                "visual" => {}
                "contact" => {
                    // pybullet's extension: the link's friction coefficient is read.
                    for c in child.children().filter(Node::is_element) {
                        match c.tag_name().name() {
                            "lateral_friction" => {
                                let mu = xml.required_number(c, "value").map_err(e)?;
                                if mu < 0.0 {
                                    return Err(e(xml.issue(c, format!("negative friction {mu}"))));
                                }
                                link.friction = Some(mu);
                            }
                            _ => self.unread(xml, c),
                        }
                    }
                }
                _ => self.unread(xml, child),
            }
        }
        Ok(link)
    }

    fn geometry<'a>(
        &self,
        xml: &Xml<'a>,
        collision: Node<'a, 'a>,
    ) -> Result<GeometrySpec<'a>, RobotError> {
        let e = |i| self.invalid(i);
        let geometry = xml
            .child(collision, "geometry")
            .ok_or_else(|| e(xml.issue(collision, "<collision> needs a <geometry>")))?;
        let mut shapes = geometry.children().filter(Node::is_element);
        let (Some(g), None) = (shapes.next(), shapes.next()) else {
            return Err(e(xml.issue(
                geometry,
                "<geometry> needs exactly one shape (box, cylinder, sphere, capsule or mesh)",
            )));
        };
        let positive = |node: Node, key: &str| -> Result<f64, RobotError> {
            let v = xml.required_number(node, key).map_err(e)?;
            if v <= 0.0 {
                return Err(e(
                    xml.issue(node, format!("{key} must be positive, got {v}"))
                ));
            }
            Ok(v)
        };
        Ok(GeometrySpec::Solid(match g.tag_name().name() {
            "box" => {
                let size = xml
                    .vector::<3>(g, "size")
                    .and_then(|s| s.ok_or_else(|| xml.issue(g, "<box> needs a `size`")))
                    .map_err(e)?;
                if size.iter().any(|&s| s <= 0.0) {
                    return Err(e(
                        xml.issue(g, format!("box sizes must be positive, got {size:?}"))
                    ));
                }
                Shape::Box {
                    half_extents: Vector3::from(size) / 2.0,
                }
            }
            "cylinder" => Shape::Cylinder {
                radius: positive(g, "radius")?,
                half_length: positive(g, "length")? / 2.0,
            },
            "capsule" => Shape::Capsule {
                radius: positive(g, "radius")?,
                half_length: positive(g, "length")? / 2.0,
            },
            "sphere" => Shape::Sphere {
                radius: positive(g, "radius")?,
            },
            "mesh" => {
                let filename = xml.required(g, "filename").map_err(e)?;
                let scale = xml.vector::<3>(g, "scale").map_err(e)?.unwrap_or([1.0; 3]);
                return Ok(GeometrySpec::Mesh {
                    filename: filename.into(),
                    scale: Vector3::from(scale),
                });
            }
            "plane" => {
                let normal = xml
                    .vector::<3>(g, "normal")
                    .map_err(e)?
                    .unwrap_or([0.0, 0.0, 1.0]);
                return Ok(GeometrySpec::Plane(Vector3::from(normal)));
            }
            other => {
                return Err(self.error(
                    xml.line(g),
                    RobotErrorKind::Unsupported(format!("collision geometry <{other}>")),
                ));
            }
        }))
    }

    fn joint<'a>(&self, xml: &Xml<'a>, node: Node<'a, 'a>) -> Result<Joint<'a>, RobotError> {
        let e = |i| self.invalid(i);
        let name = xml.required(node, "name").map_err(e)?;
        let kind = match xml.required(node, "type").map_err(e)? {
            "revolute" => Kind::Revolute,
            "continuous" => Kind::Continuous,
            "prismatic" => Kind::Prismatic,
            "fixed" => Kind::Fixed,
            "floating" => Kind::Floating,
            "planar" => Kind::Planar,
            "spherical" => Kind::Spherical,
            other => {
                return Err(e(
                    xml.issue(node, format!("joint {name:?}: unknown type {other:?}"))
                ));
            }
        };
        let link_of = |tag: &str| -> Result<&'a str, RobotError> {
            let n = xml.child(node, tag).ok_or_else(|| {
                e(xml.issue(node, format!("joint {name:?} needs a <{tag} link=\"…\"/>")))
            })?;
            xml.required(n, "link").map_err(e)
        };
        let mut joint = Joint {
            name,
            line: xml.line(node),
            kind,
            parent: link_of("parent")?,
            child: link_of("child")?,
            origin: xml.origin(node).map_err(e)?,
            child_frame: Isometry3::identity(),
            axis: Vector3::x(),
            range: None,
            has_limit: false,
            effort: f64::INFINITY,
            velocity: f64::INFINITY,
            dynamics: None,
            mimic: false,
        };
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "axis" => {
                    let axis = xml
                        .vector::<3>(child, "xyz")
                        .map_err(e)?
                        .unwrap_or([1.0, 0.0, 0.0]);
                    joint.axis = Vector3::from(axis);
                    let norm = joint.axis.norm();
                    if norm == 0.0 && uses_axis(kind) {
                        return Err(e(xml.issue(child, format!("joint {name:?}: zero axis"))));
                    }
                    if (norm - 1.0).abs() > 1e-6 && uses_axis(kind) {
                        let line = xml.line(child);
                        self.warn(
                            Some(line),
                            format!("joint {name:?}: axis {axis:?} of length {norm} normalised"),
                        );
                    }
                    if norm > 0.0 {
                        joint.axis /= norm;
                    }
                }
                "limit" => {
                    joint.has_limit = true;
                    let lower = xml.number(child, "lower").map_err(e)?;
                    let upper = xml.number(child, "upper").map_err(e)?;
                    joint.range = match (lower, upper) {
                        (None, None) => None,
                        (l, u) => Some((l.unwrap_or(0.0), u.unwrap_or(0.0))),
                    };
                    joint.effort = xml
                        .number(child, "effort")
                        .map_err(e)?
                        .unwrap_or(f64::INFINITY);
                    joint.velocity = xml
                        .number(child, "velocity")
                        .map_err(e)?
                        .unwrap_or(f64::INFINITY);
                }
                "dynamics" => {
                    joint.dynamics = Some(JointDynamics {
                        damping: xml.number(child, "damping").map_err(e)?.unwrap_or(0.0),
                        friction: xml.number(child, "friction").map_err(e)?.unwrap_or(0.0),
                        armature: 0.0,
                    });
                }
                "mimic" => joint.mimic = true,
                "origin" | "parent" | "child" | "safety_controller" | "calibration" => {}
                _ => self.unread(xml, child),
            }
        }
        Ok(joint)
    }
}
