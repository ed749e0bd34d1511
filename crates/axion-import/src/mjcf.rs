//! MJCF import: MuJoCo's model files become bodies, joints and drives.
//!
//! What is read (docs/robots.md lists it with what is refused):
//!
//! * `<compiler>`: `angle` (degrees by default, as in MuJoCo), `eulerseq`, `meshdir`,
//!   `inertiafromgeom` (`auto`, `true`, `false`), `autolimits`; `coordinate="global"`
//!   where no body has a frame of its own (then global coordinates are local ones), else
//!   refused.
//! * `<option>`: `timestep` and `gravity`, reported in [`ImportedRobot::timestep`] and
//!   [`ImportedRobot::gravity`] (the caller decides whether to use them).
//! * `<default>` classes, nested, with `class` on elements and `childclass` on bodies.
//! * `<asset><mesh>` files (STL, OBJ; `scale`), found from `meshdir`.
//! * The `<worldbody>` tree: body frames from `pos` and one of `quat`, `euler`,
//!   `axisangle`, `xyaxes`, `zaxis`; `<inertial>` (`diaginertia` or `fullinertia`) or the
//!   mass of the geoms (`density`, `mass`); geoms `sphere`, `capsule`, `cylinder`, `box`
//!   (with `size` or `fromto`), `plane` (static) and `mesh`, with their sliding
//!   `friction` and `contype`/`conaffinity`; joints `hinge`, `slide`, `ball`, `free` with
//!   `range`/`limited`, `damping` and `armature`. A body without joints is welded to its parent
//!   (merged into its body, see [`crate::robot`]); a body with several joints (a
//!   compound joint: a planar root, a 2- or 3-hinge hip) hangs from its parent through
//!   massless frames, one between each two of its joints
//!   ([`axion_model::BodyKind::Frame`]). The world body is static.
//! * Collisions as MuJoCo filters them: two geoms collide when
//!   `contype₁ & conaffinity₂ ≠ 0` or `contype₂ & conaffinity₁ ≠ 0`, never between a body
//!   and its parent (but for a body on a compound joint to the world: it collides with
//!   the world, as in MuJoCo), nor between the pairs of `<contact><exclude>`.
//! * `<actuator>`: `position` (`kp`, `kv`, `gear`) and `velocity` (`kv`, `gear`) become
//!   implicit drives on their joints: with gear $g$, a position actuator's force on the
//!   joint is $g\,(k_p (u - g q) - k_v g \dot q)$, a drive of stiffness $k_p g^2$ and
//!   damping $k_v g^2$ to $u/g$; a position and a velocity actuator on one joint make one
//!   drive. A `motor` becomes a force drive ([`axion_model::DriveDesc::Force`]): MuJoCo's
//!   joint force $g\,u$ for the control $u$ is the drive's force, set with
//!   `Control::set_drive_force` (0 until set: the robot hangs limp); beside a position or
//!   velocity actuator on the same joint it is that drive's feed-forward force.
//!   `forcerange` (with `forcelimited` true or auto) bounds the drive's force at $g$ times
//!   its larger end, a motor's `ctrlrange` (with `ctrllimited` true or auto) at $g$ times
//!   its larger end too; two actuators on one joint add their bounds. Other actuators
//!   (`general`, `muscle`, tendon or site transmissions) are listed in a warning.
//!
//! Everything else (sensors, tendons, equality constraints, sites, keyframes, soft
//! contact parameters, joint stiffness, …) is listed in warnings, one per kind of element.

use std::collections::HashMap;
use std::path::Path;

use axion_model::{CollisionFilter, DriveDesc, JointDynamics, ModelBuilder, Shape};
use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, Unit, UnitQuaternion, Vector3};
use roxmltree::{Node, NodeId};

use crate::robot::{
    Collision, GeometrySpec, ImportedRobot, Importer, Joint, Kind, Link, RobotError,
    RobotErrorKind, RobotOptions, read_robot_file,
};
use crate::xml::{Issue, Xml};

/// Attributes by name.
type Table = HashMap<String, String>;
/// A default class: attribute tables by element tag, inherited ones included.
type Class = HashMap<String, Table>;

/// The top-level sections that are read.
const READ_SECTIONS: [&str; 7] = [
    "compiler",
    "option",
    "default",
    "asset",
    "worldbody",
    "actuator",
    "contact",
];

/// The attributes that give a frame's orientation, at most one per element.
const ORIENTATIONS: [&str; 5] = ["quat", "axisangle", "euler", "xyaxes", "zaxis"];

/// Reads the MJCF file at `path` and imports it ([`import_mjcf`] with
/// [`RobotOptions::file`] set to `path`).
pub fn import_mjcf_file(
    path: &Path,
    options: &RobotOptions,
    builder: &mut ModelBuilder,
) -> Result<ImportedRobot, RobotError> {
    let (text, options) = read_robot_file(path, options)?;
    import_mjcf(&text, &options, builder)
}

/// Imports the MJCF document `text` into `builder`.
pub fn import_mjcf(
    text: &str,
    options: &RobotOptions,
    builder: &mut ModelBuilder,
) -> Result<ImportedRobot, RobotError> {
    let mut importer = Importer::new(options);
    importer.as_written = true;
    importer.parse(text, "mujoco", |xml| read(&importer, xml, builder))
}

/// The `<mujoco>` document: header, tree, actuators and excludes, then the build.
fn read(
    importer: &Importer,
    xml: &Xml,
    builder: &mut ModelBuilder,
) -> Result<ImportedRobot, RobotError> {
    let root = xml.doc.root_element();
    let mut reader = Reader {
        xml,
        imp: importer,
        degrees: true,
        eulerseq: *b"xyz",
        meshdir: None,
        from_geom: FromGeom::Auto,
        autolimits: true,
        classes: HashMap::new(),
        meshes: HashMap::new(),
        names: HashMap::new(),
        timestep: None,
        gravity: None,
    };
    reader.name_everything(root);
    reader.read_header(root)?;
    let (links, joints) = reader.read_tree(root)?;
    let drives = reader.read_actuators(root)?;
    let excludes = reader.read_excludes(root)?;
    for child in root.children().filter(Node::is_element) {
        if !READ_SECTIONS.contains(&child.tag_name().name()) {
            importer.unread(xml, child);
        }
    }
    let name = root.attribute("model").unwrap_or("mujoco").to_string();
    let mut joints = joints;
    for (joint, drive, limit) in drives {
        if limit.is_finite()
            && let Some(j) = joints.iter_mut().find(|j| j.name == joint)
        {
            j.effort = limit;
        }
        importer.drives.borrow_mut().entry(joint).or_insert(drive);
    }
    *importer.excludes.borrow_mut() = excludes;
    importer.flush_unread();
    let mut imported = importer.build(name, links, joints, builder)?;
    imported.timestep = reader.timestep;
    imported.gravity = reader.gravity;
    Ok(imported)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FromGeom {
    False,
    True,
    Auto,
}

struct Reader<'x, 'i, 'o> {
    xml: &'x Xml<'x>,
    imp: &'i Importer<'o>,
    /// `compiler angle`: degrees (the default) or radians.
    degrees: bool,
    eulerseq: [u8; 3],
    meshdir: Option<String>,
    from_geom: FromGeom,
    autolimits: bool,
    classes: HashMap<String, Class>,
    /// Mesh assets by name: file and scale.
    meshes: HashMap<String, (String, Vector3<f64>)>,
    /// Names given to unnamed bodies and joints, by node (and 0: the body or joint
    /// itself, 1: the weld of a body without joints, or the frame a joint moves).
    names: HashMap<(NodeId, u8), String>,
    timestep: Option<f64>,
    gravity: Option<Vector3<f64>>,
}

impl<'x> Reader<'x, '_, '_> {
    fn invalid(&self, issue: Issue) -> RobotError {
        self.imp.invalid(issue)
    }

    fn refuse(&self, node: Node, what: String) -> RobotError {
        self.imp
            .error(self.xml.line(node), RobotErrorKind::Unsupported(what))
    }

    /// The attribute `key` of `node`, or of its default class `class`.
    fn attr<'a>(&'a self, node: Node<'a, 'x>, class: &str, key: &str) -> Option<&'a str> {
        node.attribute(key).or_else(|| {
            self.classes
                .get(class)?
                .get(node.tag_name().name())?
                .get(key)
                .map(String::as_str)
        })
    }

    /// A list of numbers from an attribute (or its default).
    fn list(
        &self,
        node: Node<'_, 'x>,
        class: &str,
        key: &str,
    ) -> Result<Option<Vec<f64>>, RobotError> {
        self.attr(node, class, key)
            .map(|t| self.xml.number_list(node, key, t))
            .transpose()
            .map_err(|i| self.invalid(i))
    }

    /// Exactly `N` numbers from an attribute (or its default).
    fn array<const N: usize>(
        &self,
        node: Node<'_, 'x>,
        class: &str,
        key: &str,
    ) -> Result<Option<[f64; N]>, RobotError> {
        self.attr(node, class, key)
            .map(|t| self.xml.numbers::<N>(node, key, t))
            .transpose()
            .map_err(|i| self.invalid(i))
    }

    fn number(
        &self,
        node: Node<'_, 'x>,
        class: &str,
        key: &str,
    ) -> Result<Option<f64>, RobotError> {
        Ok(self.array::<1>(node, class, key)?.map(|[x]| x))
    }

    /// An angle in the compiler's unit, in radians.
    fn angle(&self, a: f64) -> f64 {
        if self.degrees { a.to_radians() } else { a }
    }

    /// `coordinate="global"` (MuJoCo before 2.3.3): positions and orientations in the
    /// world frame. Where no body gives itself a frame (`pos` or an orientation), every
    /// body frame is the world frame and global coordinates are local ones (pybullet's
    /// Gym walkers are written so): read as local, with a warning. A body with a frame
    /// is refused, naming it.
    fn global_as_local(&self, root: Node<'x, 'x>, compiler: Node) -> Result<(), RobotError> {
        let framed = root
            .descendants()
            .filter(|n| n.has_tag_name("body"))
            .find(|b| {
                let moved = b
                    .attribute("pos")
                    .is_some_and(|p| p.split_whitespace().any(|x| x.parse::<f64>() != Ok(0.0)));
                moved || ORIENTATIONS.iter().any(|k| b.attribute(*k).is_some())
            });
        if let Some(body) = framed {
            return Err(self.refuse(
                body,
                format!(
                    "a body frame (body {:?}) in compiler coordinate \"global\" (MuJoCo reads only local coordinates since 2.3.3; MuJoCo 2.3.3 or older saves a model in them)",
                    self.name_of(body, 0)
                ),
            ));
        }
        self.imp.warn(
            Some(self.xml.line(compiler)),
            "compiler coordinate \"global\" read as local: no body gives itself a frame, so every body frame is the world frame and the two coincide".into(),
        );
        Ok(())
    }

    /// `<compiler>`, `<option>`, `<default>` and `<asset>`.
    fn read_header(&mut self, root: Node<'x, 'x>) -> Result<(), RobotError> {
        for c in root.children().filter(|c| c.has_tag_name("compiler")) {
            for a in c.attributes() {
                match (a.name(), a.value()) {
                    ("angle", "degree") => self.degrees = true,
                    ("angle", "radian") => self.degrees = false,
                    ("eulerseq", seq)
                        if seq.len() == 3 && seq.chars().all(|ch| "xyzXYZ".contains(ch)) =>
                    {
                        self.eulerseq.copy_from_slice(seq.as_bytes());
                    }
                    ("meshdir", dir) => self.meshdir = Some(dir.to_string()),
                    ("inertiafromgeom", "true") => self.from_geom = FromGeom::True,
                    ("inertiafromgeom", "false") => self.from_geom = FromGeom::False,
                    ("inertiafromgeom", "auto") => self.from_geom = FromGeom::Auto,
                    ("autolimits", v) => self.autolimits = v == "true",
                    ("coordinate", "local") => {}
                    ("coordinate", "global") => self.global_as_local(root, c)?,
                    ("coordinate", other) => {
                        return Err(self.refuse(
                            c,
                            format!(
                                "compiler coordinate {other:?} (MuJoCo itself reads only local coordinates since 2.3.3)"
                            ),
                        ));
                    }
                    ("angle" | "eulerseq" | "inertiafromgeom", v) => {
                        return Err(self.invalid(self.xml.issue(
                            c,
                            format!("<compiler {}=\"{v}\">: not a value MuJoCo knows", a.name()),
                        )));
                    }
                    (other, _) => self.imp.warn(
                        Some(self.xml.line(c)),
                        format!("<compiler {other}> is not applied"),
                    ),
                }
            }
        }
        for o in root.children().filter(|c| c.has_tag_name("option")) {
            for a in o.attributes() {
                match a.name() {
                    "timestep" => {
                        let [h] = self
                            .xml
                            .numbers::<1>(o, "timestep", a.value())
                            .map_err(|i| self.invalid(i))?;
                        self.timestep = Some(h);
                    }
                    "gravity" => {
                        let g = self
                            .xml
                            .numbers::<3>(o, "gravity", a.value())
                            .map_err(|i| self.invalid(i))?;
                        self.gravity = Some(Vector3::from(g));
                    }
                    other => self.imp.warn(
                        Some(self.xml.line(o)),
                        format!("<option {other}> is not applied (axion-rs has its own solver)"),
                    ),
                }
            }
            for child in o.children().filter(Node::is_element) {
                self.imp.unread(self.xml, child);
            }
        }
        self.classes.insert("main".into(), Class::new());
        for d in root.children().filter(|c| c.has_tag_name("default")) {
            self.read_default(d, &Class::new());
        }
        for asset in root.children().filter(|c| c.has_tag_name("asset")) {
            for a in asset.children().filter(Node::is_element) {
                if !a.has_tag_name("mesh") {
                    continue; // textures, materials, skins: looks only
                }
                let class = a.attribute("class").unwrap_or("main");
                let Some(file) = self.attr(a, class, "file").map(str::to_string) else {
                    return Err(self.refuse(a, "a mesh without a file (vertex data inline)".into()));
                };
                let name = a.attribute("name").map(str::to_string).unwrap_or_else(|| {
                    Path::new(&file)
                        .file_stem()
                        .map_or(file.clone(), |s| s.to_string_lossy().into_owned())
                });
                let scale = self.array::<3>(a, class, "scale")?.unwrap_or([1.0; 3]);
                self.meshes.insert(name, (file, Vector3::from(scale)));
            }
        }
        Ok(())
    }

    /// A `<default>` element: its class inherits `parent` and overrides it with its own
    /// elements' attributes; nested defaults inherit it.
    fn read_default(&mut self, node: Node<'x, 'x>, parent: &Class) {
        let name = node.attribute("class").unwrap_or("main").to_string();
        let mut class = parent.clone();
        for e in node
            .children()
            .filter(|c| c.is_element() && !c.has_tag_name("default"))
        {
            let table = class.entry(e.tag_name().name().to_string()).or_default();
            for a in e.attributes() {
                table.insert(a.name().to_string(), a.value().to_string());
            }
        }
        for nested in node.children().filter(|c| c.has_tag_name("default")) {
            self.read_default(nested, &class);
        }
        self.classes.insert(name, class);
    }

    /// Names for unnamed bodies and joints (MuJoCo's are indices; these say where).
    fn name_everything(&mut self, root: Node<'x, 'x>) {
        for (k, body) in root
            .descendants()
            .filter(|n| n.has_tag_name("body"))
            .enumerate()
        {
            if body.attribute("name").is_none() {
                self.names.insert((body.id(), 0), format!("body{}", k + 1));
            }
            let name = body
                .attribute("name")
                .map_or_else(|| format!("body{}", k + 1), str::to_string);
            self.names
                .insert((body.id(), 1), format!("{name} (welded)"));
            for (j, joint) in body
                .children()
                .filter(|c| c.has_tag_name("joint") || c.has_tag_name("freejoint"))
                .enumerate()
            {
                let joint_name = joint
                    .attribute("name")
                    .map_or_else(|| format!("{name} joint {}", j + 1), str::to_string);
                // The massless frame this joint moves, when another joint of the body
                // follows it (a compound joint).
                self.names
                    .insert((joint.id(), 1), format!("{name} ({joint_name} frame)"));
                if joint.attribute("name").is_none() {
                    self.names.insert((joint.id(), 0), joint_name);
                }
            }
        }
    }

    fn name_of<'a>(&'a self, node: Node<'a, 'x>, which: u8) -> &'a str {
        match (which, node.attribute("name")) {
            (0, Some(name)) => name,
            _ => &self.names[&(node.id(), which)],
        }
    }

    /// `pos` and orientation of a frame element, in its parent's frame.
    fn frame(&self, node: Node<'_, 'x>, class: &str) -> Result<Isometry3<f64>, RobotError> {
        let pos = self.array::<3>(node, class, "pos")?.unwrap_or([0.0; 3]);
        Ok(Isometry3::from_parts(
            Translation3::from(Vector3::from(pos)),
            self.orientation(node, class)?,
        ))
    }

    fn orientation(
        &self,
        node: Node<'_, 'x>,
        class: &str,
    ) -> Result<UnitQuaternion<f64>, RobotError> {
        let given: Vec<&str> = ORIENTATIONS
            .into_iter()
            .filter(|k| self.attr(node, class, k).is_some())
            .collect();
        let bad = |m: String| self.invalid(self.xml.issue(node, m));
        match given[..] {
            [] => Ok(UnitQuaternion::identity()),
            ["quat"] => {
                let [w, x, y, z] = self.array::<4>(node, class, "quat")?.unwrap_or_default();
                let q = nalgebra::Quaternion::new(w, x, y, z);
                if q.norm() == 0.0 {
                    return Err(bad("quat is zero".into()));
                }
                Ok(UnitQuaternion::from_quaternion(q))
            }
            ["axisangle"] => {
                let [x, y, z, a] = self
                    .array::<4>(node, class, "axisangle")?
                    .unwrap_or_default();
                let axis = Unit::try_new(Vector3::new(x, y, z), 0.0)
                    .ok_or_else(|| bad("axisangle has a zero axis".into()))?;
                Ok(UnitQuaternion::from_axis_angle(&axis, self.angle(a)))
            }
            ["euler"] => {
                let e = self.array::<3>(node, class, "euler")?.unwrap_or_default();
                // Lower case: axes that turn with the frame (intrinsic, multiplied on the
                // right); upper case: fixed axes (on the left).
                let mut q = UnitQuaternion::identity();
                for (ch, a) in self.eulerseq.iter().zip(e) {
                    let axis = match ch.to_ascii_lowercase() {
                        b'x' => Vector3::x_axis(),
                        b'y' => Vector3::y_axis(),
                        _ => Vector3::z_axis(),
                    };
                    let r = UnitQuaternion::from_axis_angle(&axis, self.angle(a));
                    q = if ch.is_ascii_lowercase() {
                        q * r
                    } else {
                        r * q
                    };
                }
                Ok(q)
            }
            ["xyaxes"] => {
                let v = self.array::<6>(node, class, "xyaxes")?.unwrap_or_default();
                let x = Vector3::new(v[0], v[1], v[2]);
                let y = Vector3::new(v[3], v[4], v[5]);
                let x = x
                    .try_normalize(0.0)
                    .ok_or_else(|| bad("xyaxes: zero x".into()))?;
                let y = (y - x * x.dot(&y))
                    .try_normalize(0.0)
                    .ok_or_else(|| bad("xyaxes: y parallel to x".into()))?;
                let m = Matrix3::from_columns(&[x, y, x.cross(&y)]);
                Ok(UnitQuaternion::from_rotation_matrix(
                    &Rotation3::from_matrix_unchecked(m),
                ))
            }
            ["zaxis"] => {
                let z = Vector3::from(self.array::<3>(node, class, "zaxis")?.unwrap_or_default());
                let z = z
                    .try_normalize(0.0)
                    .ok_or_else(|| bad("zaxis is zero".into()))?;
                Ok(rotation_to(z))
            }
            _ => Err(bad(format!("more than one orientation: {given:?}"))),
        }
    }

    /// The `<worldbody>` tree as links and joints (the world is the link `world`).
    fn read_tree(&self, root: Node<'x, 'x>) -> Result<(Vec<Link<'_>>, Vec<Joint<'_>>), RobotError> {
        let world = root
            .children()
            .find(|c| c.has_tag_name("worldbody"))
            .ok_or_else(|| self.invalid(self.xml.issue(root, "no <worldbody>")))?;
        let mut links = vec![Link {
            name: "world",
            line: self.xml.line(world),
            mass: 0.0,
            com: Vector3::zeros(),
            inertia: Matrix3::zeros(),
            collisions: Vec::new(),
            friction: None,
            frame: false,
        }];
        let mut joints = Vec::new();
        for g in world.children().filter(|c| c.has_tag_name("geom")) {
            let class = g.attribute("class").unwrap_or("main");
            if let (Some(collision), _) = self.geom(g, class, false)? {
                links[0].collisions.push(collision);
            }
        }
        for other in world
            .children()
            .filter(|c| c.is_element() && !c.has_tag_name("geom") && !c.has_tag_name("body"))
        {
            self.body_child(other)?;
        }
        // (body, its parent link, the class its children default to)
        let mut stack: Vec<(Node, &str, String)> = world
            .children()
            .filter(|c| c.has_tag_name("body"))
            .map(|b| (b, "world", "main".to_string()))
            .rev()
            .collect();
        while let Some((body, parent, class)) = stack.pop() {
            let name = self.name_of(body, 0);
            let body_class = body.attribute("class").unwrap_or(&class).to_string();
            let child_class = body
                .attribute("childclass")
                .map_or(class.clone(), str::to_string);
            let pose = self.frame(body, &body_class)?;
            let (body_links, body_joints) = self.body(body, name, parent, pose, &child_class)?;
            links.extend(body_links);
            joints.extend(body_joints);
            let children: Vec<Node> = body.children().filter(|c| c.has_tag_name("body")).collect();
            for child in children.into_iter().rev() {
                stack.push((child, name, child_class.clone()));
            }
        }
        Ok((links, joints))
    }

    /// What a body element other than geom, joint, inertial and body holds: sites,
    /// cameras and lights are listed; frames and composites, which would move or add
    /// bodies, are refused.
    fn body_child(&self, node: Node) -> Result<(), RobotError> {
        match node.tag_name().name() {
            "frame" | "composite" | "flexcomp" | "replicate" | "attach" | "plugin" => {
                Err(self.refuse(node, format!("<{}>", node.tag_name().name())))
            }
            _ => {
                self.imp.unread(self.xml, node);
                Ok(())
            }
        }
    }

    /// One `<body>`: its link (mass, shapes) and the joint to its parent, or with
    /// several joints (a compound joint) its joints in order, each the child of the one
    /// before through a massless frame link. As MuJoCo composes them, the body's pose
    /// is $X_{parent}\, X_{body}\, T_1(q_1) \cdots T_n(q_n)$ with every $T_k$ a motion
    /// about (or along) joint $k$'s anchor and axis in the body frame: frame $k$ is
    /// the body frame moved by joints $1..k$, so joint $k+1$ sits in it at the anchor
    /// and axis the file gives, and the body hangs from the last.
    fn body<'a>(
        &'a self,
        body: Node<'a, 'x>,
        name: &'a str,
        parent: &'a str,
        pose: Isometry3<f64>,
        class: &str,
    ) -> Result<(Vec<Link<'a>>, Vec<Joint<'a>>), RobotError> {
        let line = self.xml.line(body);
        let mut collisions = Vec::new();
        let mut parts = Vec::new();
        let mut joints = Vec::new();
        let mut inertial = None;
        for c in body.children().filter(Node::is_element) {
            let class = c.attribute("class").unwrap_or(class);
            match c.tag_name().name() {
                "geom" => {
                    let (collision, part) = self.geom(c, class, true)?;
                    collisions.extend(collision);
                    parts.extend(part);
                }
                "joint" | "freejoint" => joints.push((c, class.to_string())),
                "inertial" => inertial = Some(c),
                "body" => {}
                _ => self.body_child(c)?,
            }
        }
        let from_geoms = match (self.from_geom, inertial) {
            (FromGeom::True, _) | (FromGeom::Auto, None) => true,
            (FromGeom::False, None) => false,
            (_, Some(_)) => false,
        };
        let (mass, com, inertia) = if from_geoms {
            let pieces: Vec<_> = parts
                .into_iter()
                .map(|p: GeomMass| match p {
                    GeomMass::Known(m, c, i) => Ok((m, c, i)),
                    GeomMass::Mesh(node) => Err(self.refuse(
                        node,
                        format!(
                            "the mass of mesh geoms (body {name:?}); give the body an <inertial>"
                        ),
                    )),
                })
                .collect::<Result<_, _>>()?;
            axion_math::combine_parts(&pieces).unwrap_or((0.0, Vector3::zeros(), Matrix3::zeros()))
        } else if let Some(i) = inertial {
            self.inertial(i)?
        } else {
            (0.0, Vector3::zeros(), Matrix3::zeros())
        };
        let link = Link {
            name,
            line,
            mass,
            com,
            inertia,
            collisions,
            friction: None,
            frame: false,
        };
        let joint = match joints[..] {
            [] => Joint {
                name: self.name_of(body, 1),
                line,
                kind: Kind::Fixed,
                parent,
                child: name,
                origin: pose,
                child_frame: Isometry3::identity(),
                axis: Vector3::z(),
                range: None,
                has_limit: false,
                effort: f64::INFINITY,
                velocity: f64::INFINITY,
                dynamics: None,
                mimic: false,
            },
            [(j, ref class)] => self.joint(j, class, name, parent, pose)?,
            _ => return self.compound(link, &joints, parent, pose),
        };
        Ok((vec![link], vec![joint]))
    }

    /// A body with several joints: its link, a massless frame link after each joint
    /// but the last, and the joints chained through them (see [`Self::body`]).
    fn compound<'a>(
        &'a self,
        link: Link<'a>,
        joints: &[(Node<'a, 'x>, String)],
        parent: &'a str,
        pose: Isometry3<f64>,
    ) -> Result<(Vec<Link<'a>>, Vec<Joint<'a>>), RobotError> {
        if let Some((free, _)) = joints
            .iter()
            .find(|(j, _)| j.has_tag_name("freejoint") || j.attribute("type") == Some("free"))
        {
            return Err(self.refuse(
                *free,
                format!(
                    "a free joint beside other joints in body {:?} (a free joint must be its body's only joint)",
                    link.name
                ),
            ));
        }
        let is = |(j, class): &(Node<'a, 'x>, String), kinds: &[&str]| {
            kinds.contains(&self.attr(*j, class, "type").unwrap_or("hinge"))
        };
        let ball = joints.iter().position(|j| is(j, &["ball"]));
        if let Some((rotation, _)) =
            ball.and_then(|b| joints[b + 1..].iter().find(|j| is(j, &["hinge", "ball"])))
        {
            return Err(self.refuse(
                *rotation,
                format!(
                    "a rotation after a ball joint in body {:?} (MuJoCo refuses it too: the ball already turns every way)",
                    link.name
                ),
            ));
        }
        let last = joints.len() - 1;
        let mut links = Vec::with_capacity(joints.len());
        let mut chained = Vec::with_capacity(joints.len());
        let mut above = parent;
        for (k, (j, class)) in joints.iter().enumerate() {
            let below = if k == last {
                link.name
            } else {
                let frame = self.name_of(*j, 1);
                links.push(Link {
                    name: frame,
                    line: self.xml.line(*j),
                    mass: 0.0,
                    com: Vector3::zeros(),
                    inertia: Matrix3::zeros(),
                    collisions: Vec::new(),
                    friction: None,
                    frame: true,
                });
                frame
            };
            let at = if k == 0 { pose } else { Isometry3::identity() };
            chained.push(self.joint(*j, class, below, above, at)?);
            above = below;
        }
        links.push(link);
        Ok((links, chained))
    }

    fn joint<'a>(
        &'a self,
        j: Node<'a, 'x>,
        class: &str,
        child: &'a str,
        parent: &'a str,
        pose: Isometry3<f64>,
    ) -> Result<Joint<'a>, RobotError> {
        let name = self.name_of(j, 0);
        let kind = if j.has_tag_name("freejoint") {
            "free"
        } else {
            self.attr(j, class, "type").unwrap_or("hinge")
        };
        let anchor = Vector3::from(self.array::<3>(j, class, "pos")?.unwrap_or([0.0; 3]));
        let axis = Vector3::from(
            self.array::<3>(j, class, "axis")?
                .unwrap_or([0.0, 0.0, 1.0]),
        );
        let range = self.array::<2>(j, class, "range")?;
        let limited = match self.attr(j, class, "limited").unwrap_or("auto") {
            "true" => true,
            "false" => false,
            _ => self.autolimits && range.is_some(),
        };
        let kind = match kind {
            "hinge" if limited => Kind::Revolute,
            "hinge" => Kind::Continuous,
            "slide" => Kind::Prismatic,
            "ball" => Kind::Spherical,
            "free" => Kind::Floating,
            other => {
                return Err(self.invalid(
                    self.xml
                        .issue(j, format!("joint {name:?}: unknown type {other:?}")),
                ));
            }
        };
        if matches!(kind, Kind::Revolute | Kind::Continuous | Kind::Prismatic) && axis.norm() == 0.0
        {
            return Err(self.invalid(self.xml.issue(j, format!("joint {name:?}: zero axis"))));
        }
        let range = match (kind, limited, range) {
            (Kind::Spherical, true, _) => {
                self.imp.warn(
                    Some(self.xml.line(j)),
                    format!("joint {name:?}: the cone limit of a ball joint is not enforced"),
                );
                None
            }
            (Kind::Revolute, true, Some([lo, hi])) => Some((self.angle(lo), self.angle(hi))),
            (Kind::Prismatic, true, Some([lo, hi])) => Some((lo, hi)),
            (_, true, None) => {
                return Err(self.invalid(
                    self.xml
                        .issue(j, format!("joint {name:?} is limited but has no range")),
                ));
            }
            _ => None,
        };
        let damping = self.number(j, class, "damping")?.unwrap_or(0.0);
        let frictionloss = self.number(j, class, "frictionloss")?.unwrap_or(0.0);
        let armature = self.number(j, class, "armature")?.unwrap_or(0.0);
        for key in ["stiffness", "ref", "springref"] {
            if self.number(j, class, key)?.is_some_and(|v| v != 0.0) {
                self.imp.unread_attribute(self.xml, j, key);
            }
        }
        let frame = Isometry3::translation(anchor.x, anchor.y, anchor.z);
        Ok(Joint {
            name,
            line: self.xml.line(j),
            kind,
            parent,
            child,
            origin: pose * frame,
            child_frame: frame,
            axis: axis.try_normalize(0.0).unwrap_or(Vector3::z()),
            range,
            has_limit: range.is_some(),
            effort: f64::INFINITY,
            velocity: f64::INFINITY,
            dynamics: (damping != 0.0 || frictionloss != 0.0 || armature != 0.0).then_some(
                JointDynamics {
                    damping,
                    friction: frictionloss,
                    armature,
                },
            ),
            mimic: false,
        })
    }

    /// `<inertial>`: mass, centre and inertia about it, in the body frame.
    fn inertial(&self, i: Node<'_, 'x>) -> Result<(f64, Vector3<f64>, Matrix3<f64>), RobotError> {
        let frame = self.frame(i, "main")?;
        let mass = self
            .number(i, "main", "mass")?
            .ok_or_else(|| self.invalid(self.xml.issue(i, "<inertial> needs a `mass`")))?;
        let local = if let Some(d) = self.array::<3>(i, "main", "diaginertia")? {
            Matrix3::from_diagonal(&Vector3::from(d))
        } else if let Some(f) = self.array::<6>(i, "main", "fullinertia")? {
            if ORIENTATIONS.iter().any(|k| i.attribute(*k).is_some()) {
                return Err(self.invalid(self.xml.issue(
                    i,
                    "<inertial> with `fullinertia` takes no orientation (the tensor gives its axes)",
                )));
            }
            // Ixx Iyy Izz Ixy Ixz Iyz
            Matrix3::new(f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2])
        } else {
            return Err(self.invalid(
                self.xml
                    .issue(i, "<inertial> needs `diaginertia` or `fullinertia`"),
            ));
        };
        let r = frame.rotation.to_rotation_matrix().into_inner();
        Ok((mass, frame.translation.vector, r * local * r.transpose()))
    }

    /// One `<geom>`: its collision shape (unless it collides with nothing) and, for the
    /// body's mass, its share. `moving`: the geom is on a body (not the world).
    fn geom<'a>(
        &'a self,
        g: Node<'a, 'x>,
        class: &str,
        moving: bool,
    ) -> Result<(Option<Collision<'a>>, Option<GeomMass<'a, 'x>>), RobotError> {
        let kind = self.attr(g, class, "type").unwrap_or("sphere");
        let size = self.list(g, class, "size")?.unwrap_or_default();
        let fromto = self.array::<6>(g, class, "fromto")?;
        let bad = |m: String| self.invalid(self.xml.issue(g, m));
        let need = |k: usize| {
            size.get(k).copied().filter(|v| *v > 0.0).ok_or_else(|| {
                bad(format!(
                    "a {kind} geom needs a positive size[{k}], got {size:?}"
                ))
            })
        };
        let mut frame = self.frame(g, class)?;
        // A segment `fromto` sets the centre, the z axis and the length.
        let mut half_length = None;
        if let Some(f) = fromto {
            if !matches!(kind, "capsule" | "cylinder" | "box") {
                return Err(bad(format!("fromto on a {kind} geom")));
            }
            let (a, b) = (
                Vector3::new(f[0], f[1], f[2]),
                Vector3::new(f[3], f[4], f[5]),
            );
            let d = b - a;
            let dir = d
                .try_normalize(0.0)
                .ok_or_else(|| bad("fromto with equal ends".into()))?;
            frame = Isometry3::from_parts(Translation3::from((a + b) / 2.0), rotation_to(dir));
            half_length = Some(d.norm() / 2.0);
        }
        let geometry = match kind {
            "sphere" => GeometrySpec::Solid(Shape::Sphere { radius: need(0)? }),
            "capsule" => GeometrySpec::Solid(Shape::Capsule {
                radius: need(0)?,
                half_length: half_length.map_or_else(|| need(1), Ok)?,
            }),
            "cylinder" => GeometrySpec::Solid(Shape::Cylinder {
                radius: need(0)?,
                half_length: half_length.map_or_else(|| need(1), Ok)?,
            }),
            "box" => GeometrySpec::Solid(Shape::Box {
                half_extents: Vector3::new(
                    need(0)?,
                    need(1)?,
                    half_length.map_or_else(|| need(2), Ok)?,
                ),
            }),
            "plane" if !moving => GeometrySpec::Plane(Vector3::z()),
            "plane" => return Err(self.refuse(g, "a plane geom on a moving body".into())),
            "mesh" => {
                let mesh = self
                    .attr(g, class, "mesh")
                    .ok_or_else(|| bad("a mesh geom needs `mesh`".into()))?;
                let (file, scale) = self
                    .meshes
                    .get(mesh)
                    .ok_or_else(|| bad(format!("unknown mesh {mesh:?}")))?;
                GeometrySpec::Mesh {
                    filename: self.mesh_path(file).into(),
                    scale: *scale,
                }
            }
            other => return Err(self.refuse(g, format!("a geom of type {other:?}"))),
        };
        let contype = self.number(g, class, "contype")?.unwrap_or(1.0);
        let conaffinity = self.number(g, class, "conaffinity")?.unwrap_or(1.0);
        let bits = |v: f64| -> Result<u16, RobotError> {
            if v.fract() == 0.0 && (0.0..65536.0).contains(&v) {
                Ok(v as u16)
            } else {
                Err(self.refuse(
                    g,
                    format!("contype/conaffinity {v} (bits above 16 or not an integer)"),
                ))
            }
        };
        let (contype, conaffinity) = (bits(contype)?, bits(conaffinity)?);
        let condim = self.number(g, class, "condim")?.unwrap_or(3.0);
        let sliding = self
            .list(g, class, "friction")?
            .and_then(|f| f.first().copied())
            .unwrap_or(1.0);
        if condim > 3.0 {
            self.imp.unread_attribute(self.xml, g, "condim");
        }
        let friction = if condim == 1.0 { 0.0 } else { sliding };
        let collision = (contype != 0 || conaffinity != 0).then(|| Collision {
            line: self.xml.line(g),
            origin: frame,
            geometry: geometry.clone(),
            friction: Some(friction),
            filter: CollisionFilter::mujoco(contype, conaffinity),
        });
        let part = if !moving {
            None
        } else {
            let mass = self.number(g, class, "mass")?;
            let density = self.number(g, class, "density")?.unwrap_or(1000.0);
            match &geometry {
                GeometrySpec::Solid(shape) => {
                    let m = mass.unwrap_or(density * shape.volume());
                    let r = frame.rotation.to_rotation_matrix().into_inner();
                    (m > 0.0).then(|| {
                        GeomMass::Known(
                            m,
                            frame.translation.vector,
                            r * shape.unit_inertia(m) * r.transpose(),
                        )
                    })
                }
                _ if mass == Some(0.0) || (mass.is_none() && density == 0.0) => None,
                _ => Some(GeomMass::Mesh(g)),
            }
        };
        Ok((collision, part))
    }

    /// A mesh file name as MuJoCo finds it: in `meshdir`, itself relative to the
    /// model's folder (where the import resolves it).
    fn mesh_path(&self, file: &str) -> String {
        Path::new(self.meshdir.as_deref().unwrap_or(""))
            .join(file)
            .to_string_lossy()
            .into_owned()
    }

    /// An actuator's largest joint force from its `forcerange` ([`Self::range_bound`]
    /// of `force`) times the gear; `Some(∞)` when unlimited.
    fn force_limit(&self, a: Node<'x, 'x>, class: &str, gear: f64) -> Result<f64, RobotError> {
        Ok(self.range_bound(a, class, "force")? * gear.abs())
    }

    /// The bound $\max(|lo|, hi)$ of an actuator's `{what}range` when `{what}limited`
    /// is true, or "auto" (the default) with a range; ∞ when unlimited. An asymmetric
    /// range is applied as ± its larger end, with a warning; a range must contain 0.
    fn range_bound(&self, a: Node<'x, 'x>, class: &str, what: &str) -> Result<f64, RobotError> {
        let limited = self
            .attr(a, class, &format!("{what}limited"))
            .unwrap_or("auto");
        let key = format!("{what}range");
        let range = self.list(a, class, &key)?;
        let Some(range) = range.filter(|_| limited != "false") else {
            return Ok(f64::INFINITY);
        };
        let [lo, hi] = range[..] else {
            return Err(self.invalid(
                self.xml
                    .issue(a, format!("{key} needs two numbers, got {}", range.len())),
            ));
        };
        if lo > 0.0 || hi < 0.0 || lo == hi {
            return Err(self.invalid(self.xml.issue(
                a,
                format!("{key} [{lo}, {hi}] must contain 0 and not be empty"),
            )));
        }
        if lo != -hi {
            self.imp.warn(
                Some(self.xml.line(a)),
                format!(
                    "asymmetric {key} [{lo}, {hi}] is applied as ±{}",
                    lo.abs().max(hi)
                ),
            );
        }
        Ok(lo.abs().max(hi))
    }

    /// `<actuator>`: drives by joint name, with their largest joint force (∞: none).
    fn read_actuators(
        &self,
        root: Node<'x, 'x>,
    ) -> Result<Vec<(String, DriveDesc, f64)>, RobotError> {
        let mut drives: Vec<(String, DriveDesc, f64)> = Vec::new();
        for section in root.children().filter(|c| c.has_tag_name("actuator")) {
            for a in section.children().filter(Node::is_element) {
                let class = a.attribute("class").unwrap_or("main");
                let kind = a.tag_name().name();
                let Some(joint) = self.attr(a, class, "joint") else {
                    self.imp.unread(self.xml, a);
                    continue;
                };
                let gear = self
                    .list(a, class, "gear")?
                    .and_then(|g| g.first().copied())
                    .unwrap_or(1.0);
                let g2 = gear * gear;
                let drive = match kind {
                    "position" => DriveDesc::Position {
                        target: 0.0,
                        target_velocity: 0.0,
                        ke: self.number(a, class, "kp")?.unwrap_or(1.0) * g2,
                        kd: self.number(a, class, "kv")?.unwrap_or(0.0) * g2,
                    },
                    "velocity" => DriveDesc::Velocity {
                        target: 0.0,
                        ke: self.number(a, class, "kv")?.unwrap_or(1.0) * g2,
                    },
                    "motor" => DriveDesc::Force { force: 0.0 },
                    _ => {
                        self.imp.unread(self.xml, a);
                        continue;
                    }
                };
                let mut limit = self.force_limit(a, class, gear)?;
                if kind == "motor" {
                    // A motor's force is its control times the gear.
                    limit = limit.min(self.range_bound(a, class, "ctrl")? * gear.abs());
                }
                match drives.iter_mut().find(|(j, _, _)| j == joint) {
                    None => drives.push((joint.to_string(), drive, limit)),
                    Some((_, existing, existing_limit)) => match (*existing, drive) {
                        (DriveDesc::Position { ke, .. }, DriveDesc::Velocity { ke: kv, .. })
                        | (DriveDesc::Velocity { ke: kv, .. }, DriveDesc::Position { ke, .. }) => {
                            *existing = DriveDesc::Position {
                                target: 0.0,
                                target_velocity: 0.0,
                                ke,
                                kd: kv,
                            };
                            // Two actuators on one joint add their forces.
                            *existing_limit += limit;
                        }
                        (DriveDesc::Force { .. }, DriveDesc::Force { .. }) => {
                            return Err(self.invalid(
                                self.xml
                                    .issue(a, format!("a second motor on joint {joint:?}")),
                            ));
                        }
                        // A motor beside a servo: the servo's feed-forward force.
                        (DriveDesc::Force { .. }, servo) => {
                            *existing = servo;
                            *existing_limit += limit;
                        }
                        (_, DriveDesc::Force { .. }) => *existing_limit += limit,
                        _ => {
                            return Err(self.invalid(self.xml.issue(
                                a,
                                format!("a second {kind} actuator on joint {joint:?}"),
                            )));
                        }
                    },
                }
            }
        }
        Ok(drives)
    }

    /// `<contact><exclude body1 body2>`; `<pair>` is listed as not read.
    fn read_excludes(&self, root: Node<'x, 'x>) -> Result<Vec<(String, String, u32)>, RobotError> {
        let mut out = Vec::new();
        for section in root.children().filter(|c| c.has_tag_name("contact")) {
            for e in section.children().filter(Node::is_element) {
                if e.has_tag_name("exclude") {
                    let body = |k| self.xml.required(e, k).map_err(|i| self.invalid(i));
                    out.push((
                        body("body1")?.to_string(),
                        body("body2")?.to_string(),
                        self.xml.line(e),
                    ));
                } else {
                    self.imp.unread(self.xml, e);
                }
            }
        }
        Ok(out)
    }
}

/// A geom's share of its body's mass: known, or a mesh whose inertia is not computed.
enum GeomMass<'a, 'x> {
    Known(f64, Vector3<f64>, Matrix3<f64>),
    Mesh(Node<'a, 'x>),
}

/// The smallest rotation taking z onto the unit vector `z`.
fn rotation_to(z: Vector3<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::rotation_between(&Vector3::z(), &z).unwrap_or_else(|| {
        // z = −z: half a turn about x.
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
    })
}
