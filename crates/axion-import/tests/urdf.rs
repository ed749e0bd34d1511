//! URDF import rules, one small robot written for each: meshes in three formats,
//! `package://` search, fixed links merged with exact mass properties, inertia repair,
//! massless and `world` roots, and errors that name the file and the line.

use std::path::{Path, PathBuf};

use axion_import::{
    DriveSchedule, InertiaPolicy, RobotErrorKind, RobotOptions, import_urdf, import_urdf_file,
};
use axion_model::{BodyKind, DriveId, Geometry, ModelBuilder};
use nalgebra::{Matrix3, Vector3};

/// A fresh folder under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("axion-import-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The 8 corners of a box of half extents `h` and its 12 triangles, outward.
fn box_mesh(h: [f64; 3]) -> (Vec<[f64; 3]>, Vec<[usize; 3]>) {
    let corners = (0..8)
        .map(|i| {
            [
                if i & 1 == 0 { -h[0] } else { h[0] },
                if i & 2 == 0 { -h[1] } else { h[1] },
                if i & 4 == 0 { -h[2] } else { h[2] },
            ]
        })
        .collect();
    let faces = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let triangles = faces
        .iter()
        .flat_map(|f| [[f[0], f[1], f[2]], [f[0], f[2], f[3]]])
        .collect();
    (corners, triangles)
}

fn ascii_stl(h: [f64; 3]) -> String {
    let (v, t) = box_mesh(h);
    let mut s = String::from("solid box\n");
    for tri in t {
        s.push_str(" facet normal 0 0 0\n  outer loop\n");
        for i in tri {
            s.push_str(&format!("   vertex {} {} {}\n", v[i][0], v[i][1], v[i][2]));
        }
        s.push_str("  endloop\n endfacet\n");
    }
    s + "endsolid box\n"
}

fn obj(h: [f64; 3]) -> String {
    let (v, t) = box_mesh(h);
    let mut s = String::from("# a box\nmtllib missing.mtl\no box\n");
    for p in v {
        s.push_str(&format!("v {} {} {}\n", p[0], p[1], p[2]));
    }
    for tri in t {
        s.push_str(&format!("f {} {} {}\n", tri[0] + 1, tri[1] + 1, tri[2] + 1));
    }
    s
}

/// A COLLADA box in millimetres (`<unit meter="0.001">`), `h` in millimetres.
fn collada(h: [f64; 3], up: &str) -> String {
    let (v, t) = box_mesh(h);
    let positions: Vec<String> = v.iter().flatten().map(f64::to_string).collect();
    let indices: Vec<String> = t.iter().flatten().map(usize::to_string).collect();
    format!(
        r##"<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="millimeter" meter="0.001"/><up_axis>{up}</up_axis></asset>
  <library_geometries>
    <geometry id="box-mesh" name="box">
      <mesh>
        <source id="box-positions">
          <float_array id="box-positions-array" count="24">{}</float_array>
          <technique_common>
            <accessor source="#box-positions-array" count="8" stride="3">
              <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
            </accessor>
          </technique_common>
        </source>
        <vertices id="box-vertices"><input semantic="POSITION" source="#box-positions"/></vertices>
        <triangles count="12"><input semantic="VERTEX" source="#box-vertices" offset="0"/><p>{}</p></triangles>
      </mesh>
    </geometry>
  </library_geometries>
  <library_visual_scenes>
    <visual_scene id="Scene" name="Scene">
      <node id="Box" name="Box"><instance_geometry url="#box-mesh"/></node>
    </visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#Scene"/></scene>
</COLLADA>
"##,
        positions.join(" "),
        indices.join(" ")
    )
}

const INERTIAL: &str = r#"<inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>"#;

/// One floating link whose collision is `geometry`.
fn one_link(geometry: &str) -> String {
    format!(
        r#"<robot name="r"><link name="a">{INERTIAL}<collision><geometry>{geometry}</geometry></collision></link></robot>"#
    )
}

/// Largest |coordinate| of a convex hull along each axis.
fn extents(g: &Geometry) -> Vector3<f64> {
    let Geometry::ConvexHull { points } = g else {
        panic!("expected a convex hull, got {g:?}")
    };
    points.iter().fold(Vector3::zeros(), |m, p| m.sup(&p.abs()))
}

/// STL (ASCII), OBJ and COLLADA meshes are read with their `scale`; COLLADA's unit is
/// applied; a moving link gets the hull, a static one the triangles.
#[test]
fn meshes_in_three_formats_are_read_with_their_scale() {
    let dir = scratch("meshes");
    write(&dir.join("m/box.stl"), &ascii_stl([0.1, 0.2, 0.3]));
    write(&dir.join("m/box.obj"), &obj([0.1, 0.2, 0.3]));
    write(
        &dir.join("m/box.dae"),
        &collada([100.0, 200.0, 300.0], "Z_UP"),
    );
    for file in ["m/box.stl", "m/box.obj", "m/box.DAE"] {
        let file = file.replace("DAE", "dae");
        let text = one_link(&format!(r#"<mesh filename="{file}" scale="2 1 0.5"/>"#));
        let options = RobotOptions {
            file: Some(dir.join("r.urdf")),
            ..Default::default()
        };
        let mut b = ModelBuilder::new();
        let imported = import_urdf(&text, &options, &mut b).unwrap();
        assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
        let model = b.build().unwrap();
        let e = extents(&model.bodies()[0].shapes[0].geometry);
        assert!(
            (e - Vector3::new(0.2, 0.2, 0.15)).norm() < 1e-6,
            "{file}: extents {e}"
        );
        let fixed = RobotOptions {
            fixed_base: true,
            ..options
        };
        let mut b = ModelBuilder::new();
        import_urdf(&text, &fixed, &mut b).unwrap();
        let model = b.build().unwrap();
        assert!(matches!(
            &model.bodies()[0].shapes[0].geometry,
            Geometry::TriMesh { indices, .. } if indices.len() == 12
        ));
    }
    write(&dir.join("m/yup.dae"), &collada([100.0; 3], "Y_UP"));
    let text = one_link(r#"<mesh filename="m/yup.dae"/>"#);
    let options = RobotOptions {
        file: Some(dir.join("r.urdf")),
        ..Default::default()
    };
    let imported = import_urdf(&text, &options, &mut ModelBuilder::new()).unwrap();
    assert!(
        imported.warnings[0].message.contains("Y_UP"),
        "{:?}",
        imported.warnings
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `package://NAME/…` is found through a `package.xml` under a search path (the folder
/// has another name), through a folder called NAME above the file, and a failure lists
/// every path tried.
#[test]
fn package_uris_are_found_as_ros_finds_them() {
    let dir = scratch("packages");
    let pkg = dir.join("ws/src/robot_description_folder");
    write(
        &pkg.join("package.xml"),
        "<package format=\"2\"><name>robot_description</name></package>",
    );
    write(&pkg.join("meshes/box.stl"), &ascii_stl([0.1; 3]));
    let text = one_link(r#"<mesh filename="package://robot_description/meshes/box.stl"/>"#);
    let elsewhere = dir.join("urdf/r.urdf");
    let import = |search: Vec<PathBuf>| {
        let options = RobotOptions {
            file: Some(elsewhere.clone()),
            package_paths: search,
            ..Default::default()
        };
        import_urdf(&text, &options, &mut ModelBuilder::new())
    };
    let err = import(vec![]).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err.kind, RobotErrorKind::Mesh(_)));
    assert!(
        message.contains("r.urdf:1:")
            && message.contains("tried")
            && message.contains("robot_description/meshes/box.stl"),
        "{message}"
    );
    assert!(import(vec![dir.join("ws")]).is_ok());
    // A folder named after the package, above the file.
    write(
        &dir.join("robot_description/meshes/box.stl"),
        &ascii_stl([0.1; 3]),
    );
    assert!(import(vec![]).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two links joined by a fixed joint, each half of a 2 × 0.5 × 0.5 m solid box of
/// 2 kg (the second link's frame turned a quarter turn, its half box given along its
/// own y axis), are one body with the whole box's mass, centre and inertia.
#[test]
fn fixed_links_merge_into_one_body_with_exact_mass_properties() {
    // Half box: 1 × 0.5 × 0.5 m, 1 kg: I = m/12 (b² + c², a² + c², a² + b²).
    let i = |a: f64, b: f64, c: f64| {
        format!(
            r#"<inertia ixx="{}" ixy="0" ixz="0" iyy="{}" iyz="0" izz="{}"/>"#,
            (b * b + c * c) / 12.0,
            (a * a + c * c) / 12.0,
            (a * a + b * b) / 12.0
        )
    };
    let text = format!(
        r#"<robot name="bar">
  <link name="left"><inertial><mass value="1"/>{}</inertial></link>
  <link name="right"><inertial><mass value="1"/>{}</inertial></link>
  <link name="tip"/>
  <joint name="weld" type="fixed"><parent link="left"/><child link="right"/><origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/></joint>
  <joint name="tool" type="fixed"><parent link="right"/><child link="tip"/><origin xyz="0 0.25 0"/></joint>
</robot>"#,
        i(1.0, 0.5, 0.5),
        i(0.5, 1.0, 0.5)
    );
    let mut b = ModelBuilder::new();
    let imported = import_urdf(&text, &RobotOptions::default(), &mut b).unwrap();
    let model = b.build().unwrap();
    assert_eq!(model.bodies().len(), 1);
    assert_eq!(model.joints().len(), 0);
    assert_eq!(imported.merged_joints, ["weld", "tool"]);
    let body = &model.bodies()[0];
    assert_eq!(body.name, "left");
    assert!((body.mass.mass() - 2.0).abs() < 1e-15);
    assert!((body.com - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-15);
    // The whole box, 2 × 0.5 × 0.5 m, 2 kg.
    let whole = Matrix3::from_diagonal(&Vector3::new(
        2.0 / 12.0 * 0.5,
        2.0 / 12.0 * 4.25,
        2.0 / 12.0 * 4.25,
    ));
    let error = (body.mass.inertia() - whole).abs().max();
    assert!(error < 1e-12, "{} vs {whole}", body.mass.inertia());
    // The tip's frame on the body: 1 m along x, then 0.25 m along the turned y (−x).
    let tip = imported.frames["tip"].translation.vector;
    assert!((tip - Vector3::new(0.75, 0.0, 0.0)).norm() < 1e-12, "{tip}");
    assert_eq!(imported.links["tip"], imported.links["left"]);
}

/// A link fixed below a massless moving link gives the body its mass: the massless
/// link is not refused, and the joint's child frame is the moving link's frame.
#[test]
fn a_massless_moving_link_takes_the_mass_fixed_to_it() {
    let text = format!(
        r#"<robot name="arm">
  <link name="base">{INERTIAL}</link>
  <link name="flange"/>
  <link name="tool">{INERTIAL}</link>
  <joint name="wrist" type="revolute"><parent link="base"/><child link="flange"/><axis xyz="0 0 1"/><limit lower="-1" upper="1"/></joint>
  <joint name="mount" type="fixed"><parent link="flange"/><child link="tool"/><origin xyz="0 0 0.2"/></joint>
</robot>"#
    );
    let mut b = ModelBuilder::new();
    let imported = import_urdf(&text, &RobotOptions::default(), &mut b).unwrap();
    let model = b.build().unwrap();
    assert_eq!(model.bodies().len(), 2);
    assert_eq!(model.bodies()[1].name, "tool");
    let child_frame = model.joints()[0].joint.frames.child.translation.vector;
    assert!((child_frame - Vector3::new(0.0, 0.0, -0.2)).norm() < 1e-15);
    assert_eq!(imported.links["flange"], imported.links["tool"]);
}

/// An inertia that breaks the triangle inequality is repaired with a warning naming
/// the link and both sets of moments, or refused on request.
#[test]
fn invalid_inertias_are_repaired_with_a_warning_or_refused() {
    let text = r#"<robot name="r">
  <link name="camera"><inertial><mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="3e-4"/></inertial></link>
</robot>"#;
    let mut b = ModelBuilder::new();
    let imported = import_urdf(text, &RobotOptions::default(), &mut b).unwrap();
    let warning = imported.warnings[0].to_string();
    assert!(
        warning.starts_with("line 2: link \"camera\"")
            && warning.contains("3.0000e-4")
            && warning.contains("repaired to [1.3333e-4, 1.3333e-4, 2.6667e-4]"),
        "{warning}"
    );
    let model = b.build().unwrap();
    let d = model.bodies()[0].mass.inertia().diagonal();
    assert!((d[2] - (d[0] + d[1])).abs() < 1e-15, "{d}");

    let refuse = RobotOptions {
        inertia: InertiaPolicy::Refuse,
        ..Default::default()
    };
    let err = import_urdf(text, &refuse, &mut ModelBuilder::new()).unwrap_err();
    assert_eq!(err.at.line, Some(2));
    assert!(err.to_string().contains("not a physical inertia"), "{err}");

    // Negative noise on a small link fixed to a big one is absorbed by the merge.
    let noisy = format!(
        r#"<robot name="r"><link name="trunk">{INERTIAL}</link>
  <link name="imu"><inertial><mass value="0.001"/><inertia ixx="-2.2e-22" ixy="0" ixz="0" iyy="0" iyz="0" izz="3e-6"/></inertial></link>
  <joint name="imu_joint" type="fixed"><parent link="trunk"/><child link="imu"/></joint></robot>"#
    );
    let imported = import_urdf(&noisy, &refuse, &mut ModelBuilder::new()).unwrap();
    assert!(
        imported
            .warnings
            .iter()
            .all(|w| !w.message.contains("inertia")),
        "{:?}",
        imported.warnings
    );
}

/// A root without mass (named `world` or not) bolts the robot to the world, said in
/// a warning; a floating robot needs a root with mass.
#[test]
fn massless_roots_are_fixed_bases() {
    for root in ["world", "base"] {
        let text = format!(
            r#"<robot name="r"><link name="{root}"/><link name="arm">{INERTIAL}</link>
  <joint name="shoulder" type="continuous"><parent link="{root}"/><child link="arm"/><axis xyz="0 1 0"/></joint></robot>"#
        );
        let mut b = ModelBuilder::new();
        let imported = import_urdf(&text, &RobotOptions::default(), &mut b).unwrap();
        assert!(imported.fixed_base);
        assert!(imported.warnings[0].message.contains("fixed base"));
        let model = b.build().unwrap();
        assert_eq!(model.bodies()[0].kind, BodyKind::Static);
        assert_eq!(model.bodies()[1].kind, BodyKind::Dynamic);
    }
}

/// A revolute joint without `<limit>` (or with only effort and velocity) moves freely,
/// with a warning naming it; with both bounds it has a range.
#[test]
fn joints_without_bounds_are_unlimited() {
    for limit in ["", r#"<limit effort="5" velocity="2"/>"#] {
        let text = format!(
            r#"<robot name="r"><link name="base">{INERTIAL}</link><link name="arm">{INERTIAL}</link>
  <joint name="elbow" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>{limit}</joint></robot>"#
        );
        let mut b = ModelBuilder::new();
        let imported = import_urdf(&text, &RobotOptions::default(), &mut b).unwrap();
        assert!(
            imported
                .warnings
                .iter()
                .any(|w| w.message.contains("unlimited") && w.message.contains("elbow")),
            "{:?}",
            imported.warnings
        );
        let model = b.build().unwrap();
        assert!(model.joints()[0].range().is_none());
    }
}

/// Errors name the file and the line, in words.
#[test]
fn errors_name_the_file_and_the_line() {
    let dir = scratch("errors");
    let cases = [
        (
            "truncated",
            "<robot name=\"r\">\n<link name=\"a\">\n",
            1,
            "not a readable XML file",
        ),
        (
            "commas",
            "<robot name=\"r\">\n<link name=\"a\">\n<collision><origin xyz=\"0.07, 0, -0.69\"/><geometry><sphere radius=\"1\"/></geometry></collision></link></robot>",
            3,
            "separated by spaces, not commas",
        ),
        (
            "xacro",
            "<robot name=\"r\">\n<link name=\"a\">\n<collision><origin xyz=\"$(arg x) 0 0\"/><geometry><sphere radius=\"1\"/></geometry></collision></link></robot>",
            3,
            "unexpanded xacro",
        ),
        (
            "missing",
            "<robot name=\"r\">\n<link name=\"a\"><inertial><mass value=\"1\"/>\n<inertia ixx=\"1\" iyy=\"1\" izz=\"1\"/></inertial></link></robot>",
            3,
            "needs a `ixy` attribute",
        ),
        (
            "mjcf",
            "<!-- a model -->\n<mujoco model=\"m\">\n</mujoco>",
            2,
            "this is an MJCF model",
        ),
        (
            "duplicate",
            "<robot name=\"r\">\n<link name=\"a\"/>\n<link name=\"a\"/></robot>",
            3,
            "a second link named \"a\" (the first is at line 2)",
        ),
        (
            "extra",
            "<robot name=\"r\">\n<link name=\"a\">\n<collision><origin xyz=\"1 2 3 4\"/><geometry><sphere radius=\"1\"/></geometry></collision></link></robot>",
            3,
            "expected 3 numbers, found 4",
        ),
    ];
    for (name, text, line, expected) in cases {
        let path = dir.join(format!("{name}.urdf"));
        write(&path, text);
        let err = import_urdf_file(&path, &RobotOptions::default(), &mut ModelBuilder::new())
            .unwrap_err()
            .to_string();
        let at = format!("{}:{line}: ", path.display());
        assert!(
            err.starts_with(&at) && err.contains(expected),
            "{name}: {err:?} should start with {at:?} and say {expected:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Slips that C tools accept are mended with a warning: NUL bytes after `</robot>`,
/// an XML declaration after a blank line.
#[test]
fn nul_bytes_and_late_declarations_are_tolerated() {
    let text = format!(
        "\n\n<?xml version=\"1.0\"?>\n<robot name=\"r\"><link name=\"a\">{INERTIAL}</link></robot>\n\0"
    );
    let imported = import_urdf(&text, &RobotOptions::default(), &mut ModelBuilder::new()).unwrap();
    let messages: Vec<String> = imported.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with("line 5: 1 NUL byte"),
        "{messages:?}"
    );
    assert!(messages[1].starts_with("line 3: the <?xml"), "{messages:?}");
}

/// A drive schedule is piecewise linear through its points, with the segment's slope
/// as rate, and constant (rate 0) outside them.
#[test]
fn drive_schedule_interpolates_its_points() {
    let s = DriveSchedule {
        drive: DriveId(0),
        points: vec![(1.0, 2.0), (3.0, 6.0), (4.0, 6.0)],
    };
    assert_eq!(s.at(0.0), (2.0, 0.0));
    assert_eq!(s.at(1.0), (2.0, 2.0));
    assert_eq!(s.at(2.5), (5.0, 2.0));
    assert_eq!(s.at(3.5), (6.0, 0.0));
    assert_eq!(s.at(9.0), (6.0, 0.0));
}

/// A scene's `type = "mesh"` shape reads its file relative to the scene: a hull on a
/// moving body, the triangles on a static one; a missing file names the line.
#[test]
fn scene_files_declare_mesh_shapes() {
    let dir = scratch("scene-mesh");
    write(&dir.join("parts/box.obj"), &obj([0.1, 0.2, 0.3]));
    let scene = r#"
[[bodies]]
name = "floor"
kind = "static"
shapes = [{ type = "mesh", file = "parts/box.obj", scale = [10, 10, 1] }]

[[bodies]]
name = "part"
position = [0, 0, 1]
mass = 1.0
inertia = [0.1, 0.1, 0.1]
shapes = [{ type = "mesh", file = "parts/box.obj" }]
"#;
    let scene = axion_import::parse_scene_in(scene, &dir).unwrap();
    let [floor, part] = scene.model.bodies() else {
        panic!("two bodies expected")
    };
    assert!(matches!(
        &floor.shapes[0].geometry,
        Geometry::TriMesh { vertices, .. } if vertices.iter().any(|v| (v.x - 1.0).abs() < 1e-6)
    ));
    let e = extents(&part.shapes[0].geometry);
    assert!((e - Vector3::new(0.1, 0.2, 0.3)).norm() < 1e-6, "{e}");
    let missing = "\n[[bodies]]\nname = \"part\"\nmass = 1.0\ninertia = [0.1, 0.1, 0.1]\nshapes = [{ type = \"mesh\", file = \"nope.stl\" }]\n";
    let err = axion_import::parse_scene_in(missing, &dir)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("line 2:") && err.contains("nope.stl") && err.contains("tried"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A robot of a trunk, a thigh hanging from it, a shin from the thigh, and a tail from
/// the trunk: the shin's sphere overlaps the trunk's box at rest, the tail is far from
/// the shin.
fn leggy() -> String {
    let link = |name: &str, shape: &str, at: &str| {
        format!(
            r#"<link name="{name}">{INERTIAL}<collision><origin xyz="{at}"/><geometry>{shape}</geometry></collision></link>"#
        )
    };
    let joint = |name: &str, parent: &str, child: &str, at: &str| {
        format!(
            r#"<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/><origin xyz="{at}"/><axis xyz="0 1 0"/></joint>"#
        )
    };
    format!(
        "<robot name=\"leggy\">{}{}{}{}{}{}{}</robot>",
        link("trunk", r#"<box size="1 0.4 0.2"/>"#, "0 0 0"),
        link("thigh", r#"<sphere radius="0.05"/>"#, "0 0 -0.3"),
        link("shin", r#"<sphere radius="0.1"/>"#, "0 0 0.2"),
        link("tail", r#"<sphere radius="0.05"/>"#, "0 0 0"),
        joint("hip", "trunk", "thigh", "0.3 0 0"),
        joint("knee", "thigh", "shin", "0 0 -0.35"),
        joint("tail_joint", "trunk", "tail", "-1.5 0 0"),
    )
}

/// Without self-collision no two links of a robot collide; with it, joined links,
/// links sharing a parent and links touching at the start are excluded (and listed),
/// and other pairs collide.
#[test]
fn self_collision_is_off_by_default_and_excludes_touching_pairs_when_on() {
    let import = |self_collision| {
        let options = RobotOptions {
            self_collision,
            ..Default::default()
        };
        let mut b = ModelBuilder::new();
        let imported = import_urdf(&leggy(), &options, &mut b).unwrap();
        (b.build().unwrap(), imported)
    };
    let id = |m: &axion_model::Model, n: &str| m.body_id(n).unwrap();
    let (model, imported) = import(false);
    assert!(!imported.self_collision && imported.touching.is_empty());
    for a in ["trunk", "thigh", "shin", "tail"] {
        for b in ["trunk", "thigh", "shin", "tail"] {
            assert!(model.collision_excluded(id(&model, a), id(&model, b)));
        }
    }
    let (model, imported) = import(true);
    assert_eq!(
        imported.touching,
        [("trunk".to_string(), "shin".to_string())]
    );
    assert!(imported.summary().contains("self-collision on (1 pairs"));
    let excluded = |a, b| model.collision_excluded(id(&model, a), id(&model, b));
    assert!(excluded("trunk", "thigh") && excluded("thigh", "shin")); // joined
    assert!(excluded("thigh", "tail")); // both hang from the trunk
    assert!(excluded("trunk", "shin")); // touching at the start
    assert!(!excluded("shin", "tail"));
}

/// A positive `effort` bounds the drive given to the joint; `effort="0"` (often written
/// for "unknown") leaves it unbounded; a velocity rating is said to be not enforced.
#[test]
fn effort_bounds_the_joints_drive() {
    for (effort, bound) in [("20", 20.0), ("0", f64::INFINITY)] {
        let text = format!(
            r#"<robot name="r"><link name="base">{INERTIAL}</link><link name="cart">{INERTIAL}</link>
  <joint name="slider" type="prismatic"><parent link="base"/><child link="cart"/><axis xyz="1 0 0"/>
  <limit lower="-1" upper="1" effort="{effort}" velocity="3"/></joint></robot>"#
        );
        let options = RobotOptions {
            drives: [(
                "slider".to_string(),
                axion_model::DriveDesc::Velocity {
                    target: 1.0,
                    ke: 100.0,
                },
            )]
            .into_iter()
            .collect(),
            ..RobotOptions::default()
        };
        let mut b = ModelBuilder::new();
        let imported = import_urdf(&text, &options, &mut b).unwrap();
        assert!(
            imported
                .warnings
                .iter()
                .any(|w| w.message.contains("velocity limits of 1 joints")),
            "{:?}",
            imported.warnings
        );
        let model = b.build().unwrap();
        assert_eq!(
            model.drives()[0].initial.max_force(),
            bound,
            "effort {effort}"
        );
    }
}
