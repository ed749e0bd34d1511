//! Animated glTF 2.0 binary (`.glb`) of a run: every shape of every body as a mesh,
//! every moving body's reference-frame pose keyed over time.
//!
//! Layout of the scene graph:
//! * node 0, `world (z-up)`: turns our z-up world into glTF's y-up convention (a
//!   rotation of −90° about x, which maps z onto y); Blender's importer turns it back;
//! * one node per body under it, named after the body, whose translation and rotation
//!   are the body's reference-frame pose (the pose of `trajectory.csv`), animated for
//!   dynamic bodies;
//! * one node per shape under its body, at the shape's pose in the body frame, holding
//!   the shape's [`visual_mesh`].
//!
//! `viewer.html` beside it shows the same file in a browser ([`viewer_html`]).
//!
//! Keys are linear in translation and spherical-linear in rotation (glTF `LINEAR`);
//! consecutive quaternions are kept in the same hemisphere so that viewers interpolate
//! the short way. Only world 0 of a batch is drawn.

use std::path::Path;

use axion::collision::{VisualMesh, visual_mesh};
use axion::math::Pose;
use axion::{BodyKind, Geometry, Model};
use serde_json::{Value, json};

use crate::CliError;

/// Base colours of dynamic bodies (linear RGB), cycled; static bodies are grey.
const PALETTE: [[f32; 3]; 6] = [
    [0.80, 0.25, 0.20],
    [0.20, 0.45, 0.80],
    [0.25, 0.65, 0.30],
    [0.85, 0.60, 0.15],
    [0.55, 0.30, 0.70],
    [0.20, 0.65, 0.65],
];
const STATIC_GREY: [f32; 3] = [0.55, 0.55, 0.55];

/// glTF component types and buffer-view targets.
const FLOAT: u32 = 5126;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// Poses of world 0 sampled over a run.
#[derive(Clone, Debug, Default)]
pub struct Keyframes {
    /// Sample times (s), increasing.
    pub times: Vec<f64>,
    /// `poses[k][b]`: reference-frame pose of body `b` at `times[k]`.
    pub poses: Vec<Vec<Pose>>,
}

impl Keyframes {
    /// Adds a sample; `poses` has one entry per body.
    pub fn push(&mut self, t: f64, poses: Vec<Pose>) {
        self.times.push(t);
        self.poses.push(poses);
    }
}

/// The binary chunk and the JSON arrays that point into it.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    /// Appends `bytes` as a buffer view (4-byte aligned) and returns its index.
    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut view =
            json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(view);
        self.views.len() - 1
    }

    /// An accessor of `n`-component f32 elements (`kind` is `SCALAR`, `VEC3`, `VEC4`);
    /// `with_bounds` adds the per-component min and max that glTF requires for
    /// positions and animation inputs.
    fn floats(
        &mut self,
        data: &[f32],
        n: usize,
        kind: &str,
        target: Option<u32>,
        with_bounds: bool,
    ) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = self.view(&bytes, target);
        let mut accessor = json!({
            "bufferView": view, "componentType": FLOAT, "count": data.len() / n, "type": kind,
        });
        if with_bounds {
            let (mut lo, mut hi) = (vec![f32::INFINITY; n], vec![f32::NEG_INFINITY; n]);
            for element in data.chunks(n) {
                for (k, &x) in element.iter().enumerate() {
                    lo[k] = lo[k].min(x);
                    hi[k] = hi[k].max(x);
                }
            }
            accessor["min"] = json!(lo);
            accessor["max"] = json!(hi);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// A triangle index accessor.
    fn indices(&mut self, triangles: &[[u32; 3]]) -> usize {
        let bytes: Vec<u8> = triangles
            .iter()
            .flatten()
            .flat_map(|i| i.to_le_bytes())
            .collect();
        let view = self.view(&bytes, Some(ELEMENT_ARRAY_BUFFER));
        self.accessors.push(json!({
            "bufferView": view, "componentType": UNSIGNED_INT,
            "count": 3 * triangles.len(), "type": "SCALAR",
        }));
        self.accessors.len() - 1
    }

    /// A mesh primitive's attributes and indices.
    fn mesh(&mut self, mesh: &VisualMesh) -> (usize, usize) {
        let positions: Vec<f32> = mesh
            .positions
            .iter()
            .flat_map(|p| [p.x as f32, p.y as f32, p.z as f32])
            .collect();
        let position = self.floats(&positions, 3, "VEC3", Some(ARRAY_BUFFER), true);
        (position, self.indices(&mesh.triangles))
    }
}

fn translation(p: &Pose) -> [f32; 3] {
    let t = p.translation.vector;
    [t.x as f32, t.y as f32, t.z as f32]
}

fn rotation(p: &Pose) -> [f32; 4] {
    let q = p.rotation.coords;
    [q.x as f32, q.y as f32, q.z as f32, q.w as f32]
}

/// The `.glb` bytes of `model` animated by `keys` (world 0's reference-frame poses).
pub fn glb_bytes(model: &Model, keys: &Keyframes) -> Result<Vec<u8>, CliError> {
    let mut b = Builder::default();
    let (mut nodes, mut meshes, mut materials) = (vec![Value::Null], vec![], vec![]);
    let mut body_nodes = Vec::new();
    let first = keys.poses.first();
    for (i, body) in model.bodies().iter().enumerate() {
        let color = if body.kind == BodyKind::Static {
            STATIC_GREY
        } else {
            PALETTE[i % PALETTE.len()]
        };
        let mut children = Vec::new();
        for (s, shape) in body.shapes.iter().enumerate() {
            let mesh = visual_mesh(&shape.geometry).map_err(|reason| CliError::Picture {
                what: format!("body {:?}, shape {s}", body.name),
                reason,
            })?;
            let (position, indices) = b.mesh(&mesh);
            materials.push(json!({
                "name": format!("{} shape {s}", body.name),
                "pbrMetallicRoughness": {
                    "baseColorFactor": [color[0], color[1], color[2], 1.0],
                    "metallicFactor": 0.0, "roughnessFactor": 0.8,
                },
                // Surfaces without an inside are seen from both sides.
                "doubleSided": matches!(
                    shape.geometry,
                    Geometry::HalfSpace { .. } | Geometry::TriMesh { .. } | Geometry::HeightField { .. }
                ),
            }));
            meshes.push(json!({
                "name": format!("{} shape {s} ({})", body.name, shape.geometry.name()),
                "primitives": [{
                    "attributes": {"POSITION": position}, "indices": indices,
                    "material": materials.len() - 1,
                }],
            }));
            nodes.push(json!({
                "name": format!("{} shape {s}", body.name),
                "mesh": meshes.len() - 1,
                "translation": translation(&shape.local_pose),
                "rotation": rotation(&shape.local_pose),
            }));
            children.push(nodes.len() - 1);
        }
        let pose = first.map_or_else(|| body.reference_pose(&body.initial_pose), |poses| poses[i]);
        let mut node = json!({
            "name": body.name, "translation": translation(&pose), "rotation": rotation(&pose),
        });
        if !children.is_empty() {
            node["children"] = json!(children);
        }
        nodes.push(node);
        body_nodes.push(nodes.len() - 1);
    }
    let h = std::f32::consts::FRAC_1_SQRT_2;
    nodes[0] =
        json!({"name": "world (z-up)", "rotation": [-h, 0.0, 0.0, h], "children": body_nodes});

    let mut root = json!({
        "asset": {"version": "2.0", "generator": concat!("axion-rs ", env!("CARGO_PKG_VERSION"))},
        "scene": 0,
        "scenes": [{"name": "axion", "nodes": [0]}],
        "nodes": nodes,
        "meshes": meshes,
        "materials": materials,
    });
    if let Some(animation) = animation(&mut b, model, keys, &body_nodes) {
        root["animations"] = json!([animation]);
    }
    root["bufferViews"] = json!(b.views);
    root["accessors"] = json!(b.accessors);
    root["buffers"] = json!([{"byteLength": b.bin.len()}]);
    Ok(container(&root.to_string(), b.bin))
}

/// The animation of every dynamic body, or `None` when nothing moves or there are no
/// keys.
fn animation(
    b: &mut Builder,
    model: &Model,
    keys: &Keyframes,
    body_nodes: &[usize],
) -> Option<Value> {
    let moving: Vec<usize> = (0..model.bodies().len())
        .filter(|&i| model.bodies()[i].is_dynamic())
        .collect();
    if keys.times.is_empty() || moving.is_empty() {
        return None;
    }
    let times: Vec<f32> = keys.times.iter().map(|&t| t as f32).collect();
    let input = b.floats(&times, 1, "SCALAR", None, true);
    let (mut samplers, mut channels) = (vec![], vec![]);
    for &i in &moving {
        let positions: Vec<f32> = keys.poses.iter().flat_map(|p| translation(&p[i])).collect();
        let mut quaternions: Vec<[f32; 4]> = keys.poses.iter().map(|p| rotation(&p[i])).collect();
        for k in 1..quaternions.len() {
            let dot: f32 = (0..4)
                .map(|c| quaternions[k][c] * quaternions[k - 1][c])
                .sum();
            if dot < 0.0 {
                quaternions[k] = quaternions[k].map(|c| -c);
            }
        }
        let quaternions: Vec<f32> = quaternions.into_iter().flatten().collect();
        for (path, output) in [
            ("translation", b.floats(&positions, 3, "VEC3", None, false)),
            ("rotation", b.floats(&quaternions, 4, "VEC4", None, false)),
        ] {
            samplers.push(json!({"input": input, "output": output, "interpolation": "LINEAR"}));
            channels.push(json!({
                "sampler": samplers.len() - 1,
                "target": {"node": body_nodes[i], "path": path},
            }));
        }
    }
    Some(json!({"name": "simulation", "samplers": samplers, "channels": channels}))
}

/// The GLB container: a 12-byte header, the JSON chunk padded with spaces and the
/// binary chunk padded with zeros, both to 4 bytes.
fn container(json: &str, mut bin: Vec<u8>) -> Vec<u8> {
    let mut text = json.as_bytes().to_vec();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + text.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// Writes [`glb_bytes`] to `path`, and [`viewer_html`] of the same bytes to
/// `viewer.html` beside it.
pub fn write_glb(
    model: &Model,
    keys: &Keyframes,
    path: &Path,
    title: &str,
) -> Result<(), CliError> {
    let bytes = glb_bytes(model, keys)?;
    std::fs::write(path, &bytes).map_err(crate::io(path))?;
    let page = path.with_file_name("viewer.html");
    std::fs::write(&page, viewer_html(&bytes, title)).map_err(crate::io(&page))
}

/// The viewer page (`assets/viewer.html`): a self-contained HTML page that draws the
/// animation `glb` (embedded as base64) on a 2D canvas with a timeline, in any browser,
/// from disk, without network or WebGL.
static VIEWER: &str = include_str!("../assets/viewer.html");

/// The viewer page (`assets/viewer.html`) with `glb` and `title` (HTML-escaped) filled in.
pub fn viewer_html(glb: &[u8], title: &str) -> String {
    use base64::Engine;
    let escaped = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    VIEWER.replace("__AXION_TITLE__", &escaped).replace(
        "__AXION_GLB_BASE64__",
        &base64::engine::general_purpose::STANDARD.encode(glb),
    )
}
