//! The tree of a robot, whatever file it came from: links (mass, collision shapes)
//! joined by joints, turned into bodies and joints of a model.
//!
//! * **Links joined by fixed joints are one body.** Each group of links connected by
//!   fixed joints becomes one body whose reference frame is the frame of its first link
//!   with mass (in the order of the tree from the root), or of its top link when none
//!   has mass. Its mass properties combine the links' exactly
//!   ([`axion_math::combine_parts`], the parallel-axis theorem). Their collision shapes
//!   are carried over with their poses; [`ImportedRobot::links`] and
//!   [`ImportedRobot::frames`] still find every link.
//! * **Inertias** are checked on the merged body: one that is not positive definite or
//!   breaks the triangle inequality is repaired to the nearest valid one
//!   ([`axion_math::repair_inertia`]) with a warning naming the link and the change, or
//!   refused with [`InertiaPolicy::Refuse`]. A moving body with no mass is an error
//!   naming the link.
//! * **The root** is placed at [`RobotOptions::base_pose`]. It is static with
//!   [`RobotOptions::fixed_base`], or when its fixed group has no mass.
//! * **Self-collision** follows [`RobotOptions::self_collision`] for URDF, and the
//!   file's collision filters for MJCF.
//!
//! The readers ([`crate::urdf`], [`crate::mjcf`]) parse their format into links and
//! joints and hand them to one builder, so both formats follow these rules.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use axion_math::{InertiaRepair, repair_inertia};
use axion_model::{
    BodyDesc, BodyId, CollisionFilter, DriveDesc, Geometry, JointDesc, JointDynamics, JointId,
    JointLimits, JointType, Material, ModelBuilder, ModelError, Shape, ShapeDesc,
};
use nalgebra::{Isometry3, Matrix3, Vector3};
use roxmltree::Node;

use crate::mesh::{MeshData, load_mesh};
use crate::package::resolve_uri;
use crate::xml::{Issue, Xml, tolerate};
use crate::{ImportWarning, Location};

/// Why a URDF could not be imported, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{at}{kind}")]
pub struct RobotError {
    /// The file and line of the offending element.
    pub at: Location,
    /// What is wrong.
    pub kind: RobotErrorKind,
}

/// What is wrong with a URDF.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RobotErrorKind {
    /// Not a well-formed XML document (the parser's words).
    #[error("not a readable XML file: {0}")]
    Xml(String),
    /// An element or value that breaks URDF's rules (a missing attribute, a malformed
    /// number, a duplicate name).
    #[error("{0}")]
    Invalid(String),
    /// Valid URDF that axion-rs cannot simulate.
    #[error("{0} is not supported")]
    Unsupported(String),
    /// The links do not form one tree.
    #[error("{0}")]
    Structure(String),
    /// A mesh file that cannot be found or read.
    #[error("{0}")]
    Mesh(String),
    /// A body or joint the model refused.
    #[error(transparent)]
    Model(ModelError),
}

impl From<ModelError> for RobotError {
    /// A model error with no place in a file (for example from building the model the
    /// robot was imported into).
    fn from(e: ModelError) -> Self {
        Self {
            at: Location::default(),
            kind: RobotErrorKind::Model(e),
        }
    }
}

/// What to do with an inertia that is not physically valid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InertiaPolicy {
    /// Repair it to the nearest valid one and warn ([`axion_math::repair_inertia`]).
    #[default]
    Repair,
    /// Refuse the file.
    Refuse,
}

/// How to place and drive an imported robot.
#[derive(Clone, Debug, PartialEq)]
pub struct RobotOptions {
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
    /// The file the text came from: messages name it, and mesh file names are found
    /// from its folder. `None` for text from elsewhere: only absolute mesh paths and
    /// packages on the search paths are found.
    pub file: Option<PathBuf>,
    /// Folders searched for `package://` names before `ROS_PACKAGE_PATH` (see
    /// [`crate::package`]).
    pub package_paths: Vec<PathBuf>,
    /// What to do with an invalid inertia.
    pub inertia: InertiaPolicy,
    /// Let the robot's links collide with each other. Off by default (as in pybullet,
    /// Gazebo and Isaac Lab): URDF collision shapes of neighbouring links often overlap
    /// in the rest pose. When on, a joint's parent and child, links sharing a parent
    /// and links whose shapes touch in the initial pose still do not collide
    /// ([`ImportedRobot::touching`] lists the last).
    pub self_collision: bool,
    /// Start coordinates of joints by name (rad for revolute, m for prismatic joints);
    /// the others start at 0, the pose the file describes.
    pub initial_positions: HashMap<String, f64>,
    /// Joints whose start coordinate is outside their range start at the nearest end
    /// of it instead, with a warning (a robot described with its knees outside their
    /// range would otherwise be thrown by the first step, which enforces the range).
    pub start_in_range: bool,
}

impl Default for RobotOptions {
    fn default() -> Self {
        Self {
            base_pose: Isometry3::identity(),
            fixed_base: false,
            prefix: String::new(),
            drives: HashMap::new(),
            friction: Material::default().friction,
            file: None,
            package_paths: Vec::new(),
            inertia: InertiaPolicy::default(),
            self_collision: false,
            initial_positions: HashMap::new(),
            start_in_range: false,
        }
    }
}

/// The bodies and joints an import created, by URDF name, and what it had to say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportedRobot {
    /// The robot's `name`.
    pub name: String,
    /// Link name → the body that carries it (its own, or the one it was merged into).
    pub links: HashMap<String, BodyId>,
    /// Link name → pose of the link frame in its body's reference frame (identity for
    /// the link that gives the body its frame).
    pub frames: HashMap<String, Isometry3<f64>>,
    /// Joint name → joint (fixed joints are merged and have none).
    pub joints: HashMap<String, JointId>,
    /// Fixed joints whose links were merged into one body, by name.
    pub merged_joints: Vec<String>,
    /// Whether the root is static ([`RobotOptions::fixed_base`] or a `world` root).
    pub fixed_base: bool,
    /// Whether the robot's links collide with each other ([`RobotOptions::self_collision`]).
    pub self_collision: bool,
    /// MJCF: links collide as the file's `contype`/`conaffinity` and `<exclude>` say.
    pub collisions_as_written: bool,
    /// Bodies on floating (free) joints: they move freely, no joint is made.
    pub free_bodies: usize,
    /// With self-collision: pairs of links (their bodies' names) whose shapes touch in
    /// the initial pose and are therefore kept from colliding.
    pub touching: Vec<(String, String)>,
    /// Repairs, merges and elements read but not simulated.
    pub warnings: Vec<ImportWarning>,
    /// The time step the file asks for (MJCF `<option timestep>`), not applied.
    pub timestep: Option<f64>,
    /// The gravity the file asks for (MJCF `<option gravity>`), not applied.
    pub gravity: Option<Vector3<f64>>,
}

impl ImportedRobot {
    /// One line: the robot's name, links, bodies, joints by kind and warnings.
    pub fn summary(&self) -> String {
        let bodies: HashSet<BodyId> = self.links.values().copied().collect();
        let collision = if self.collisions_as_written {
            "collisions as the file filters them".to_string()
        } else if self.self_collision {
            format!(
                "self-collision on ({} pairs touching at the start excluded)",
                self.touching.len()
            )
        } else {
            "no self-collision".to_string()
        };
        let base = match (self.collisions_as_written, self.fixed_base) {
            (true, _) => format!("{} free bodies", self.free_bodies),
            (false, true) => "fixed base".to_string(),
            (false, false) => "floating base".to_string(),
        };
        format!(
            "robot {:?}: {} links in {} bodies ({} fixed joints merged), {} joints, {base}, {collision}, {} warnings",
            self.name,
            self.links.len(),
            bodies.len(),
            self.merged_joints.len(),
            self.joints.len(),
            self.warnings.len()
        )
    }
}

/// A parsed `<link>`.
pub(crate) struct Link<'a> {
    pub(crate) name: &'a str,
    pub(crate) line: u32,
    /// Mass (0 without `<inertial>`), centre of mass and inertia about it in the link
    /// frame.
    pub(crate) mass: f64,
    pub(crate) com: Vector3<f64>,
    pub(crate) inertia: Matrix3<f64>,
    pub(crate) collisions: Vec<Collision<'a>>,
    /// pybullet's `<contact><lateral_friction value>`.
    pub(crate) friction: Option<f64>,
    /// A massless frame between two joints of one MJCF body (a compound joint): no
    /// mass, no shapes, the child of one joint and the parent of the next.
    pub(crate) frame: bool,
}

pub(crate) struct Collision<'a> {
    pub(crate) line: u32,
    pub(crate) origin: Isometry3<f64>,
    pub(crate) geometry: GeometrySpec<'a>,
    /// This shape's friction coefficient (before the link's and the options').
    pub(crate) friction: Option<f64>,
    /// Which shapes it collides with.
    pub(crate) filter: CollisionFilter,
}

#[derive(Clone)]
pub(crate) enum GeometrySpec<'a> {
    Solid(Shape),
    /// A mesh file, as the description names it (resolved by
    /// [`resolve_uri`] from the description's folder).
    Mesh {
        filename: std::borrow::Cow<'a, str>,
        scale: Vector3<f64>,
    },
    /// pybullet's `<plane normal>`: a half-space, on static links only.
    Plane(Vector3<f64>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Revolute,
    Continuous,
    Prismatic,
    Fixed,
    Floating,
    Planar,
    Spherical,
}

/// A parsed `<joint>`.
pub(crate) struct Joint<'a> {
    pub(crate) name: &'a str,
    pub(crate) line: u32,
    pub(crate) kind: Kind,
    pub(crate) parent: &'a str,
    pub(crate) child: &'a str,
    /// The joint frame in the parent link's frame.
    pub(crate) origin: Isometry3<f64>,
    /// The joint frame in the child link's frame (identity in URDF).
    pub(crate) child_frame: Isometry3<f64>,
    pub(crate) axis: Vector3<f64>,
    /// `(lower, upper)` when both are given, then effort and velocity (∞ when absent).
    pub(crate) range: Option<(f64, f64)>,
    pub(crate) has_limit: bool,
    pub(crate) effort: f64,
    pub(crate) velocity: f64,
    pub(crate) dynamics: Option<JointDynamics>,
    pub(crate) mimic: bool,
}

pub(crate) struct Importer<'o> {
    pub(crate) options: &'o RobotOptions,
    pub(crate) warnings: RefCell<Vec<ImportWarning>>,
    /// Elements not read, by tag, with their lines.
    pub(crate) unread: RefCell<HashMap<String, Vec<u32>>>,
    /// Meshes read so far, by file name as written and scale.
    pub(crate) meshes: RefCell<HashMap<(String, [u64; 3]), MeshData>>,
    /// MJCF: collisions as the file writes them (filters, parent and child, `<exclude>`
    /// pairs), and the world body is no root to warn about.
    pub(crate) as_written: bool,
    /// Pairs of links that never collide (MJCF `<contact><exclude>`), with their line.
    pub(crate) excludes: RefCell<Vec<(String, String, u32)>>,
    /// Drives by joint name: the options', and those the file declares (MJCF actuators).
    pub(crate) drives: RefCell<HashMap<String, DriveDesc>>,
}

impl<'o> Importer<'o> {
    /// An importer with nothing read yet.
    pub(crate) fn new(options: &'o RobotOptions) -> Self {
        Self {
            options,
            warnings: RefCell::new(Vec::new()),
            unread: RefCell::new(HashMap::new()),
            meshes: RefCell::new(HashMap::new()),
            as_written: false,
            excludes: RefCell::new(Vec::new()),
            drives: RefCell::new(options.drives.clone()),
        }
    }

    pub(crate) fn at(&self, line: Option<u32>) -> Location {
        Location {
            file: self.options.file.clone(),
            line,
        }
    }

    pub(crate) fn error(&self, line: u32, kind: RobotErrorKind) -> RobotError {
        RobotError {
            at: self.at(Some(line)),
            kind,
        }
    }

    pub(crate) fn invalid(&self, issue: Issue) -> RobotError {
        self.error(issue.line, RobotErrorKind::Invalid(issue.message))
    }

    /// Notes an element that is not read, for one warning per kind of element.
    pub(crate) fn unread(&self, xml: &Xml, node: Node) {
        let parent = node
            .parent_element()
            .map_or(String::new(), |p| format!("<{}>/", p.tag_name().name()));
        let tag = format!("{parent}<{}>", node.tag_name().name());
        let tag = if tag.ends_with("<contact>") {
            format!("{tag} (pybullet's contact parameters)")
        } else {
            tag
        };
        self.unread
            .borrow_mut()
            .entry(tag)
            .or_default()
            .push(xml.line(node));
    }

    /// The coordinate a joint starts at: [`RobotOptions::initial_positions`] or 0, moved
    /// into its range with [`RobotOptions::start_in_range`].
    fn start_position(&self, joint: &Joint) -> Result<f64, RobotError> {
        let given = self.options.initial_positions.get(joint.name).copied();
        if given.is_some()
            && !matches!(
                joint.kind,
                Kind::Revolute | Kind::Continuous | Kind::Prismatic
            )
        {
            return Err(self.error(
                joint.line,
                RobotErrorKind::Structure(format!(
                    "an initial position is given for joint {:?}, which has no coordinate",
                    joint.name
                )),
            ));
        }
        let q = given.unwrap_or(0.0);
        if !q.is_finite() {
            return Err(self.error(
                joint.line,
                RobotErrorKind::Invalid(format!("joint {:?}: initial position {q}", joint.name)),
            ));
        }
        match joint.range {
            // (A range with lower above upper is refused when the joint is added.)
            Some((lo, hi))
                if self.options.start_in_range && lo <= hi && !(lo..=hi).contains(&q) =>
            {
                let moved = q.clamp(lo, hi);
                self.warn(
                    Some(joint.line),
                    format!(
                        "joint {:?} starts at {moved} instead of {q}, the nearest end of its range [{lo}, {hi}]",
                        joint.name
                    ),
                );
                Ok(moved)
            }
            _ => Ok(q),
        }
    }

    /// Parses a robot description whose root element must be `root` (`robot` or
    /// `mujoco`), after mending what [`tolerate`] mends (each mend a warning). Returns
    /// the mended text's document, built by `with`.
    pub(crate) fn parse<T>(
        &self,
        text: &str,
        root: &str,
        with: impl FnOnce(&Xml) -> Result<T, RobotError>,
    ) -> Result<T, RobotError> {
        let (text, notes) = tolerate(text);
        for note in notes {
            self.warn(Some(note.line), note.message);
        }
        let xml =
            Xml::parse(&text).map_err(|e| self.error(e.line, RobotErrorKind::Xml(e.message)))?;
        let found = xml.doc.root_element();
        if !found.has_tag_name(root) {
            let hint = match found.tag_name().name() {
                "mujoco" => " (this is an MJCF model)",
                "robot" => " (this is a URDF robot)",
                _ => "",
            };
            return Err(self.invalid(xml.issue(
                found,
                format!(
                    "the root element is <{}>, not <{root}>{hint}",
                    found.tag_name().name()
                ),
            )));
        }
        with(&xml)
    }

    /// Notes an attribute that is given but not applied, for one warning per kind.
    pub(crate) fn unread_attribute(&self, xml: &Xml, node: Node, key: &str) {
        let tag = format!("<{} {key}>", node.tag_name().name());
        self.unread
            .borrow_mut()
            .entry(tag)
            .or_default()
            .push(xml.line(node));
    }

    /// One warning per kind of element or attribute not read, with its lines.
    pub(crate) fn flush_unread(&self) {
        let mut unread: Vec<_> = std::mem::take(&mut *self.unread.borrow_mut())
            .into_iter()
            .collect();
        unread.sort_by_key(|(_, lines)| lines[0]);
        for (tag, lines) in unread {
            let shown: Vec<String> = lines.iter().take(5).map(u32::to_string).collect();
            let more = if lines.len() > 5 { ", …" } else { "" };
            self.warn(
                Some(lines[0]),
                format!(
                    "{tag} is not read ({} time(s), lines {}{more})",
                    lines.len(),
                    shown.join(", ")
                ),
            );
        }
    }

    pub(crate) fn warn(&self, line: Option<u32>, message: String) {
        let at = self.at(line);
        self.warnings
            .borrow_mut()
            .push(ImportWarning { at, message });
    }

    pub(crate) fn build(
        &self,
        name: String,
        links: Vec<Link>,
        joints: Vec<Joint>,
        builder: &mut ModelBuilder,
    ) -> Result<ImportedRobot, RobotError> {
        let structure = |line, message: String| RobotError {
            at: self.at(Some(line)),
            kind: RobotErrorKind::Structure(message),
        };
        let mut link_index: HashMap<&str, usize> = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            if let Some(first) = link_index.insert(l.name, i) {
                return Err(structure(
                    l.line,
                    format!(
                        "a second link named {:?} (the first is at line {})",
                        l.name, links[first].line
                    ),
                ));
            }
        }
        if links.is_empty() {
            return Err(structure(1, "the robot has no <link>".into()));
        }
        let mut joint_names: HashMap<&str, u32> = HashMap::new();
        let mut parent_joint: HashMap<&str, usize> = HashMap::new();
        let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
        for (j, joint) in joints.iter().enumerate() {
            if let Some(first) = joint_names.insert(joint.name, joint.line) {
                return Err(structure(
                    joint.line,
                    format!(
                        "a second joint named {:?} (the first is at line {first})",
                        joint.name
                    ),
                ));
            }
            for link in [joint.parent, joint.child] {
                if !link_index.contains_key(link) {
                    return Err(structure(
                        joint.line,
                        format!("joint {:?} names unknown link {link:?}", joint.name),
                    ));
                }
            }
            if let Some(other) = parent_joint.insert(joint.child, j) {
                return Err(structure(
                    joint.line,
                    format!(
                        "link {:?} is the child of two joints, {:?} and {:?}",
                        joint.child, joints[other].name, joint.name
                    ),
                ));
            }
            children.entry(joint.parent).or_default().push(j);
        }
        let roots: Vec<&Link> = links
            .iter()
            .filter(|l| !parent_joint.contains_key(l.name))
            .collect();
        let root = match roots[..] {
            [root] => root,
            [] => {
                return Err(structure(
                    links[0].line,
                    "every link is the child of a joint: the joints form a loop".into(),
                ));
            }
            _ => {
                let names: Vec<&str> = roots.iter().take(5).map(|l| l.name).collect();
                return Err(structure(
                    roots[1].line,
                    format!(
                        "expected one root link, found {} ({names:?}…): every link but one must be the child of a joint",
                        roots.len()
                    ),
                ));
            }
        };
        // The links in tree order from the root, with their poses relative to the top
        // of their fixed group (`local`) and the group they belong to (its top link).
        let mut order = vec![root.name];
        let mut local: HashMap<&str, Isometry3<f64>> =
            HashMap::from([(root.name, Isometry3::identity())]);
        let mut world: HashMap<&str, Isometry3<f64>> =
            HashMap::from([(root.name, self.options.base_pose)]);
        let mut group: HashMap<&str, &str> = HashMap::from([(root.name, root.name)]);
        let mut k = 0;
        while k < order.len() {
            let parent = order[k];
            for &j in children.get(parent).map(Vec::as_slice).unwrap_or_default() {
                let joint = &joints[j];
                let child = joint.child;
                let q = self.start_position(joint)?;
                world.insert(
                    child,
                    world[parent]
                        * joint.origin
                        * joint_motion(joint, q)
                        * joint.child_frame.inverse(),
                );
                if joint.kind == Kind::Fixed {
                    group.insert(child, group[parent]);
                    local.insert(
                        child,
                        local[parent] * joint.origin * joint.child_frame.inverse(),
                    );
                } else {
                    group.insert(child, child);
                    local.insert(child, Isometry3::identity());
                }
                order.push(child);
            }
            k += 1;
        }
        if order.len() != links.len() {
            let lost = links
                .iter()
                .find(|l| !group.contains_key(l.name))
                .map_or(root, |l| l);
            return Err(structure(
                lost.line,
                format!(
                    "link {:?} is not connected to the root {:?} (the joints form a loop)",
                    lost.name, root.name
                ),
            ));
        }
        let link: HashMap<&str, &Link> = links.iter().map(|l| (l.name, l)).collect();
        // Members of each group in tree order; the head gives the body its frame.
        let mut members: HashMap<&str, Vec<&str>> = HashMap::new();
        for name in &order {
            members.entry(group[name]).or_default().push(name);
        }
        let massless_root = members[root.name].iter().all(|m| link[m].mass == 0.0);
        // MJCF's world body, with whatever is welded to it, is the static world.
        let fixed_base = self.options.fixed_base || massless_root || self.as_written;
        if massless_root && !self.options.fixed_base && !self.as_written {
            let why = if root.name == "world" {
                "is named \"world\" and has no mass (the ROS convention)".to_string()
            } else {
                "has no mass (as pybullet and MuJoCo read it; give it an <inertial> for a floating robot)".to_string()
            };
            self.warn(
                Some(root.line),
                format!(
                    "the root link {:?} {why}: the robot is bolted to the world (fixed base)",
                    root.name
                ),
            );
        }
        let heads: HashMap<&str, &str> = members
            .iter()
            .map(|(&top, m)| {
                let head = if top == root.name && fixed_base {
                    top
                } else {
                    m.iter()
                        .copied()
                        .find(|m| link[m].mass > 0.0)
                        .unwrap_or(top)
                };
                (top, head)
            })
            .collect();
        let offsets: HashMap<&str, Isometry3<f64>> = order
            .iter()
            .map(|&name| (name, local[heads[group[name]]].inverse() * local[name]))
            .collect();
        let offset = |name: &str| offsets[name];

        let mut imported = ImportedRobot {
            name,
            fixed_base,
            ..Default::default()
        };
        let tops: Vec<&str> = order.iter().copied().filter(|n| group[n] == *n).collect();
        let mut bodies: Vec<(BodyId, BodyDesc)> = Vec::new();
        for &top in &tops {
            let h = heads[top];
            let is_static = top == root.name && fixed_base;
            let body_name = format!("{}{}", self.options.prefix, h);
            let mut desc = if is_static {
                BodyDesc::fixed(body_name)
            } else if link[h].frame {
                BodyDesc::frame(body_name)
            } else {
                let parts: Vec<Part> = members[top]
                    .iter()
                    .map(|m| {
                        let (l, o) = (link[m], offset(m));
                        let r = o.rotation.to_rotation_matrix().into_inner();
                        Part {
                            name: l.name,
                            line: l.line,
                            mass: l.mass,
                            com: o * nalgebra::Point3::from(l.com),
                            inertia: r * self.link_inertia(l) * r.transpose(),
                        }
                    })
                    .collect();
                let moves = parent_joint
                    .get(top)
                    .map_or("is the root of a floating robot".to_string(), |&j| {
                        format!("moves on joint {:?}", joints[j].name)
                    });
                let (mass, com, inertia) = self.combined_mass(&parts, &moves)?;
                BodyDesc::dynamic(body_name).mass(mass, com, inertia)
            };
            desc = desc.pose(world[h]);
            for &m in &members[top] {
                let l = link[m];
                for c in &l.collisions {
                    let geometry = self.collision_geometry(l, c, is_static)?;
                    desc = desc.shape(
                        ShapeDesc::from_geometry(geometry)
                            .at(offset(m) * c.origin)
                            .density(0.0)
                            .material(Material {
                                friction: c
                                    .friction
                                    .or(l.friction)
                                    .unwrap_or(self.options.friction),
                                ..Default::default()
                            })
                            .collision(Some(c.filter)),
                    );
                }
            }
            let line = link[h].line;
            let id = builder
                .add_body(desc.clone())
                .map_err(|err| self.error(line, RobotErrorKind::Model(err)))?;
            bodies.push((id, desc));
            for &m in &members[top] {
                imported.links.insert(m.to_string(), id);
                imported.frames.insert(m.to_string(), offset(m));
            }
        }
        // The body each group hangs from (none for the root).
        let parent_body: Vec<Option<BodyId>> = tops
            .iter()
            .map(|top| {
                parent_joint
                    .get(top)
                    .map(|&j| imported.links[joints[j].parent])
            })
            .collect();
        if self.as_written {
            imported.self_collision = true;
            imported.collisions_as_written = true;
            for (a, b, line) in self.excludes.borrow().iter() {
                let body = |name: &str| {
                    imported.links.get(name).copied().ok_or_else(|| {
                        structure(*line, format!("<exclude> names unknown body {name:?}"))
                    })
                };
                builder
                    .exclude_collision(body(a)?, body(b)?)
                    .map_err(|e| self.error(*line, RobotErrorKind::Model(e)))?;
            }
        } else {
            imported.self_collision = self.options.self_collision;
            imported.touching = self.exclude_self_collisions(&bodies, &parent_body, builder)?;
        }
        let merged_count = order.len() - tops.len();
        if merged_count > 0 {
            self.warn(
                None,
                format!(
                    "{merged_count} links joined by fixed joints merged into the bodies they are fixed to"
                ),
            );
        }

        let mut unlimited = Vec::new();
        let mut ratings = 0;
        let mut friction = Vec::new();
        let mut multi_dof = Vec::new();
        let mut mimic = Vec::new();
        for joint in &joints {
            let kind = match joint.kind {
                Kind::Fixed => {
                    imported.merged_joints.push(joint.name.to_string());
                    continue;
                }
                // A floating (free) joint constrains nothing: its child is a free body,
                // and as in MuJoCo it collides with its parent.
                Kind::Floating => {
                    imported.free_bodies += 1;
                    continue;
                }
                Kind::Revolute | Kind::Continuous => JointType::Revolute { axis: joint.axis },
                Kind::Prismatic => JointType::Prismatic { axis: joint.axis },
                Kind::Spherical => JointType::Ball,
                Kind::Planar => {
                    return Err(self.error(
                        joint.line,
                        RobotErrorKind::Unsupported(format!(
                            "joint {:?}: a planar joint",
                            joint.name
                        )),
                    ));
                }
            };
            let mut desc = JointDesc::new(
                format!("{}{}", self.options.prefix, joint.name),
                kind,
                Some(imported.links[joint.parent]),
                imported.links[joint.child],
            )
            .frames(
                offset(joint.parent) * joint.origin,
                offset(joint.child) * joint.child_frame,
            );
            let (lower, upper) = match (joint.kind, joint.range) {
                (Kind::Revolute | Kind::Prismatic, Some(range)) => range,
                (Kind::Revolute | Kind::Prismatic, None) => {
                    unlimited.push(joint.name);
                    (f64::NEG_INFINITY, f64::INFINITY)
                }
                _ => (f64::NEG_INFINITY, f64::INFINITY),
            };
            if matches!(
                joint.kind,
                Kind::Revolute | Kind::Prismatic | Kind::Continuous
            ) {
                desc = desc.limits(JointLimits {
                    lower,
                    upper,
                    effort: joint.effort,
                    velocity: joint.velocity,
                });
                if joint.velocity.is_finite() {
                    ratings += 1;
                }
            }
            if let Some(d) = joint.dynamics {
                desc = desc.dynamics(d);
                if d.friction != 0.0 {
                    friction.push(joint.name);
                }
                if matches!(joint.kind, Kind::Spherical | Kind::Floating)
                    && (d.damping != 0.0 || d.armature != 0.0)
                {
                    multi_dof.push(joint.name);
                }
            }
            if joint.mimic {
                mimic.push(joint.name);
            }
            if let Some(drive) = self.drives.borrow().get(joint.name).copied() {
                desc = desc.drive(drive);
            }
            let id = builder
                .add_joint(desc)
                .map_err(|err| self.error(joint.line, RobotErrorKind::Model(err)))?;
            imported.joints.insert(joint.name.to_string(), id);
        }
        let list = |names: &[&str]| {
            let shown: Vec<&str> = names.iter().take(6).copied().collect();
            let more = if names.len() > 6 { ", …" } else { "" };
            format!("{shown:?}{more}")
        };
        if !unlimited.is_empty() {
            self.warn(
                None,
                format!(
                    "{} revolute or prismatic joints have no <limit lower upper> and are left unlimited: {}",
                    unlimited.len(),
                    list(&unlimited)
                ),
            );
        }
        if ratings > 0 {
            self.warn(
                None,
                format!(
                    "the velocity limits of {ratings} joints are kept but not enforced (their effort limits bound the drives given to them)"
                ),
            );
        }
        if !friction.is_empty() {
            self.warn(
                None,
                format!(
                    "<dynamics friction> is kept but not applied: {}",
                    list(&friction)
                ),
            );
        }
        if !multi_dof.is_empty() {
            self.warn(
                None,
                format!(
                    "damping and armature of ball and free joints are kept but not applied: {}",
                    list(&multi_dof)
                ),
            );
        }
        if !mimic.is_empty() {
            self.warn(
                None,
                format!(
                    "<mimic> is not enforced; these joints move freely: {}",
                    list(&mimic)
                ),
            );
        }
        let mut positioned: Vec<&String> = self.options.initial_positions.keys().collect();
        positioned.sort();
        if let Some(name) = positioned
            .into_iter()
            .find(|n| !imported.joints.contains_key(n.as_str()))
        {
            return Err(RobotError {
                at: self.at(None),
                kind: RobotErrorKind::Structure(format!(
                    "an initial position names joint {name:?}, which the robot does not have (or which has no coordinate)"
                )),
            });
        }
        let drive_names = self.drives.borrow();
        let mut drives: Vec<&String> = drive_names.keys().collect();
        drives.sort();
        for name in drives {
            let at = self.at(None);
            let fail = |message: String| RobotError {
                at: at.clone(),
                kind: RobotErrorKind::Structure(message),
            };
            if imported.merged_joints.contains(name) {
                return Err(fail(format!(
                    "a drive names joint {name:?}, a fixed joint (its links are merged into one body)"
                )));
            }
            if !imported.joints.contains_key(name) {
                return Err(fail(format!(
                    "a drive names joint {name:?}, which the robot does not have"
                )));
            }
        }
        imported.warnings = self.warnings.take();
        Ok(imported)
    }

    /// Keeps the robot's bodies from colliding with each other: all pairs without
    /// self-collision; with it, bodies hanging from one parent and pairs whose shapes
    /// touch (gap ≤ 0) in the initial pose, found on a model of the robot alone. Returns
    /// the touching pairs by body name.
    pub(crate) fn exclude_self_collisions(
        &self,
        bodies: &[(BodyId, BodyDesc)],
        parent: &[Option<BodyId>],
        builder: &mut ModelBuilder,
    ) -> Result<Vec<(String, String)>, RobotError> {
        let model_error = |e| RobotError {
            at: self.at(None),
            kind: RobotErrorKind::Model(e),
        };
        if !self.options.self_collision {
            let ids: Vec<BodyId> = bodies.iter().map(|(id, _)| *id).collect();
            builder.exclude_within(&ids).map_err(model_error)?;
            return Ok(Vec::new());
        }
        let mut exclude = |a: usize, b: usize| {
            builder
                .exclude_collision(bodies[a].0, bodies[b].0)
                .map(|_| ())
                .map_err(model_error)
        };

        let mut by_parent: HashMap<BodyId, Vec<usize>> = HashMap::new();
        for (k, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                by_parent.entry(*p).or_default().push(k);
            }
        }
        for siblings in by_parent.values() {
            for (i, &a) in siblings.iter().enumerate() {
                for &b in &siblings[i + 1..] {
                    exclude(a, b)?;
                }
            }
        }
        let mut alone = ModelBuilder::new();
        for (_, desc) in bodies {
            alone.add_body(desc.clone()).map_err(model_error)?;
        }
        let alone = alone.build().map_err(model_error)?;
        let world = axion_collision::CollisionWorld::new(&alone).map_err(|e| RobotError {
            at: self.at(None),
            kind: RobotErrorKind::Invalid(e.to_string()),
        })?;
        let poses: Vec<_> = alone.bodies().iter().map(|b| b.initial_pose).collect();
        let mut contacts = Vec::new();
        world.detect(&poses, 0.0, &mut contacts);
        let mut touching = HashSet::new();
        for c in contacts.iter().filter(|c| c.gap <= 0.0) {
            let (a, b) = (c.body_a.0.min(c.body_b.0), c.body_a.0.max(c.body_b.0));
            let related = parent[a] == Some(bodies[b].0)
                || parent[b] == Some(bodies[a].0)
                || (parent[a].is_some() && parent[a] == parent[b]);
            if !related && touching.insert((a, b)) {
                exclude(a, b)?;
            }
        }
        let mut touching: Vec<(usize, usize)> = touching.into_iter().collect();
        touching.sort();
        Ok(touching
            .into_iter()
            .map(|(a, b)| (bodies[a].1.name.clone(), bodies[b].1.name.clone()))
            .collect())
    }

    /// A link's inertia about its centre of mass in its frame. A link with mass whose
    /// `<inertia>` is all zeros gets the inertia of its solid collision shapes (uniform
    /// density, scaled to its mass, about their common centre; pybullet's default), with
    /// a warning; without solid shapes it keeps the zeros, which the merge may fill.
    fn link_inertia(&self, l: &Link) -> Matrix3<f64> {
        if l.mass <= 0.0 || l.inertia != Matrix3::zeros() {
            return l.inertia;
        }
        let solids: Vec<ShapeDesc> = l
            .collisions
            .iter()
            .filter_map(|c| match &c.geometry {
                GeometrySpec::Solid(shape) => Some(ShapeDesc::new(*shape).at(c.origin)),
                GeometrySpec::Mesh { .. } | GeometrySpec::Plane(_) => None,
            })
            .collect();
        let Some((m, _, inertia)) = axion_model::shape::combined_mass(&solids) else {
            return l.inertia;
        };
        let inertia = inertia * (l.mass / m);
        let (moments, _) = axion_math::inertia::principal_moments(&inertia);
        self.warn(
            Some(l.line),
            format!(
                "link {:?} has mass {} and a zero inertia: its collision shapes give principal moments {}",
                l.name,
                l.mass,
                format_moments(moments)
            ),
        );
        inertia
    }

    /// Mass, centre of mass and inertia of the links of one fixed group (`parts`, the
    /// top link first, in the frame of the group's body), repaired or refused by
    /// [`RobotOptions::inertia`]. `moves` says how the group moves, for the error of a
    /// group without mass.
    fn combined_mass(
        &self,
        parts: &[Part],
        moves: &str,
    ) -> Result<(f64, Vector3<f64>, Matrix3<f64>), RobotError> {
        let top = &parts[0];
        let others: Vec<&str> = parts[1..].iter().map(|p| p.name).collect();
        let pieces: Vec<_> = parts
            .iter()
            .map(|p| (p.mass, p.com.coords, p.inertia))
            .collect();
        let Some((mass, com, inertia)) = axion_math::combine_parts(&pieces) else {
            let merged = if others.is_empty() {
                String::new()
            } else {
                format!(" (with the links fixed to it: {others:?})")
            };
            return Err(self.error(
                top.line,
                RobotErrorKind::Invalid(format!(
                    "link {:?}{merged} has no mass but {moves}; give it an <inertial> (or bolt the robot down with a fixed base)",
                    top.name
                )),
            ));
        };
        let head = parts.iter().find(|p| p.mass > 0.0).unwrap_or(top);
        let (line, head) = (head.line, head.name);
        match repair_inertia(&inertia) {
            InertiaRepair::Valid => Ok((mass, com, inertia)),
            InertiaRepair::Repaired {
                before,
                after,
                inertia: repaired,
            } => {
                let merged = if others.is_empty() {
                    String::new()
                } else {
                    format!(" (merged with {others:?})")
                };
                let what = format!(
                    "link {head:?}{merged}: principal moments {} are not a physical inertia (positive, each at most the sum of the others)",
                    format_moments(before)
                );
                if self.options.inertia == InertiaPolicy::Refuse {
                    return Err(self.error(line, RobotErrorKind::Invalid(what)));
                }
                self.warn(
                    Some(line),
                    format!("{what}; repaired to {}", format_moments(after)),
                );
                Ok((mass, com, repaired))
            }
            InertiaRepair::Empty { moments: m } => Err(self.error(
                line,
                RobotErrorKind::Invalid(format!(
                    "link {head:?} has mass {mass} but principal moments {}: give it an inertia",
                    format_moments(m)
                )),
            )),
        }
    }

    /// The geometry of a `<collision>`: a solid, or a mesh (its convex hull on a moving
    /// body, the triangle mesh on a static one).
    fn collision_geometry(
        &self,
        link: &Link,
        collision: &Collision,
        is_static: bool,
    ) -> Result<Geometry, RobotError> {
        let (filename, scale) = match &collision.geometry {
            GeometrySpec::Solid(shape) => return Ok(Geometry::Solid(*shape)),
            GeometrySpec::Plane(normal) if is_static => {
                return Ok(Geometry::HalfSpace { normal: *normal });
            }
            GeometrySpec::Plane(_) => {
                return Err(self.error(
                    collision.line,
                    RobotErrorKind::Unsupported(format!(
                        "link {:?}: a <plane> on a moving link (planes are static ground)",
                        link.name
                    )),
                ));
            }
            GeometrySpec::Mesh { filename, scale } => (filename.as_ref(), *scale),
        };
        let mesh_error = |message: String| RobotError {
            at: self.at(Some(collision.line)),
            kind: RobotErrorKind::Mesh(format!(
                "link {:?}: collision mesh {filename:?}: {message}",
                link.name
            )),
        };
        // Keyed by the name as written: within one description it names one file, so a
        // mesh shared by several links is resolved (a package search) and read once.
        let key = (filename.to_string(), scale.data.0[0].map(f64::to_bits));
        let mut meshes = self.meshes.borrow_mut();
        if !meshes.contains_key(&key) {
            let folder = self.options.file.as_deref().and_then(Path::parent);
            let path = resolve_uri(filename, folder, &self.options.package_paths)
                .map_err(|u| mesh_error(u.to_string()))?;
            let mesh = load_mesh(&path, scale).map_err(|e| mesh_error(e.reason))?;
            for w in &mesh.warnings {
                self.warn(Some(collision.line), w.clone());
            }
            meshes.insert(key.clone(), mesh);
        }
        let mesh = &meshes[&key];
        Ok(if is_static {
            Geometry::TriMesh {
                vertices: mesh.vertices.clone(),
                indices: mesh.triangles.clone(),
            }
        } else {
            Geometry::ConvexHull {
                points: mesh.vertices.clone(),
            }
        })
    }
}

/// The text of the robot file at `path` and `options` with [`RobotOptions::file`] set
/// to it, or an error naming the file.
pub(crate) fn read_robot_file(
    path: &Path,
    options: &RobotOptions,
) -> Result<(String, RobotOptions), RobotError> {
    let text = std::fs::read_to_string(path).map_err(|e| RobotError {
        at: Location {
            file: Some(path.to_path_buf()),
            line: None,
        },
        kind: RobotErrorKind::Invalid(format!("cannot read the file: {e}")),
    })?;
    let options = RobotOptions {
        file: Some(path.to_path_buf()),
        ..options.clone()
    };
    Ok((text, options))
}

/// The motion of a joint at coordinate `q` (rad or m), in the joint frame: a rotation
/// about the axis or a translation along it.
fn joint_motion(joint: &Joint, q: f64) -> Isometry3<f64> {
    match joint.kind {
        Kind::Revolute | Kind::Continuous if q != 0.0 => Isometry3::rotation(joint.axis * q),
        Kind::Prismatic if q != 0.0 => {
            Isometry3::translation(joint.axis.x * q, joint.axis.y * q, joint.axis.z * q)
        }
        _ => Isometry3::identity(),
    }
}

/// One link's share of a merged body, in the body's frame.
struct Part<'a> {
    name: &'a str,
    line: u32,
    mass: f64,
    com: nalgebra::Point3<f64>,
    inertia: Matrix3<f64>,
}

/// Whether the joint kind reads `<axis>`.
pub(crate) fn uses_axis(kind: Kind) -> bool {
    matches!(kind, Kind::Revolute | Kind::Continuous | Kind::Prismatic)
}

/// Moments for messages, with 4 significant digits.
fn format_moments(m: [f64; 3]) -> String {
    format!("[{:.4e}, {:.4e}, {:.4e}]", m[0], m[1], m[2])
}
