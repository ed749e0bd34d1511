//! The files a run writes for a user's own analysis: `joints.csv` holds each joint's
//! coordinate, rate, targets and drive force consistent with the drive law and the
//! step; `contacts.jsonl` (with `contacts: true`) holds Coulomb forces whose impulses
//! carry the weight.

use axion::BackendChoice;
use axion_cli::{JOINTS_HEADER, RunOptions, find, run_demo};

fn run(demo: &str, duration: f64, contacts: bool, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("axion-outputs-{name}-{}", std::process::id()));
    run_demo(
        find(demo).unwrap(),
        &RunOptions {
            dt: None,
            duration: Some(duration),
            worlds: Some(2),
            backend: BackendChoice::Cpu,
            out: Some(dir.clone()),
            progress: false,
            contacts,
            threads: None,
            every: 1,
        },
    )
    .unwrap();
    dir
}

/// The servo (ke 1000, kd 100, target π/2, h = 1/60): every row of world 0 obeys the
/// implicit PD law at the step's end, λ = ke (q* − q) + kd (q̇* − q̇), backward Euler
/// moves q by h q̇ per step, and the joint ends at its target.
#[test]
fn joints_csv_follows_the_drive_law_and_the_step() {
    let dir = run("servo", 1.5, false, "joints");
    let text = std::fs::read_to_string(dir.join("joints.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(JOINTS_HEADER));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[1] == "0")
        .map(|r| {
            assert_eq!(r[2], "servo");
            [0, 3, 4, 5, 6, 7]
                .iter()
                .map(|&i| r[i].parse().unwrap())
                .collect()
        })
        .collect();
    let h = 1.0 / 60.0;
    assert_eq!(rows.len(), 91, "the initial state and 90 steps");
    for pair in rows.windows(2) {
        let (before, row) = (&pair[0], &pair[1]);
        let (q, qd, target, target_velocity, force) = (row[1], row[2], row[3], row[4], row[5]);
        let law = 1000.0 * (target - q) + 100.0 * (target_velocity - qd);
        assert!(
            (force - law).abs() < 1e-6 * law.abs().max(1.0),
            "t = {}: {force} against {law}",
            row[0]
        );
        assert!(((q - before[1]) / h - qd).abs() < 1e-6, "t = {}", row[0]);
    }
    let last = rows.last().unwrap();
    assert!(
        (last[1] - std::f64::consts::FRAC_PI_2).abs() < 1e-6,
        "{}",
        last[1]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The incline (35°, μ 0.5: tan 35° = 0.70 > μ, it slides), 50 steps: at every step
/// the friction is μ N up the slope (Coulomb sliding), and the normal impulses add up
/// to the weight's normal component over the run, $\sum N h = m g \cos\theta\,T$
/// (momentum across the slope, which starts and ends at rest); without the flag no
/// contacts.jsonl is written.
#[test]
fn contacts_jsonl_carries_the_weight_and_the_coulomb_friction() {
    let dir = run("incline", 0.5, true, "contacts");
    let text = std::fs::read_to_string(dir.join("contacts.jsonl")).unwrap();
    let (angle, h) = (35f64.to_radians(), 0.01);
    let mut impulse = [0.0; 2];
    let mut lines = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let contacts = v["contacts"]
            .as_array()
            .expect("the CPU backend's contacts");
        assert!(!contacts.is_empty(), "{line}");
        let (mut normal, mut friction_x) = (0.0, 0.0);
        for c in contacts {
            let sign = if c["body_a"] == "cube" { 1.0 } else { -1.0 };
            normal += c["normal_force"].as_f64().unwrap();
            friction_x += sign * c["friction_force"][0].as_f64().unwrap();
        }
        assert!(
            (friction_x + 0.5 * normal).abs() < 1e-9 * normal,
            "t = {}: {friction_x}, N = {normal}",
            v["t"]
        );
        impulse[v["world"].as_u64().unwrap() as usize] += normal * h;
        lines += 1;
    }
    assert_eq!(lines, 2 * 50, "one line per world and step");
    let weight = 9.81 * angle.cos() * 0.5;
    for i in impulse {
        assert!((i - weight).abs() < 1e-9 * weight, "{i} against {weight}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let dir = run("incline", 0.1, false, "no-contacts");
    assert!(!dir.join("contacts.jsonl").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The size announced for a large run is the size written: within 25 % of the
/// trajectories and joints.csv of a skid-steer run of two worlds.
#[test]
fn the_output_estimate_matches_what_a_run_writes() {
    let dir = run("skid-steer", 1.0, false, "estimate");
    let written: u64 = ["trajectory.csv", "trajectory.jsonl", "joints.csv"]
        .iter()
        .map(|f| std::fs::metadata(dir.join(f)).unwrap().len())
        .sum();
    let model = find("skid-steer").unwrap().model().unwrap();
    let estimate = axion_cli::output_estimate(&model, 100, 2);
    let ratio = estimate as f64 / written as f64;
    assert!(
        (0.75..1.25).contains(&ratio),
        "estimate {estimate} B, written {written} B"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
