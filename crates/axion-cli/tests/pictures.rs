//! The pictures of a run: `animation.glb` round-trips through a glTF reader with one
//! node per body and shape, an animation as long as the run and final keys equal to
//! the trajectory; `plots.png` is a picture of the documented size with the panels
//! the scene has drawn.

use axion::math::Pose;
use axion::{BackendChoice, BodyDesc, Geometry, ModelBuilder, Shape, ShapeDesc};
use axion_cli::{
    Keyframes, PANEL_HEIGHT, RunOptions, TITLE_HEIGHT, find, glb_bytes, panel_titles, plot_size,
    run_demo,
};
use nalgebra::{Isometry3, Vector3};

fn run_into(demo: &str, duration: f64, dir: &std::path::Path) -> axion_cli::Summary {
    run_demo(
        find(demo).unwrap(),
        &RunOptions {
            dt: None,
            duration: Some(duration),
            worlds: Some(1),
            backend: BackendChoice::Cpu,
            out: Some(dir.to_path_buf()),
            progress: false,
            contacts: false,
            threads: None,
            every: 1,
        },
    )
    .unwrap()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("axion-pictures-{name}-{}", std::process::id()))
}

/// Last CSV row of each body: name → (position, quaternion xyzw).
fn final_poses(csv: &str) -> Vec<(String, [f64; 3], [f64; 4])> {
    let rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let last_t = rows.last().unwrap()[0].clone();
    rows.into_iter()
        .filter(|r| r[0] == last_t)
        .map(|r| {
            let f = |i: usize| r[i].parse::<f64>().unwrap();
            (r[2].clone(), [f(3), f(4), f(5)], [f(6), f(7), f(8), f(9)])
        })
        .collect()
}

#[test]
fn animation_round_trips_through_a_gltf_reader() {
    let dir = temp_dir("glb");
    let summary = run_into("stack", 0.5, &dir);
    let model = find("stack").unwrap().model().unwrap();
    let bytes = std::fs::read(dir.join("animation.glb")).unwrap();
    let gltf = gltf::Gltf::from_slice(&bytes).expect("a valid glb");
    let blob = gltf.blob.as_deref().expect("a binary chunk");
    let shapes: usize = model.bodies().iter().map(|b| b.shapes.len()).sum();
    let dynamic = model.bodies().iter().filter(|b| b.is_dynamic()).count();
    assert_eq!(gltf.nodes().count(), 1 + model.bodies().len() + shapes);
    assert_eq!(gltf.meshes().count(), shapes);

    // The root turns z-up into y-up: its rotation maps z onto y.
    let root = gltf.nodes().next().unwrap();
    let q = root.transform().decomposed().1;
    let q = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
        q[3] as f64,
        q[0] as f64,
        q[1] as f64,
        q[2] as f64,
    ));
    assert!((q * Vector3::z() - Vector3::y()).norm() < 1e-7);

    let animation = gltf.animations().next().expect("one animation");
    assert_eq!(animation.channels().count(), 2 * dynamic);
    let expected = final_poses(&std::fs::read_to_string(dir.join("trajectory.csv")).unwrap());
    for channel in animation.channels() {
        let reader = channel.reader(|_| Some(blob));
        let times: Vec<f32> = reader.read_inputs().unwrap().collect();
        assert_eq!(times[0], 0.0);
        assert!((*times.last().unwrap() as f64 - summary.simulated).abs() < 1e-6);
        assert!(times.windows(2).all(|w| w[0] < w[1]));
        let node = channel.target().node();
        let name = node.name().unwrap();
        let (_, p, q) = expected.iter().find(|e| e.0 == name).unwrap();
        match reader.read_outputs().unwrap() {
            gltf::animation::util::ReadOutputs::Translations(t) => {
                let last = t.last().unwrap();
                for k in 0..3 {
                    assert!((last[k] as f64 - p[k]).abs() < 1e-6, "{name} translation");
                }
            }
            gltf::animation::util::ReadOutputs::Rotations(r) => {
                let last = r.into_f32().last().unwrap();
                let dot: f64 = (0..4).map(|k| last[k] as f64 * q[k]).sum();
                assert!(dot.abs() > 1.0 - 1e-6, "{name} rotation");
            }
            _ => panic!("unexpected animation path"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every kind of geometry gets a mesh whose bounds, seen through its node's pose, are
/// where the shape is.
#[test]
fn every_geometry_kind_is_drawn() {
    let mut b = ModelBuilder::new();
    let ground = ShapeDesc::from_geometry(Geometry::HalfSpace {
        normal: Vector3::z(),
    });
    let terrain = ShapeDesc::from_geometry(Geometry::HeightField {
        heights: vec![0.0, 0.1, 0.2, 0.1],
        rows: 2,
        cols: 2,
        spacing: (1.0, 1.0),
    })
    .at(Isometry3::translation(5.0, 5.0, 0.0));
    let ramp = ShapeDesc::from_geometry(Geometry::TriMesh {
        vertices: vec![Vector3::zeros(), Vector3::x(), Vector3::new(0.0, 1.0, 0.5)],
        indices: vec![[0, 1, 2]],
    })
    .at(Isometry3::translation(-5.0, 0.0, 0.0));
    b.add_body(
        BodyDesc::fixed("ground")
            .shape(ground)
            .shape(terrain)
            .shape(ramp),
    )
    .unwrap();
    let solids = [
        Shape::Sphere { radius: 0.2 },
        Shape::Box {
            half_extents: Vector3::new(0.1, 0.2, 0.3),
        },
        Shape::Capsule {
            radius: 0.1,
            half_length: 0.3,
        },
        Shape::Cylinder {
            radius: 0.2,
            half_length: 0.1,
        },
    ];
    for (i, s) in solids.into_iter().enumerate() {
        b.add_body(
            BodyDesc::dynamic(format!("solid {i}"))
                .at(Vector3::new(i as f64, 0.0, 1.0))
                .shape(ShapeDesc::new(s)),
        )
        .unwrap();
    }
    let hull = Geometry::ConvexHull {
        points: vec![
            Vector3::zeros(),
            Vector3::x() * 0.3,
            Vector3::y() * 0.3,
            Vector3::z() * 0.3,
        ],
    };
    b.add_body(
        BodyDesc::dynamic("hull")
            .at(Vector3::new(0.0, 2.0, 1.0))
            .mass(1.0, Vector3::zeros(), nalgebra::Matrix3::identity() * 0.01)
            .shape(ShapeDesc::from_geometry(hull)),
    )
    .unwrap();
    let model = b.build().unwrap();
    let poses: Vec<Pose> = model
        .bodies()
        .iter()
        .map(|b| b.reference_pose(&b.initial_pose))
        .collect();
    let mut keys = Keyframes::default();
    keys.push(0.0, poses.clone());
    keys.push(0.1, poses);
    let bytes = glb_bytes(&model, &keys).unwrap();
    let gltf = gltf::Gltf::from_slice(&bytes).expect("a valid glb");
    assert_eq!(gltf.meshes().count(), 3 + 5);
    // The cylinder (our z axis) spans ±0.1 m along z and ±0.2 m across it.
    let cylinder = gltf
        .meshes()
        .find(|m| m.name().unwrap().contains("cylinder"))
        .unwrap();
    let bounds = cylinder.primitives().next().unwrap().bounding_box();
    assert!((bounds.max[2] - 0.1).abs() < 1e-6 && (bounds.max[0] - 0.2).abs() < 1e-6);
    assert!((bounds.max[1] - 0.2).abs() < 1e-2 && bounds.max[1] <= 0.2 + 1e-6);
}

/// Decodes `plots.png` of `dir`: (width, height, RGB bytes).
fn read_png(dir: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(dir.join("plots.png")).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

/// Each panel band of the picture has drawn pixels (axes, labels, lines).
fn assert_panels_drawn(width: u32, pixels: &[u8], panels: usize) {
    let row_bytes = 3 * width as usize;
    for panel in 0..panels {
        let top = (TITLE_HEIGHT + panel as u32 * PANEL_HEIGHT) as usize;
        let drawn = (top..top + PANEL_HEIGHT as usize)
            .flat_map(|y| pixels[y * row_bytes..(y + 1) * row_bytes].chunks(3))
            .filter(|p| p.iter().any(|&c| c < 128))
            .count();
        assert!(drawn > 2000, "panel {panel}: {drawn} dark pixels");
    }
}

/// The drop has contacts and no joint: energy, penetration and iterations, three
/// panels, with the kinetic energy's red and the potential energy's blue lines.
#[test]
fn plots_of_a_scene_without_joints_have_no_joint_panel() {
    let dir = temp_dir("png-drop");
    let summary = run_into("drop", 1.0, &dir);
    let (width, height, pixels) = read_png(&dir);
    assert_eq!((width, height), plot_size(3));
    assert_panels_drawn(width, &pixels, 3);
    let count = |rgb: [u8; 3]| pixels.chunks(3).filter(|p| *p == rgb).count();
    assert!(count([255, 0, 0]) > 200, "red line");
    assert!(count([0, 0, 255]) > 200, "blue line");
    assert_eq!(summary.integrator, "backward Euler");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The servo has a driven joint and no contact: energy, joint error, the joint against
/// its target, iterations — and the panel titles say so.
#[test]
fn plots_of_a_servo_show_the_joint_against_its_target() {
    let dir = temp_dir("png-servo");
    run_into("servo", 1.0, &dir);
    let (width, height, pixels) = read_png(&dir);
    assert_eq!((width, height), plot_size(4));
    assert_panels_drawn(width, &pixels, 4);
    let series = axion_cli::Series {
        has_joints: true,
        tracks: vec![axion_cli::Track::default()],
        integrator: "backward Euler".into(),
        ..Default::default()
    };
    let titles = panel_titles(&series);
    assert_eq!(titles.len(), 4);
    assert!(titles[0].contains("backward Euler"), "{titles:?}");
    assert!(titles[2].contains("targets"), "{titles:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// viewer.html beside animation.glb embeds exactly that file and the run's title, with
/// every placeholder of the template filled.
#[test]
fn the_viewer_page_embeds_the_animation() {
    use base64::Engine;
    let dir = temp_dir("viewer");
    run_into("stack", 0.3, &dir);
    let page = std::fs::read_to_string(dir.join("viewer.html")).unwrap();
    assert!(!page.contains("__AXION_"), "a placeholder is left");
    assert!(page.contains("<title>stack: 30 steps of 0.01 s, backward Euler</title>"));
    let start = page
        .find(r#"<script id="glb" type="application/octet-stream">"#)
        .unwrap();
    let body = &page[start..];
    let text = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
    let embedded = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .unwrap();
    assert_eq!(embedded, std::fs::read(dir.join("animation.glb")).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The browser to render the viewer with: `AXION_BROWSER`, else `chromium` where it is
/// installed. `None` (the test says it is skipped) unless `AXION_BROWSER_REQUIRED=1`.
fn browser() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("AXION_BROWSER")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            [
                "/usr/bin/chromium",
                "/usr/bin/chromium-browser",
                "/usr/bin/google-chrome",
            ]
            .iter()
            .map(std::path::PathBuf::from)
            .find(|p| p.exists())
        });
    if found.is_none() {
        assert!(
            std::env::var("AXION_BROWSER_REQUIRED").as_deref() != Ok("1"),
            "AXION_BROWSER_REQUIRED=1 but no browser: install chromium or set AXION_BROWSER"
        );
        eprintln!("skipped: no headless browser (install chromium or set AXION_BROWSER)");
    }
    found
}

/// Runs the headless browser on `url` with `extra` arguments; returns its stdout.
fn headless(
    browser: &std::path::Path,
    profile: &std::path::Path,
    extra: &[&str],
    url: &str,
) -> String {
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1000,700",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("the browser runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// In a real (headless) browser the page loads without a script error and draws the
/// stack: the boxes' blue and green (the first two dynamic bodies' colours) cover
/// hundreds of pixels each, over the grey floor.
#[test]
fn the_viewer_draws_the_bodies_in_a_browser() {
    let Some(browser) = browser() else { return };
    let dir = temp_dir("browser");
    run_into("stack", 0.3, &dir);
    let url = format!(
        "file://{}?t=0.2&paused=1",
        dir.join("viewer.html").display()
    );
    let dom = headless(&browser, &dir.join("profile-dom"), &["--dump-dom"], &url);
    assert!(
        dom.contains(r#"data-status="ready""#),
        "the page did not finish: {}",
        &dom[..dom.len().min(400)]
    );
    let shot = dir.join("shot.png");
    headless(
        &browser,
        &dir.join("profile-shot"),
        &[&format!("--screenshot={}", shot.display())],
        &url,
    );
    let mut reader =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()))
            .read_info()
            .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let step = info.color_type.samples();
    let count = |f: &dyn Fn(i32, i32, i32) -> bool| {
        pixels[..info.buffer_size()]
            .chunks(step)
            .filter(|p| f(p[0] as i32, p[1] as i32, p[2] as i32))
            .count()
    };
    let blue = count(&|r, g, b| b > r + 60 && b > g + 20);
    let green = count(&|r, g, b| g > r + 40 && g > b + 40);
    let grey = count(&|r, g, b| (r - g).abs() < 6 && (g - b).abs() < 6 && (150..230).contains(&r));
    assert!(
        blue > 500 && green > 500,
        "blue {blue}, green {green} pixels"
    );
    assert!(grey > 10_000, "the floor: {grey} grey pixels");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Values near the largest f64 (a run that blew up but stayed finite) are drawn, at
/// the edge of their panel, within seconds: the axis range stays finite.
#[test]
fn plots_of_values_near_the_largest_float_finish() {
    let dir = temp_dir("huge");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plots.png");
    let n = 50;
    let series = axion_cli::Series {
        t: (0..n).map(|k| k as f64 * 0.01).collect(),
        kinetic: (0..n).map(|k| if k > 25 { 1.7e308 } else { 1.0 }).collect(),
        potential: (0..n)
            .map(|k| if k > 25 { -1.7e308 } else { 0.0 })
            .collect(),
        joint_error: vec![1.7e308; n],
        penetration: vec![0.0; n],
        iterations: vec![3.0; n],
        has_joints: true,
        has_contacts: true,
        integrator: "backward Euler".into(),
        ..Default::default()
    };
    let (done, wait) = std::sync::mpsc::channel();
    let target = path.clone();
    std::thread::spawn(move || {
        let _ = done.send(axion_cli::write_plots(&series, "huge", &target));
    });
    let drawn = wait
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the plots finish within a minute");
    drawn.unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 10_000);
    std::fs::remove_dir_all(&dir).unwrap();
}
