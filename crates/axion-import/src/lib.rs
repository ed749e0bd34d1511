//! # axion-import
//!
//! Everything axion-rs reads from files, above the model crate:
//!
//! * [`scene`]: scene files (TOML, or the same structure in JSON) with bodies, joints,
//!   drives, robots and simulation settings;
//! * [`urdf`]: URDF robots — links joined by fixed joints merged into one body,
//!   inertias checked and repaired, `world` roots as fixed bases, every error and
//!   warning naming the file and the line;
//! * [`mesh`]: collision meshes in STL (binary and ASCII), Wavefront OBJ and COLLADA;
//! * [`package`]: `package://` names resolved as ROS resolves them.
//!
//! A program that builds its models in code needs only `axion-model`; this crate adds
//! the XML and mesh parsers.

pub mod mesh;
pub mod mjcf;
pub mod package;
pub mod robot;
pub mod scene;
pub mod urdf;
mod xml;

use std::fmt;
use std::path::PathBuf;

pub use mesh::{MeshData, MeshError, load_mesh};
pub use mjcf::{import_mjcf, import_mjcf_file};
pub use package::resolve_uri;
pub use robot::{ImportedRobot, InertiaPolicy, RobotError, RobotErrorKind, RobotOptions};
pub use scene::{
    AppliedForce, DriveSchedule, Scene, SceneError, SceneFormat, SceneSettings, SolverOverrides,
    load_scene, parse_scene, parse_scene_as, parse_scene_in,
};
pub use urdf::{import_urdf, import_urdf_file};

/// The 1-based line of any byte offset of a text, in O(log n) after one pass.
pub(crate) struct LineIndex(Vec<usize>);

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        Self(
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
        )
    }

    /// The 1-based line holding byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset)
    }
}

/// Where in which file something was found: `robot.urdf:42`, `robot.urdf`, `line 42`,
/// or nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The file, when the text came from one.
    pub file: Option<PathBuf>,
    /// 1-based line.
    pub line: Option<u32>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{}:{line}: ", file.display()),
            (Some(file), None) => write!(f, "{}: ", file.display()),
            (None, Some(line)) => write!(f, "line {line}: "),
            (None, None) => Ok(()),
        }
    }
}

/// Something an import did that the user should know: a repair, a merge, an element
/// that is read but not simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportWarning {
    /// Where the element is.
    pub at: Location,
    /// What was done, in words.
    pub message: String,
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.at, self.message)
    }
}

/// The robot description formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotFormat {
    /// URDF: the root element is `<robot>`.
    Urdf,
    /// MJCF: the root element is `<mujoco>`.
    Mjcf,
}

impl RobotFormat {
    /// The format of an XML text by its root element (the first element after the
    /// declaration, comments and doctype), or `None` for anything else.
    pub fn sniff(text: &str) -> Option<Self> {
        let mut rest = text;
        loop {
            let start = rest.find('<')?;
            rest = &rest[start..];
            if let Some(after) = rest.strip_prefix("<!--") {
                rest = &after[after.find("-->")? + 3..];
            } else if rest.starts_with("<?") || rest.starts_with("<!") {
                rest = &rest[rest.find('>')? + 1..];
            } else {
                let name: String = rest[1..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                return match name.as_str() {
                    "robot" => Some(Self::Urdf),
                    "mujoco" => Some(Self::Mjcf),
                    _ => None,
                };
            }
        }
    }

    /// The format of the file at `path`: `.urdf` is URDF; an `.xml` (or any other
    /// extension but `.toml` and `.json`) file is looked into.
    pub fn of_file(path: &std::path::Path) -> Option<Self> {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match extension.as_str() {
            "urdf" => Some(Self::Urdf),
            "toml" | "json" => None,
            _ => {
                use std::io::Read;
                let mut head = vec![0; 64 * 1024];
                let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
                Self::sniff(&String::from_utf8_lossy(&head[..n]))
            }
        }
    }
}
