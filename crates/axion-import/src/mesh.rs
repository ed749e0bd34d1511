//! Collision meshes from files: STL (binary and ASCII), Wavefront OBJ and COLLADA
//! (`.dae`), read by the `mesh-loader` crate (the one the ROS-in-Rust tools use).
//!
//! COLLADA files are read with their `<unit meter>` and node transforms applied, as ROS
//! tools show them. Their `<up_axis>` is not applied: a file that says `Y_UP` gets a
//! warning, since robot meshes are almost always written Z-up.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nalgebra::Vector3;

/// Most vertices one mesh file may hold (a detailed scanned part has a few hundred
/// thousand; a collision mesh rarely more than ten thousand).
pub const MAX_MESH_VERTICES: usize = 5_000_000;

/// The triangles of a mesh file, scaled, all of its meshes in one.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshData {
    /// Vertices (m, after scaling).
    pub vertices: Vec<Vector3<f64>>,
    /// Triangles as indices into `vertices`.
    pub triangles: Vec<[u32; 3]>,
    /// What the reader noticed and could not honour (for example a `Y_UP` COLLADA file).
    pub warnings: Vec<String>,
}

/// Why a mesh file could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("mesh {}: {reason}", path.display())]
pub struct MeshError {
    /// The file.
    pub path: PathBuf,
    /// Why, in words.
    pub reason: String,
}

/// Reads the mesh at `path` (format by extension: `stl`, `obj`, `dae`, any case) and
/// multiplies every vertex by `scale` component-wise.
pub fn load_mesh(path: &Path, scale: Vector3<f64>) -> Result<MeshData, MeshError> {
    let error = |reason: String| MeshError {
        path: path.to_path_buf(),
        reason,
    };
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(extension.as_str(), "stl" | "obj" | "dae") {
        return Err(error(format!(
            "the format {:?} is not read (STL, OBJ and COLLADA .dae are)",
            extension
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let mut warnings = Vec::new();
    if extension == "dae" {
        let text = String::from_utf8_lossy(&bytes);
        if let Some(axis) = text
            .split("<up_axis>")
            .nth(1)
            .and_then(|rest| rest.split('<').next())
            .map(str::trim)
            .filter(|axis| *axis != "Z_UP")
        {
            warnings.push(format!(
                "{}: <up_axis> {axis} is not applied (the vertices are read as Z-up)",
                path.display()
            ));
        }
    }
    let loader = mesh_loader::Loader::default().merge_meshes(true);
    // The OBJ reader opens material libraries next to the file; a missing one is not an
    // error for collision.
    let scene = match extension.as_str() {
        "stl" => loader.load_stl_from_slice(&bytes, path),
        "obj" => loader.load_obj_from_slice_with_reader(&bytes, path, |p| {
            std::fs::read(p).or_else(|_| Ok(Vec::new()))
        }),
        _ => loader.load_collada_from_slice(&bytes, path),
    }
    .map_err(|e| error(e.to_string()))?;
    // Vertices shared by several triangles are stored once (STL repeats them).
    let mut vertices = Vec::new();
    let mut index: HashMap<[u32; 3], u32> = HashMap::new();
    let mut triangles = Vec::new();
    for mesh in &scene.meshes {
        if mesh.vertices.len() > MAX_MESH_VERTICES {
            return Err(error(format!(
                "more than {MAX_MESH_VERTICES} vertices; simplify it for collision"
            )));
        }
        let ids: Vec<u32> = mesh
            .vertices
            .iter()
            .map(|v| {
                *index.entry(v.map(f32::to_bits)).or_insert_with(|| {
                    vertices.push(
                        Vector3::new(v[0] as f64, v[1] as f64, v[2] as f64).component_mul(&scale),
                    );
                    vertices.len() as u32 - 1
                })
            })
            .collect();
        for f in &mesh.faces {
            let t = f.map(|i| ids.get(i as usize).copied());
            let [Some(a), Some(b), Some(c)] = t else {
                return Err(error(format!(
                    "a face refers to a vertex it does not have: {f:?}"
                )));
            };
            triangles.push([a, b, c]);
        }
    }
    if vertices.iter().any(|v| !v.iter().all(|x| x.is_finite())) {
        return Err(error("a vertex is not a finite number".into()));
    }
    if triangles.is_empty() {
        return Err(error("no triangles".into()));
    }
    Ok(MeshData {
        vertices,
        triangles,
        warnings,
    })
}
