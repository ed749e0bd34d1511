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
pub mod package;
pub mod scene;
pub mod urdf;
mod xml;

use std::fmt;
use std::path::PathBuf;

pub use mesh::{MeshData, MeshError, load_mesh};
pub use package::resolve_uri;
pub use scene::{
    DriveSchedule, Scene, SceneError, SceneFormat, SceneSettings, SolverOverrides, load_scene,
    parse_scene, parse_scene_as, parse_scene_in,
};
pub use urdf::{
    ImportedRobot, InertiaPolicy, UrdfError, UrdfErrorKind, UrdfOptions, import_urdf,
    import_urdf_file,
};

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
