//! Resolving the file names of robot descriptions: `package://NAME/path` as ROS finds
//! packages, `file://` paths, and paths relative to the description.
//!
//! A package `NAME` is a folder that holds a `package.xml` whose `<name>` is `NAME`, or a
//! folder called `NAME` (the layout of packages copied without their manifest). It is
//! looked for, in this order:
//!
//! 1. under each folder of the caller's search paths (scene `package_paths`, the
//!    command's `--package-path`), then of the `ROS_PACKAGE_PATH` environment variable
//!    (`:`-separated): the folder itself, and the folders below it (3 levels, as a
//!    workspace's `src/` holds packages);
//! 2. in the description's folder and each folder above it: `A/NAME/path`, then
//!    `A/path` when `A` is the package itself (a description copied without its
//!    package folder).
//!
//! The first existing file wins; when none does, the error lists every path tried.

use std::path::{Path, PathBuf};

/// How deep below a search path packages are looked for.
const SEARCH_DEPTH: usize = 3;

/// The environment variable ROS uses for package search paths.
pub const ROS_PACKAGE_PATH: &str = "ROS_PACKAGE_PATH";

/// Why a file name could not be resolved: every path that was tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Unresolved {
    /// Paths looked at, in order.
    pub tried: Vec<PathBuf>,
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tried.is_empty() {
            return write!(f, "not found");
        }
        write!(f, "not found; tried ")?;
        for (i, p) in self.tried.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{}", p.display())?;
        }
        Ok(())
    }
}

/// The file that `uri` names, for a description in `folder` (`None`: text that did not
/// come from a file, so relative names cannot be found) and extra package `search`
/// paths.
pub fn resolve_uri(
    uri: &str,
    folder: Option<&Path>,
    search: &[PathBuf],
) -> Result<PathBuf, Unresolved> {
    let mut tried = Vec::new();
    let mut check = |p: PathBuf| {
        let found = p.is_file();
        tried.push(p.clone());
        found.then_some(p)
    };
    if let Some(path) = uri.strip_prefix("file://") {
        return check(PathBuf::from(path)).ok_or(Unresolved { tried });
    }
    if let Some(rest) = uri.strip_prefix("package://") {
        let (package, inside) = rest.split_once('/').unwrap_or((rest, ""));
        let env: Vec<PathBuf> = std::env::var_os(ROS_PACKAGE_PATH)
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default();
        for root in search.iter().chain(&env) {
            for dir in package_dirs(root, package) {
                if let Some(p) = check(dir.join(inside)) {
                    return Ok(p);
                }
            }
        }
        for a in folder.into_iter().flat_map(Path::ancestors) {
            if let Some(p) = check(a.join(package).join(inside)) {
                return Ok(p);
            }
            if let Some(p) = check(a.join(inside)) {
                return Ok(p);
            }
        }
        return Err(Unresolved { tried });
    }
    match folder {
        Some(folder) => check(folder.join(uri)).ok_or(Unresolved { tried }),
        None => {
            let path = PathBuf::from(uri);
            if path.is_absolute() {
                check(path).ok_or(Unresolved { tried })
            } else {
                Err(Unresolved { tried })
            }
        }
    }
}

/// Folders at or below `root` (down to [`SEARCH_DEPTH`]) that are package `name`: named
/// so, or holding a `package.xml` that names it.
fn package_dirs(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level = vec![root.to_path_buf()];
    for _ in 0..=SEARCH_DEPTH {
        let mut next = Vec::new();
        for dir in level {
            let is_package = dir.file_name().is_some_and(|n| n == name)
                || manifest_name(&dir.join("package.xml")).as_deref() == Some(name);
            if is_package {
                found.push(dir.clone());
            }
            if let Ok(entries) = std::fs::read_dir(&dir) {
                next.extend(
                    entries
                        .flatten()
                        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                        .map(|e| e.path()),
                );
            }
        }
        level = next;
    }
    found
}

/// The `<name>` of a `package.xml`, if the file exists and has one.
fn manifest_name(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let doc = roxmltree::Document::parse(&text).ok()?;
    let name = doc
        .root_element()
        .children()
        .find(|c| c.has_tag_name("name"))?;
    Some(name.text()?.trim().to_string())
}
